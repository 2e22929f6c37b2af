import type BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, type Compilable, type Kysely } from "kysely";

/** Names a value of a prepared statement where the query takes it (see Prepared). */
export type Param<P> = <K extends keyof P & string>(name: K) => P[K];

/** Marks where a named value goes: a string no value of ours ever is (NUL-delimited). */
const sentinel = (name: string) => `\u0000vesta-param:${name}\u0000`;
const SENTINEL = /^\u0000vesta-param:(.+)\u0000$/;

/**
 * A statement of a store's hot path, built by Kysely once and run with new values each time. Kysely
 * builds and compiles every query anew (immutable builder nodes, a visitor pass, ~5–10 us and a few
 * KB of garbage a query, then several promises through its executor); a run's billing and record
 * make five such writes (issue 18: ~65 us of the event loop a run, profiles of the http bench).
 *
 * `build` gets the store's Kysely and `param(name)`, which stands for a value: the query is compiled
 * once per store with a marker where each named value goes, and each run puts the values in their
 * places (any other value of the query stays as compiled). The SQL is the one Kysely wrote for the
 * store's database, so both databases run the same statement.
 *
 * Run inside a transaction on SQLite, the statement is executed by better-sqlite3 at once, on the
 * store's one connection (which the transaction holds: nothing else runs on it meanwhile); anywhere
 * else (PostgreSQL, or outside a transaction) it goes through Kysely's executor like any query.
 */
export class Prepared<DB, P extends Record<string, unknown>> {
  private compiled?: { sql: string; slots: ({ name: string } | { value: unknown })[] };
  private statement?: BetterSqlite3.Statement;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly sqlite: BetterSqlite3.Database | undefined,
    private readonly build: (db: Kysely<DB>, param: Param<P>) => Compilable<unknown>,
  ) {}

  /** Runs it with `values` on `q` (the store's database or a transaction of it); resolves with the rows it answered (RETURNING) and how many rows it changed. */
  async run(q: Kysely<DB>, values: P): Promise<{ rows: Record<string, unknown>[]; changed: bigint }> {
    const { sql, slots } = this.compile();
    const parameters = slots.map((slot) => {
      if (!("name" in slot)) return slot.value;
      const value = values[slot.name];
      if (value === undefined) throw new Error(`prepared statement: no value for ${slot.name}`);
      return value;
    });
    if (this.sqlite && q.isTransaction) {
      this.statement ??= this.sqlite.prepare(sql);
      if (this.statement.reader) return { rows: this.statement.all(...parameters) as Record<string, unknown>[], changed: 0n };
      return { rows: [], changed: BigInt(this.statement.run(...parameters).changes) };
    }
    const result = await q.executeQuery(CompiledQuery.raw(sql, parameters));
    return { rows: result.rows as Record<string, unknown>[], changed: result.numAffectedRows ?? 0n };
  }

  private compile(): { sql: string; slots: ({ name: string } | { value: unknown })[] } {
    if (this.compiled) return this.compiled;
    const { sql, parameters } = this.build(this.db, ((name: string) => sentinel(name)) as Param<P>).compile();
    const slots = parameters.map((value) => {
      const named = typeof value === "string" ? SENTINEL.exec(value) : null;
      return named ? { name: named[1] } : { value };
    });
    this.compiled = { sql, slots };
    return this.compiled;
  }
}
