import { expect } from "chai";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import { Ledger } from "../billing/ledger";
import { ReservationStore } from "../billing/reservations";
import { Billing } from "../billing/service";
import { rawExec, rawQuery } from "./helpers/rawDb";
import { usageOf } from "../billing/usage";
import { STORES, tempStore, type TempStore } from "./helpers/postgres";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";

const quiet = pino({ level: "silent" });
const PAYER = { key: "account:0x" + "cd".repeat(32), account: "0x" + "cd".repeat(32) };
const RUN = { kind: "run" as const, detail: "a test run", unitCents: 1 };
const localConfig = (freeCents: number) => loadBillingConfig({ VESTA_BILLING: "local", VESTA_FREE_CREDIT_CENTS: String(freeCents), VESTA_FREE_CREDIT_CAP_CENTS: String(freeCents * 2) }, "development").config;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "admitted",
    (err: { status?: number; code?: string }) => `${err.status} ${err.code}`,
  );

/** The billing ledger's own tables on each database: the same queries, the same rules. */
for (const store of STORES) {
  describe(`the billing store (${store})`, function () {
    this.timeout(60_000);
    let where: TempStore;
    const open: { close(): Promise<void> }[] = [];
    beforeEach(async function () {
      where = await tempStore(this, store, "billing.sqlite");
    });
    afterEach(async () => {
      for (const o of open.splice(0)) await o.close().catch(() => undefined);
      await where?.drop();
    });
    const ledger = async () => {
      const l = await Ledger.open(where.where);
      open.push(l);
      return l;
    };
    it("usage by day (billing/usage.ts): charges by day and kind, card and free-credit top-ups, the credit walked back; the same answer on both databases", async function () {
      const l = await ledger();
      const DAY = 86_400_000;
      const now = Date.UTC(2026, 10, 24, 12);
      const at = (daysAgo: number, h = 0) => now - daysAgo * DAY + h * 3_600_000;
      await l.commits.add(async (q) => {
        for (const [cents, kind, t] of [[3, "run", at(2, -3)], [4, "run", at(2, -2)], [5, "write", at(1)], [7, "run", at(0, -1)], [9, "run", at(5)]] as const) {
          await q.insertInto("debits").values({ id: l.storage.dialect.nextSeq("debits", "id"), customer_id: "cus_1", cents, kind, detail: "", created_at: t, batch: null, settled: 0 }).execute();
        }
        await q.insertInto("debits").values({ id: l.storage.dialect.nextSeq("debits", "id"), customer_id: "cus_2", cents: 100, kind: "run", detail: "", created_at: at(0), batch: null, settled: 0 }).execute();
        await q.insertInto("credits").values({ payment_intent: "pi_1", customer_id: "cus_1", cents: 500, created_at: at(1), credited_at: at(1, 1), adjustment_id: "a" }).execute();
        await q.insertInto("credits").values({ payment_intent: "pi_2", customer_id: "cus_1", cents: 800, created_at: at(0), credited_at: null, adjustment_id: null }).execute(); // not credited yet
        for (const [key, cents, kind] of [["k1", 250, "free_credit"], ["k2", 40, "settlement"]] as const) {
          await q.insertInto("local_adjustments").values({ idempotency_key: key, id: key, customer_id: "cus_1", delta_cents: cents, ending_credit_cents: 0, metadata: JSON.stringify({ vesta_kind: kind }), created_at: Math.floor(at(0, -2) / 1000) }).execute();
        }
      });
      const u = await usageOf(l, "cus_1", 3, 1000, now);
      expect(u.days).to.deep.equal([
        { date: "2026-11-22", run_cents: 7, run_count: 2, write_cents: 0, write_count: 0, topup_cents: 0, credit_cents: 1000 - 250 + 7 + 5 - 500 },
        { date: "2026-11-23", run_cents: 0, run_count: 0, write_cents: 5, write_count: 1, topup_cents: 500, credit_cents: 1000 - 250 + 7 },
        { date: "2026-11-24", run_cents: 7, run_count: 1, write_cents: 0, write_count: 0, topup_cents: 250, credit_cents: 1000 },
      ]);
      expect(u.topups).to.deep.equal([
        { at: new Date(at(1, 1)).toISOString(), cents: 500, kind: "card" },
        { at: new Date(at(0, -2)).toISOString(), cents: 250, kind: "free_credit" },
      ]);
    });

    const row = (id: string, over: Partial<{ customerId: string; cents: number; owner: string; kind: "run" | "write" }> = {}) => ({
      id,
      customerId: over.customerId ?? "cus_1",
      cents: over.cents ?? 10,
      unitCents: 2,
      kind: over.kind ?? ("run" as const),
      detail: `d-${id}`,
      owner: over.owner ?? "me",
    });
    const debits = (l: Ledger) => l.db.selectFrom("debits").select(["customer_id", "cents", "kind", "detail"]).orderBy("id").execute();

    it("a payment credited twice (two replicas: the webhook and a confirmation) records the provider's figure once: the second, stale after a settlement, changes nothing (review finding)", async function () {
      const l = await ledger();
      const payer = { key: "account:0x" + "ef".repeat(32), account: "0x" + "ef".repeat(32) };
      const customerId = await l.putCustomer(payer, "cus_twice", 0);
      expect((await l.claimCredit("pi_twice", customerId, 1000)).state).to.equal("new");
      expect((await l.claimCredit("pi_twice", customerId, 1000)).state, "the other replica's claim").to.equal("retry");
      await l.finishCredit("pi_twice", customerId, "adj_1", 1000);
      await l.setCredit(customerId, 900); // a settlement of 100 cents, recorded after the credit
      const second = await l.finishCredit("pi_twice", customerId, "adj_1", 1000); // the provider's first answer, again
      expect((await l.figures(customerId)).credit, "the settled figure stands").to.equal(900);
      expect(second).to.equal(false);
      expect(await l.credited("pi_twice")).to.equal(true);
    });

    it("reservations: sums a customer's; ends each once, debiting only a positive charge, with the end", async function () {
      const l = await ledger();
      const s = new ReservationStore(l);
      expect(await s.reservedCents("cus_1")).to.equal(0);
      await s.insert(row("r1", { cents: 10 }));
      await s.insert(row("r2", { cents: 5, kind: "write" }));
      await s.insert(row("r3", { cents: 7, customerId: "cus_2" }));
      expect([await s.reservedCents("cus_1"), await s.reservedCents("cus_2")]).to.deep.equal([15, 7]);
      const end = (id: string, kind: "run" | "write", cents: number, detail: string) => l.storage.transaction((trx) => s.end({ id, customerId: "cus_1", kind }, cents, detail, trx));
      expect(await end("r1", "run", 4, "2s")).to.equal(true);
      expect(await end("r1", "run", 4, "2s"), "ended before: nothing twice").to.equal(false);
      expect(await end("r2", "write", 0, "released")).to.equal(true);
      expect(await debits(l)).to.deep.equal([{ customer_id: "cus_1", cents: 4, kind: "run", detail: "2s" }]);
      expect(await s.reservedCents("cus_1")).to.equal(0);
      expect(await l.unsettledCents("cus_1")).to.equal(4);
    });

    it("reservations: a failed debit leaves the reservation in place (the transaction rolls back)", async function () {
      const l = await ledger();
      const failing = Object.assign(Object.create(Object.getPrototypeOf(l) as object) as Ledger, l, {
        debit: async () => {
          throw new Error("disk full");
        },
      });
      const s = new ReservationStore(failing);
      await s.insert(row("r1"));
      await expect(l.storage.transaction((trx) => s.end({ id: "r1", customerId: "cus_1", kind: "run" }, 4, "2s", trx))).to.be.rejectedWith("disk full");
      expect(await s.reservedCents("cus_1")).to.equal(10);
      expect(await debits(l)).to.deep.equal([]);
    });

    it("reservations: orphans are those handed to recovery, or another owner's not seen alive since the cut; never this owner's live ones", async function () {
      const s = new ReservationStore(await ledger());
      for (const r of [row("mine"), row("handed"), row("theirs", { owner: "other" }), row("alive", { owner: "alive" })]) {
        await s.insert(r);
        await new Promise((resolve) => setTimeout(resolve, 2)); // oldest first: one millisecond apart at least
      }
      await s.abandon("handed");
      await new Promise((r) => setTimeout(r, 5));
      const cut = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      await s.heartbeat("alive");
      await s.noteStart("theirs");
      await s.noteTx("theirs", "0xabc");
      await s.noteTx("theirs", "0xdef"); // its replacement: the first is kept (either may be mined)
      const orphans = await s.orphans("me", cut);
      expect(orphans.map((o) => o.id)).to.deep.equal(["handed", "theirs"]);
      const theirs = orphans[1];
      expect(theirs).to.deep.include({ customerId: "cus_1", cents: 10, unitCents: 2, kind: "run", detail: "d-theirs", owner: "other", txHashes: ["0xabc", "0xdef"] });
      expect(theirs.startedAt).to.be.a("number").that.is.at.least(cut);
      expect(theirs.aliveAt).to.be.below(cut);
      expect(orphans[0]).to.deep.include({ owner: "", startedAt: null, txHashes: [] });
      await s.abandonAll("me");
      expect((await s.orphans("nobody", 0)).map((o) => o.id)).to.deep.equal(["mine", "handed"]);
      expect((await s.orphans("me", Date.now() + 1000)).map((o) => o.id)).to.deep.equal(["mine", "handed", "theirs", "alive"]);
    });

    it("a ledger from before runs recorded their start gets the column, its runs taken as started at admission; a second open changes nothing", async function () {
      await rawExec(
        where.where,
        `CREATE TABLE reservations (id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, unit_cents INTEGER NOT NULL, kind TEXT NOT NULL,
          detail TEXT NOT NULL, owner TEXT NOT NULL, created_at BIGINT NOT NULL, alive_at BIGINT NOT NULL, tx_hash TEXT);
         INSERT INTO reservations VALUES ('old-run', 'c', 5, 1, 'run', 'd', '', 1000, 1000, NULL), ('old-write', 'c', 5, 0, 'write', 'd', '', 2000, 2000, NULL);`,
      );
      const first = await Ledger.open(where.where);
      expect((await new ReservationStore(first).orphans("me", 0)).map((o) => [o.id, o.startedAt])).to.deep.equal([["old-run", 1000], ["old-write", null]]);
      await first.close();
      const again = await ledger();
      expect((await new ReservationStore(again).orphans("me", 0)).map((o) => [o.id, o.startedAt])).to.deep.equal([["old-run", 1000], ["old-write", null]]);
      expect(await rawQuery(where.where, "SELECT name FROM billing_migrations ORDER BY name")).to.deep.equal([{ name: "0001_initial" }, { name: "0002_reservation_start" }, { name: "0003_batch_lease" }]);
    });

    it("settlement: every debit goes into exactly one batch, sent once; a failed send is sent again at the next settlement with the same key", async function () {
      const b = await Billing.open(localConfig(1000), { dataDir: where.dir, databaseUrl: where.where.databaseUrl }, quiet);
      open.push(b);
      const customer = await b.customerId(PAYER);
      for (const cents of [3, 4, 5]) await b.debit(customer, cents, "run", `${cents}s`);
      const adjust = b.remote.adjust.bind(b.remote);
      const keys: string[] = [];
      b.remote.adjust = async (c, delta, key, meta) => {
        keys.push(key);
        if (keys.length === 1) throw new Error("provider down");
        return adjust(c, delta, key, meta);
      };
      expect(await b.settle()).to.deep.equal({ batches: 0, cents: 0, failed: 1 });
      expect(await b.remote.credit(customer), "nothing applied").to.equal(1000);
      expect(await b.balance(PAYER)).to.equal(988);
      expect(await b.settle()).to.deep.equal({ batches: 1, cents: 12, failed: 0 });
      expect(keys).to.have.length(2);
      expect(keys[1]).to.equal(keys[0]);
      expect(await b.remote.credit(customer)).to.equal(988);
      expect(await b.balance(PAYER)).to.equal(988);
      expect(await b.settle()).to.deep.equal({ batches: 0, cents: 0, failed: 0 });
      expect(await rawQuery(where.where, "SELECT cents, count, attempts FROM batches")).to.deep.equal([{ cents: 12, count: 3, attempts: 2 }]);
    });
  });
}

