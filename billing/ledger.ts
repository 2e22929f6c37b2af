import crypto from "node:crypto";
import { sql, type Kysely } from "kysely";
import { Storage, toNumber, type StoreLocation } from "../storage";
import type { Prepared } from "../storage/prepared";
import type { Payer } from "./types";
import { GroupCommit } from "./groupCommit";
import { BILLING_SCHEMA, type BillingDb } from "./schema";

export type Batch = { id: string; customerId: string; cents: number; count: number; createdAt: number; attempts: number };
/** "new"; "retry": an earlier attempt (prepared at `since`, ms) may have reached the provider; "done": credited already. */
export type CreditClaim = { state: "new" | "retry" | "done"; since: number };
/** What a customer may spend, as the ledger holds it: see Ledger.figures. */
export type Figures = { credit: number; syncedAt: number; pending: number; reserved: number };

/** A batch being sent is another process's for this long (it died, or its provider call hangs): then anyone may send it again (same key). */
export const BATCH_LEASE_MS = 60_000;

const now = () => Date.now();
type Q = Kysely<BillingDb>;

/**
 * The billing ledger (billing.sqlite in the data directory, or PostgreSQL when DATABASE_URL is set,
 * shared by every relayer replica): each account's customer record and cached credit, every debit
 * (a relayed write, the seconds of an action run) until it is settled to the provider, the
 * settlement batches (each one adjustment at the provider, whose idempotency key is the batch id),
 * and the payment intents credited. A debit is committed before the request answers, assigned to
 * exactly one batch, and marked settled only once the provider answered for that batch.
 *
 * Methods that write take the transaction to write in (`q`; the database itself by default), so a
 * caller can make several of them one commit.
 */
export class Ledger {
  /** Writes committed with the others of their turn of the event loop (SQLite); every read here flushes them first. */
  readonly commits: GroupCommit;

  /** A run's debit, the hot path's insert (compiled once: see Prepared). */
  private readonly insertDebit: Prepared<BillingDb, { customer_id: string; cents: number; kind: string; detail: string; created_at: number }>;

  private constructor(readonly storage: Storage<BillingDb>) {
    this.commits = new GroupCommit(storage);
    const unsettled = storage.dialect.bool(false);
    this.insertDebit = storage.prepare((db, p) =>
      db.insertInto("debits").values({ customer_id: p("customer_id"), cents: p("cents"), kind: p("kind"), detail: p("detail"), created_at: p("created_at"), settled: unsettled }),
    );
  }

  /**
   * Opens (and migrates) the ledger. SQLite commits are durable across a crash of the process
   * (what recovery is for) without an fsync each (synchronous NORMAL): every request commits (a
   * reservation, then its debit), and an fsync per commit costs milliseconds. What must survive a
   * power loss too is made so by `durable()` before anything is sent to the provider.
   */
  static async open(where: StoreLocation): Promise<Ledger> {
    const storage = await Storage.open<BillingDb>({ ...where, synchronous: "NORMAL" }, BILLING_SCHEMA);
    // A SQLite file belongs to one process: a lease left by the one before (it died sending) is void.
    if (!storage.dialect.shared) await storage.db.updateTable("batches").set({ lease_until: null }).where("lease_until", "is not", null).execute();
    return new Ledger(storage);
  }

  get db(): Q {
    return this.storage.db;
  }

  async customer(payer: Payer): Promise<{ customerId: string; creditCents: number; syncedAt: number } | undefined> {
    await this.commits.flush();
    const row = await this.db.selectFrom("customers").select(["customer_id", "credit_cents", "synced_at"]).where("payer", "=", payer.key).executeTakeFirst();
    return row && { customerId: row.customer_id, creditCents: row.credit_cents, syncedAt: row.synced_at };
  }

  /**
   * Records the payer's customer record unless the payer has one already, and answers the one
   * recorded (insert-or-get on the payer's primary key): the first writer's row stands, whoever
   * writes later (a replica whose provider lookup was slower) changes neither its id nor its
   * credit, which settlements may have moved since that lookup's answer.
   */
  async putCustomer(payer: Payer, customerId: string, creditCents: number): Promise<string> {
    await this.db
      .insertInto("customers")
      .values({ payer: payer.key, customer_id: customerId, credit_cents: creditCents, synced_at: now() })
      .onConflict((oc) => oc.column("payer").doNothing())
      .execute();
    return (await this.db.selectFrom("customers").select("customer_id").where("payer", "=", payer.key).executeTakeFirstOrThrow()).customer_id;
  }

