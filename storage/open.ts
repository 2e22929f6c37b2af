import fs from "node:fs";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { CompiledQuery, Kysely, type Compilable, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type DialectAdapter, type Driver, type SqliteDatabase, type Transaction } from "kysely";
import pg from "pg";
import { Dialect } from "./dialect";
import { migrate, type StoreSchema } from "./migrate";
import { checkpointer } from "./checkpointer";
import { Prepared, type Param } from "./prepared";

/**
 * Where a store lives: the PostgreSQL database at `databaseUrl` when it is set (every store of every
 * process in one database, each in its own tables), else the SQLite file `sqliteFile` (one file
 * per store, in the data directory).
 */
export type StoreLocation = {
  databaseUrl?: string;
  sqliteFile: string;
  /**
   * SQLite only: FULL (default) makes every commit durable against a power loss (an fsync each);
   * NORMAL against a crash of the process only (the billing ledger, which fsyncs what matters itself).
   */
  synchronous?: "FULL" | "NORMAL";
  /** PostgreSQL only: the most connections this store holds (default 10). */
  poolSize?: number;
};

/** PostgreSQL type ids read differently from pg's defaults, so rows read the same on both databases. */
const INT8 = 20;
const NUMERIC = 1700;
const JSON_OID = 114;
const JSONB = 3802;
/**
 * BIGINT and NUMERIC (counts, sums) as JS numbers, as SQLite answers them: every such value a store
 * keeps is an integer well within 2^53 (milliseconds, cents, bytes, sequence numbers). JSON and JSONB
 * as their text, as SQLite's TEXT columns answer it: each store parses its JSON itself (fromJson).
 */
const getTypeParser = ((oid: number, format?: "text" | "binary") => {
  if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
  if (oid === JSON_OID || oid === JSONB) return (v: string) => v;
  return pg.types.getTypeParser(oid, format as "text");
}) as typeof pg.types.getTypeParser;

/**
 * SQLite's DDL is transactional (Kysely's adapter does not claim it): the steps of a migration run
 * in one transaction with their records, as on PostgreSQL, so a failed step leaves nothing behind.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
/**
 * Transactions take SQLite's write lock when they begin (BEGIN IMMEDIATE): another process on the
 * same file waits for it (busy_timeout) instead of failing when a transaction that read first
 * tries to write. Every transaction of the stores writes.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("begin immediate"));
  }
}
/** How many distinct statements a SQLite store keeps prepared (queries with IN lists vary in text). */
export const STATEMENT_CACHE_SIZE = 256;
/**
 * The database as Kysely's SQLite driver sees it, with each statement prepared once: the driver
 * prepares the SQL text of every query anew, which costs more than running most of them. Statements
 * are kept by their text, least recently used first out. Reusing one is safe: the driver runs one
 * query at a time on its one connection, and SQLite re-prepares a statement itself when the schema
 * changes.
 */
export function cachingStatements(database: BetterSqlite3.Database, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let stmt = statements.get(sql);
      if (stmt) {
        statements.delete(sql); // re-inserted below: the Map's order is the use order
      } else {
        stmt = database.prepare(sql);
        if (statements.size >= size) statements.delete(statements.keys().next().value as string);
      }
      statements.set(sql, stmt);
      return stmt;
    },
    close() {
      statements.clear();
      database.close();
    },
  };
}
class VestaSqliteDialect extends SqliteDialect {
  private readonly database: SqliteDatabase;
  constructor(database: BetterSqlite3.Database) {
    const cached = cachingStatements(database);
    super({ database: cached });
    this.database = cached;
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.database });
  }
}

/** A store's database: the Kysely instance (typed by the store's tables) and what differs between the databases. */
export class Storage<DB> {
  private constructor(
    readonly db: Kysely<DB>,
    readonly dialect: Dialect,
    /** Done after the database closed (SQLite: the checkpointer lets go of the file). */
    private readonly closed: () => Promise<void> = async () => {},
    /** SQLite: the connection itself (prepared statements run on it inside a transaction). */
    private readonly sqliteDb?: BetterSqlite3.Database,
  ) {}

  /** A statement of the hot path, compiled once for this database and run with new values (see Prepared). */
  prepare<P extends Record<string, unknown>>(build: (db: Kysely<DB>, param: Param<P>) => Compilable<unknown>): Prepared<DB, P> {
    return new Prepared(this.db, this.sqliteDb, build);
  }

  /**
   * Opens the store's database and brings its schema up to date (the migrations of `schema` that
   * have not run there yet). A SQLite file made by an older version is picked up: each store's
   * first step is that version's schema, created only where missing.
   */
  static async open<DB>(where: StoreLocation, schema: StoreSchema): Promise<Storage<DB>> {
    const storage = where.databaseUrl ? Storage.postgres<DB>(where.databaseUrl, where.poolSize ?? 10) : Storage.sqlite<DB>(where.sqliteFile, where.synchronous ?? "FULL");
    try {
      await migrate(storage.db, storage.dialect, schema);
    } catch (err) {
      await storage.close().catch(() => {});
      throw err;
    }
    return storage;
  }

  private static sqlite<DB>(file: string, synchronous: "FULL" | "NORMAL"): Storage<DB> {
    if (file !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const database = new BetterSqlite3(file);
    database.pragma("journal_mode = WAL");
    database.pragma(`synchronous = ${synchronous}`);
    database.pragma("busy_timeout = 5000");
    const db = new Kysely<DB>({ dialect: new VestaSqliteDialect(database) });
    if (file === ":memory:") return new Storage(db, new Dialect("sqlite"), undefined, database);
    // The log is copied into the file by the checkpointer's thread, not by a commit on the event loop.
    const resolved = path.resolve(file);
    const automatic = () => {
      try {
        database.pragma("wal_autocheckpoint = 1000");
      } catch {
        /* closed meanwhile */
      }
    };
    database.pragma("wal_autocheckpoint = 0");
    checkpointer.adopt(resolved, automatic);
    return new Storage(db, new Dialect("sqlite"), () => checkpointer.release(resolved, automatic), database);
  }

  private static postgres<DB>(url: string, max: number): Storage<DB> {
    const pool = new pg.Pool({ connectionString: url, max, types: { getTypeParser } });
    pool.on("error", () => {}); // an idle connection the server closed: the pool replaces it; queries report their own errors
    // A connection lost while it is checked out (a restart, a failover, an administrator's
    // pg_terminate_backend) fails the queries on it, and the pool drops it; the client also emits
    // "error", which without a listener would end the process.
    pool.on("connect", (client) => client.on("error", () => {}));
    return new Storage(new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), new Dialect("postgres"));
  }

  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    // PostgreSQL: READ COMMITTED, whatever the database's default, in the BEGIN itself (no extra round
    // trip, and it holds behind a transaction-mode pooler): the stores' transactions are written for it
    // (a statement after an advisory lock sees what committed while it waited).
    const trx = this.db.transaction();
    return (this.dialect.shared ? trx.setIsolationLevel("read committed") : trx).execute(fn);
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.closed();
  }
}
