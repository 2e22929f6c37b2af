import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** Action code by CID, in a SQLite file. Content-addressed: a CID is stored once, never changed. */
export class CodeStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string], { code: string }>;
  private readonly putStmt: Database.Statement<[string, string, number]>;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.exec("CREATE TABLE IF NOT EXISTS action_code (cid TEXT PRIMARY KEY, code TEXT NOT NULL, stored_at INTEGER NOT NULL)");
    this.getStmt = this.db.prepare("SELECT code FROM action_code WHERE cid = ?");
    this.putStmt = this.db.prepare("INSERT OR IGNORE INTO action_code (cid, code, stored_at) VALUES (?, ?, ?)");
  }

  get(cid: string): string | undefined {
    return this.getStmt.get(cid)?.code;
  }

  /** Stores `code` under `cid` (the caller computed the CID from this very code). */
  put(cid: string, code: string): void {
    this.putStmt.run(cid, code, Math.floor(Date.now() / 1000));
  }

  close(): void {
    this.db.close();
  }
}
