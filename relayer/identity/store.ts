import crypto from "node:crypto";
import path from "node:path";
import { secondsUntilRoom, Storage, toNumber, type StoreLocation } from "../../storage";
import { AppError } from "../errors";
import { IDENTITY_SCHEMA, type IdentityDb } from "./storeSchema";

const HOUR_MS = 3_600_000;
/** Pending things of one kind kept at a time, all clients together (then 503 identity_busy rather than forget one). */
export const MAX_PENDING = 100_000;
/** Pending things of one kind one client (its address) may hold at a time (then 429): no client fills MAX_PENDING alone. */
export const MAX_PENDING_PER_CLIENT = 20;

export type StoredPasskey = IdentityDb["identity_passkeys"];
export type LinkRow = { method: string; issuer: string; subject: string; identity_id: string; linked_at: number; unlinked: boolean };

/** What the store's reads and deletes run on: the database, or a transaction. */
type Db = Pick<Storage<IdentityDb>["db"], "selectFrom" | "deleteFrom">;

const busy = () => new AppError(503, "identity_busy", "this node holds as many pending sign-ins as it keeps; nothing was done, try again shortly");

/**
 * What identity sign-in keeps between requests, on the storage layer (`identity.sqlite` in the
 * data directory, or PostgreSQL with DATABASE_URL, shared by every replica): pending e-mail codes,
 * used OpenID nonces, WebAuthn challenges (each with its expiry; taken once by a conditional
 * delete, so of two uses racing one wins), the mailboxes' hourly send budget (and each client's
 * share of it), registered passkeys and the links of sign-in methods to identities.
 */
export class IdentityStore {
  /** MACs a link row's fields (set by the Identity service, with a key of the key provider). */
  private linkMac: (fields: string) => Promise<string> = async () => {
    throw new Error("the identity store's link MAC is not set");
  };

  /** The ceilings of pending things (tests lower them). */
  limits = { total: MAX_PENDING, perClient: MAX_PENDING_PER_CLIENT };

  private constructor(private readonly s: Storage<IdentityDb>) {}

  /** Link rows are MACed with `mac` (a key only the TEE derives): written and checked here. */
  useLinkMac(mac: (fields: string) => Promise<string>): void {
    this.linkMac = mac;
  }

  private macOf(method: string, issuer: string, subject: string, identityId: string, unlinked: boolean): Promise<string> {
    return this.linkMac(JSON.stringify(["vesta-method-link-v1", method, issuer, subject, identityId, unlinked]));
  }

