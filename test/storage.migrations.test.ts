import { expect } from "chai";
import { sql } from "kysely";
import { MigrationError, Storage, type StoreLocation, type StoreSchema } from "../storage";
import { STORES, tempStore } from "./helpers/postgres";
import { rawExec, rawQuery } from "./helpers/rawDb";

/** A small store's schema: 0001 makes a table, 0002 adds a column and counts its own runs. */
const steps: StoreSchema["steps"] = {
  "0001_items": async (db, { columns: t }) => {
    await db.schema.createTable("items").ifNotExists().addColumn("id", "text", (c) => c.primaryKey()).addColumn("at", t.int, (c) => c.notNull()).execute();
    await db.schema.createTable("step_runs").ifNotExists().addColumn("name", "text").execute();
    await db.insertInto("step_runs").values({ name: "0001" }).execute();
  },
  "0002_flag": async (db, { columns: t }) => {
    await db.schema.alterTable("items").addColumn("flag", t.bool).execute();
    await db.insertInto("step_runs").values({ name: "0002" }).execute();
  },
};
const schema = (s: StoreSchema["steps"] = steps): StoreSchema => ({ name: "sample", steps: s });

for (const store of STORES)
describe(`storage: versioned migrations at open (${store})`, function () {
  this.timeout(60_000);
  let where: StoreLocation;
  let drop: (() => Promise<void>) | undefined;
  beforeEach(async function () {
    ({ where, drop } = await tempStore(this, store, "sample.sqlite"));
  });
  afterEach(async () => drop?.());
  const recorded = async () => (await rawQuery<{ name: string }>(where, "SELECT name FROM sample_migrations ORDER BY name")).map((r) => r.name);
  const stepRuns = async () => (await rawQuery<{ name: string }>(where, "SELECT name FROM step_runs ORDER BY name")).map((r) => r.name);

  it("runs each step once, in order, and records it; a reopen runs nothing", async () => {
    const s = await Storage.open<any>(where, schema());
    await s.db.insertInto("items").values({ id: "a", at: 1, flag: 1 }).execute();
    await s.close();
    const again = await Storage.open<any>(where, schema());
    expect(await again.db.selectFrom("items").selectAll().execute()).to.deep.equal([{ id: "a", at: 1, flag: store === "SQLite" ? 1 : true }]);
    await again.close();
    expect(await recorded()).to.deep.equal(["0001_items", "0002_flag"]);
    expect(await stepRuns()).to.deep.equal(["0001", "0002"]);
  });

  it("a step that fails stops the open and leaves the database as it was (the steps of one open share a transaction)", async () => {
    const broken = {
      ...steps,
      "0002_flag": async (db: any) => {
        await db.schema.createTable("half_done").addColumn("x", "text").execute();
        await db.insertInto("step_runs").values({ name: "0002" }).execute();
        throw new Error("disk on fire");
      },
    };
    const err = await Storage.open<any>(where, schema(broken)).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(MigrationError);
    expect((err as Error).message).to.equal(`the sample store's schema (${store === "SQLite" ? "sqlite" : "postgres"}) cannot be brought up to date: step 0002_flag failed: disk on fire`);
    const tables = store === "SQLite" ? "SELECT name FROM sqlite_master WHERE type = 'table'" : "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'";
    expect((await rawQuery<{ name: string }>(where, tables)).map((t) => t.name).sort()).to.deep.equal(["sample_migrations", "sample_migrations_lock"]);
    expect(await recorded()).to.deep.equal([]);
    await (await Storage.open<any>(where, schema())).close(); // the fixed step: all of it now
    expect(await recorded()).to.deep.equal(["0001_items", "0002_flag"]);
    expect(await stepRuns()).to.deep.equal(["0001", "0002"]);
  });

  it("refuses a database a newer version migrated (a step unknown here), saying so, and changes nothing", async () => {
    await (await Storage.open<any>(where, schema())).close();
    await rawExec(where, "INSERT INTO sample_migrations (name, timestamp) VALUES ('0003_future', '2031-01-01T00:00:00.000Z')");
    const err = await Storage.open<any>(where, schema()).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(MigrationError);
    expect((err as Error).message).to.match(/^the sample store's schema \((sqlite|postgres)\) cannot be brought up to date: it was migrated by a newer version of Vesta \(.*0003_future.*\); run that version, or restore a backup made before it$/);
    expect(await recorded()).to.deep.equal(["0001_items", "0002_flag", "0003_future"]);
    expect(await stepRuns()).to.deep.equal(["0001", "0002"]);
  });

  if (store === "PostgreSQL")
    it("several processes opening one fresh database at once: each step runs once", async () => {
      const opened = await Promise.all([1, 2, 3, 4].map(() => Storage.open<any>(where, schema())));
      await Promise.all(opened.map((s) => s.close()));
      expect(await recorded()).to.deep.equal(["0001_items", "0002_flag"]);
      expect(await stepRuns()).to.deep.equal(["0001", "0002"]);
    });

  it("reads counts, sums and BIGINT columns as JS numbers on both databases", async () => {
    const s = await Storage.open<any>(where, schema());
    await s.db.insertInto("items").values([{ id: "a", at: 2 ** 40 }, { id: "b", at: 5 }]).execute();
    const { n, total } = await s.db.selectFrom("items").select((eb) => [eb.fn.countAll().as("n"), eb.fn.sum("at").as("total")]).executeTakeFirstOrThrow();
    expect([Number(n), Number(total)]).to.deep.equal([2, 2 ** 40 + 5]);
    const [row] = (await sql<{ at: unknown }>`SELECT at FROM items WHERE id = 'a'`.execute(s.db)).rows;
    expect(row.at).to.equal(2 ** 40); // a JS number, not BIGINT text
    await s.close();
  });
});

describe("storage: a database that cannot be reached", function () {
  it("refuses to open, naming the store and the reason, without hanging", async function () {
    const err = await Storage.open<any>({ databaseUrl: "postgres://vesta:secret-password@127.0.0.1:1/nothing", sqliteFile: "" }, schema()).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(MigrationError);
    expect((err as Error).message).to.match(/^the sample store's database \(postgres\) cannot be opened: connect ECONNREFUSED 127\.0\.0\.1:1$/);
    expect((err as Error).message).to.not.contain("secret-password");
  });
});
