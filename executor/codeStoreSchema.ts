import type { StoreSchema } from "../storage";

/** The action code store's tables, as its queries see them (both databases). */
export type CodeDb = {
  /** Code by CID: the exact bytes that were hashed (BYTEA; a BLOB on SQLite, or TEXT in rows of older versions). */
  action_code: { cid: string; code: Buffer | string; stored_at: number };
  /** Who stored which code (each payer keeps at most its own bytes), and when it last ran it (ms). */
  action_code_owner: { payer: string; cid: string; bytes: number; used_at: number };
};

/** Step 0001 is the schema the store had before migrations, created only where missing (an older file is taken as it is). */
export const CODE_SCHEMA: StoreSchema = {
  name: "action_code",
  steps: {
    "0001_initial": async (db, { columns: t }) => {
      await db.schema.createTable("action_code").ifNotExists()
        .addColumn("cid", "text", (c) => c.primaryKey())
        .addColumn("code", t.bytes, (c) => c.notNull())
        .addColumn("stored_at", t.int, (c) => c.notNull())
        .execute();
      await db.schema.createTable("action_code_owner").ifNotExists()
        .addColumn("payer", "text", (c) => c.notNull())
        .addColumn("cid", "text", (c) => c.notNull())
        .addColumn("bytes", t.int, (c) => c.notNull())
        .addColumn("used_at", t.int, (c) => c.notNull())
        .addPrimaryKeyConstraint("action_code_owner_pkey", ["payer", "cid"])
        .execute();
      await db.schema.createIndex("action_code_owner_lru").ifNotExists().on("action_code_owner").columns(["payer", "used_at"]).execute();
      await db.schema.createIndex("action_code_owner_cid").ifNotExists().on("action_code_owner").column("cid").execute();
    },
  },
};