  /** The row as stored, if its MAC holds; a row that does not verify (written behind the service's back) throws. */
  private async verified(r: IdentityDb["identity_links"]): Promise<LinkRow> {
    const row = asLink(r);
    const expected = await this.macOf(row.method, row.issuer, row.subject, row.identity_id, row.unlinked);
    if (typeof r.mac !== "string" || r.mac.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(r.mac), Buffer.from(expected))) {
      throw new AppError(403, "method_unlinked", "this sign-in method's link does not verify (it was not written by this service): it signs into nothing");
    }
    return row;
  }

  static async open(where: StoreLocation): Promise<IdentityStore> {
    return new IdentityStore(await Storage.open<IdentityDb>(where, IDENTITY_SCHEMA));
  }

  static inDataDir(dataDir: string, databaseUrl: string | undefined): Promise<IdentityStore> {
    return IdentityStore.open({ databaseUrl, sqliteFile: path.join(dataDir, "identity.sqlite") });
  }

  close(): Promise<void> {
    return this.s.close();
  }

  /** Drops what expired (pending things, and sends older than an hour). */
  sweep(now = Date.now()): Promise<void> {
    return this.sweepIn(this.s.db, now);
  }

  private async sweepIn(db: Db, now: number): Promise<void> {
    await db.deleteFrom("identity_once").where("expires_at", "<=", now).execute();
    await db.deleteFrom("identity_sends").where("sent_at", "<=", now - HOUR_MS).execute();
  }

  /** Sweeps every `everyMs` until `signal` aborts. */
  start(signal: AbortSignal, everyMs = 60_000): void {
    const t = setInterval(() => void this.sweep().catch(() => {}), everyMs);
    t.unref();
    signal.addEventListener("abort", () => clearInterval(t), { once: true });
  }

  /**
   * Keeps `body` under (kind, key) until `expiresAt` for `client` (who asked), replacing what was
   * there (a client's new e-mail code for an address voids its last: the key names both). 429
   * when the client holds limits.perClient unexpired things of the kind already; 503
   * identity_busy when all clients together hold limits.total. The counts and the insert are one
   * transaction, and puts of one kind take turns (replicas too): racing puts cannot pass a limit.
   */
  async put(kind: string, key: string, body: string, expiresAt: number, client: string, now = Date.now()): Promise<void> {
    await this.s.transaction(async (trx) => {
      await this.s.dialect.serialize(trx, `identity-once:${kind}`);
      await this.roomIn(trx, kind, key, client, now);
      await trx
        .insertInto("identity_once")
        .values({ kind, key, body, expires_at: expiresAt, attempts: 0, client })
        .onConflict((oc) => oc.columns(["kind", "key"]).doUpdateSet({ body, expires_at: expiresAt, attempts: 0, client }))
        .execute();
    });
  }

  /** Marks (kind, key) used until `expiresAt`: true when it was free, false when it was used already (of two racing, one gets true). */
  async once(kind: string, key: string, expiresAt: number, now = Date.now()): Promise<boolean> {
    await this.totalRoom(this.s.db, kind, now);
    const row = await this.s.db
      .insertInto("identity_once")
      .values({ kind, key, body: "", expires_at: expiresAt, attempts: 0, client: "" })
      .onConflict((oc) => oc.columns(["kind", "key"]).doUpdateSet({ expires_at: expiresAt }).where("identity_once.expires_at", "<=", now))
      .returning("key")
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Whether a put of (kind, key) for `client` would fit (see put), without keeping anything: a caller
   * checks it before spending a budget for the put (put checks again, in its turn).
   */
  room(kind: string, key: string, client: string, now = Date.now()): Promise<void> {
    return this.roomIn(this.s.db, kind, key, client, now);
  }

  private async roomIn(db: Db, kind: string, key: string, client: string, now: number): Promise<void> {
    await this.clientRoom(db, kind, key, client, now);
    await this.totalRoom(db, kind, now);
  }

  /** 429 when `client` holds limits.perClient unexpired things of `kind` (other than `key`, which a put replaces). */
  private async clientRoom(db: Db, kind: string, key: string, client: string, now: number): Promise<void> {
    const mine = await db.selectFrom("identity_once").select((eb) => eb.fn.countAll().as("n")).where("kind", "=", kind).where("client", "=", client).where("expires_at", ">", now).where("key", "!=", key).executeTakeFirstOrThrow();
    if (toNumber(mine.n) >= this.limits.perClient) {
      throw new AppError(429, "rate_limited", `this client holds ${this.limits.perClient} pending sign-in codes already (the most one client may): use one, or wait until they expire`);
    }
  }

  /** 503 identity_busy when all clients together hold limits.total things of `kind` (after dropping the expired). */
  private async totalRoom(db: Db, kind: string, now: number): Promise<void> {
    const count = async () => toNumber((await db.selectFrom("identity_once").select((eb) => eb.fn.countAll().as("n")).where("kind", "=", kind).executeTakeFirstOrThrow()).n);
    if ((await count()) < this.limits.total) return;
    await this.sweepIn(db, now);
    if ((await count()) >= this.limits.total) throw busy();
  }

  /** The body of (kind, key), without taking it; an expired one is deleted (and undefined answered). */
  async peek(kind: string, key: string, now = Date.now()): Promise<{ body: string; attempts: number } | undefined> {
    const row = await this.s.db.selectFrom("identity_once").select(["body", "attempts", "expires_at"]).where("kind", "=", kind).where("key", "=", key).executeTakeFirst();
    if (row && toNumber(row.expires_at) <= now) {
      await this.s.db.deleteFrom("identity_once").where("kind", "=", kind).where("key", "=", key).where("expires_at", "<=", now).execute();
      return undefined;
    }
    return row && { body: row.body, attempts: toNumber(row.attempts) };
  }

  /** Takes (kind, key) if unexpired (and its body is `body` when given): its body, or undefined when another use took it first. */
  async take(kind: string, key: string, now = Date.now(), body?: string): Promise<string | undefined> {
    let q = this.s.db.deleteFrom("identity_once").where("kind", "=", kind).where("key", "=", key).where("expires_at", ">", now);
    if (body !== undefined) q = q.where("body", "=", body);
    const row = await q.returning("body").executeTakeFirst();
    return row?.body;
  }

  /**
   * Spends one of the `max` guesses at (kind, key) holding `body`, before the guess is judged: its
   * attempts + 1, or undefined when none is left (the code is gone: taken, replaced, expired, or
   * its `max` guesses are spent). One conditional update: of any number of guesses racing (one
   * replica or several), at most `max` get a number, so at most `max` are ever judged. The caller
   * voids the code (take) when the last guess was wrong.
   */
  async spendGuess(kind: string, key: string, body: string, max: number, now = Date.now()): Promise<number | undefined> {
    const row = await this.s.db
      .updateTable("identity_once")
      .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
      .where("kind", "=", kind).where("key", "=", key).where("body", "=", body).where("expires_at", ">", now).where("attempts", "<", max)
      .returning("attempts")
      .executeTakeFirst();
    return row ? toNumber(row.attempts) : undefined;
  }

  /**
   * Counts one send to `mailbox` for `client` against the mailbox's hourly budget (`perHour`) and
   * the client's share of it (`perClient`): undefined when both fit (and it is counted), else the
   * budget that is spent ("mailbox", or the "client"'s share) and the seconds until a send fits it.
   * Replicas take turns per mailbox (the counts, then an insert).
   */
  async spendSend(mailbox: string, client: string, budget: { perHour: number; perClient: number }, now = Date.now()): Promise<{ spent: "mailbox" | "client"; retry: number } | undefined> {
    return this.s.transaction(async (trx) => {
      await this.s.dialect.serialize(trx, `identity-send:${mailbox}`);
      const recent = await trx.selectFrom("identity_sends").select(["sent_at", "client"]).where("mailbox", "=", mailbox).where("sent_at", ">", now - HOUR_MS).orderBy("sent_at").execute();
      const mine = recent.filter((r) => r.client === client);
      const wait = (sends: typeof recent, limit: number) => secondsUntilRoom(sends.map((r) => r.sent_at), limit, HOUR_MS, now);
      // A send fits once both budgets have room: the retry is the later of the two (the budget named is the mailbox's when it is full).
      const [mailboxWait, clientWait] = [wait(recent, budget.perHour), wait(mine, budget.perClient)];
      if (mailboxWait > 0 || clientWait > 0) return { spent: mailboxWait > 0 ? ("mailbox" as const) : ("client" as const), retry: Math.max(mailboxWait, clientWait) };
      await trx.insertInto("identity_sends").values({ id: crypto.randomUUID(), mailbox, client, sent_at: now }).execute();
      return undefined;
    });
  }

  /** The identity's session epoch (0 until its first unlink): a session holds only while it carries this one. */
  epoch(identityId: string): Promise<number> {
    return this.epochIn(this.s.db, identityId);
  }

  private async epochIn(db: Pick<Storage<IdentityDb>["db"], "selectFrom">, identityId: string): Promise<number> {
    const row = await db.selectFrom("identity_epochs").select("epoch").where("identity_id", "=", identityId).executeTakeFirst();
    return row ? toNumber(row.epoch) : 0;
  }

  async addPasskey(p: StoredPasskey): Promise<boolean> {
    const row = await this.s.db.insertInto("identity_passkeys").values(p).onConflict((oc) => oc.column("credential_id").doNothing()).returning("credential_id").executeTakeFirst();
    return row !== undefined;
  }

  async passkey(credentialId: string): Promise<StoredPasskey | undefined> {
    const row = await this.s.db.selectFrom("identity_passkeys").selectAll().where("credential_id", "=", credentialId).executeTakeFirst();
    return row && { ...row, counter: toNumber(row.counter), created_at: toNumber(row.created_at), used_at: toNumber(row.used_at) };
  }

  /** Moves the credential's counter from `from` to `to`: false when another assertion moved it first. */
  async advanceCounter(credentialId: string, from: number, to: number, now = Date.now()): Promise<boolean> {
    const r = await this.s.db.updateTable("identity_passkeys").set({ counter: to, used_at: now }).where("credential_id", "=", credentialId).where("counter", "=", from).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async link(method: string, issuer: string, subject: string): Promise<LinkRow | undefined> {
    const row = await this.s.db.selectFrom("identity_links").selectAll().where("method", "=", method).where("issuer", "=", issuer).where("subject", "=", subject).executeTakeFirst();
    return row && this.verified(row);
  }

  async links(identityId: string): Promise<LinkRow[]> {
    const rows = await this.s.db.selectFrom("identity_links").selectAll().where("identity_id", "=", identityId).orderBy("linked_at").orderBy("method").orderBy("issuer").orderBy("subject").execute();
    const out: LinkRow[] = [];
    for (const r of rows) {
      const v = await this.verified(r).catch(() => undefined); // a forged row is not listed
      if (v) out.push(v);
    }
    return out;
  }

  /** Records that a method signs into `identityId` unless a row for it exists already: the row that holds. */
  async claim(method: string, issuer: string, subject: string, identityId: string, now = Date.now()): Promise<LinkRow> {
    const mac = await this.macOf(method, issuer, subject, identityId, false);
    await this.s.db
      .insertInto("identity_links")
      .values({ method, issuer, subject, identity_id: identityId, linked_at: now, unlinked: this.s.dialect.bool(false), mac })
      .onConflict((oc) => oc.columns(["method", "issuer", "subject"]).doNothing())
      .execute();
    return (await this.link(method, issuer, subject))!;
  }

  /**
   * Links a method to `identityId` in one transaction: refused (false) when its row names another
   * identity and is still linked. `ownedElsewhere` is asked, in the transaction, whether a method
   * with no row already owns an identity of its own. `epoch` given: "revoked" unless it is still the
   * identity's session epoch (checked under the identity's lock, which unlinks take too).
   */
  async attach(method: string, issuer: string, subject: string, identityId: string, ownedElsewhere: () => Promise<boolean>, opts: { epoch?: number; now?: number } = {}): Promise<"linked" | "already" | "taken" | "revoked"> {
    const now = opts.now ?? Date.now();
    const mac = await this.macOf(method, issuer, subject, identityId, false);
    return this.s.transaction(async (trx) => {
      await this.s.dialect.serialize(trx, `identity-link:${identityId}`);
      if (opts.epoch !== undefined && opts.epoch !== (await this.epochIn(trx, identityId))) return "revoked";
      await this.s.dialect.serialize(trx, `identity-method:${method}\n${issuer}\n${subject}`);
      const q = trx.selectFrom("identity_links").selectAll().where("method", "=", method).where("issuer", "=", issuer).where("subject", "=", subject);
      const found = await this.s.dialect.forUpdate(q).executeTakeFirst();
      const row = found && (await this.verified(found).catch(() => undefined)); // a forged row is replaced by this proven link
      if (row && !row.unlinked) return row.identity_id === identityId ? "already" : "taken";
      if (!row && (await ownedElsewhere())) return "taken";
      await trx
        .insertInto("identity_links")
        .values({ method, issuer, subject, identity_id: identityId, linked_at: now, unlinked: this.s.dialect.bool(false), mac })
        .onConflict((oc) => oc.columns(["method", "issuer", "subject"]).doUpdateSet({ identity_id: identityId, linked_at: now, unlinked: this.s.dialect.bool(false), mac }))
        .execute();
      return "linked";
    });
  }

  /**
   * Unlinks a method of `identityId` in one transaction, refused ("last") when it is the identity's
   * only linked method: "unlinked", "last", or "not_linked" (not one of its methods). Unlinks of
   * one identity take turns, so two racing cannot leave it with none. It bumps the identity's
   * session epoch (revoking its sessions); `epoch` given: refused ("revoked") unless it is still the
   * identity's (a session revoked by an unlink that committed meanwhile changes nothing).
   */
  async detach(method: string, issuer: string, subject: string, identityId: string, epoch?: number): Promise<"unlinked" | "last" | "not_linked" | "revoked"> {
    const mac = await this.macOf(method, issuer, subject, identityId, true);
    return this.s.transaction(async (trx) => {
      await this.s.dialect.serialize(trx, `identity-link:${identityId}`);
      if (epoch !== undefined && epoch !== (await this.epochIn(trx, identityId))) return "revoked";
      const q = trx.selectFrom("identity_links").selectAll().where("identity_id", "=", identityId);
      const rows: LinkRow[] = [];
      for (const r of await this.s.dialect.forUpdate(q).execute()) {
        const v = await this.verified(r).catch(() => undefined); // a forged row is no method of the identity
        if (v && !v.unlinked) rows.push(v);
      }
      if (!rows.some((r) => r.method === method && r.issuer === issuer && r.subject === subject)) return "not_linked";
      if (rows.length <= 1) return "last";
      await trx
        .updateTable("identity_links")
        .set({ unlinked: this.s.dialect.bool(true), mac })
        .where("method", "=", method).where("issuer", "=", issuer).where("subject", "=", subject).where("identity_id", "=", identityId)
        .execute();
      await trx // in the same transaction: no session outlives the unlink, on any replica
        .insertInto("identity_epochs")
        .values({ identity_id: identityId, epoch: 1 })
        .onConflict((oc) => oc.column("identity_id").doUpdateSet((eb) => ({ epoch: eb("identity_epochs.epoch", "+", 1) })))
        .execute();
      return "unlinked";
    });
  }
}

const asLink = (r: IdentityDb["identity_links"]): LinkRow => ({
  method: r.method,
  issuer: r.issuer,
  subject: r.subject,
  identity_id: r.identity_id,
  linked_at: toNumber(r.linked_at),
  unlinked: r.unlinked === true || r.unlinked === 1,
});
