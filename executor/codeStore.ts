import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { computeCid } from "./cid";
import { decodeUtf8 } from "../protocol/text";
import { Lru } from "../protocol/lru";

/** Verified code kept in memory, by CID: at most this many bytes (least recently used dropped first), each at most a quarter. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** The most code one payer keeps stored, by default (VESTA_CODE_STORE_BYTES_PER_PAYER). */
export const DEFAULT_CODE_BYTES_PER_PAYER = 256 * 1024 * 1024;
/** CIDs whose stored bytes this process has verified (and their length), least recently used dropped first. */
const VERIFIED_CIDS = 100_000;
/** Payers whose newest code this process remembers (least recently used dropped first). */
const NEWEST_PAYERS = 100_000;
/** A payer's newest code run or stored again within this long is not written again (it is its newest already). */
export const REUSE_UNWRITTEN_MS = 60_000;

export type CodeStoreOptions = {
  /** The most code bytes one payer keeps stored; past it, its least recently used code goes first. */
  bytesPerPayer: number;
  /** Told when a stored row does not hash to its CID (it then reads as missing). */
  onMismatch?: (cid: string, problem: string) => void;
};

/**
 * Action code by CID, in a SQLite file, as the exact bytes that were hashed. Content-addressed: a
 * CID is stored once, never changed, and what is read back is checked against its CID (and for
 * valid UTF-8) before it may run, once per process: a verified CID is remembered (bounded), so a
 * later read costs no hash. A row that fails (written by an older version, or altered on disk)
 * reads as missing.
 *
 * Each payer (who is billed for the runs that stored the code) owns what it stored, at most
 * `bytesPerPayer` in all: storing past that drops its least recently used code (a CID another payer
 * also stored stays theirs). Rows stored before owners were kept belong to no one and stay. A run
 * of (or a store of) the code that is already its payer's most recently used, within
 * REUSE_UNWRITTEN_MS of the last write, writes nothing: the order of the payer's code is already
 * right, only its time is up to a minute old (a run of the same action over and over costs no commit).
 */
export class CodeStore {
  private readonly db: Database.Database;
  private readonly stmts: ReturnType<typeof statements>;
  private readonly cache = new Lru<string, Uint8Array>(CACHE_BYTES, { weigh: (b) => b.byteLength });
  private readonly verified = new Lru<string, number>(VERIFIED_CIDS);
  /** Each payer's most recently used code as last written here, and when. */
  private readonly newest = new Lru<string, { cid: string; at: number }>(NEWEST_PAYERS);
  private readonly onMismatch: (cid: string, problem: string) => void;

