import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type { Payer } from "./types";
import { GroupCommit } from "./groupCommit";

export type Batch = { id: string; customerId: string; cents: number; count: number; createdAt: number; attempts: number };
/** "new"; "retry": an earlier attempt (prepared at `since`, ms) may have reached the provider; "done": credited already. */
export type CreditClaim = { state: "new" | "retry" | "done"; since: number };

const SCHEMA = `
CREATE TABLE IF NOT EXISTS customers (
  payer TEXT PRIMARY KEY, customer_id TEXT NOT NULL UNIQUE, credit_cents INTEGER NOT NULL, synced_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS debits (
  id INTEGER PRIMARY KEY AUTOINCREMENT, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, kind TEXT NOT NULL,
  detail TEXT NOT NULL, created_at INTEGER NOT NULL, batch TEXT, settled INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS debits_unbatched ON debits (customer_id) WHERE batch IS NULL;
CREATE INDEX IF NOT EXISTS debits_unsettled ON debits (customer_id) WHERE settled = 0;
CREATE TABLE IF NOT EXISTS batches (
  id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, count INTEGER NOT NULL, created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, settled_at INTEGER, adjustment_id TEXT);
CREATE TABLE IF NOT EXISTS credits (
  payment_intent TEXT PRIMARY KEY, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, created_at INTEGER NOT NULL,
  credited_at INTEGER, adjustment_id TEXT);
`;

const now = () => Date.now();

/**
 * The billing ledger, a SQLite file: each account's customer record and cached credit, every debit
 * (a relayed write, the seconds of an action run) until it is settled to the provider, the
 * settlement batches (each one adjustment at the provider, whose idempotency key is the batch id),
 * and the payment intents credited. A debit is committed before the request answers, assigned to
 * exactly one batch, and marked settled only once the provider answered for that batch.
 */
export class Ledger {
  readonly db: Database.Database;
  /** Writes committed with the others of their turn of the event loop; every read here flushes them first. */
  readonly commits: GroupCommit;
  private readonly stmts;

  constructor(file: string) {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    // Commits are durable across a crash of the process (what recovery is for) without an fsync each:
    // every request commits (a reservation, then its debit) on the event loop, and an fsync per commit
    // costs milliseconds. What must survive a power loss too is made so by `durable()` before anything
    // is sent to the provider.
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(SCHEMA);
    this.commits = new GroupCommit(this.db);
    const db = this.db;
    this.stmts = {
      customer: db.prepare<[string], { customer_id: string; credit_cents: number; synced_at: number }>("SELECT customer_id, credit_cents, synced_at FROM customers WHERE payer = ?"),
      putCustomer: db.prepare<[string, string, number, number]>(
        "INSERT INTO customers (payer, customer_id, credit_cents, synced_at) VALUES (?, ?, ?, ?) ON CONFLICT (payer) DO UPDATE SET customer_id = excluded.customer_id, credit_cents = excluded.credit_cents, synced_at = excluded.synced_at",
      ),
      creditOf: db.prepare<[string], { credit_cents: number; synced_at: number }>("SELECT credit_cents, synced_at FROM customers WHERE customer_id = ?"),
      setCredit: db.prepare<[number, number, string]>("UPDATE customers SET credit_cents = ?, synced_at = ? WHERE customer_id = ?"),
      unsettled: db.prepare<[string], { cents: number | null }>("SELECT SUM(cents) AS cents FROM debits WHERE customer_id = ? AND settled = 0"),
      debit: db.prepare<[string, number, string, string, number]>("INSERT INTO debits (customer_id, cents, kind, detail, created_at) VALUES (?, ?, ?, ?, ?)"),
      unbatchedCustomers: db.prepare<[], { customer_id: string }>("SELECT DISTINCT customer_id FROM debits WHERE batch IS NULL"),
      assign: db.prepare<[string, string]>("UPDATE debits SET batch = ? WHERE customer_id = ? AND batch IS NULL"),
      batchTotals: db.prepare<[string], { cents: number; count: number }>("SELECT SUM(cents) AS cents, COUNT(*) AS count FROM debits WHERE batch = ?"),
      insertBatch: db.prepare<[string, string, number, number, number]>("INSERT INTO batches (id, customer_id, cents, count, created_at) VALUES (?, ?, ?, ?, ?)"),
      openBatches: db.prepare<[], { id: string; customer_id: string; cents: number; count: number; created_at: number; attempts: number }>(
        "SELECT id, customer_id, cents, count, created_at, attempts FROM batches WHERE settled_at IS NULL ORDER BY created_at",
      ),
      attempt: db.prepare<[string]>("UPDATE batches SET attempts = attempts + 1 WHERE id = ?"),
      settleBatch: db.prepare<[number, string, string]>("UPDATE batches SET settled_at = ?, adjustment_id = ? WHERE id = ? AND settled_at IS NULL"),
      settleDebits: db.prepare<[string]>("UPDATE debits SET settled = 1 WHERE batch = ?"),
      credit: db.prepare<[string], { created_at: number; credited_at: number | null }>("SELECT created_at, credited_at FROM credits WHERE payment_intent = ?"),
      claimCredit: db.prepare<[string, string, number, number]>("INSERT INTO credits (payment_intent, customer_id, cents, created_at) VALUES (?, ?, ?, ?)"),
      finishCredit: db.prepare<[number, string, string]>("UPDATE credits SET credited_at = ?, adjustment_id = ? WHERE payment_intent = ? AND credited_at IS NULL"),
    };
  }

