import { sql, type Generated } from "kysely";
import { hasColumn, type StoreSchema } from "../storage";

/** The billing store's tables, as its queries see them (both databases). */
export type BillingDb = {
  /** Each payer's customer record at the provider, and its credit as the provider last answered it (synced_at, ms). */
  customers: { payer: string; customer_id: string; credit_cents: number; synced_at: number };
  /** Every charge until the provider applied it: in one batch once sent (batch), settled once the provider answered. */
  debits: { id: Generated<number>; customer_id: string; cents: number; kind: string; detail: string; created_at: number; batch: string | null; settled: number | boolean };
  /**
   * One adjustment at the provider each (its idempotency key is the id). lease_until (ms): a process
   * is sending it until then (PostgreSQL: replicas settle each batch once); null when nobody is.
   */
  batches: { id: string; customer_id: string; cents: number; count: number; created_at: number; attempts: Generated<number>; settled_at: number | null; adjustment_id: string | null; lease_until: number | null };
  /** Payment intents credited (credited_at set) or being credited. */
  credits: { payment_intent: string; customer_id: string; cents: number; created_at: number; credited_at: number | null; adjustment_id: string | null };
  /** Credit held for work under way: see reservations.ts. */
  reservations: { id: string; customer_id: string; cents: number; unit_cents: number; kind: string; detail: string; owner: string; created_at: number; alive_at: number; tx_hash: string | null; started_at: number | null };
  /** Local billing (no provider): the customer records themselves (localRemote.ts). */
  local_customers: { id: string; payer: string; credit_cents: number };
  local_adjustments: { idempotency_key: string; id: string; customer_id: string; delta_cents: number; ending_credit_cents: number; metadata: string; created_at: number };
};

/**
 * Step 0001 is the schema the ledger file had before migrations (reservations as first released),
 * created only where missing: an older billing.sqlite is taken as it is. Later steps add what came
 * after, also where an older file has it already.
 */
export const BILLING_SCHEMA: StoreSchema = {
  name: "billing",
  steps: {
    "0001_initial": async (db, { columns: t }) => {
      await db.schema.createTable("customers").ifNotExists()
        .addColumn("payer", "text", (c) => c.primaryKey())
        .addColumn("customer_id", "text", (c) => c.notNull().unique())
        .addColumn("credit_cents", t.int, (c) => c.notNull())
        .addColumn("synced_at", t.int, (c) => c.notNull())
        .execute();
      // id: SQLite's INTEGER PRIMARY KEY (the rowid) or PostgreSQL's BIGSERIAL: assigned on insert either way (debits are never deleted).
      await db.schema.createTable("debits").ifNotExists()
        .addColumn("id", t.seq, (c) => c.primaryKey())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("cents", t.int, (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("batch", "text")
        .addColumn("settled", t.bool, (c) => c.notNull().defaultTo(sql`false`))
        .execute();
      await db.schema.createIndex("debits_unbatched").ifNotExists().on("debits").column("customer_id").where(sql.ref("batch"), "is", null).execute();
      await db.schema.createIndex("debits_unsettled").ifNotExists().on("debits").column("customer_id").where(sql<boolean>`settled = false`).execute();
      await db.schema.createTable("batches").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("cents", t.int, (c) => c.notNull())
        .addColumn("count", t.int, (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("attempts", t.int, (c) => c.notNull().defaultTo(0))
        .addColumn("settled_at", t.int)
        .addColumn("adjustment_id", "text")
        .execute();
      await db.schema.createTable("credits").ifNotExists()
        .addColumn("payment_intent", "text", (c) => c.primaryKey())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("cents", t.int, (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("credited_at", t.int)
        .addColumn("adjustment_id", "text")
        .execute();
      await db.schema.createTable("reservations").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("cents", t.int, (c) => c.notNull())
        .addColumn("unit_cents", t.int, (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("detail", "text", (c) => c.notNull())
        .addColumn("owner", "text", (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("alive_at", t.int, (c) => c.notNull())
        .addColumn("tx_hash", "text")
        .execute();
      await db.schema.createIndex("reservations_customer").ifNotExists().on("reservations").column("customer_id").execute();
      await db.schema.createTable("local_customers").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("payer", "text", (c) => c.notNull().unique())
        .addColumn("credit_cents", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("local_adjustments").ifNotExists()
        .addColumn("idempotency_key", "text", (c) => c.primaryKey())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("customer_id", "text", (c) => c.notNull())
        .addColumn("delta_cents", t.int, (c) => c.notNull())
        .addColumn("ending_credit_cents", t.int, (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .execute();
    },
    /**
     * Runs record their start: a ledger from before has the column added, and the runs it holds are
     * taken as started at admission (what recovery charged them from then).
     */
    "0002_reservation_start": async (db, dialect) => {
      if (await hasColumn(db, dialect, "reservations", "started_at")) return;
      await db.schema.alterTable("reservations").addColumn("started_at", dialect.columns.int).execute();
      await db.updateTable("reservations").set({ started_at: sql.ref("created_at") }).where("kind", "=", "run").execute();
    },
    /** Batches are leased by the process sending them, so replicas on one PostgreSQL send each batch once. */
    "0003_batch_lease": async (db, dialect) => {
      await db.schema.alterTable("batches").addColumn("lease_until", dialect.columns.int).execute();
      await db.schema.createIndex("batches_open").on("batches").column("created_at").where(sql.ref("settled_at"), "is", null).execute();
    },
  },
};