  constructor(
    file: string,
    private readonly opts: CodeStoreOptions,
  ) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS action_code (cid TEXT PRIMARY KEY, code TEXT NOT NULL, stored_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS action_code_owner (payer TEXT NOT NULL, cid TEXT NOT NULL, bytes INTEGER NOT NULL, used_at INTEGER NOT NULL, PRIMARY KEY (payer, cid));
      CREATE INDEX IF NOT EXISTS action_code_owner_lru ON action_code_owner (payer, used_at);
      CREATE INDEX IF NOT EXISTS action_code_owner_cid ON action_code_owner (cid);
    `);
    this.stmts = statements(this.db);
    this.onMismatch = opts.onMismatch ?? (() => {});
  }

  /** The bytes stored under `cid`, verified to hash to it; undefined when none (or none valid) is stored. */
  async get(cid: string): Promise<Uint8Array | undefined> {
    const hit = this.cache.get(cid);
    if (hit) return hit;
    const row = this.stmts.get.get(cid);
    if (!row) return undefined;
    // Rows written before code was kept as bytes are TEXT: their UTF-8 bytes are what was hashed.
    const bytes = typeof row.code === "string" ? Buffer.from(row.code, "utf8") : row.code;
    if (this.verified.get(cid) !== bytes.byteLength) {
      if (decodeUtf8(bytes) === undefined) return void this.onMismatch(cid, "the stored code is not valid UTF-8");
      const actual = await computeCid(bytes);
      if (actual !== cid) return void this.onMismatch(cid, `the stored code hashes to ${actual}`);
      this.verified.set(cid, bytes.byteLength);
    }
    this.remember(cid, bytes);
    return bytes;
  }

  /**
   * Stores `bytes` under `cid` (the caller computed the CID from these very bytes) as `payer`'s,
   * then drops that payer's least recently used code until it holds at most bytesPerPayer.
   */
  put(cid: string, bytes: Uint8Array, payer: string): void {
    if (this.isNewest(cid, payer) && this.verified.get(cid) === bytes.byteLength) return; // stored, its payer's newest
    const dropped = this.db.transaction(() => {
      this.stmts.put.run(cid, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Math.floor(Date.now() / 1000));
      this.stmts.own.run(payer, cid, bytes.byteLength, Date.now());
      const gone: string[] = [];
      let held = this.stmts.held.get(payer)!.bytes;
      while (held > this.opts.bytesPerPayer) {
        const oldest = this.stmts.oldest.get(payer, cid);
        if (!oldest) break;
        this.stmts.disown.run(payer, oldest.cid);
        if (this.stmts.deleteOrphan.run(oldest.cid).changes > 0) gone.push(oldest.cid);
        held -= oldest.bytes;
      }
      return gone;
    })();
    for (const c of dropped) this.forget(c);
    this.newest.set(payer, { cid, at: Date.now() });
    this.verified.set(cid, bytes.byteLength);
    this.remember(cid, bytes);
  }

  /** `payer` ran `cid` again: its copy becomes its most recently used (nothing when the payer does not hold it). */
  touch(cid: string, payer: string): void {
    if (this.isNewest(cid, payer)) return;
    const at = Date.now();
    this.stmts.touch.run(at, payer, cid);
    this.newest.set(payer, { cid, at });
  }

  /** `cid` is `payer`'s most recently used code, written less than REUSE_UNWRITTEN_MS ago. */
  private isNewest(cid: string, payer: string): boolean {
    const last = this.newest.peek(payer);
    return last !== undefined && last.cid === cid && Date.now() - last.at < REUSE_UNWRITTEN_MS;
  }

  /** What `payer` holds: its code bytes and how many CIDs. */
  heldBy(payer: string): { bytes: number; cids: number } {
    return this.stmts.held.get(payer)!;
  }

  private remember(cid: string, bytes: Uint8Array): void {
    if (bytes.byteLength <= CACHE_BYTES / 4) this.cache.set(cid, bytes);
  }

  private forget(cid: string): void {
    this.cache.delete(cid);
    this.verified.delete(cid);
  }

  close(): void {
    this.db.close();
  }
}

function statements(db: Database.Database) {
  return {
    get: db.prepare<[string], { code: string | Buffer }>("SELECT code FROM action_code WHERE cid = ?"),
    put: db.prepare<[string, Buffer, number]>("INSERT OR IGNORE INTO action_code (cid, code, stored_at) VALUES (?, ?, ?)"),
    own: db.prepare<[string, string, number, number]>(
      "INSERT INTO action_code_owner (payer, cid, bytes, used_at) VALUES (?, ?, ?, ?) ON CONFLICT (payer, cid) DO UPDATE SET used_at = excluded.used_at",
    ),
    touch: db.prepare<[number, string, string]>("UPDATE action_code_owner SET used_at = ? WHERE payer = ? AND cid = ?"),
    held: db.prepare<[string], { bytes: number; cids: number }>("SELECT COALESCE(SUM(bytes), 0) AS bytes, COUNT(*) AS cids FROM action_code_owner WHERE payer = ?"),
    oldest: db.prepare<[string, string], { cid: string; bytes: number }>(
      "SELECT cid, bytes FROM action_code_owner WHERE payer = ? AND cid <> ? ORDER BY used_at, rowid LIMIT 1",
    ),
    disown: db.prepare<[string, string]>("DELETE FROM action_code_owner WHERE payer = ? AND cid = ?"),
    deleteOrphan: db.prepare<[string]>("DELETE FROM action_code WHERE cid = ? AND NOT EXISTS (SELECT 1 FROM action_code_owner WHERE cid = action_code.cid)"),
  };
}
