import { sql } from "kysely";
import { secondsUntilRoom, Storage, toNumber, type StoreLocation } from "../../storage";
import { newId } from "../crypto";
import { TRIGGERS_SCHEMA, type TriggersDb } from "./schema";
import { toRun, toToken, toTrigger } from "./rows";
import type { NewRun, Store, TokenRow, TriggerKind, TriggerRow, User } from "./types";

/** A process not heard from for this many heartbeats has stopped: the runs it claimed were interrupted. */
export const STALE_HEARTBEATS = 3;
const FINISHED = ["success", "failed"];
const INTERRUPTED = "interrupted: the service stopped while this run was in flight; not retried so it cannot run twice";

/**
 * The triggers service's store, on SQLite (one file, one process) or PostgreSQL (DATABASE_URL).
 * On PostgreSQL workers of several processes share one queue: a run is claimed with SELECT ... FOR
 * UPDATE SKIP LOCKED, and each process heartbeats so that only runs of dead processes are failed
 * as interrupted; a SQLite file has one process, so every run it did not claim itself was interrupted.
 */
export class TriggersStore implements Store {
  private readonly instance = newId("inst");
  private heartbeat?: NodeJS.Timeout;

  private constructor(
    private readonly s: Storage<TriggersDb>,
    private readonly heartbeatMs: number,
  ) {}

  /** Opens (and migrates) the store; on PostgreSQL this process heartbeats every `heartbeatMs` (default 10 s) until close. */
  static async open(where: StoreLocation, heartbeatMs = 10_000): Promise<TriggersStore> {
    const store = new TriggersStore(await Storage.open<TriggersDb>(where, TRIGGERS_SCHEMA), heartbeatMs);
    if (store.shared) {
      await store.beat();
      store.heartbeat = setInterval(() => void store.beat().catch(() => {}), heartbeatMs).unref();
    }
    return store;
  }

  /** Several processes may work this store's queue (PostgreSQL): interrupted runs are looked for while serving too. */
  get shared(): boolean {
    return this.s.dialect.shared;
  }

  private get db() {
    return this.s.db;
  }
  private get d() {
    return this.s.dialect;
  }

  private async beat() {
    await this.db
      .insertInto("instances")
      .values({ id: this.instance, seen_at: Date.now() })
      .onConflict((oc) => oc.column("id").doUpdateSet((eb) => ({ seen_at: eb.ref("excluded.seen_at") })))
      .execute();
  }

  async userByEmail(email: string, create: boolean): Promise<User | undefined> {
    if (create) await this.db.insertInto("users").values({ id: newId("usr"), email, created_at: Date.now() }).onConflict((oc) => oc.doNothing()).execute();
    return this.db.selectFrom("users").select(["id", "email"]).where("email", "=", email).executeTakeFirst();
  }
  async userById(id: string) {
    return this.db.selectFrom("users").select(["id", "email"]).where("id", "=", id).executeTakeFirst();
  }
  async putMagicLink(hash: string, email: string, expiresAt: number) {
    await this.db.insertInto("magic_links").values({ hash, email, expires_at: expiresAt }).execute();
  }
  async spendLoginMail(mailbox: string, limit: number, windowMs: number, now: number): Promise<number | undefined> {
    return this.s.transaction(async (trx) => {
      await this.d.serialize(trx, `login-mail:${mailbox}`);
      await trx.deleteFrom("login_mails").where("sent_at", "<=", now - windowMs).execute();
      const recent = await trx.selectFrom("login_mails").select("sent_at").where("mailbox", "=", mailbox).orderBy("sent_at").execute();
      const wait = secondsUntilRoom(recent.map((r) => r.sent_at), limit, windowMs, now);
      if (wait > 0) return wait;
      await trx.insertInto("login_mails").values({ id: newId("mail"), mailbox, sent_at: now }).execute();
      return undefined;
    });
  }
  async useMagicLink(hash: string, now: number) {
    const r = await this.db.deleteFrom("magic_links").where("hash", "=", hash).returning(["email", "expires_at"]).executeTakeFirst();
    return r && r.expires_at > now ? r.email : undefined;
  }
  async putSession(hash: string, userId: string, expiresAt: number) {
    await this.db.insertInto("sessions").values({ hash, user_id: userId, expires_at: expiresAt }).execute();
  }
  async sessionUser(hash: string, now: number) {
    return this.db
      .selectFrom("sessions as s")
      .innerJoin("users as u", "u.id", "s.user_id")
      .select(["u.id", "u.email"])
      .where("s.hash", "=", hash)
      .where("s.expires_at", ">", now)
      .executeTakeFirst();
  }
  async addToken(t: TokenRow) {
    const r = await this.db
      .insertInto("tokens")
      .values({ id: t.id, user_id: t.userId, challenge: t.challenge, name: t.name, created_at: t.createdAt, revoked_at: null })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return r.numInsertedOrUpdatedRows === 1n;
  }
  async tokenByChallenge(challenge: string) {
    const r = await this.db.selectFrom("tokens").selectAll().where("challenge", "=", challenge).executeTakeFirst();
    return r && toToken(r);
  }
  async listTokens(userId: string) {
    return (await this.db.selectFrom("tokens").selectAll().where("user_id", "=", userId).orderBy("created_at").execute()).map(toToken);
  }
  async revokeToken(userId: string, id: string, now: number) {
    const r = await this.db.updateTable("tokens").set({ revoked_at: now }).where("id", "=", id).where("user_id", "=", userId).where("revoked_at", "is", null).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }

