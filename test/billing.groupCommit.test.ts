import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import { GroupCommit } from "../billing/groupCommit";
import { Billing } from "../billing/service";
import { computeCid } from "../executor/cid";
import { CodeStore } from "../executor/codeStore";

const PAYER = { key: "account:0x" + "ab".repeat(32), account: "0x" + "ab".repeat(32) };
const RUN = { kind: "run" as const, detail: "a test run", unitCents: 1 };

describe("ledger writes committed together (issue 18: a run's billing in one commit)", function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-group-commit-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe("GroupCommit", function () {
    const open = () => {
      const file = path.join(dir, "g.sqlite");
      const db = new Database(file);
      db.pragma("journal_mode = WAL");
      db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)");
      const other = new Database(file, { readonly: true }); // another connection sees only what is committed
      return { db, other, rows: () => other.prepare("SELECT id, n FROM t ORDER BY id").all() };
    };

    it("commits the writes of one turn together, in order, after that turn; another connection sees none of them before", async function () {
      const { db, other, rows } = open();
      const commits = new GroupCommit(db);
      const insert = db.prepare("INSERT INTO t VALUES (?, ?)");
      const bump = db.prepare("UPDATE t SET n = n + 1 WHERE id = ?");
      const done = [commits.add(() => insert.run("a", 1).changes), commits.add(() => bump.run("a").changes), commits.add(() => insert.run("b", 5).changes)];
      expect(rows(), "nothing committed within the turn").to.deep.equal([]);
      expect(await Promise.all(done)).to.deep.equal([1, 1, 1]);
      expect(rows()).to.deep.equal([
        { id: "a", n: 2 },
        { id: "b", n: 5 },
      ]);
      other.close();
      db.close();
    });

    it("a write that throws rolls back alone (also what it wrote before throwing) and rejects only its own promise", async function () {
      const { db, other, rows } = open();
      const commits = new GroupCommit(db);
      const insert = db.prepare("INSERT INTO t VALUES (?, ?)");
      const first = commits.add(() => insert.run("a", 1));
      const failing = commits.add(() => {
        insert.run("half", 1); // undone with the rest of this write
        insert.run("a", 2); // primary key taken: throws
      });
      const last = commits.add(() => insert.run("c", 3));
      await expect(failing).to.be.rejectedWith(/UNIQUE/);
      await first;
      await last;
      expect(rows()).to.deep.equal([
        { id: "a", n: 1 },
        { id: "c", n: 3 },
      ]);
      other.close();
      db.close();
    });

    it("flush() commits at once; a closed database rejects every write of the batch", async function () {
      const { db, other, rows } = open();
      const commits = new GroupCommit(db);
      const insert = db.prepare("INSERT INTO t VALUES (?, ?)");
      const a = commits.add(() => insert.run("a", 1));
      commits.flush();
      expect(rows()).to.deep.equal([{ id: "a", n: 1 }]);
      await a;
      const late = commits.add(() => insert.run("b", 1));
      db.close();
      commits.flush();
      await expect(late).to.be.rejectedWith(/not open/);
      other.close();
    });
  });

  describe("billing through it", function () {
    const billing = () => new Billing(loadBillingConfig({ VESTA_BILLING: "local", VESTA_FREE_CREDIT_CENTS: "1000", VESTA_FREE_CREDIT_CAP_CENTS: "2000" }, "development").config, dir, pino({ level: "silent" }));

    it("a run's reservation, start and end: admissions see a reservation at once, reads of the ledger see every write made so far, and settle resolves once its debit is committed", async function () {
      const b = billing();
      const customer = await b.customerId(PAYER);
      const ledgerFile = new Database(path.join(dir, "billing.sqlite"), { readonly: true });
      const committedDebits = () => ledgerFile.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM debits").get()!.n;
      const [r1, r2] = await Promise.all([b.reserve(PAYER, 400, "a run", RUN), b.reserve(PAYER, 400, "a run", RUN)]);
      const refused = await b.reserve(PAYER, 400, "a run", RUN).then(
        () => undefined,
        (err: { status?: number; code?: string; details?: unknown }) => err,
      );
      expect(refused, "the two reservations hold 800 of 1000").to.deep.include({ status: 402, code: "payment_required" });
      r1.noteStart();
      const settled = r1.settle(3, "3s");
      expect(committedDebits(), "not committed within the turn").to.equal(0);
      expect(await b.balance(PAYER), "the cached figures at once: 1000 - 3 - 400").to.equal(597);
      await settled;
      expect(committedDebits(), "committed when settle resolves").to.equal(1);
      r2.settle(7, "7s"); // not awaited: a read of the ledger commits it first
      expect(b.ledger.unsettledCents(customer)).to.equal(10);
      expect(b.reservations.reservedCents(customer)).to.equal(0);
      await r2.settle(7, "again"); // ended already: nothing more
      expect(b.ledger.unsettledCents(customer)).to.equal(10);
      ledgerFile.close();
      await b.close();
    });
  });

  describe("the code store: a run of its payer's newest code writes nothing", function () {
    it("touch writes only when the order of the payer's code changes; eviction still drops the least recently used", async function () {
      const file = path.join(dir, "actions.sqlite");
      const store = await CodeStore.open({ sqliteFile: file }, { bytesPerPayer: 2000 });
      const reader = new Database(file, { readonly: true });
      const usedAt = (cid: string) => reader.prepare<[string], { used_at: number }>("SELECT used_at FROM action_code_owner WHERE payer = 'p' AND cid = ?").get(cid)!.used_at;
      const changes = () => (reader.prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
      const code = async (n: number) => {
        const bytes = Buffer.from(`async function main() { return ${n} }\n//${"x".repeat(900)}`, "utf8"); // two fit in 2000 bytes
        return { bytes, cid: await computeCid(bytes) };
      };
      const [a, b, c] = [await code(1), await code(2), await code(3)];
      await store.put(a.cid, a.bytes, "p");
      const version = changes();
      for (let i = 0; i < 50; i++) {
        await store.touch(a.cid, "p"); // a is p's newest: nothing to write
        await store.put(a.cid, a.bytes, "p"); // the same code sent inline again: nothing to write
      }
      expect(changes(), "no commit for 50 runs of the newest code").to.equal(version);
      await store.put(b.cid, b.bytes, "p");
      const before = usedAt(a.cid);
      await new Promise((r) => setTimeout(r, 5));
      await store.touch(a.cid, "p"); // b was stored since: a becomes p's newest again, written
      expect(usedAt(a.cid)).to.be.above(before);
      await store.put(c.cid, c.bytes, "p"); // past 2000 bytes: b, the least recently used, goes
      expect(await store.get(b.cid)).to.equal(undefined);
      expect(await store.get(a.cid)).to.not.equal(undefined);
      reader.close();
      await store.close();
    });
  });
});
