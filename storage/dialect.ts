import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from "kysely";

/** The two databases every store runs on: SQLite (embedded default) and PostgreSQL (DATABASE_URL). */
export type DialectName = "sqlite" | "postgres";

/** Column types of the one schema, as each database spells them (schema.ts of each store uses only these). */
export type ColumnTypes = {
  /** JSON text: JSONB on PostgreSQL (written as text, read back as text), TEXT on SQLite. */
  json: "jsonb" | "text";
  /** A flag: BOOLEAN on PostgreSQL, INTEGER 0/1 on SQLite (written as 0/1, which PostgreSQL reads as false/true). */
  bool: "boolean" | "integer";
  /** Milliseconds, cents, counters: BIGINT on PostgreSQL (read back as a JS number), INTEGER on SQLite. */
  int: "bigint" | "integer";
  /** Bytes: BYTEA on PostgreSQL, a BLOB in a TEXT-affinity column on SQLite (what older files hold). */
  bytes: "bytea" | "text";
  /** An ordering number the database assigns (BIGSERIAL) on PostgreSQL; on SQLite the insert computes it (Dialect.nextSeq). */
  seq: "bigserial" | "integer";
};

/** U+0000 and lone surrogates written by JSON.stringify as \u escapes (pairs it writes as characters). */
const JSONB_REFUSES = /(?<=(?:^|[^\\])(?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/g;

/**
 * Every difference between the two databases that a store's queries see, in one place: row locks,
 * serialization of read-then-write transactions, sequence numbers, and what text each can hold.
 * Everything else (upserts with ON CONFLICT, RETURNING, joins, subqueries) is written once with
 * Kysely and compiles to both.
 */
export class Dialect {
  readonly columns: ColumnTypes;

  constructor(readonly name: DialectName) {
    this.columns =
      name === "postgres"
        ? { json: "jsonb", bool: "boolean", int: "bigint", bytes: "bytea", seq: "bigserial" }
        : { json: "text", bool: "integer", int: "integer", bytes: "text", seq: "integer" };
  }

  /** Several processes may share this database (PostgreSQL); a SQLite file belongs to one process. */
  get shared(): boolean {
    return this.name === "postgres";
  }

  /**
   * The rows `qb` reads stay locked until the transaction ends (PostgreSQL: FOR UPDATE). SQLite
   * needs nothing: a transaction that writes holds the whole file, and one process's transactions
   * run one at a time on its one connection.
   */
  forUpdate<Q extends SelectQueryBuilder<any, any, any>>(qb: Q): Q {
    return this.name === "postgres" ? (qb.forUpdate() as Q) : qb;
  }

  /** As forUpdate, skipping rows another transaction holds (PostgreSQL: FOR UPDATE SKIP LOCKED): workers share one queue. */
  skipLocked<Q extends SelectQueryBuilder<any, any, any>>(qb: Q): Q {
    return this.name === "postgres" ? (qb.forUpdate().skipLocked() as Q) : qb;
  }

  /**
   * Transactions that name the same `key` run one at a time (a count checked before an insert):
   * PostgreSQL takes a transaction-scoped advisory lock on the key; SQLite's transactions already
   * run one at a time.
   */
  async serialize(trx: Kysely<any>, key: string): Promise<void> {
    if (this.name === "postgres") await sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
  }

  /**
   * As serialize, without waiting: true when this transaction now holds `key` (no other does until
   * it ends), false when another transaction holds it. A transaction that already holds other keys
   * takes one more this way without risking a deadlock. SQLite: always true (one transaction at a time).
   */
  async trySerialize(trx: Kysely<any>, key: string): Promise<boolean> {
    if (this.name !== "postgres") return true;
    const { rows } = await sql<{ held: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext(${key})) AS held`.execute(trx);
    return rows[0]?.held === true;
  }

  /** The value of a `seq` column for a new row: the database's sequence (PostgreSQL), or one past the largest (SQLite). */
  nextSeq(table: string, column = "seq"): RawBuilder<number> {
    return this.name === "postgres" ? sql<number>`DEFAULT` : sql<number>`(SELECT COALESCE(MAX(${sql.ref(column)}), 0) + 1 FROM ${sql.table(table)})`;
  }

  /**
   * JSON text for a json column; null for undefined or null. PostgreSQL's JSONB cannot hold U+0000
   * nor a lone surrogate: those escapes become U+FFFD there (so any value a webhook or an action
   * produced can be stored); SQLite keeps them.
   */
  json(v: unknown): string | null {
    if (v === undefined || v === null) return null;
    const text = JSON.stringify(v);
    return this.name === "postgres" ? text.replace(JSONB_REFUSES, "\\ufffd") : text;
  }

  /** Text for a text column: PostgreSQL's TEXT cannot hold U+0000 (it becomes U+FFFD there). */
  text<S extends string | null>(s: S): S {
    return (this.name === "postgres" && s !== null ? s.replaceAll("\u0000", "\ufffd") : s) as S;
  }

  /** A flag as written to a bool column (0/1: SQLite cannot bind booleans, PostgreSQL reads them as false/true). */
  bool(b: boolean): number {
    return b ? 1 : 0;
  }
}

/** Reads back a json column (stored by Dialect.json); null stays null. */
export const fromJson = <T = unknown>(v: string | null): T => (v === null ? (null as T) : (JSON.parse(v) as T));

/** Reads back a count or a sum (PostgreSQL answers sums of BIGINT as NUMERIC text, SQLite as numbers; none is null). */
export const toNumber = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