/**
 * A payer's first request reaching two replicas (two Billing instances on one ledger) at once, each
 * with concurrent requests of its own, against the Stripe test double: one Stripe customer, one
 * ledger row, and a replica whose provider lookup answered late never writes its stale answer
 * (the credit before a settlement) over the row the first one recorded.
 */
for (const store of STORES) {
  describe(`a payer's Stripe customer, raced by two replicas (${store})`, function () {
    this.timeout(60_000);
    let where: TempStore;
    let double: StripeDouble;
    const open: Billing[] = [];
    beforeEach(async function () {
      where = await tempStore(this, store, "billing.sqlite");
      double = await startStripeDouble();
    });
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close().catch(() => undefined);
      await double.close();
      await where?.drop();
    });

    it("creates one customer and one ledger row; a late lookup leaves the recorded credit alone", async function () {
      const config = loadBillingConfig(double.env(), "development").config;
      const [a, b] = [await Billing.open(config, { dataDir: where.dir, databaseUrl: where.where.databaseUrl }, quiet), await Billing.open(config, { dataDir: where.dir, databaseUrl: where.where.databaseUrl }, quiet)];
      open.push(a, b);
      // b's lookup reaches Stripe (the customer is created there) and its answer is slow to come back.
      const lookup = b.remote.customer.bind(b.remote);
      let answered!: () => void;
      const gate = new Promise<void>((r) => (answered = r));
      let looked!: () => void;
      const lookedUp = new Promise<void>((r) => (looked = r));
      b.remote.customer = async (payer) => {
        const c = await lookup(payer);
        looked();
        await gate;
        return c;
      };
      const fromB = Promise.all([b.customerId(PAYER), b.customerId(PAYER), b.customerId(PAYER)]);
      await lookedUp;
      const fromA = Promise.all([a.customerId(PAYER), a.customerId(PAYER), a.customerId(PAYER)]);
      // Meanwhile a card payment of $10 and a settled debit of 30 cents move the credit to 970.
      const spend = async (id: string) => {
        double.customers.get(id)!.balance = -1000;
        await a.refresh(id);
        await a.debit(id, 30, "write", "addGroup");
        await a.settle();
      };
      await spend((await fromA)[0]); // a found the customer b created (its search), recorded it, and it was spent from
      answered();
      const ids = [...(await fromA), ...(await fromB)];
      expect(new Set(ids).size, "every request of both replicas got one customer").to.equal(1);
      const customer = ids[0];
      expect([...double.customers.values()].filter((c) => c.metadata.vesta_payer === PAYER.key).map((c) => c.id), "one Stripe customer").to.deep.equal([customer]);
      expect(double.requests.filter((r) => r.method === "POST" && r.path === "/v1/customers" && !r.replayed), "created once").to.have.length(1);
      const rows = await rawQuery<{ customer_id: string; credit_cents: number }>(where.where, "SELECT customer_id, credit_cents FROM customers");
      expect(rows.map((r) => [r.customer_id, Number(r.credit_cents)]), "one ledger row, holding the credit after the settlement").to.deep.equal([[customer, 970]]);
      expect(await a.remote.credit(customer)).to.equal(970);
      for (const r of [a, b]) expect(await r.balance(PAYER), "the settled 30 is not spendable again").to.equal(970);
    });
  });
}

