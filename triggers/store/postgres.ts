import { Pool, type PoolClient } from "pg";
import type { NewRun, RunRow, Store, TokenRow, TriggerKind, TriggerRow, User } from "./types";
import { newId } from "../crypto";

const SCHEMA = `
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
const HEARTBEAT_MS = 10_000;
const STALE_MS = 3 * HEARTBEAT_MS;

const num = (v: unknown) => (v == null ? null : Number(v));
const toTrigger = (r: Record<string, any>): TriggerRow => ({
  id: r.id, userId: r.user_id, name: r.name, kind: r.kind, enabled: r.enabled, actionCode: r.action_code, defaultParams: r.default_params,
  usageKeySealed: r.usage_key, config: r.config, state: r.state, createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});
const toRun = (r: Record<string, any>): RunRow => ({
  id: r.id, triggerId: r.trigger_id, status: r.status, params: r.params, attempts: r.attempts, response: r.response ?? null, error: r.error,
  createdAt: Number(r.created_at), startedAt: num(r.started_at), finishedAt: num(r.finished_at),
});
const toToken = (r: Record<string, any>): TokenRow => ({
  id: r.id, userId: r.user_id, challenge: r.challenge, name: r.name, createdAt: Number(r.created_at), revokedAt: num(r.revoked_at),
});
/**
 * JSON for a JSONB column. JSONB cannot hold U+0000 nor a lone surrogate, both of which JSON.stringify
 * writes as \u escapes (pairs it writes as characters): those escapes become U+FFFD, so any value
 * a webhook or an action produced can be stored.
 */
const JSONB_REFUSES = /(?<=(?:^|[^\\])(?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;
const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v).replace(JSONB_REFUSES, "\\ufffd"));
/** Text for a TEXT column, which cannot hold U+0000. */
const text = (s: string | null) => (s === null ? null : s.replaceAll("\u0000", "\ufffd"));

/**
 * The store when DATABASE_URL is set. Workers of several processes share one queue: a run is claimed with
 * SELECT ... FOR UPDATE SKIP LOCKED, and each process heartbeats so only runs of dead processes are failed as interrupted.
 */
export class PostgresStore implements Store {
  private readonly pool: Pool;
  private readonly instance = newId("inst");
  private heartbeat?: NodeJS.Timeout;

  private constructor(url: string) {
    this.pool = new Pool({ connectionString: url, max: 10 });
  }

  static async open(url: string): Promise<PostgresStore> {
    const s = new PostgresStore(url);
    await s.tx(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(7305141)"); // concurrent first starts: one creates the schema
      await c.query(SCHEMA);
    });
    await s.beat();
    s.heartbeat = setInterval(() => void s.beat().catch(() => {}), HEARTBEAT_MS).unref();
    return s;
  }

  private beat() {
    return this.q("INSERT INTO instances (id, seen_at) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at", [this.instance, Date.now()]);
  }
  private async q(sql: string, args: unknown[] = []) {
    return (await this.pool.query(sql, args)).rows as Record<string, any>[];
  }
  private async tx<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      await c.query("BEGIN");
      const r = await fn(c);
      await c.query("COMMIT");
      return r;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }

  async userByEmail(email: string, create: boolean): Promise<User | undefined> {
    if (create) await this.q("INSERT INTO users (id, email, created_at) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING", [newId("usr"), email, Date.now()]);
    return (await this.q("SELECT id, email FROM users WHERE email = $1", [email]))[0] as User | undefined;
  }
  async userById(id: string) {
    return (await this.q("SELECT id, email FROM users WHERE id = $1", [id]))[0] as User | undefined;
  }
  async putMagicLink(hash: string, email: string, expiresAt: number) {
    await this.q("INSERT INTO magic_links (hash, email, expires_at) VALUES ($1, $2, $3)", [hash, email, expiresAt]);
  }
  async useMagicLink(hash: string, now: number) {
    const r = (await this.q("DELETE FROM magic_links WHERE hash = $1 RETURNING email, expires_at", [hash]))[0];
    return r && Number(r.expires_at) > now ? (r.email as string) : undefined;
  }
  async putSession(hash: string, userId: string, expiresAt: number) {
    await this.q("INSERT INTO sessions (hash, user_id, expires_at) VALUES ($1, $2, $3)", [hash, userId, expiresAt]);
  }
  async sessionUser(hash: string, now: number) {
    return (await this.q("SELECT u.id, u.email FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = $1 AND s.expires_at > $2", [hash, now]))[0] as User | undefined;
  }
  async addToken(t: TokenRow) {
    const r = await this.pool.query("INSERT INTO tokens (id, user_id, challenge, name, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING", [t.id, t.userId, t.challenge, t.name, t.createdAt]);
    return r.rowCount === 1;
  }
  async tokenByChallenge(challenge: string) {
    const r = (await this.q("SELECT * FROM tokens WHERE challenge = $1", [challenge]))[0];
    return r ? toToken(r) : undefined;
  }
  async listTokens(userId: string) {
    return (await this.q("SELECT * FROM tokens WHERE user_id = $1 ORDER BY created_at", [userId])).map(toToken);
  }
  async revokeToken(userId: string, id: string, now: number) {
    return (await this.pool.query("UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND user_id = $3 AND revoked_at IS NULL", [now, id, userId])).rowCount === 1;
  }

  async insertTrigger(t: TriggerRow, maxPerUser: number) {
    return this.tx(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`triggers:${t.userId}`]); // one insert per user at a time
      const { n } = (await c.query("SELECT COUNT(*)::int AS n FROM triggers WHERE user_id = $1", [t.userId])).rows[0];
      if (n >= maxPerUser) return false;
      await c.query(
        `INSERT INTO triggers (id, user_id, name, kind, enabled, action_code, default_params, usage_key, config, state, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [t.id, t.userId, t.name, t.kind, t.enabled, t.actionCode, json(t.defaultParams), t.usageKeySealed, json(t.config), json(t.state), t.createdAt, t.updatedAt],
      );
      return true;
    });
  }
  async getTrigger(id: string) {
    const r = (await this.q("SELECT * FROM triggers WHERE id = $1", [id]))[0];
    return r ? toTrigger(r) : undefined;
  }
  async listTriggers(userId: string) {
    return (await this.q("SELECT * FROM triggers WHERE user_id = $1 ORDER BY created_at, id", [userId])).map(toTrigger);
  }
  async listEnabled(kind: TriggerKind) {
    return (await this.q("SELECT * FROM triggers WHERE kind = $1 AND enabled ORDER BY id", [kind])).map(toTrigger);
  }
  async updateTrigger(t: TriggerRow) {
    await this.q(
      "UPDATE triggers SET name = $1, enabled = $2, action_code = $3, default_params = $4, usage_key = $5, config = $6, state = $7, updated_at = $8 WHERE id = $9",
      [t.name, t.enabled, t.actionCode, json(t.defaultParams), t.usageKeySealed, json(t.config), json(t.state), t.updatedAt, t.id],
    );
  }
  async deleteTrigger(id: string) {
    await this.tx(async (c) => {
      await c.query("DELETE FROM triggers WHERE id = $1", [id]);
      await c.query("UPDATE runs SET status = 'failed', error = 'trigger deleted', finished_at = $1 WHERE trigger_id = $2 AND status = 'queued'", [Date.now(), id]);
    });
  }

  async enqueue(triggerId: string, runs: NewRun[], now: number, state?: Record<string, unknown>) {
    return this.tx(async (c) => {
      const ids: string[] = [];
      for (const r of runs) {
        const res = await c.query(
          "INSERT INTO runs (id, trigger_id, status, params, dedupe_key, created_at) VALUES ($1, $2, 'queued', $3, $4, $5) ON CONFLICT (trigger_id, dedupe_key) DO NOTHING",
          [r.id, triggerId, json(r.params), r.dedupeKey ?? null, now],
        );
        if (res.rowCount === 1) ids.push(r.id);
      }
      if (state) await c.query("UPDATE triggers SET state = $1 WHERE id = $2", [json(state), triggerId]);
      return ids;
    });
  }
  async enqueueBounded(triggerId: string, run: NewRun, now: number, maxQueued: number) {
    return this.tx(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`runs:${triggerId}`]); // one bounded insert per trigger at a time
      const { n } = (await c.query("SELECT COUNT(*)::int AS n FROM runs WHERE trigger_id = $1 AND status = 'queued'", [triggerId])).rows[0];
      if (n >= maxQueued) return false;
      await c.query("INSERT INTO runs (id, trigger_id, status, params, created_at) VALUES ($1, $2, 'queued', $3, $4)", [run.id, triggerId, json(run.params), now]);
      return true;
    });
  }
  async pruneRuns(triggerId: string, keep: number) {
    await this.q(
      `DELETE FROM runs WHERE trigger_id = $1 AND status IN ('success', 'failed') AND seq < (
         SELECT seq FROM runs WHERE trigger_id = $1 AND status IN ('success', 'failed') ORDER BY seq DESC LIMIT 1 OFFSET $2)`,
      [triggerId, keep - 1],
    );
  }
  async claim(now: number) {
    const r = (
      await this.q(
        `UPDATE runs SET status = 'running', started_at = $1, claimed_by = $2
         WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *`,
        [now, this.instance],
      )
    )[0];
    return r ? toRun(r) : undefined;
  }
  async noteAttempt(id: string, attempts: number) {
    await this.q("UPDATE runs SET attempts = $1 WHERE id = $2", [attempts, id]);
  }
  async finish(id: string, status: "success" | "failed", response: unknown, error: string | null, now: number) {
    await this.q("UPDATE runs SET status = $1, response = $2, error = $3, finished_at = $4 WHERE id = $5", [status, json(response), text(error), now, id]);
  }
  /** Fails runs held by processes that stopped heartbeating (never those of live workers). */
  async failInterrupted(now: number) {
    const r = await this.pool.query(
      `UPDATE runs SET status = 'failed', error = 'interrupted: the service stopped while this run was in flight; not retried so it cannot run twice', finished_at = $1
       WHERE status = 'running' AND (claimed_by IS NULL OR claimed_by NOT IN (SELECT id FROM instances WHERE seen_at > $2))`,
      [now, Date.now() - STALE_MS],
    );
    return r.rowCount ?? 0;
  }
  async getRun(id: string) {
    const r = (await this.q("SELECT * FROM runs WHERE id = $1", [id]))[0];
    return r ? toRun(r) : undefined;
  }
  async listRuns(triggerId: string, limit: number, offset: number) {
    const runs = (await this.q("SELECT * FROM runs WHERE trigger_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3", [triggerId, limit, offset])).map(toRun);
    const total = Number((await this.q("SELECT COUNT(*) AS n FROM runs WHERE trigger_id = $1", [triggerId]))[0].n);
    return { runs, total };
  }
  async close() {
    clearInterval(this.heartbeat);
    await this.q("DELETE FROM instances WHERE id = $1", [this.instance]).catch(() => {});
    await this.pool.end();
  }
}
