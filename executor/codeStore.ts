import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { computeCid } from "./cid";
import { decodeUtf8 } from "../protocol/text";

/** Verified code kept in memory, by CID: at most this many bytes (least recently used dropped first). */
const CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Action code by CID, in a SQLite file, as the exact bytes that were hashed. Content-addressed: a
 * CID is stored once, never changed, and what is read back is checked against its CID (and for
 * valid UTF-8) before it may run; a row that fails (written by an older version, or altered on
 * disk) reads as missing. Verified code is cached in memory, bounded.
 */
export class CodeStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string], { code: string | Buffer }>;
  private readonly putStmt: Database.Statement<[string, Buffer, number]>;
  private readonly cache = new Map<string, Uint8Array>();
  private cachedBytes = 0;

  constructor(
    file: string,
    private readonly onMismatch: (cid: string, problem: string) => void = () => {},
  ) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.exec("CREATE TABLE IF NOT EXISTS action_code (cid TEXT PRIMARY KEY, code TEXT NOT NULL, stored_at INTEGER NOT NULL)");
    this.getStmt = this.db.prepare("SELECT code FROM action_code WHERE cid = ?");
    this.putStmt = this.db.prepare("INSERT OR IGNORE INTO action_code (cid, code, stored_at) VALUES (?, ?, ?)");
  }

  /** The bytes stored under `cid`, verified to hash to it; undefined when none (or none valid) is stored. */
  async get(cid: string): Promise<Uint8Array | undefined> {
    const hit = this.cache.get(cid);
    if (hit) {
      this.cache.delete(cid); // most recently used goes last
      this.cache.set(cid, hit);
      return hit;
    }
    const row = this.getStmt.get(cid);
    if (!row) return undefined;
    // Rows written before code was kept as bytes are TEXT: their UTF-8 bytes are what was hashed.
    const bytes = typeof row.code === "string" ? Buffer.from(row.code, "utf8") : row.code;
    if (decodeUtf8(bytes) === undefined) return void this.onMismatch(cid, "the stored code is not valid UTF-8");
    const actual = await computeCid(bytes);
    if (actual !== cid) return void this.onMismatch(cid, `the stored code hashes to ${actual}`);
    this.remember(cid, bytes);
    return bytes;
  }

  /** Stores `bytes` under `cid` (the caller computed the CID from these very bytes). */
  put(cid: string, bytes: Uint8Array): void {
    this.putStmt.run(cid, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Math.floor(Date.now() / 1000));
    this.remember(cid, bytes);
  }

  private remember(cid: string, bytes: Uint8Array): void {
    if (this.cache.has(cid) || bytes.byteLength > CACHE_BYTES / 4) return;
    this.cache.set(cid, bytes);
    this.cachedBytes += bytes.byteLength;
    for (const [k, v] of this.cache) {
      if (this.cachedBytes <= CACHE_BYTES) break;
      this.cache.delete(k);
      this.cachedBytes -= v.byteLength;
    }
  }

  close(): void {
    this.db.close();
  }
}