  /** The columns a trigger's update writes. */
  private triggerColumns(t: TriggerRow) {
    const { d } = this;
    return {
      name: t.name,
      enabled: d.bool(t.enabled),
      action_code: t.actionCode,
      default_params: d.json(t.defaultParams)!,
      usage_key: t.usageKeySealed,
      config: d.json(t.config)!,
      state: d.json(t.state)!,
      updated_at: t.updatedAt,
    };
  }

  async insertTrigger(t: TriggerRow, limits: { perUser: number; ofKind?: number }): Promise<"ok" | "user" | "kind"> {
    return this.s.transaction(async (trx) => {
      await this.d.serialize(trx, `triggers:${t.userId}`); // one insert per user at a time
      const count = async (kind?: TriggerKind) => {
        let q = trx.selectFrom("triggers").select((eb) => eb.fn.countAll().as("n")).where("user_id", "=", t.userId);
        if (kind) q = q.where("kind", "=", kind);
        return toNumber((await q.executeTakeFirstOrThrow()).n);
      };
      if ((await count()) >= limits.perUser) return "user";
      if (limits.ofKind !== undefined && (await count(t.kind)) >= limits.ofKind) return "kind";
      await trx.insertInto("triggers").values({ id: t.id, user_id: t.userId, kind: t.kind, created_at: t.createdAt, ...this.triggerColumns(t) }).execute();
      return "ok";
    });
  }
  async getTrigger(id: string) {
    const r = await this.db.selectFrom("triggers").selectAll().where("id", "=", id).executeTakeFirst();
    return r && toTrigger(r);
  }
  async listTriggers(userId: string) {
    return (await this.db.selectFrom("triggers").selectAll().where("user_id", "=", userId).orderBy("created_at").orderBy("id").execute()).map(toTrigger);
  }
  async listEnabled(kind: TriggerKind) {
    return (await this.db.selectFrom("triggers").selectAll().where("kind", "=", kind).where("enabled", "=", this.d.bool(true)).orderBy("id").execute()).map(toTrigger);
  }
  async updateTrigger(t: TriggerRow) {
    await this.db.updateTable("triggers").set(this.triggerColumns(t)).where("id", "=", t.id).execute();
  }
  async deleteTrigger(id: string) {
    await this.s.transaction(async (trx) => {
      await trx.deleteFrom("triggers").where("id", "=", id).execute();
      await trx.updateTable("runs").set({ status: "failed", error: "trigger deleted", finished_at: Date.now() }).where("trigger_id", "=", id).where("status", "=", "queued").execute();
    });
  }

  /** The row of a new queued run. */
  private runValues(triggerId: string, r: NewRun, now: number) {
    return { id: r.id, trigger_id: triggerId, status: "queued", params: this.d.json(r.params)!, dedupe_key: r.dedupeKey ?? null, seq: this.d.nextSeq("runs"), created_at: now };
  }

