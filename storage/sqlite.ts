import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/**
 * Opens (creating it and its directory when missing) a SQLite file of the service's off-chain state
 * the way every store here does: write-ahead log (readers never wait for the writer), a busy timeout
 * for the rare second writer, then `schema` (idempotent CREATE ... IF NOT EXISTS statements).
 */
export function openSqlite(file: string, schema: string): Database.Database {
  if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(schema);
  return db;
}
