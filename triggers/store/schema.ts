import type { Generated } from "kysely";
import { hasColumn, type StoreSchema } from "../../storage";

/** The triggers service's tables, as the store's queries see them (both databases). */
export type TriggersDb = {
  users: { id: string; email: string; created_at: number };
  magic_links: { hash: string; email: string; expires_at: number };
  sessions: { hash: string; user_id: string; expires_at: number };
  tokens: { id: string; user_id: string; challenge: string; name: string; created_at: number; revoked_at: number | null };
  triggers: {
    id: string;
    user_id: string;
    name: string;
    kind: string;
    /** 0/1 written; SQLite answers 0/1, PostgreSQL false/true. */
    enabled: number | boolean;
    action_code: string;
    default_params: string;
    usage_key: string;
    config: string;
    state: string;
    created_at: number;
    updated_at: number;
  };
  runs: {
    id: string;
    trigger_id: string;
    status: string;
    params: string;
    attempts: Generated<number>;
    response: string | null;
    error: string | null;
    dedupe_key: string | null;
    seq: number;
    /** The process (instances.id) that claimed the run. */
    claimed_by: string | null;
    created_at: number;
    started_at: number | null;
    finished_at: number | null;
  };
  /** Processes working the run queue, each heartbeating: a run claimed by one not seen lately was interrupted. */
  instances: { id: string; seen_at: number };
  /** Sign-in mails sent per mailbox (TRIGGERS_LOGIN_RATE_PER_ADDRESS, counted by every replica), kept one window. */
  login_mails: { id: string; mailbox: string; sent_at: number };
};

/**
 * The triggers store's schema. Step 0001 is the schema the store had before migrations (both
 * databases), created only where missing, so a database made by that version is taken as it is;
 * 0002 brings SQLite files up to what PostgreSQL already had (the claiming process of each run).
 */
export const TRIGGERS_SCHEMA: StoreSchema = {
  name: "triggers",
  steps: {
    "0001_initial": async (db, { columns: t }) => {
      await db.schema.createTable("users").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("magic_links").ifNotExists()
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("expires_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("sessions").ifNotExists()
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("expires_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("tokens").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("challenge", "text", (c) => c.notNull().unique())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("revoked_at", t.int)
        .execute();
      await db.schema.createTable("triggers").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("enabled", t.bool, (c) => c.notNull())
        .addColumn("action_code", "text", (c) => c.notNull())
        .addColumn("default_params", t.json, (c) => c.notNull())
        .addColumn("usage_key", "text", (c) => c.notNull())
        .addColumn("config", t.json, (c) => c.notNull())
        .addColumn("state", t.json, (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("updated_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("runs").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("trigger_id", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("params", t.json, (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("response", t.json)
        .addColumn("error", "text")
        .addColumn("dedupe_key", "text")
        .addColumn("seq", t.seq, (c) => c.notNull())
        .addColumn("created_at", t.int, (c) => c.notNull())
        .addColumn("started_at", t.int)
        .addColumn("finished_at", t.int)
        .addUniqueConstraint("runs_trigger_id_dedupe_key_key", ["trigger_id", "dedupe_key"])
        .execute();
      await db.schema.createIndex("runs_by_status").ifNotExists().on("runs").columns(["status", "seq"]).execute();
      await db.schema.createIndex("runs_by_trigger").ifNotExists().on("runs").columns(["trigger_id", "seq"]).execute();
    },
    "0002_claimed_by": async (db, dialect) => {
      if (!(await hasColumn(db, dialect, "runs", "claimed_by"))) await db.schema.alterTable("runs").addColumn("claimed_by", "text").execute();
      await db.schema.createTable("instances").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("seen_at", dialect.columns.int, (c) => c.notNull())
        .execute();
    },
    /** The per-mailbox budget of sign-in mails in the database (it was each process's memory: N replicas sent N times the limit). */
    "0003_login_mails": async (db, dialect) => {
      await db.schema.createTable("login_mails").ifNotExists()
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("mailbox", "text", (c) => c.notNull())
        .addColumn("sent_at", dialect.columns.int, (c) => c.notNull())
        .execute();
      await db.schema.createIndex("login_mails_mailbox").ifNotExists().on("login_mails").columns(["mailbox", "sent_at"]).execute();
      await db.schema.createIndex("login_mails_sent").ifNotExists().on("login_mails").column("sent_at").execute();
    },
  },
};
