import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { NewRun, RunRow, Store, TokenRow, TriggerKind, TriggerRow, User } from "./types";
import { newId } from "../crypto";

const SCHEMA = `
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

type TriggerDb = Record<string, any>;
const toTrigger = (r: TriggerDb): TriggerRow => ({
  id: r.id,
  userId: r.user_id,
  name: r.name,
  kind: r.kind,
  enabled: !!r.enabled,
  actionCode: r.action_code,
  defaultParams: JSON.parse(r.default_params),
  usageKeySealed: r.usage_key,
  config: JSON.parse(r.config),
  state: JSON.parse(r.state),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const toRun = (r: Record<string, any>): RunRow => ({
  id: r.id,
  triggerId: r.trigger_id,
  status: r.status,
  params: JSON.parse(r.params),
  attempts: r.attempts,
  response: r.response == null ? null : JSON.parse(r.response),
  error: r.error,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});
const toToken = (r: Record<string, any>): TokenRow => ({
  id: r.id,
  userId: r.user_id,
  challenge: r.challenge,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

/** The default store: one SQLite file (WAL). Synchronous underneath; async to share the interface with PostgreSQL. */
export class SqliteStore implements Store {
  private readonly db: Database.Database;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    this.db.exec(SCHEMA);
  }

  async userByEmail(email: string, create: boolean): Promise<User | undefined> {
    if (create) this.db.prepare("INSERT OR IGNORE INTO users (id, email, created_at) VALUES (?, ?, ?)").run(newId("usr"), email, Date.now());
    return this.db.prepare("SELECT id, email FROM users WHERE email = ?").get(email) as User | undefined;
  }
  async userById(id: string) {
    return this.db.prepare("SELECT id, email FROM users WHERE id = ?").get(id) as User | undefined;
  }
  async putMagicLink(hash: string, email: string, expiresAt: number) {
    this.db.prepare("INSERT INTO magic_links (hash, email, expires_at) VALUES (?, ?, ?)").run(hash, email, expiresAt);
  }
  async useMagicLink(hash: string, now: number) {
    const row = this.db.prepare("DELETE FROM magic_links WHERE hash = ? RETURNING email, expires_at").get(hash) as { email: string; expires_at: number } | undefined;
    return row && row.expires_at > now ? row.email : undefined;
  }
  async putSession(hash: string, userId: string, expiresAt: number) {
    this.db.prepare("INSERT INTO sessions (hash, user_id, expires_at) VALUES (?, ?, ?)").run(hash, userId, expiresAt);
  }
  async sessionUser(hash: string, now: number) {
    return this.db
      .prepare("SELECT u.id, u.email FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ? AND s.expires_at > ?")
      .get(hash, now) as User | undefined;
  }
  async addToken(t: TokenRow) {
    const r = this.db
      .prepare("INSERT OR IGNORE INTO tokens (id, user_id, challenge, name, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)")
      .run(t.id, t.userId, t.challenge, t.name, t.createdAt);
    return r.changes === 1;
  }
  async tokenByChallenge(challenge: string) {
    const r = this.db.prepare("SELECT * FROM tokens WHERE challenge = ?").get(challenge);
    return r ? toToken(r as Record<string, any>) : undefined;
  }
  async listTokens(userId: string) {
    return (this.db.prepare("SELECT * FROM tokens WHERE user_id = ? ORDER BY created_at").all(userId) as Record<string, any>[]).map(toToken);
  }
  async revokeToken(userId: string, id: string, now: number) {
    return this.db.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL").run(now, id, userId).changes === 1;
  }

  async insertTrigger(t: TriggerRow, maxPerUser: number) {
    return this.db.transaction(() => {
      const { n } = this.db.prepare("SELECT COUNT(*) AS n FROM triggers WHERE user_id = ?").get(t.userId) as { n: number };
      if (n >= maxPerUser) return false;
      this.db
        .prepare(
          `INSERT INTO triggers (id, user_id, name, kind, enabled, action_code, default_params, usage_key, config, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(t.id, t.userId, t.name, t.kind, t.enabled ? 1 : 0, t.actionCode, JSON.stringify(t.defaultParams), t.usageKeySealed,
          JSON.stringify(t.config), JSON.stringify(t.state), t.createdAt, t.updatedAt);
      return true;
    })();
  }
  async getTrigger(id: string) {
    const r = this.db.prepare("SELECT * FROM triggers WHERE id = ?").get(id);
    return r ? toTrigger(r as TriggerDb) : undefined;
  }
  async listTriggers(userId: string) {
    return (this.db.prepare("SELECT * FROM triggers WHERE user_id = ? ORDER BY created_at, id").all(userId) as TriggerDb[]).map(toTrigger);
  }
  async listEnabled(kind: TriggerKind) {
    return (this.db.prepare("SELECT * FROM triggers WHERE kind = ? AND enabled = 1 ORDER BY id").all(kind) as TriggerDb[]).map(toTrigger);
  }
  async updateTrigger(t: TriggerRow) {
    this.db
      .prepare(
        `UPDATE triggers SET name = ?, enabled = ?, action_code = ?, default_params = ?, usage_key = ?, config = ?, state = ?, updated_at = ? WHERE id = ?`,
      )
      .run(t.name, t.enabled ? 1 : 0, t.actionCode, JSON.stringify(t.defaultParams), t.usageKeySealed, JSON.stringify(t.config),
        JSON.stringify(t.state), t.updatedAt, t.id);
  }
  async deleteTrigger(id: string) {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM triggers WHERE id = ?").run(id);
      this.db.prepare("UPDATE runs SET status = 'failed', error = 'trigger deleted', finished_at = ? WHERE trigger_id = ? AND status = 'queued'").run(Date.now(), id);
    })();
  }

  async enqueue(triggerId: string, runs: NewRun[], now: number, state?: Record<string, unknown>) {
    return this.db.transaction(() => {
      const ids: string[] = [];
      const ins = this.db.prepare(
        `INSERT OR IGNORE INTO runs (id, trigger_id, status, params, dedupe_key, seq, created_at)
         VALUES (?, ?, 'queued', ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs), ?)`,
      );
      for (const r of runs) if (ins.run(r.id, triggerId, JSON.stringify(r.params), r.dedupeKey ?? null, now).changes === 1) ids.push(r.id);
      if (state) this.db.prepare("UPDATE triggers SET state = ? WHERE id = ?").run(JSON.stringify(state), triggerId);
      return ids;
    })();
  }
  async enqueueBounded(triggerId: string, run: NewRun, now: number, maxQueued: number) {
    return this.db.transaction(() => {
      const { n } = this.db.prepare("SELECT COUNT(*) AS n FROM runs WHERE trigger_id = ? AND status = 'queued'").get(triggerId) as { n: number };
      if (n >= maxQueued) return false;
      this.db
        .prepare(`INSERT INTO runs (id, trigger_id, status, params, dedupe_key, seq, created_at) VALUES (?, ?, 'queued', ?, NULL, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs), ?)`)
        .run(run.id, triggerId, JSON.stringify(run.params), now);
      return true;
    }).immediate();
  }
  async pruneRuns(triggerId: string, keep: number) {
    this.db
      .prepare(
        `DELETE FROM runs WHERE trigger_id = ? AND status IN ('success', 'failed') AND seq < (
           SELECT seq FROM runs WHERE trigger_id = ? AND status IN ('success', 'failed') ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      )
      .run(triggerId, triggerId, keep - 1);
  }
  async claim(now: number) {
    const r = this.db
      .prepare(
        `UPDATE runs SET status = 'running', started_at = ? WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY seq LIMIT 1) RETURNING *`,
      )
      .get(now);
    return r ? toRun(r as Record<string, any>) : undefined;
  }
  async noteAttempt(id: string, attempts: number) {
    this.db.prepare("UPDATE runs SET attempts = ? WHERE id = ?").run(attempts, id);
  }
  async finish(id: string, status: "success" | "failed", response: unknown, error: string | null, now: number) {
    this.db
      .prepare("UPDATE runs SET status = ?, response = ?, error = ?, finished_at = ? WHERE id = ?")
      .run(status, response === undefined ? null : JSON.stringify(response), error, now, id);
  }
  async failInterrupted(now: number) {
    return this.db
      .prepare("UPDATE runs SET status = 'failed', error = 'interrupted: the service stopped while this run was in flight; not retried so it cannot run twice', finished_at = ? WHERE status = 'running'")
      .run(now).changes;
  }
  async getRun(id: string) {
    const r = this.db.prepare("SELECT * FROM runs WHERE id = ?").get(id);
    return r ? toRun(r as Record<string, any>) : undefined;
  }
  async listRuns(triggerId: string, limit: number, offset: number) {
    const runs = (this.db.prepare("SELECT * FROM runs WHERE trigger_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?").all(triggerId, limit, offset) as Record<string, any>[]).map(toRun);
    const total = (this.db.prepare("SELECT COUNT(*) AS n FROM runs WHERE trigger_id = ?").get(triggerId) as { n: number }).n;
    return { runs, total };
  }
  async close() {
    this.db.close();
  }
}