  /**
   * What the customer may spend: its credit as the provider last answered it (and when, ms), the
   * debits not settled yet and the credit reserved, in one read. `lock`: the customer's row stays
   * locked until `q`'s transaction ends (PostgreSQL: admissions of every replica take turns).
   */
  async figures(customerId: string, q: Q = this.db, lock = false): Promise<Figures> {
    if (q === this.db) await this.commits.flush();
    let credit = q.selectFrom("customers").select(["credit_cents", "synced_at"]).where("customer_id", "=", customerId);
    if (lock) credit = this.storage.dialect.forUpdate(credit);
    const row = await credit.executeTakeFirst();
    const sums = await q
      .selectNoFrom((eb) => [
        eb.selectFrom("debits").select((e) => e.fn.sum<number>("cents").as("s")).where("customer_id", "=", customerId).where(sql<boolean>`settled = false`).as("pending"),
        eb.selectFrom("reservations").select((e) => e.fn.sum<number>("cents").as("s")).where("customer_id", "=", customerId).as("reserved"),
      ])
      .executeTakeFirstOrThrow();
    return { credit: row?.credit_cents ?? 0, syncedAt: row?.synced_at ?? 0, pending: toNumber(sums.pending), reserved: toNumber(sums.reserved) };
  }

  /**
   * Runs `fn` (a provider call that reads or changes the customer's credit, then the recording of
   * its answer) in turn with every other such call for that customer, in every replica: on
   * PostgreSQL in a transaction holding an advisory lock on the customer (`fn` gets it, to record
   * in); on SQLite (one process, whose settler runs them one at a time already) as it is, with no
   * transaction (`fn` gets undefined). Without the turn, a replica could record a credit the
   * provider answered before another replica's adjustment after that adjustment was recorded
   * (settled): its debits would be spendable again.
   */
  async creditTurn<T>(customerId: string, fn: (q?: Q) => Promise<T>): Promise<T> {
    if (!this.storage.dialect.shared) return fn();
    return this.storage.transaction(async (trx) => {
      await this.storage.dialect.serialize(trx, `billing-credit:${customerId}`);
      return fn(trx);
    });
  }

  /** Records the customer's credit as the provider answered it. */
  async setCredit(customerId: string, creditCents: number, q: Q = this.db): Promise<void> {
    await q.updateTable("customers").set({ credit_cents: creditCents, synced_at: now() }).where("customer_id", "=", customerId).execute();
  }

  /** Records one debit (committed with `q`). */
  async debit(customerId: string, cents: number, kind: string, detail: string, q: Q = this.db): Promise<void> {
    await this.insertDebit.run(q, { customer_id: customerId, cents, kind, detail: this.storage.dialect.text(detail), created_at: now() });
  }

  /** Debits not settled yet (what the cached credit does not reflect). */
  async unsettledCents(customerId: string): Promise<number> {
    return (await this.figures(customerId)).pending;
  }