  async enqueue(triggerId: string, runs: NewRun[], now: number, state?: Record<string, unknown>) {
    return this.s.transaction(async (trx) => {
      const ids: string[] = [];
      for (const r of runs) {
        const res = await trx.insertInto("runs").values(this.runValues(triggerId, r, now)).onConflict((oc) => oc.doNothing()).executeTakeFirst();
        if (res.numInsertedOrUpdatedRows === 1n) ids.push(r.id);
      }
      if (state) await trx.updateTable("triggers").set({ state: this.d.json(state)! }).where("id", "=", triggerId).execute();
      return ids;
    });
  }
  async enqueueBounded(triggerId: string, run: NewRun, now: number, maxQueued: number) {
    return this.s.transaction(async (trx) => {
      await this.d.serialize(trx, `runs:${triggerId}`); // one bounded insert per trigger at a time
      const { n } = await trx.selectFrom("runs").select((eb) => eb.fn.countAll().as("n")).where("trigger_id", "=", triggerId).where("status", "=", "queued").executeTakeFirstOrThrow();
      if (toNumber(n) >= maxQueued) return false;
      await trx.insertInto("runs").values(this.runValues(triggerId, { id: run.id, params: run.params }, now)).execute();
      return true;
    });
  }
  async pruneRuns(triggerId: string, keep: number) {
    await this.db
      .deleteFrom("runs")
      .where("trigger_id", "=", triggerId)
      .where("status", "in", FINISHED)
      .where((eb) =>
        eb("seq", "<", eb.selectFrom("runs").select("seq").where("trigger_id", "=", triggerId).where("status", "in", FINISHED).orderBy("seq", "desc").limit(1).offset(keep - 1)),
      )
      .execute();
  }
  async claim(now: number) {
    const next = this.d.skipLocked(this.db.selectFrom("runs").select("id").where("status", "=", "queued").orderBy("seq").limit(1));
    const r = await this.db.updateTable("runs").set({ status: "running", started_at: now, claimed_by: this.instance }).where("id", "=", next).returningAll().executeTakeFirst();
    return r && toRun(r);
  }
  async noteAttempt(id: string, attempts: number) {
    await this.db.updateTable("runs").set({ attempts }).where("id", "=", id).execute();
  }
  async finish(id: string, status: "success" | "failed", response: unknown, error: string | null, now: number) {
    await this.db.updateTable("runs").set({ status, response: this.d.json(response), error: this.d.text(error), finished_at: now }).where("id", "=", id).execute();
  }
  /** Fails runs claimed by processes that stopped (never those of a live worker, this one's included). */
  async failInterrupted(now: number) {
    const liveSince = this.shared ? Date.now() - STALE_HEARTBEATS * this.heartbeatMs : Number.MAX_SAFE_INTEGER; // a SQLite file: no other process is live
    const r = await this.db
      .updateTable("runs")
      .set({ status: "failed", error: INTERRUPTED, finished_at: now })
      .where("status", "=", "running")
      .where((eb) =>
        eb.or([
          eb("claimed_by", "is", null),
          eb.and([eb("claimed_by", "<>", this.instance), eb("claimed_by", "not in", eb.selectFrom("instances").select("id").where("seen_at", ">", liveSince))]),
        ]),
      )
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  async getRun(id: string) {
    const r = await this.db.selectFrom("runs").selectAll().where("id", "=", id).executeTakeFirst();
    return r && toRun(r);
  }
  async listRuns(triggerId: string, limit: number, offset: number) {
    const runs = (await this.db.selectFrom("runs").selectAll().where("trigger_id", "=", triggerId).orderBy("seq", "desc").limit(limit).offset(offset).execute()).map(toRun);
    const { n } = await this.db.selectFrom("runs").select((eb) => eb.fn.countAll().as("n")).where("trigger_id", "=", triggerId).executeTakeFirstOrThrow();
    return { runs, total: toNumber(n) };
  }
  /** Resolves when the database answers a trivial query (readiness). */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.s.db);
  }

  async close() {
    clearInterval(this.heartbeat);
    if (this.shared) await this.db.deleteFrom("instances").where("id", "=", this.instance).execute().catch(() => {});
    await this.s.close();
  }
}
