import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { expect } from "chai";
import { sql } from "kysely";
import { Storage } from "../storage";
import { cachingStatements } from "../storage/open";

/** A database whose prepare() calls are counted by SQL text. */
function counted(db: BetterSqlite3.Database) {
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  const spy = Object.assign(Object.create(db), { prepare: (text: string) => (prepared.push(text), prepare(text)), close: () => db.close() });
  return { spy: spy as BetterSqlite3.Database, prepared };
}

describe("storage: SQLite statements prepared once", () => {
  it("prepares a statement once per SQL text and reuses it, with the right answers each time", () => {
    const { spy, prepared } = counted(new BetterSqlite3(":memory:"));
    const db = cachingStatements(spy);
    db.prepare("CREATE TABLE t (id INTEGER, v TEXT)").run([]);
    for (let i = 0; i < 5; i++) db.prepare("INSERT INTO t VALUES (?, ?)").run([i, `v${i}`]);
    const rows = db.prepare("SELECT v FROM t WHERE id >= ? ORDER BY id").all([3]);
    const again = db.prepare("SELECT v FROM t WHERE id >= ? ORDER BY id").all([1]);
    expect(rows).to.deep.equal([{ v: "v3" }, { v: "v4" }]);
    expect(again).to.deep.equal([{ v: "v1" }, { v: "v2" }, { v: "v3" }, { v: "v4" }]);
    expect(prepared).to.deep.equal(["CREATE TABLE t (id INTEGER, v TEXT)", "INSERT INTO t VALUES (?, ?)", "SELECT v FROM t WHERE id >= ? ORDER BY id"]);
    db.close();
  });

  it("keeps at most its size, dropping the least recently used (queries with IN lists of every length cannot grow it)", () => {
    const { spy, prepared } = counted(new BetterSqlite3(":memory:"));
    const db = cachingStatements(spy, 3);
    const q = (n: number) => `SELECT ${n} AS n`;
    for (const n of [1, 2, 3]) db.prepare(q(n));
    db.prepare(q(1)); // 1 is now the most recent: 2 is the oldest
    db.prepare(q(4)); // evicts 2
    prepared.length = 0;
    for (const n of [1, 3, 4]) expect(db.prepare(q(n)).all([])).to.deep.equal([{ n }]);
    expect(prepared, "1, 3 and 4 stayed prepared").to.deep.equal([]);
    expect(db.prepare(q(2)).all([])).to.deep.equal([{ n: 2 }]);
    expect(prepared, "2 was dropped and is prepared again").to.deep.equal([q(2)]);
    for (let n = 0; n < 10_000; n++) db.prepare(`SELECT 1 WHERE 1 IN (${Array(1 + (n % 50)).fill("?").join(",")})`);
    prepared.length = 0;
    for (const n of [3, 4]) db.prepare(q(n));
    expect(prepared, "10,000 other texts pushed them out: the cache holds 3").to.deep.equal([q(3), q(4)]);
    db.close();
  });

  it("a store's cached statement follows a schema change (SQLite re-prepares it) and survives a failed run", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-stmts-"));
    const s = await Storage.open<any>({ sqliteFile: path.join(dir, "s.sqlite") }, {
      name: "stmts",
      steps: { "0001": async (db) => void (await db.schema.createTable("t").addColumn("id", "integer", (c) => c.primaryKey()).execute()) },
    });
    try {
      await s.db.insertInto("t").values({ id: 1 }).execute();
      let failed: unknown;
      await s.db.insertInto("t").values({ id: 1 }).execute().catch((e) => (failed = e)); // the same statement text, a unique violation
      expect(String(failed)).to.match(/UNIQUE constraint failed: t\.id/);
      await s.db.insertInto("t").values({ id: 2 }).execute(); // the statement that failed runs again
      expect(await s.db.selectFrom("t").selectAll().orderBy("id").execute()).to.deep.equal([{ id: 1 }, { id: 2 }]);
      await sql`ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x'`.execute(s.db);
      expect(await s.db.selectFrom("t").selectAll().orderBy("id").execute()).to.deep.equal([{ id: 1, extra: "x" }, { id: 2, extra: "x" }]);
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
