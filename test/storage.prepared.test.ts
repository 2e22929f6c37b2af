import { expect } from "chai";
import type { Kysely } from "kysely";
import { Storage } from "../storage";
import { STORES, tempStore } from "./helpers/postgres";

type Db = { t: { id: string; n: number; tag: string; note: string | null } };
const SCHEMA = {
  name: "prep",
  steps: {
    "0001": async (db: Kysely<any>) =>
      void (await db.schema.createTable("t").addColumn("id", "text", (c) => c.primaryKey()).addColumn("n", "integer", (c) => c.notNull()).addColumn("tag", "text", (c) => c.notNull()).addColumn("note", "text").execute()),
  },
};

for (const store of STORES) {
  describe(`storage: statements compiled once, run with new values (${store})`, function () {
    this.timeout(60_000);
    let s: Storage<Db>;
    let drop: () => Promise<void>;
    beforeEach(async function () {
      const t = await tempStore(this, store, "p.sqlite");
      drop = t.drop;
      s = await Storage.open<Db>(t.where, SCHEMA);
    });
    afterEach(async () => {
      await s.close();
      await drop();
    });
    const all = () => s.db.selectFrom("t").selectAll().orderBy("id").execute();

    it("puts each named value in its places (a name used twice fills both) and keeps the query's own constants", async function () {
      const insert = s.prepare<{ id: string; n: number; note: string | null }>((db, p) => db.insertInto("t").values({ id: p("id"), n: p("n"), tag: "fixed", note: p("note") }));
      const bump = s.prepare<{ id: string; by: number }>((db, p) =>
        db
          .insertInto("t")
          .values({ id: p("id"), n: p("by"), tag: "fixed", note: null })
          .onConflict((oc) => oc.column("id").doUpdateSet((eb) => ({ n: eb("t.n", "+", p("by")) })))
          .returning("n"),
      );
      // Outside a transaction, and inside one (on SQLite: run on the connection at once).
      await insert.run(s.db, { id: "a", n: 1, note: "x" });
      await s.transaction(async (trx) => {
        await insert.run(trx, { id: "b", n: 2, note: null });
        expect((await bump.run(trx, { id: "a", by: 5 })).rows).to.deep.equal([{ n: 6 }]);
        expect((await bump.run(trx, { id: "c", by: 7 })).rows).to.deep.equal([{ n: 7 }]);
      });
      expect((await bump.run(s.db, { id: "c", by: 1 })).rows).to.deep.equal([{ n: 8 }]);
      expect(await all()).to.deep.equal([
        { id: "a", n: 6, tag: "fixed", note: "x" },
        { id: "b", n: 2, tag: "fixed", note: null },
        { id: "c", n: 8, tag: "fixed", note: null },
      ]);
    });

    it("answers how many rows it changed; inside a transaction that throws, what it wrote is rolled back", async function () {
      const insert = s.prepare<{ id: string }>((db, p) => db.insertInto("t").values({ id: p("id"), n: 0, tag: "t", note: null }));
      const remove = s.prepare<{ id: string }>((db, p) => db.deleteFrom("t").where("id", "=", p("id")));
      await insert.run(s.db, { id: "keep" });
      const failure = await s
        .transaction(async (trx) => {
          await insert.run(trx, { id: "gone" });
          expect((await remove.run(trx, { id: "keep" })).changed).to.equal(1n);
          expect((await remove.run(trx, { id: "never" })).changed).to.equal(0n);
          throw new Error("rolled back");
        })
        .catch((err: Error) => err.message);
      expect(failure).to.equal("rolled back");
      expect((await all()).map((r) => r.id)).to.deep.equal(["keep"]);
    });

    it("a value that looks like a placeholder is stored as it is; a missing value is refused before anything runs", async function () {
      const insert = s.prepare<{ id: string; note: string | null }>((db, p) => db.insertInto("t").values({ id: p("id"), n: 0, tag: "t", note: p("note") }));
      // The marker itself (PostgreSQL text holds no NUL: there, the marker without them).
      const marker = store === "PostgreSQL" ? "vesta-param:id" : "\u0000vesta-param:id\u0000";
      await insert.run(s.db, { id: "a", note: marker });
      expect((await all())[0]).to.deep.include({ id: "a", note: marker });
      const missing = await insert.run(s.db, { id: "b" } as never).catch((err: Error) => err.message);
      expect(missing).to.match(/no value for note/);
      expect(await all()).to.have.length(1);
    });
  });
}
