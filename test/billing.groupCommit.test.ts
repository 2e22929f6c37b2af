import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import type { Kysely } from "kysely";
import { GroupCommit } from "../billing/groupCommit";
import { COMMIT_EVERY_MS, CommitPacer } from "../storage/commitPacer";
import type { BillingDb } from "../billing/schema";
import { Storage } from "../storage";
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
    type T = { t: { id: string; n: number } };
    const SCHEMA = { name: "t", steps: { "0001": async (db: Kysely<any>) => void (await db.schema.createTable("t").addColumn("id", "text", (c) => c.primaryKey()).addColumn("n", "integer", (c) => c.notNull()).execute()) } };
    const open = async () => {
      const file = path.join(dir, "g.sqlite");
      const s = await Storage.open<T>({ sqliteFile: file }, SCHEMA);
      const other = new Database(file, { readonly: true }); // another connection sees only what is committed
      return { s, other, rows: () => other.prepare("SELECT id, n FROM t ORDER BY id").all() };
    };
    const insert = (id: string, n: number) => async (trx: Kysely<any>) => Number((await trx.insertInto("t").values({ id, n }).executeTakeFirst()).numInsertedOrUpdatedRows);
    const bump = (id: string) => async (trx: Kysely<any>) => Number((await trx.updateTable("t").set((eb) => ({ n: eb("n", "+", 1) })).where("id", "=", id).executeTakeFirst()).numUpdatedRows);

    it("commits the writes of one turn together, in order, after that turn; another connection sees none of them before", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      const done = [commits.add(insert("a", 1)), commits.add(bump("a")), commits.add(insert("b", 5))];
      expect(rows(), "nothing committed within the turn").to.deep.equal([]);
      expect(await Promise.all(done)).to.deep.equal([1, 1, 1]);
      expect(rows()).to.deep.equal([
        { id: "a", n: 2 },
        { id: "b", n: 5 },
      ]);
      other.close();
      await s.close();
    });

    it("a lone writer is never paced: each commit of one write runs at the end of its turn, not COMMIT_EVERY_MS after the last (a lone client's run paid ~20 ms)", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      try {
        const t0 = performance.now();
        for (let i = 0; i < 50; i++) await commits.add(insert(`k${String(i).padStart(2, "0")}`, i)); // a reservation, an end, the next run's...
        const elapsed = performance.now() - t0;
        expect(rows()).to.have.length(50);
        // Paced, the 49 commits after the first would wait ~COMMIT_EVERY_MS each (~490 ms).
        expect(elapsed, `50 lone commits took ${elapsed.toFixed(0)} ms`).to.be.lessThan(30 * COMMIT_EVERY_MS);
      } finally {
        other.close();
        await s.close();
      }
    });

    it("once a commit gathered several writers, the next waits until the pacing interval after it (one commit serves many under load)", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>, new CommitPacer(600));
      try {
        await Promise.all([commits.add(insert("a", 1)), commits.add(insert("b", 2)), commits.add(insert("c", 3))]); // concurrent: one commit
        const t0 = performance.now();
        const next = [commits.add(insert("d", 4)), new Promise((resolve) => setTimeout(resolve, 50)).then(() => commits.add(insert("e", 5)))];
        await Promise.all(next);
        expect(performance.now() - t0, "waited for the interval").to.be.greaterThan(450);
        expect(rows()).to.have.length(5);
        // After that commit of two, a write again alone: it waits too; after a commit of one, the next does not.
        await commits.add(insert("f", 6));
        const t1 = performance.now();
        await commits.add(insert("g", 7));
        expect(performance.now() - t1, "after a commit of one write, no wait").to.be.lessThan(300);
      } finally {
        other.close();
        await s.close();
      }
    });

    it("a write that throws rolls back alone (also what it wrote before throwing) and rejects only its own promise", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      const first = commits.add(insert("a", 1));
      const failing = commits.add(async (trx) => {
        await insert("half", 1)(trx); // undone with the rest of this write
        await insert("a", 2)(trx); // primary key taken: throws
      });
      const last = commits.add(insert("c", 3));
      await expect(failing).to.be.rejectedWith(/UNIQUE/);
      await first;
      await last;
      expect(rows()).to.deep.equal([
        { id: "a", n: 1 },
        { id: "c", n: 3 },
      ]);
      other.close();
      await s.close();
    });

    it("a write alone in its commit that throws rolls back what it wrote before throwing; the next commit goes on", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      await commits.add(insert("a", 1));
      const failing = commits.add(async (trx) => {
        await insert("half", 1)(trx);
        await insert("a", 2)(trx); // primary key taken: throws
      });
      await commits.flush();
      await expect(failing).to.be.rejectedWith(/UNIQUE/);
      await commits.add(insert("b", 2));
      expect(rows()).to.deep.equal([
        { id: "a", n: 1 },
        { id: "b", n: 2 },
      ]);
      other.close();
      await s.close();
    });

    it("a withdrawable write taken back before its commit never runs; once its commit began it cannot be taken back", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      const kept = commits.add(insert("a", 1));
      const taken = commits.addWithdrawable(insert("gone", 9));
      expect(taken.withdraw()).to.equal(true);
      expect(taken.withdraw(), "only once").to.equal(false);
      const late = commits.addWithdrawable(insert("b", 2));
      const flushing = commits.flush();
      expect(late.withdraw(), "its commit began").to.equal(false);
      await flushing;
      await kept;
      expect(await taken.done).to.equal(undefined);
      await late.done;
      expect(rows()).to.deep.equal([
        { id: "a", n: 1 },
        { id: "b", n: 2 },
      ]);
      other.close();
      await s.close();
    });

    it("flush() commits at once; a closed database rejects every write of the batch", async function () {
      const { s, other, rows } = await open();
      const commits = new GroupCommit(s as unknown as Storage<BillingDb>);
      const a = commits.add(insert("a", 1));
      await commits.flush();
      expect(rows()).to.deep.equal([{ id: "a", n: 1 }]);
      await a;
      const late = commits.add(insert("b", 1));
      await s.close();
      await commits.flush();
      await expect(late).to.be.rejectedWith(/destroyed|not open/);
      other.close();
    });
  });

  describe("billing through it", function () {
    const billing = () => Billing.open(loadBillingConfig({ VESTA_BILLING: "local", VESTA_FREE_CREDIT_CENTS: "1000", VESTA_FREE_CREDIT_CAP_CENTS: "2000" }, "development").config, { dataDir: dir }, pino({ level: "silent" }));

    it("a run's reservation, start and end: admissions see a reservation at once, reads of the ledger see every write made so far, and settle resolves once its debit is committed", async function () {
      const b = await billing();
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
      expect(await b.ledger.unsettledCents(customer)).to.equal(10);
      expect(await b.reservations.reservedCents(customer)).to.equal(0);
      await r2.settle(7, "again"); // ended already: nothing more
      expect(await b.ledger.unsettledCents(customer)).to.equal(10);
      ledgerFile.close();
      await b.close();
    });
    it("a write made while a customer's figures are being loaded is counted: the load under way is done again", async function () {
      const b = await billing();
      const customer = await b.customerId(PAYER);
      expect(await b.balance(PAYER)).to.equal(1000);
      b.reload(customer); // e.g. after a settlement: the next admission loads the figures from the ledger
      // The debit is made just after the load committed what was queued, before it reads the ledger.
      const flush = b.ledger.commits.flush.bind(b.ledger.commits);
      let debit: Promise<void> | undefined;
      const debited = new Promise<void>((resolve, reject) => {
        b.ledger.commits.flush = () => {
          if (!debit) queueMicrotask(() => (debit = b.debit(customer, 5, "run", "5s")).then(resolve, reject));
          return flush();
        };
      });
      const loading = b.balance(PAYER);
      await debited;
      expect(await loading, "answered after the debit was committed").to.equal(995);
      expect(await b.balance(PAYER), "and cached so").to.equal(995);
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
