import crypto from "node:crypto";
import type Database from "better-sqlite3";
import type { Adjustment, BalanceRemote, Payer } from "./types";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS local_customers (id TEXT PRIMARY KEY, payer TEXT NOT NULL UNIQUE, credit_cents INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS local_adjustments (
  idempotency_key TEXT PRIMARY KEY, id TEXT NOT NULL, customer_id TEXT NOT NULL, delta_cents INTEGER NOT NULL,
  ending_credit_cents INTEGER NOT NULL, metadata TEXT NOT NULL, created_at INTEGER NOT NULL);
`;

/**
 * Local mode (no payment provider, e.g. `npm start`): the customer records live in the billing
 * SQLite file beside the ledger, and each new one starts with `freeCreditCents`. It behaves as
 * Stripe does for what the ledger uses (idempotency keys included), so the same ledger and
 * settlement code run in both modes. There are no card payments.
 */
export class LocalRemote implements BalanceRemote {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly freeCreditCents: number,
  ) {
    db.exec(SCHEMA);
    this.stmts = {
      byPayer: db.prepare<[string], { id: string; credit_cents: number }>("SELECT id, credit_cents FROM local_customers WHERE payer = ?"),
      byId: db.prepare<[string], { credit_cents: number }>("SELECT credit_cents FROM local_customers WHERE id = ?"),
      create: db.prepare<[string, string, number]>("INSERT INTO local_customers (id, payer, credit_cents) VALUES (?, ?, ?)"),
      add: db.prepare<[number, string]>("UPDATE local_customers SET credit_cents = credit_cents + ? WHERE id = ?"),
      replay: db.prepare<[string], { id: string; ending_credit_cents: number }>("SELECT id, ending_credit_cents FROM local_adjustments WHERE idempotency_key = ?"),
      record: db.prepare<[string, string, string, number, number, string, number]>(
        "INSERT INTO local_adjustments (idempotency_key, id, customer_id, delta_cents, ending_credit_cents, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      find: db.prepare<[string, string, string, number], { id: string; ending_credit_cents: number }>(
        "SELECT id, ending_credit_cents FROM local_adjustments WHERE customer_id = ? AND json_extract(metadata, '$.' || ?) = ? AND created_at >= ?",
      ),
    };
  }

  async customer(payer: Payer): Promise<{ id: string; creditCents: number }> {
    const row = this.stmts.byPayer.get(payer.key);
    if (row) return { id: row.id, creditCents: row.credit_cents };
    const id = `local_cus_${crypto.randomBytes(8).toString("hex")}`;
    this.stmts.create.run(id, payer.key, this.freeCreditCents);
    return { id, creditCents: this.freeCreditCents };
  }

  async credit(customerId: string): Promise<number> {
    const row = this.stmts.byId.get(customerId);
    if (!row) throw new Error(`no local customer ${customerId}`);
    return row.credit_cents;
  }

  async adjust(customerId: string, deltaCents: number, idempotencyKey: string, metadata: Record<string, string>): Promise<Adjustment> {
    return this.db.transaction((): Adjustment => {
      const replayed = this.stmts.replay.get(idempotencyKey);
      if (replayed) return { id: replayed.id, endingCreditCents: replayed.ending_credit_cents };
      if (this.stmts.add.run(deltaCents, customerId).changes === 0) throw new Error(`no local customer ${customerId}`);
      const ending = this.stmts.byId.get(customerId)!.credit_cents;
      const id = `local_cbtxn_${crypto.randomBytes(8).toString("hex")}`;
      this.stmts.record.run(idempotencyKey, id, customerId, deltaCents, ending, JSON.stringify(metadata), Math.floor(Date.now() / 1000));
      return { id, endingCreditCents: ending };
    })();
  }

  async findAdjustment(customerId: string, key: string, value: string, sinceSeconds: number): Promise<Adjustment | undefined> {
    const row = this.stmts.find.get(customerId, key, value, sinceSeconds);
    return row && { id: row.id, endingCreditCents: row.ending_credit_cents };
  }
}