  customer(payer: Payer): { customerId: string; creditCents: number; syncedAt: number } | undefined {
    this.commits.flush();
    const row = this.stmts.customer.get(payer.key);
    return row && { customerId: row.customer_id, creditCents: row.credit_cents, syncedAt: row.synced_at };
  }

  putCustomer(payer: Payer, customerId: string, creditCents: number): void {
    this.stmts.putCustomer.run(payer.key, customerId, creditCents, now());
  }

  /** The customer's credit as the provider last answered it, and when (ms). */
  creditOf(customerId: string): { creditCents: number; syncedAt: number } | undefined {
    this.commits.flush();
    const row = this.stmts.creditOf.get(customerId);
    return row && { creditCents: row.credit_cents, syncedAt: row.synced_at };
  }

  /** Records the customer's credit as the provider answered it. */
  setCredit(customerId: string, creditCents: number): void {
    this.stmts.setCredit.run(creditCents, now(), customerId);
  }

  /** Debits not settled yet (what the cached credit does not reflect). */
  unsettledCents(customerId: string): number {
    this.commits.flush();
    return this.stmts.unsettled.get(customerId)?.cents ?? 0;
  }

  /** Records one debit (committed when this returns). */
  debit(customerId: string, cents: number, kind: string, detail: string): void {
    this.stmts.debit.run(customerId, cents, kind, detail, now());
  }

  /**
   * Makes every commit so far survive a power loss (a checkpoint, which syncs the write-ahead log):
   * called before a batch or a credit goes to the provider, so that what the provider applied is
   * never forgotten here and sent again under a new key. A power loss can lose only commits made
   * since: debits and reservations not yet batched (a charge missed, never one made twice).
   */
  durable(): void {
    this.commits.flush();
    this.db.pragma("wal_checkpoint(PASSIVE)");
  }

  /** Puts every debit not in a batch yet into a new batch per customer (one transaction). */
  readonly batchUnbatched = (): void => {
    this.commits.flush();
    this.db.transaction(() => {
      for (const { customer_id } of this.stmts.unbatchedCustomers.all()) {
        const id = `vesta-batch-${crypto.randomUUID()}`;
        this.stmts.assign.run(id, customer_id);
        const { cents, count } = this.stmts.batchTotals.get(id)!;
        this.stmts.insertBatch.run(id, customer_id, cents, count, now());
      }
    })();
  };

  /** Batches not settled yet, oldest first (left by a failed send or by a process that died). */
  openBatches(): Batch[] {
    this.commits.flush();
    return this.stmts.openBatches.all().map((b) => ({ id: b.id, customerId: b.customer_id, cents: b.cents, count: b.count, createdAt: b.created_at, attempts: b.attempts }));
  }

  /** Counts a send of the batch before it goes out: a batch with attempts may have reached the provider. */
  attempt(batchId: string): void {
    this.stmts.attempt.run(batchId);
  }

  /** The provider applied the batch: its debits are settled and the customer's credit is `endingCreditCents`. */
  readonly settleBatch = (batch: Batch, adjustmentId: string, endingCreditCents: number): void =>
    this.db.transaction(() => {
      if (this.stmts.settleBatch.run(now(), adjustmentId, batch.id).changes === 0) return;
      this.stmts.settleDebits.run(batch.id);
      this.setCredit(batch.customerId, endingCreditCents);
    })();

  /** Starts crediting a payment intent, or says it was credited or attempted before. */
  claimCredit(paymentIntent: string, customerId: string, cents: number): CreditClaim {
    const row = this.stmts.credit.get(paymentIntent);
    if (row) return { state: row.credited_at === null ? "retry" : "done", since: row.created_at };
    const since = now();
    this.stmts.claimCredit.run(paymentIntent, customerId, cents, since);
    return { state: "new", since };
  }

  readonly finishCredit = (paymentIntent: string, customerId: string, adjustmentId: string, endingCreditCents: number): void =>
    this.db.transaction(() => {
      this.stmts.finishCredit.run(now(), adjustmentId, paymentIntent);
      this.setCredit(customerId, endingCreditCents);
    })();

  close(): void {
    this.commits.flush();
    this.db.close();
  }
}