/**
 * Relayer replicas on one PostgreSQL, each its own Billing (its own process in production): what
 * they admit together never passes the balance, a debit reaches the provider once whichever
 * replica settles, and work a dead replica left is ended once.
 */
describe("billing across replicas on one PostgreSQL", function () {
  this.timeout(60_000);
  let where: TempStore;
  let replicas: Billing[] = [];
  beforeEach(async function () {
    where = await tempStore(this, "PostgreSQL", "billing.sqlite");
    replicas = [];
    for (let i = 0; i < 3; i++) replicas.push(await Billing.open(localConfig(1000), { dataDir: where.dir, databaseUrl: where.where.databaseUrl }, quiet));
  });
  afterEach(async () => {
    for (const b of replicas) await b.close().catch(() => undefined);
    await where?.drop();
  });

  it("admissions spread over three replicas never reserve more than the balance (the overdraft rule holds across processes)", async function () {
    const customer = await replicas[0].customerId(PAYER);
    expect(await Promise.all(replicas.map((b) => b.customerId(PAYER))), "one customer record for the payer").to.deep.equal([customer, customer, customer]);
    const tries = Array.from({ length: 24 }, (_, i) => refusal(replicas[i % 3].reserve(PAYER, 150, "a run", RUN)));
    const outcomes = await Promise.all(tries);
    expect(outcomes.filter((o) => o === "admitted"), "6 x 150 = 900 of 1000; a 7th would pass it").to.have.length(6);
    expect(new Set(outcomes)).to.deep.equal(new Set(["admitted", "402 payment_required"]));
    expect(await rawQuery(where.where, "SELECT SUM(cents)::int AS s, COUNT(*)::int AS n FROM reservations")).to.deep.equal([{ s: 900, n: 6 }]);
    for (const b of replicas) expect(await b.balance(PAYER)).to.equal(100);
  });

  it("debits made by every replica reach the provider once, whichever replicas settle, however many at once", async function () {
    const customer = await replicas[0].customerId(PAYER);
    const reservations = await Promise.all(Array.from({ length: 9 }, (_, i) => replicas[i % 3].reserve(PAYER, 50, "a run", RUN)));
    const settling: Promise<unknown>[] = [];
    for (const [i, r] of reservations.entries()) {
      await r.settle(10 + i, `${10 + i}s`);
      if (i % 2 === 0) settling.push(replicas[(i + 1) % 3].settle()); // settlements race the debits and each other
    }
    await Promise.all(settling);
    await Promise.all(replicas.map((b) => b.settle()));
    await Promise.all(replicas.map((b) => b.settle()));
    const charged = reservations.reduce((sum, _, i) => sum + 10 + i, 0); // 126
    expect(await replicas[2].remote.credit(customer), "every debit applied once").to.equal(1000 - charged);
    expect(await rawQuery(where.where, "SELECT COUNT(*)::int AS n, SUM(cents)::int AS s FROM debits WHERE settled")).to.deep.equal([{ n: 9, s: charged }]);
    expect(await rawQuery(where.where, "SELECT COUNT(*)::int AS n FROM debits WHERE batch IS NULL OR NOT settled")).to.deep.equal([{ n: 0 }]);
    const batches = await rawQuery<{ cents: number }>(where.where, "SELECT cents FROM batches");
    expect(batches.reduce((s, b) => s + Number(b.cents), 0), "no batch counts a debit twice").to.equal(charged);
    expect(await rawQuery(where.where, "SELECT COUNT(*)::int AS n, SUM(delta_cents)::int AS s FROM local_adjustments")).to.deep.equal([{ n: batches.length, s: -charged }]);
    for (const b of replicas) expect(await b.balance(PAYER)).to.equal(1000 - charged);
  });

  it("a batch another replica is sending is left to it; once its lease ended (the replica died) it is sent again, and applied once", async function () {
    const [a, b] = replicas;
    const customer = await a.customerId(PAYER);
    await a.debit(customer, 30, "write", "addGroup");
    await a.ledger.batchUnbatched();
    const claimed = await a.ledger.claimBatches(); // a claims it and dies before its answer is recorded
    expect(claimed).to.have.length(1);
    await a.remote.adjust(customer, -30, claimed[0].id, { vesta_key: claimed[0].id });
    expect(await b.settle(), "leased to a").to.deep.equal({ batches: 0, cents: 0, failed: 0 });
    await rawExec(where.where, "UPDATE batches SET lease_until = 0");
    expect(await b.settle()).to.deep.equal({ batches: 1, cents: 30, failed: 0 });
    expect(await b.remote.credit(customer), "found by its key: not applied twice").to.equal(970);
    expect(await b.balance(PAYER)).to.equal(970);
  });

  it("a credit re-read by one replica that races another's settlement never writes back credit the settlement spent (the provider's answers are recorded in the order it gave them)", async function () {
    const [a, b] = replicas;
    const customer = await a.customerId(PAYER);
    // a re-reads the credit from the provider (a refusal's refresh); its answer (1000) is slow to be recorded...
    const read = a.remote.credit.bind(a.remote);
    let answered!: () => void;
    const slow = new Promise<void>((r) => (answered = r));
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    a.remote.credit = async (id: string) => {
      const credit = await read(id);
      asked();
      await slow;
      return credit;
    };
    const refreshing = a.refresh(customer);
    await askedP;
    // ...while b settles a debit of 30 with the provider (credit 970, the debit settled).
    await b.debit(customer, 30, "write", "addGroup");
    const settling = b.settle();
    await new Promise((r) => setTimeout(r, 300));
    answered();
    await Promise.all([refreshing, settling]);
    a.remote.credit = read;
    expect(await b.remote.credit(customer), "the provider applied it once").to.equal(970);
    for (const r of replicas) expect(await r.balance(PAYER), "the 30 spent is not spendable again").to.equal(970);
  });

  it("free credit racing through two replicas never raises a balance past the cap (the check and the top-up are one turn in every replica)", async function () {
    const [a, b] = replicas;
    const customer = await a.customerId(PAYER); // 1000 free; the cap is 2000
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => refusal([a, b][i % 2].addFreeCredit(PAYER, 400))));
    expect(outcomes.filter((o) => o === "admitted"), JSON.stringify(outcomes)).to.have.length(2); // 1000 + 2 x 400; a third would make 2200
    expect(new Set(outcomes)).to.deep.equal(new Set(["admitted", "409 free_credit_capped"]));
    expect(await a.remote.credit(customer), "the local provider's record").to.equal(1800);
    expect(await rawQuery(where.where, "SELECT COUNT(*)::int AS n FROM local_adjustments")).to.deep.equal([{ n: 2 }]);
    for (const r of [a, b]) expect(await r.balance(PAYER)).to.equal(1800);
  });

  it("the reservations of a dead replica are ended once, whichever replicas recover them at once", async function () {
    const [a, b, c] = replicas;
    const customer = await a.customerId(PAYER);
    await a.reserve(PAYER, 40, "a run", RUN);
    await a.reservations.abandonAll(a.owner);
    await rawExec(where.where, `UPDATE reservations SET started_at = created_at, alive_at = created_at + 3500`); // it ran 3.5 s

    const ended = await Promise.all([b.recover(), c.recover(), b.recover()]);
    expect(ended.reduce((s, n) => s + n, 0), "one replica ended it").to.equal(1);
    expect(await rawQuery(where.where, "SELECT cents::int AS cents, detail FROM debits")).to.deep.equal([{ cents: 4, detail: "a test run (recovered)" }]);
    expect(await a.ledger.unsettledCents(customer)).to.equal(4);
  });
});
