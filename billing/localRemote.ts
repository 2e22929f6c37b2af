import crypto from "node:crypto";
import type { Storage } from "../storage";
import type { BillingDb } from "./schema";
import type { Adjustment, BalanceRemote, Payer } from "./types";

/**
 * Local mode (no payment provider, e.g. `npm start`): the customer records live in the billing
 * store beside the ledger, and each new one starts with `freeCreditCents`. It behaves as Stripe
 * does for what the ledger uses (idempotency keys included, also between replicas on one
 * PostgreSQL), so the same ledger and settlement code run in both modes. There are no card payments.
 */
export class LocalRemote implements BalanceRemote {
  constructor(
    private readonly s: Storage<BillingDb>,
    private readonly freeCreditCents: number,
  ) {}

  async customer(payer: Payer): Promise<{ id: string; creditCents: number }> {
    const id = `local_cus_${crypto.randomBytes(8).toString("hex")}`;
    // Two replicas creating the same payer's record at once: the first insert wins, both read it.
    await this.s.db.insertInto("local_customers").values({ id, payer: payer.key, credit_cents: this.freeCreditCents }).onConflict((oc) => oc.column("payer").doNothing()).execute();
    const row = await this.s.db.selectFrom("local_customers").select(["id", "credit_cents"]).where("payer", "=", payer.key).executeTakeFirstOrThrow();
    return { id: row.id, creditCents: row.credit_cents };
  }

  async credit(customerId: string): Promise<number> {
    const row = await this.s.db.selectFrom("local_customers").select("credit_cents").where("id", "=", customerId).executeTakeFirst();
    if (!row) throw new Error(`no local customer ${customerId}`);
    return row.credit_cents;
  }

  async adjust(customerId: string, deltaCents: number, idempotencyKey: string, metadata: Record<string, string>): Promise<Adjustment> {
    return this.s.transaction(async (trx): Promise<Adjustment> => {
      // The customer's row first (locked until the commit): adjustments of one customer, and their replays, take turns.
      const customer = await this.s.dialect.forUpdate(trx.selectFrom("local_customers").select("credit_cents").where("id", "=", customerId)).executeTakeFirst();
      if (!customer) throw new Error(`no local customer ${customerId}`);
      const replayed = await trx.selectFrom("local_adjustments").select(["id", "ending_credit_cents"]).where("idempotency_key", "=", idempotencyKey).executeTakeFirst();
      if (replayed) return { id: replayed.id, endingCreditCents: replayed.ending_credit_cents };
      const ending = customer.credit_cents + deltaCents;
      await trx.updateTable("local_customers").set({ credit_cents: ending }).where("id", "=", customerId).execute();
      const id = `local_cbtxn_${crypto.randomBytes(8).toString("hex")}`;
      await trx
        .insertInto("local_adjustments")
        .values({ idempotency_key: idempotencyKey, id, customer_id: customerId, delta_cents: deltaCents, ending_credit_cents: ending, metadata: JSON.stringify(metadata), created_at: Math.floor(Date.now() / 1000) })
        .execute();
      return { id, endingCreditCents: ending };
    });
  }

  async findAdjustment(customerId: string, key: string, value: string, sinceSeconds: number): Promise<Adjustment | undefined> {
    const rows = await this.s.db.selectFrom("local_adjustments").select(["id", "ending_credit_cents", "metadata"]).where("customer_id", "=", customerId).where("created_at", ">=", sinceSeconds).execute();
    const row = rows.find((r) => (JSON.parse(r.metadata) as Record<string, unknown>)[key] === value);
    return row && { id: row.id, endingCreditCents: row.ending_credit_cents };
  }
}