  /**
   * Makes every commit so far survive a power loss (SQLite: a checkpoint, which syncs the
   * write-ahead log; PostgreSQL commits are durable already): called before a batch or a credit
   * goes to the provider, so that what the provider applied is never forgotten here and sent again
   * under a new key. A power loss can lose only commits made since: debits and reservations not yet
   * batched (a charge missed, never one made twice).
   */
  async durable(): Promise<void> {
    await this.commits.flush();
    if (this.storage.dialect.shared) return;
    // Busy: the checkpointer's thread (storage/checkpointer.ts) is in one, which may have synced the
    // log only up to where it began: this one must run itself.
    for (let attempt = 0; ; attempt++) {
      const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(PASSIVE)`.execute(this.db);
      if (rows[0]?.busy !== 1) return;
      if (attempt >= 200) throw new Error("billing: the ledger's log could not be synced (a checkpoint stayed busy for 2 s)");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * Puts every debit not in a batch yet into a new batch per customer (one transaction). Replicas
   * doing it at once each take other debits (the assignment only takes debits still unassigned).
   */
  async batchUnbatched(): Promise<void> {
    await this.commits.flush();
    await this.storage.transaction(async (trx) => {
      const customers = await trx.selectFrom("debits").select("customer_id").distinct().where("batch", "is", null).execute();
      for (const { customer_id } of customers) {
        const id = `vesta-batch-${crypto.randomUUID()}`;
        await trx.updateTable("debits").set({ batch: id }).where("customer_id", "=", customer_id).where("batch", "is", null).execute();
        const totals = await trx.selectFrom("debits").select((e) => [e.fn.sum<number>("cents").as("cents"), e.fn.countAll<number>().as("count")]).where("batch", "=", id).executeTakeFirstOrThrow();
        if (toNumber(totals.count) === 0) continue; // another replica took them meanwhile
        await trx.insertInto("batches").values({ id, customer_id, cents: toNumber(totals.cents), count: toNumber(totals.count), created_at: now() }).execute();
      }
    });
  }

  /**
   * Takes the batches not settled yet that no live process is sending, oldest first (left by a
   * failed send, or by a process that died), for `leaseMs`: each send is counted before it goes out
   * (a batch with attempts may have reached the provider). Replicas on one PostgreSQL each take
   * other batches (locked rows are skipped; a leased one is left to its holder).
   */
  async claimBatches(leaseMs = BATCH_LEASE_MS): Promise<Batch[]> {
    await this.commits.flush();
    return this.storage.transaction(async (trx) => {
      const t = now();
      const open = await this.storage.dialect
        .skipLocked(
          trx.selectFrom("batches").select(["id", "customer_id", "cents", "count", "created_at", "attempts"])
            .where("settled_at", "is", null)
            .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", t)]))
            .orderBy("created_at"),
        )
        .execute();
      if (open.length === 0) return [];
      await trx.updateTable("batches").set((eb) => ({ attempts: eb("attempts", "+", 1), lease_until: t + leaseMs })).where("id", "in", open.map((b) => b.id)).execute();
      return open.map((b) => ({ id: b.id, customerId: b.customer_id, cents: b.cents, count: b.count, createdAt: b.created_at, attempts: b.attempts }));
    });
  }

  /** Gives a claimed batch back (its send failed): the next settlement, here or in another replica, sends it again. */
  async unclaim(batchId: string): Promise<void> {
    await this.db.updateTable("batches").set({ lease_until: null }).where("id", "=", batchId).where("settled_at", "is", null).execute();
  }

  /** Batches not settled yet, oldest first. */
  async openBatches(): Promise<Batch[]> {
    await this.commits.flush();
    const rows = await this.db.selectFrom("batches").select(["id", "customer_id", "cents", "count", "created_at", "attempts"]).where("settled_at", "is", null).orderBy("created_at").execute();
    return rows.map((b) => ({ id: b.id, customerId: b.customer_id, cents: b.cents, count: b.count, createdAt: b.created_at, attempts: b.attempts }));
  }

  /** The provider applied the batch: its debits are settled and the customer's credit is `endingCreditCents`. */
  async settleBatch(batch: Batch, adjustmentId: string, endingCreditCents: number, q?: Q): Promise<void> {
    const settle = async (trx: Q) => {
      const done = await trx.updateTable("batches").set({ settled_at: now(), adjustment_id: adjustmentId, lease_until: null }).where("id", "=", batch.id).where("settled_at", "is", null).executeTakeFirst();
      if (done.numUpdatedRows === 0n) return;
      await trx.updateTable("debits").set({ settled: this.storage.dialect.bool(true) }).where("batch", "=", batch.id).execute();
      await this.setCredit(batch.customerId, endingCreditCents, trx);
    };
    await (q ? settle(q) : this.storage.transaction(settle));
  }

  /** Starts crediting a payment intent, or says it was credited or attempted before. */
  async claimCredit(paymentIntent: string, customerId: string, cents: number): Promise<CreditClaim> {
    const since = now();
    const inserted = await this.db.insertInto("credits").values({ payment_intent: paymentIntent, customer_id: customerId, cents, created_at: since }).onConflict((oc) => oc.column("payment_intent").doNothing()).executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 1n) return { state: "new", since };
    const row = await this.db.selectFrom("credits").select(["created_at", "credited_at"]).where("payment_intent", "=", paymentIntent).executeTakeFirstOrThrow();
    return { state: row.credited_at === null ? "retry" : "done", since: row.created_at };
  }

  /**
   * The provider applied the payment's credit: it is credited, and the customer's credit is
   * `endingCreditCents`; false (nothing recorded) when it was credited already. A second credit of one
   * payment (two replicas, the webhook and a confirmation) gets the provider's first answer again
   * (the same idempotency key): that figure may predate settlements recorded since, so it is not
   * recorded over them.
   */
  async finishCredit(paymentIntent: string, customerId: string, adjustmentId: string, endingCreditCents: number, q?: Q): Promise<boolean> {
    const finish = async (trx: Q) => {
      const done = await trx.updateTable("credits").set({ credited_at: now(), adjustment_id: adjustmentId }).where("payment_intent", "=", paymentIntent).where("credited_at", "is", null).executeTakeFirst();
      if (done.numUpdatedRows === 0n) return false;
      await this.setCredit(customerId, endingCreditCents, trx);
      return true;
    };
    return q ? finish(q) : this.storage.transaction(finish);
  }

  /** Whether the payment was credited (finishCredit recorded it). */
  async credited(paymentIntent: string, q: Q = this.db): Promise<boolean> {
    const row = await q.selectFrom("credits").select("credited_at").where("payment_intent", "=", paymentIntent).executeTakeFirst();
    return row?.credited_at !== null && row?.credited_at !== undefined;
  }

  async close(): Promise<void> {
    await this.commits.flush();
    await this.storage.close();
  }
}
