import { expect } from "chai";
import { sql } from "kysely";
import { Client } from "pg";
import { Storage } from "../storage";
import { tempDatabase, type TempDatabase } from "./helpers/postgres";

/** A store with nothing in it (the connections are what is tested). */
const EMPTY = { name: "probe", steps: { "0001_initial": async () => {} } };

async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

describe("storage on PostgreSQL: its connections", function () {
  this.timeout(60_000);
  let db: TempDatabase;
  let storage: Storage<unknown> | undefined;
  beforeEach(async function () {
    db = await tempDatabase(this);
  });
  afterEach(async () => {
    await storage?.close().catch(() => {});
    storage = undefined;
    await db?.stop();
  });

  // Review finding: pg emits "error" on a connection lost while it is checked out; nothing listened,
  // so a database restart or failover during any query ended the relayer (an uncaught exception).
  it("a connection lost in the middle of a query rejects that query, and the process and the next queries go on", async function () {
    storage = await Storage.open({ databaseUrl: db.url, sqliteFile: ":memory:" }, EMPTY);
    const s = storage;
    // In a transaction, as the stores' writes are: after the query fails the connection is still checked out (ROLLBACK).
    const slow = s.transaction((trx) => sql`SELECT pg_sleep(30)`.execute(trx)).then(
      () => "answered",
      (err: Error) => err.message,
    );
    const pid = await withClient(db.url, async (c) => {
      for (let i = 0; i < 100; i++) {
        const { rows } = await c.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(30)%' AND pid <> pg_backend_pid()");
        if (rows.length) return rows[0].pid as number;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("the slow query never started");
    });
    await withClient(db.url, (c) => c.query("SELECT pg_terminate_backend($1)", [pid]));
    expect(await slow).to.match(/terminat/i);
    await new Promise((r) => setTimeout(r, 100)); // the client's own "error" event, had it no listener, would be thrown by now
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(s.db);
    expect(rows).to.deep.equal([{ one: 1 }]);
  });

  // Review finding: the stores' transactions wait for an advisory lock, then read what committed
  // meanwhile (code eviction, quotas): under a database default of REPEATABLE READ their snapshot
  // was taken before the wait, and the code store deleted code another payer had just come to own.
  it("runs every transaction at READ COMMITTED, whatever the database's default", async function () {
    await withClient(db.url, async (c) => c.query(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} SET default_transaction_isolation = 'repeatable read'`));
    expect(await withClient(db.url, async (c) => (await c.query("SHOW transaction_isolation")).rows[0].transaction_isolation)).to.equal("repeatable read");
    storage = await Storage.open({ databaseUrl: db.url, sqliteFile: ":memory:" }, EMPTY);
    const s = storage;
    const levels = await Promise.all(
      Array.from({ length: 4 }, () => s.transaction(async (trx) => (await sql<{ transaction_isolation: string }>`SHOW transaction_isolation`.execute(trx)).rows[0].transaction_isolation)),
    );
    expect(levels).to.deep.equal(Array(4).fill("read committed"));
  });
});
