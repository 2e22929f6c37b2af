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
    const customer = billing.ledger.customer({ key: `account:0x${owner.hash.toString(16).padStart(64, "0")}`, account: "" })!;
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

describe("reservations across a crash (against the Stripe test double)", function () {
  this.timeout(60_000);
  const quiet = pino({ level: "silent" });
  const PAYER = { key: "account:0x" + "ef".repeat(32), account: "0x" + "ef".repeat(32) };
  let double: StripeDouble;
  let dataDir: string;
  const open: Billing[] = [];
  const billing = () => {
    const b = new Billing(loadBillingConfig(double.env(), "development").config, dataDir, quiet);
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

  it("a run reserved by a killed process holds its credit until recovery, which charges the seconds it was seen alive, once", async function () {
    const b = billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 100, "test-credit", {});
    await b.refresh(customer);
    await debitThenDie({ ...double.env(), CHILD_DATA_DIR: dataDir, CHILD_PAYER: PAYER.key, CHILD_DEBITS: "0", CHILD_RESERVE: "30" });
    const fresh = billing();
    expect(await fresh.balance(PAYER), "the dead process's reservation still holds credit").to.equal(70);
    expect(await fresh.recover(), "not an orphan while its process may be alive").to.equal(0);
    expect(await fresh.balance(PAYER)).to.equal(70);

    // As if the process died long ago, last seen alive 4.2 s after it admitted the run.
    const t = Date.now() - ORPHAN_AFTER_MS - 60_000;
    fresh.ledger.db.prepare("UPDATE reservations SET created_at = ?, alive_at = ?").run(t, t + 4200);
    expect(await fresh.recover()).to.equal(1);
    expect(await fresh.balance(PAYER), "charged 5 started seconds, the rest freed").to.equal(95);
    expect(await fresh.recover(), "ended once").to.equal(0);
    await fresh.settle();
    const debits = double.transactionsOf(customer).filter((x) => x.amount > 0);
    expect(debits.map((x) => x.amount)).to.deep.equal([5]);
    expect(await billing().balance(PAYER), "a third process agrees").to.equal(95);
  });

  it("a write left unsent (no transaction hash) is released; one with a hash is charged what its receipt says, or its reservation when nobody can look", async function () {
    const b = billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 100, "test-credit", {});
    await b.refresh(customer);
    const unsent = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    const sent = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    const looked = await b.reserve(PAYER, 10, "a write", { kind: "write", detail: "addGroup" });
    sent.noteTx("0x" + "01".repeat(32));
    looked.noteTx("0x" + "02".repeat(32));
    for (const r of [unsent, sent, looked]) r.abandon(); // as a write whose receipt did not come
    expect(await b.balance(PAYER)).to.equal(70);
    const seen: string[] = [];
    expect(await b.recover(async (r) => (seen.push(r.txHash!), r.txHash!.endsWith("02") ? 3 : "pending"))).to.equal(2);
    expect(seen.sort()).to.deep.equal(["0x" + "01".repeat(32), "0x" + "02".repeat(32)]);
    expect(await b.balance(PAYER), "unsent released, looked-up charged 3, pending still held").to.equal(87);
    expect(await b.recover()).to.equal(1);
    expect(await b.balance(PAYER), "no way to look: charged its reservation").to.equal(87);
    expect([b.ledger.unsettledCents(customer), b.reservations.reservedCents(customer)], "debits, reserved").to.deep.equal([13, 0]);
  });

  it("settling or releasing twice, or after recovery ended it, changes nothing", async function () {
    const b = billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 50, "test-credit", {});
    await b.refresh(customer);
    const r = await b.reserve(PAYER, 20, "a run", { kind: "run", detail: "r", unitCents: 1 });
    r.settle(25, "too much"); // never more than reserved
    r.settle(5, "again");
    r.release();
    expect(await b.balance(PAYER)).to.equal(30);
    expect(b.ledger.unsettledCents(customer)).to.equal(20);
  });
});
