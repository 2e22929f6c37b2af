import { sql, type Transaction } from "kysely";
import { Storage, toNumber, type StoreLocation } from "../storage";
import { computeCid } from "./cid";
import { decodeUtf8 } from "../protocol/text";
import { Lru } from "../protocol/lru";
import { CODE_SCHEMA, type CodeDb } from "./codeStoreSchema";

/** Verified code kept in memory, by CID: at most this many bytes (least recently used dropped first), each at most a quarter. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** The most code one payer keeps stored, by default (VESTA_CODE_STORE_BYTES_PER_PAYER). */
export const DEFAULT_CODE_BYTES_PER_PAYER = 256 * 1024 * 1024;
/** CIDs whose stored bytes this process has verified (and their length), least recently used dropped first. */
const VERIFIED_CIDS = 100_000;
/** Payers whose newest code this process remembers (least recently used dropped first). */
const NEWEST_PAYERS = 100_000;
/** CIDs one transaction evicts at most (each holds a PostgreSQL lock until it commits); a store past it goes on in more. */
const EVICT_BATCH = 100;
/** Evicted CIDs waiting for a decision at most (past it, one more is given up on and said; ~100 bytes each). */
const MAX_UNDECIDED = 10_000;
/** A payer's newest code run or stored again within this long is not written again (it is its newest already). */
export const REUSE_UNWRITTEN_MS = 60_000;

export type CodeStoreOptions = {
  /** The most code bytes one payer keeps stored; past it, its least recently used code goes first. */
  bytesPerPayer: number;
  /** Told when a stored row does not hash to its CID (it then reads as missing). */
  onMismatch?: (cid: string, problem: string) => void;
  /** Told when code an eviction left undecided could not be decided (its row may then stay, owned by no payer). */
  onUndecided?: (cid: string, problem: string) => void;
  /** How long deciding about such code waits for the other transaction to end (default 60 s), trying again now and then. */
  undecidedWaitMs?: number;
};

/**
 * Action code by CID, as the exact bytes that were hashed: in a SQLite file, or in PostgreSQL
 * (DATABASE_URL) where every relayer replica reads what any of them stored. Content-addressed: a
 * CID is stored once, never changed, and what is read back is checked against its CID (and for
 * valid UTF-8) before it may run, once per process: a verified CID is remembered (bounded), so a
 * later read costs no hash. A row that fails (written by an older version, or altered in the
 * database) reads as missing. Verified code is kept in memory too (bounded), in front of the database.
 *
 * Each payer (who is billed for the runs that stored the code) owns what it stored, at most
 * `bytesPerPayer` in all: storing past that drops its least recently used code (a CID another payer
 * also stored stays theirs). Rows stored before owners were kept belong to no one and stay. A run
 * of (or a store of) the code that is already its payer's most recently used, within
 * REUSE_UNWRITTEN_MS of the last write, writes nothing: the order of the payer's code is already
 * right, only its time is up to a minute old (a run of the same action over and over costs no commit).
 */
export class CodeStore {
  private readonly cache = new Lru<string, Uint8Array>(CACHE_BYTES, { weigh: (b) => b.byteLength });
  private readonly verified = new Lru<string, number>(VERIFIED_CIDS);
  /** Each payer's most recently used code as last written here, and when. */
  private readonly newest = new Lru<string, { cid: string; at: number }>(NEWEST_PAYERS);
  private readonly onMismatch: (cid: string, problem: string) => void;
  private readonly onUndecided: (cid: string, problem: string) => void;
  /** Evicted code to decide about (CID → when it was evicted), off the storing requests' path: bounded, each CID once. */
  private readonly undecided = new Map<string, number>();
  /** The one loop deciding about them (one connection at a time, whatever their number). */
  private deciding?: Promise<void>;
  private closing = false;
  /** The last use time written (ms): each write is later than the one before, so two uses in one millisecond keep their order. */
  private lastUse = 0;

  private constructor(
    private readonly s: Storage<CodeDb>,
    private readonly opts: CodeStoreOptions,
  ) {
    this.onMismatch = opts.onMismatch ?? (() => {});
    this.onUndecided = opts.onUndecided ?? (() => {});
  }

  /** Opens (and migrates) the store at `where`. */
  static async open(where: StoreLocation, opts: CodeStoreOptions): Promise<CodeStore> {
    return new CodeStore(await Storage.open<CodeDb>(where, CODE_SCHEMA), opts);
  }

