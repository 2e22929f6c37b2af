/**
 * The schemas stores created before they had migrations (copied from the code of that version),
 * for the tests that open a database made by it.
 */

/** triggers/store/sqlite.ts, before the storage layer. */
export const TRIGGERS_SQLITE_V0 = `
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS magic_links (hash TEXT PRIMARY KEY, email TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, challenge TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
  created_at INTEGER NOT NULL, revoked_at INTEGER);
CREATE TABLE IF NOT EXISTS triggers (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, enabled INTEGER NOT NULL,
  action_code TEXT NOT NULL, default_params TEXT NOT NULL, usage_key TEXT NOT NULL, config TEXT NOT NULL, state TEXT NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, trigger_id TEXT NOT NULL, status TEXT NOT NULL, params TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, response TEXT, error TEXT, dedupe_key TEXT, seq INTEGER NOT NULL,
  created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER, UNIQUE (trigger_id, dedupe_key));
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
CREATE INDEX IF NOT EXISTS runs_by_trigger ON runs (trigger_id, seq);
`;

/** triggers/store/postgres.ts, before the storage layer. */
export const TRIGGERS_POSTGRES_V0 = `
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, created_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS magic_links (hash TEXT PRIMARY KEY, email TEXT NOT NULL, expires_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (hash TEXT PRIMARY KEY, user_id TEXT NOT NULL, expires_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, challenge TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
  created_at BIGINT NOT NULL, revoked_at BIGINT);
CREATE TABLE IF NOT EXISTS triggers (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, enabled BOOLEAN NOT NULL,
  action_code TEXT NOT NULL, default_params JSONB NOT NULL, usage_key TEXT NOT NULL, config JSONB NOT NULL, state JSONB NOT NULL,
  created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, trigger_id TEXT NOT NULL, status TEXT NOT NULL, params JSONB NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, response JSONB, error TEXT, dedupe_key TEXT, seq BIGSERIAL, claimed_by TEXT,
  created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT, UNIQUE (trigger_id, dedupe_key));
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
CREATE INDEX IF NOT EXISTS runs_by_trigger ON runs (trigger_id, seq);
CREATE TABLE IF NOT EXISTS instances (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
`;

/** executor/codeStore.ts, before the storage layer (SQLite only; its oldest files had the first table only). */
export const ACTION_CODE_SQLITE_V0 = `
CREATE TABLE IF NOT EXISTS action_code (cid TEXT PRIMARY KEY, code TEXT NOT NULL, stored_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS action_code_owner (payer TEXT NOT NULL, cid TEXT NOT NULL, bytes INTEGER NOT NULL, used_at INTEGER NOT NULL, PRIMARY KEY (payer, cid));
CREATE INDEX IF NOT EXISTS action_code_owner_lru ON action_code_owner (payer, used_at);
CREATE INDEX IF NOT EXISTS action_code_owner_cid ON action_code_owner (cid);
`;
