import type { Generated } from "kysely";
import type { StoreSchema } from "../../storage";

/** The run history's tables, as its queries see them (both databases). */
export type RunsDb = {
  /** One finished run: nothing secret (no params, no response, no key; the key's hash only). */
  runs: {
    /** The order runs were recorded in (assigned by the database): pages and the cap go by it. */
    seq: Generated<number>;
    id: string;
    account: string;
    key_hash: string;
    cid: string;
    status: "success" | "failed";
    started_at: number;
    duration_ms: number | null;
    cost_cents: number;
    logs: string;
    /** 0/1 written; SQLite reads 0/1, PostgreSQL false/true. */
    logs_truncated: number | boolean;
    error: string | null;
    request_id: string | null;
  };
  /** Each account's number of runs, kept beside them so the cap costs an index step, not a count. */
  run_counts: { account: string; n: number };
};

/**
 * Three indexes on runs, each a cost of every run recorded (five cost 2.5x the insert of two): the
 * account's runs newest first, carrying status and CID so those filters are read from the index (an
 * account holds at most perAccount and 1 %); a key's runs (what a usage key lists); the retention's order.
 */
export const RUNS_SCHEMA: StoreSchema = {
  name: "runs",
  steps: {
    "0001_initial": async (db, { columns: t }) => {
      // seq: SQLite's INTEGER PRIMARY KEY (the rowid, one past the largest) or PostgreSQL's BIGSERIAL: assigned on insert either way.
      await db.schema.createTable("runs").ifNotExists()
        .addColumn("seq", t.seq, (c) => c.primaryKey())
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("account", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull())
        .addColumn("cid", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("started_at", t.int, (c) => c.notNull())
        .addColumn("duration_ms", t.int)
        .addColumn("cost_cents", t.int, (c) => c.notNull())
        .addColumn("logs", "text", (c) => c.notNull())
        .addColumn("logs_truncated", t.bool, (c) => c.notNull())
        .addColumn("error", "text")
        .addColumn("request_id", "text")
        .execute();
      await db.schema.createIndex("runs_by_account").ifNotExists().on("runs").columns(["account", "seq", "status", "cid"]).execute();
      await db.schema.createIndex("runs_by_key").ifNotExists().on("runs").columns(["account", "key_hash", "seq"]).execute();
      await db.schema.createIndex("runs_by_start").ifNotExists().on("runs").column("started_at").execute();
      await db.schema.createTable("run_counts").ifNotExists()
        .addColumn("account", "text", (c) => c.primaryKey())
        .addColumn("n", t.int, (c) => c.notNull())
        .execute();
    },
  },
};