  /** The bytes stored under `cid`, verified to hash to it; undefined when none (or none valid) is stored. */
  async get(cid: string): Promise<Uint8Array | undefined> {
    const hit = this.cache.get(cid);
    if (hit) return hit;
    const row = await this.s.db.selectFrom("action_code").select("code").where("cid", "=", cid).executeTakeFirst();
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
   * then drops that payer's least recently used code until it holds at most bytesPerPayer, in one
   * transaction (one payer's stores take turns, across processes too), or more for a payer far over
   * its bytes (EVICT_BATCH CIDs each).
   */
  async put(cid: string, bytes: Uint8Array, payer: string): Promise<void> {
    if (this.isNewest(cid, payer) && this.verified.get(cid) === bytes.byteLength) return; // stored, its payer's newest
    const usedAt = this.useTime();
    /** CIDs evicted while another transaction held their turn: whether their code goes is decided once it ended (below). */
    const undecided: string[] = [];
    const dropped: string[] = [];
    let more = await this.s.transaction(async (trx) => {
      await this.s.dialect.serialize(trx, `action_code:${payer}`);
      // The code's own turn too: an eviction of this CID by another payer (below, in its transaction)
      // waits for this store to commit its owner row, or this store waits for the eviction to end.
      await this.s.dialect.serialize(trx, `action_code_cid:${cid}`);
      const code = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      await trx.insertInto("action_code").values({ cid, code, stored_at: Math.floor(Date.now() / 1000) }).onConflict((oc) => oc.doNothing()).execute();
      await trx
        .insertInto("action_code_owner")
        .values({ payer, cid, bytes: bytes.byteLength, used_at: usedAt })
        .onConflict((oc) => oc.columns(["payer", "cid"]).doUpdateSet((eb) => ({ used_at: eb.ref("excluded.used_at") })))
        .execute();
      return this.evict(trx, payer, cid, dropped, undecided);
    });
    try {
      // A payer far over its bytes (many small codes, then a large one) is brought back within them in
      // transactions of at most EVICT_BATCH CIDs: each CID evicted holds a lock until its transaction
      // ends, and PostgreSQL's lock table is shared by every connection (~6,400 locks by default).
      while (more)
        more = await this.s.transaction(async (trx) => {
          await this.s.dialect.serialize(trx, `action_code:${payer}`);
          return this.evict(trx, payer, cid, dropped, undecided);
        });
      this.newest.set(payer, { cid, at: Date.now() });
      this.verified.set(cid, bytes.byteLength);
      this.remember(cid, bytes);
    } finally {
      for (const c of dropped) this.forget(c);
      // Off this request's path: the store is committed, and what the other transaction does may take a while.
      for (const c of undecided) this.decide(c);
    }
  }

  /**
   * Drops `payer`'s least recently used code (never `keep`) while it holds more than bytesPerPayer,
   * at most EVICT_BATCH CIDs in `trx`: true when it still holds too much (go on in another
   * transaction). Deleted code is added to `gone`; code whose turn another transaction holds, to
   * `undecided`.
   */
  private async evict(trx: Transaction<CodeDb>, payer: string, keep: string, gone: string[], undecided: string[]): Promise<boolean> {
    let held = (await heldBy(trx, payer)).bytes;
    for (let evicted = 0; held > this.opts.bytesPerPayer; evicted++) {
      if (evicted === EVICT_BATCH) return true;
      const oldest = await trx
        .selectFrom("action_code_owner")
        .select(["cid", "bytes"])
        .where("payer", "=", payer)
        .where("cid", "<>", keep)
        .orderBy("used_at")
        .orderBy("cid")
        .limit(1)
        .executeTakeFirst();
      if (!oldest) break;
      await trx.deleteFrom("action_code_owner").where("payer", "=", payer).where("cid", "=", oldest.cid).execute();
      held -= oldest.bytes;
      // The code goes with its last owner. Another transaction may hold the CID's turn: a store of it
      // by another payer (its owner row, not committed yet, would not be seen here) or another
      // payer's eviction of it (which sees this one's owner row, not deleted yet, and keeps the
      // code). Whether the code still has an owner is then known only once that transaction ended:
      // decided after this one commits (decide). Taken without waiting (dropInTurn): this transaction holds
      // other turns already.
      const outcome = await this.dropInTurn(trx, oldest.cid);
      if (outcome === "busy") undecided.push(oldest.cid);
      else if (outcome) gone.push(oldest.cid);
    }
    return false;
  }

  /** Resolves once the evicted code undecided so far is decided (or given up on, and said). */
  async settled(): Promise<void> {
    while (this.deciding) await this.deciding;
  }

  private decide(cid: string): void {
    if (this.closing) return this.onUndecided(cid, "the code store was closing");
    if (!this.undecided.has(cid)) {
      if (this.undecided.size >= MAX_UNDECIDED) return this.onUndecided(cid, `${MAX_UNDECIDED} evicted CIDs wait for a decision already`);
      this.undecided.set(cid, Date.now());
    }
    this.deciding ??= this.decideAll().finally(() => (this.deciding = undefined));
  }

  /**
   * Tries each undecided CID in turn, each in a short transaction that takes the CID's turn only if
   * it is free (no connection waits on a lock), and again later, backing off, while another
   * transaction holds it; gives up (and says so) past undecidedWaitMs, or when the store closes.
   */
  private async decideAll(): Promise<void> {
    const waitMs = this.opts.undecidedWaitMs ?? 60_000;
    let pauseMs = 10;
    while (this.undecided.size) {
      let progress = false;
      for (const [cid, since] of [...this.undecided]) {
        if (this.closing) {
          this.undecided.delete(cid);
          this.onUndecided(cid, "the code store closed first");
          continue;
        }
        // A failed try (the database) is tried again as a held turn is; past waitMs, its error is what is said.
        let outcome: "busy" | boolean;
        let problem = `another transaction held its turn for more than ${waitMs} ms`;
        try {
          outcome = await this.s.transaction((trx) => this.dropInTurn(trx, cid));
        } catch (err) {
          outcome = "busy";
          problem = err instanceof Error ? err.message : String(err);
        }
        if (outcome === "busy") {
          if (Date.now() - since > waitMs) {
            this.undecided.delete(cid);
            this.onUndecided(cid, problem);
          }
          continue;
        }
        progress = true;
        this.undecided.delete(cid);
        if (outcome) this.forget(cid);
      }
      if (!this.undecided.size) return;
      pauseMs = progress ? 10 : Math.min(pauseMs * 2, 1000);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }

  /**
   * Deletes `cid`'s code if no payer owns it, when `trx` can take the CID's turn without waiting (no
   * store or eviction of it is under way: one that committed has its owner row counted, one that
   * rolled back has not): true when deleted, false when kept, "busy" when another transaction holds
   * the turn. Used by evictions, and by the decisions about what an eviction found busy: without
   * them, such code stayed with no payer owning, paying for or ever evicting it.
   */
  private async dropInTurn(trx: Transaction<CodeDb>, cid: string): Promise<"busy" | boolean> {
    return (await this.s.dialect.trySerialize(trx, `action_code_cid:${cid}`)) ? deleteOwnerless(trx, cid) : "busy";
  }

  /** `payer` ran `cid` again: its copy becomes its most recently used (nothing when the payer does not hold it). */
  async touch(cid: string, payer: string): Promise<void> {
    if (this.isNewest(cid, payer)) return;
    const r = await this.s.db.updateTable("action_code_owner").set({ used_at: this.useTime() }).where("payer", "=", payer).where("cid", "=", cid).executeTakeFirst();
    // Only code the payer holds becomes its newest: its own store of code another payer stored must still write its owner row.
    if (r.numUpdatedRows > 0n) this.newest.set(payer, { cid, at: Date.now() });
  }

  /** `cid` is `payer`'s most recently used code, written less than REUSE_UNWRITTEN_MS ago. */
  private isNewest(cid: string, payer: string): boolean {
    const last = this.newest.peek(payer);
    return last !== undefined && last.cid === cid && Date.now() - last.at < REUSE_UNWRITTEN_MS;
  }

  private useTime(): number {
    this.lastUse = Math.max(Date.now(), this.lastUse + 1);
    return this.lastUse;
  }

  /** What `payer` holds: its code bytes and how many CIDs. */
  heldBy(payer: string): Promise<{ bytes: number; cids: number }> {
    return heldBy(this.s.db, payer);
  }

  private remember(cid: string, bytes: Uint8Array): void {
    if (bytes.byteLength <= CACHE_BYTES / 4) this.cache.set(cid, bytes);
  }

  private forget(cid: string): void {
    this.cache.delete(cid);
    this.verified.delete(cid);
  }

  /** Resolves when the database answers a trivial query (readiness). */
  async ping(): Promise<void> {
    await sql`SELECT 1`.execute(this.s.db);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.settled();
    await this.s.close();
  }
}

/** Deletes `cid`'s code when `db` sees no owner row of it; true when it did. */
async function deleteOwnerless(db: Storage<CodeDb>["db"], cid: string): Promise<boolean> {
  const r = await db
    .deleteFrom("action_code")
    .where("cid", "=", cid)
    .where((eb) => eb.not(eb.exists(eb.selectFrom("action_code_owner").select("payer").where("cid", "=", cid))))
    .executeTakeFirst();
  return r.numDeletedRows > 0n;
}

async function heldBy(db: Storage<CodeDb>["db"], payer: string): Promise<{ bytes: number; cids: number }> {
  const r = await db
    .selectFrom("action_code_owner")
    .select((eb) => [eb.fn.sum<number>("bytes").as("bytes"), eb.fn.countAll<number>().as("cids")])
    .where("payer", "=", payer)
    .executeTakeFirstOrThrow();
  return { bytes: toNumber(r.bytes), cids: toNumber(r.cids) };
}
