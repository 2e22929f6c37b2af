import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import { Billing } from "../billing/service";
import { ORPHAN_AFTER_MS } from "../billing/recovery";
import type { Reply } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, ok, onChain, type Client } from "./helpers/relayerWorkflow";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";
import { debitThenDie } from "./helpers/billingChild";

/** A run that holds its worker ~1.2 s: charged 2 started seconds, under a 2 s time limit. */
const LONG = `async function main() { await new Promise((r) => setTimeout(r, 1200)); return "long"; }`;

/** Sends all of `requests` at once while sampling the balance every 20 ms; the answers and the lowest balance seen. */
async function raceWatchingBalance(owner: Client, requests: (() => Promise<Reply>)[]) {
  let lowest = Infinity;
  let done = false;
  const watcher = (async () => {
    while (!done) {
      lowest = Math.min(lowest, (await ok(owner.get("/billing/balance"))).credit_cents);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const answers = await Promise.all(requests.map((send) => send()));
  done = true;
  await watcher;
  return { answers, lowest: Math.min(lowest, (await ok(owner.get("/billing/balance"))).credit_cents) };
}

const count = (answers: Reply[], status: number) => answers.filter((a) => a.status === status).length;

/** Waits until `check` holds (polling), or fails with `what`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("credit cannot be overdrawn: admission reserves the worst case (local billing)", function () {
  this.timeout(180_000);
  // 6 cents of credit; a run reserves its 2 s time limit at 1 cent a second; a write its fixed 1 cent (gas priced at 0).
  const stack = suiteStack({ env: { VESTA_FREE_CREDIT_CENTS: "6", VESTA_PRICE_PER_SECOND_CENTS: "1", VESTA_PRICE_PER_WRITE_CENTS: "1", VESTA_ACTION_TIMEOUT_MS: "2000" } });

  it("50 concurrent long runs against a balance that covers 3: 3 run, 47 get 402, the balance never goes below zero", async function () {
    const owner = await accountClient(stack());
    const { answers, lowest } = await raceWatchingBalance(owner, Array.from({ length: 50 }, () => () => owner.post("/lit_action", { code: LONG })));
    expect(count(answers, 200), JSON.stringify(answers.map((a) => (a.status === 200 || a.status === 402 ? a.status : a.body)))).to.equal(3);
    expect(count(answers, 402)).to.equal(47);
    for (const a of answers.filter((x) => x.status === 402)) expect(a.body.details).to.deep.equal({ credit_cents: 0, price_cents: 2 });
    expect(lowest, "lowest balance seen").to.be.at.least(0);
    expect((await ok(owner.get("/billing/balance"))).credit_cents, "3 runs x 2 started seconds").to.equal(0);
    const billing = stack().relayer.ctx.billing!;
    await billing.settle();
    const customer = (await billing.ledger.customer({ key: `account:0x${owner.hash.toString(16).padStart(64, "0")}`, account: "" }))!;
    expect(await billing.remote.credit(customer.customerId), "the customer record after settlement").to.equal(0);
  });

  it("a run's unused reservation is released when it ends: a short run pays 1 s of its 2 s reservation", async function () {
    const owner = await accountClient(stack());
    await ok(owner.post("/lit_action", { code: `async function main() { return 1; }` }));
    expect((await ok(owner.get("/billing/balance"))).credit_cents).to.equal(5);
  });

  it("10 concurrent relayed writes against a balance that covers 6: 6 land, 4 get 402 and send nothing", async function () {
    const owner = await accountClient(stack());
    const before = await onChain(stack(), owner);
    const { answers, lowest } = await raceWatchingBalance(
      owner,
      Array.from({ length: 10 }, (_, i) => () => owner.post("/add_group", { group_name: `g${i}`, group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] })),
    );
    expect(count(answers, 200), JSON.stringify(answers.map((a) => a.status))).to.equal(6);
    expect(count(answers, 402)).to.equal(4);
    expect(lowest).to.be.at.least(0);
    expect((await ok(owner.get("/billing/balance"))).credit_cents).to.equal(0);
    const after = (await onChain(stack(), owner)) as { groups: unknown[] };
    expect(after.groups.length - (before as { groups: unknown[] }).groups.length, "groups created on chain").to.equal(6);
  });
});

describe("a run's reservation records when the run starts, not when it is admitted (red team 1b)", function () {
  this.timeout(120_000);
  // One sandbox process: a second account's run waits in the queue while the first one runs.
  const stack = suiteStack({ env: { VESTA_SANDBOX_WORKERS: "1", VESTA_FREE_CREDIT_CENTS: "100", VESTA_PRICE_PER_SECOND_CENTS: "1", VESTA_ACTION_TIMEOUT_MS: "5000" } });

  it("a queued run's reservation holds its credit with no start until it leaves the queue for a sandbox", async function () {
    const [first, queued] = [await accountClient(stack()), await accountClient(stack())];
    const db = stack().relayer.ctx.billing!.ledger.db;
    let seen: { detail: string; created_at: number; started_at: number | null }[] = [];
    const rows = async () => (seen = await db.selectFrom("reservations").select(["detail", "created_at", "started_at"]).orderBy("created_at").execute());
    expect(await rows()).to.deep.equal([]);
    const long = first.post("/lit_action", { code: LONG });
    await until(async () => (await rows()).length === 1 && seen[0].started_at !== null, "the first run to start");
    const waiting = queued.post("/lit_action", { code: `async function main() { return "queued" }` });
    await until(async () => (await rows()).length === 2, "the second run's admission");
    const [running, inQueue] = seen;
    expect(running.started_at).to.be.at.least(running.created_at);
    expect(inQueue.started_at, "admitted, still queued: not started").to.equal(null);
    expect((await ok(long)).response).to.equal("long");
    expect((await ok(waiting)).response).to.equal("queued");
    expect(await rows(), "both settled").to.deep.equal([]);
    expect((await ok(queued.get("/billing/balance"))).credit_cents, "its one started second").to.equal(99);
  });
});

describe("reservations across a crash (against the Stripe test double)", function () {
  this.timeout(60_000);
  const quiet = pino({ level: "silent" });
  const PAYER = { key: "account:0x" + "ef".repeat(32), account: "0x" + "ef".repeat(32) };
  let double: StripeDouble;
  let dataDir: string;
  const open: Billing[] = [];
  const billing = async () => {
    const b = await Billing.open(loadBillingConfig(double.env(), "development").config, { dataDir }, quiet);
    open.push(b);
    return b;
  };
  beforeEach(async () => {
    double = await startStripeDouble();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-reserve-"));
  });
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close().catch(() => undefined);
    await double.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a run reserved by a killed process holds its credit until recovery, which charges the seconds from its start to its last heartbeat, once; a run still queued is released (red team 1b)", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 100, "test-credit", {});
    await b.refresh(customer);
    // The child admits two runs of 30 s: the first leaves the queue for a sandbox (its start is recorded), the second waits behind it.
    await debitThenDie({ ...double.env(), CHILD_DATA_DIR: dataDir, CHILD_PAYER: PAYER.key, CHILD_DEBITS: "0", CHILD_RESERVE: "30", CHILD_QUEUED: "30" });
    const fresh = await billing();
    expect(await fresh.balance(PAYER), "the dead process's reservations still hold credit").to.equal(40);
    const rows = await fresh.reservations.orphans("", Infinity);
    expect(rows.map((r) => [r.detail, r.startedAt === null])).to.deep.equal([["child run", false], ["queued run", true]]);
    expect(await fresh.recover(), "not orphans while their process may be alive").to.equal(0);
    expect(await fresh.balance(PAYER)).to.equal(40);

    // As if the process died long ago: both admitted at t, the first started 3 s later (it waited in the queue), last seen alive at t + 4.2 s.
    const t = Date.now() - ORPHAN_AFTER_MS - 60_000;
    await fresh.ledger.db.updateTable("reservations").set({ created_at: t, alive_at: t + 4200 }).execute();
    await fresh.ledger.db.updateTable("reservations").set({ started_at: t + 3000 }).where("started_at", "is not", null).execute();
    expect(await fresh.recover()).to.equal(2);
    expect(await fresh.balance(PAYER), "2 started seconds (from its start, not its admission: 5); the queued run charged nothing").to.equal(98);
    expect(await fresh.recover(), "ended once").to.equal(0);
    await fresh.settle();
    const debits = double.transactionsOf(customer).filter((x) => x.amount > 0);
    expect(debits.map((x) => x.amount)).to.deep.equal([2]);
    expect(await fresh.ledger.db.selectFrom("debits").select("detail").execute()).to.deep.equal([{ detail: "child run (recovered)" }]);
    expect(await (await billing()).balance(PAYER), "a third process agrees").to.equal(98);
  });

  it("a ledger from before runs recorded their start keeps charging its runs from their admission", async function () {
    // The reservations table as the previous version made it, holding a run its process left.
    const Database = require("better-sqlite3") as typeof import("better-sqlite3");
    const t = Date.now() - ORPHAN_AFTER_MS - 60_000;
    const old = new Database(path.join(dataDir, "billing.sqlite"));
    old.exec(`CREATE TABLE reservations (
      id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, unit_cents INTEGER NOT NULL, kind TEXT NOT NULL,
      detail TEXT NOT NULL, owner TEXT NOT NULL, created_at INTEGER NOT NULL, alive_at INTEGER NOT NULL, tx_hash TEXT)`);
    old.prepare("INSERT INTO reservations VALUES ('r1', 'cus_x', 30, 1, 'run', 'old run', 'proc-gone', ?, ?, NULL)").run(t, t + 4200);
    old.prepare("INSERT INTO reservations VALUES ('w1', 'cus_x', 30, 0, 'write', 'addGroup', 'proc-gone', ?, ?, NULL)").run(t, t + 4200);
    old.close();
    const b = await billing();
    expect((await b.reservations.orphans("", Infinity)).map((r) => [r.id, r.startedAt])).to.deep.equal([
      ["r1", t],
      ["w1", null],
    ]);
    expect(await b.recover()).to.equal(2);
    expect(await b.ledger.db.selectFrom("debits").select(["customer_id", "cents", "detail"]).execute()).to.deep.equal([{ customer_id: "cus_x", cents: 5, detail: "old run (recovered)" }]);
  });

  it("a write left unsent (no transaction hash) is released; one with a hash is charged what its receipt says, or its reservation when nobody can look", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 100, "test-credit", {});
    await b.refresh(customer);
    const unsent = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    const sent = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    const looked = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    await sent.noteTx("0x" + "01".repeat(32));
    await looked.noteTx("0x" + "02".repeat(32));
    for (const r of [unsent, sent, looked]) r.abandon(); // as a write whose receipt did not come
    expect(await b.balance(PAYER)).to.equal(70);
    const seen: string[] = [];
    expect(await b.recover(async (r) => (seen.push(...r.txHashes), r.txHashes[0].endsWith("02") ? 3 : "pending"))).to.equal(2);
    expect(seen.sort()).to.deep.equal(["0x" + "01".repeat(32), "0x" + "02".repeat(32)]);
    expect(await b.balance(PAYER), "unsent released, looked-up charged 3, pending still held").to.equal(87);
    expect(await b.recover()).to.equal(1);
    expect(await b.balance(PAYER), "no way to look: charged its reservation").to.equal(87);
    expect([await b.ledger.unsettledCents(customer), await b.reservations.reservedCents(customer)], "debits, reserved").to.deep.equal([13, 0]);
  });

  it("settling or releasing twice, or after recovery ended it, changes nothing", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 50, "test-credit", {});
    await b.refresh(customer);
    const r = await b.reserve(PAYER, 20, "a run", { kind: "run", detail: "r", unitCents: 1 });
    r.settle(25, "too much"); // never more than reserved
    r.settle(5, "again");
    r.release();
    expect(await b.balance(PAYER)).to.equal(30);
    expect(await b.ledger.unsettledCents(customer)).to.equal(20);
  });
});
