import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import { Billing } from "../billing/service";
import { AppError } from "../protocol/errors";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";
import { debitThenDie } from "./helpers/billingChild";

const quiet = pino({ level: "silent" });
const PAYER = { key: "account:0x" + "ab".repeat(32), account: "0x" + "ab".repeat(32) };
const RUN = { kind: "run" as const, detail: "a test run", unitCents: 1 };
const OTHER = { key: "wallet:0x70997970C51812dc3A010C7d01b50e0d17dc79C8", account: "0x" + "cd".repeat(32) };

/** Polls `cond` every 20 ms for up to 10 s. */
async function until(cond: () => boolean, what: string) {
  for (const deadline = Date.now() + 10_000; !cond(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe("billing ledger and settlement (against the Stripe test double)", function () {
  this.timeout(60_000);
  let double: StripeDouble;
  let dataDir: string;
  const open: Billing[] = [];

  const billing = async (env: Record<string, string> = double.env()) => {
    const b = await Billing.open(loadBillingConfig(env, "development").config, { dataDir }, quiet);
    open.push(b);
    return b;
  };
  /** What Stripe holds for `payer`: the credit (Stripe's balance, negated) and the debits applied (sum of positive amounts, and their count per metadata). */
  const atStripe = (payer = PAYER) => {
    const c = double.customerOf(payer.key)!;
    const debits = double.transactionsOf(c.id).filter((t) => t.amount > 0);
    return {
      credit: -c.balance,
      debitedCents: debits.reduce((s, t) => s + t.amount, 0),
      debitsCounted: debits.reduce((s, t) => s + Number(t.metadata.vesta_debits), 0),
      transactions: debits.length,
    };
  };

  beforeEach(async () => {
    double = await startStripeDouble();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-billing-"));
  });
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close().catch(() => undefined);
    await double.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("admits charges against the cached credit minus unsettled debits, with no Stripe request per charge", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 10, "test-credit", {}); // 10 cents of credit
    await b.refresh(customer);
    const requests = double.requests.length;
    for (let i = 0; i < 10; i++) (await b.reserve(PAYER, 1, "a test", RUN)).settle(1, "1s");
    expect(double.requests.length, "Stripe requests while charging").to.equal(requests);
    expect(await b.balance(PAYER)).to.equal(0);
    const refused = await b.reserve(PAYER, 1, "a test", RUN).then(() => expect.fail("admitted"), (e: unknown) => e as AppError);
    expect(refused).to.be.instanceOf(AppError).and.include({ status: 402, code: "payment_required" });
    expect(refused.message).to.match(/\$0\.00, not enough for a test \(\$0\.01\)/);
  });

  it("a refused charge re-reads the balance from Stripe (at most every 5 s), so credit added there is seen", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.remote.adjust(customer, 300, "dashboard-credit", {}); // credited outside Vesta (e.g. the Stripe dashboard)
    expect(await b.reserve(PAYER, 1, "a test", RUN).catch((e: AppError) => e.code), "read less than 5 s ago").to.equal("payment_required");
    await b.ledger.db.updateTable("customers").set({ synced_at: 0 }).execute(); // as if last read long ago
    b.reload(customer);
    (await b.reserve(PAYER, 1, "a test", RUN)).release();
    expect(await b.balance(PAYER)).to.equal(300);
  });

  it("settles each customer's debits as one balance transaction per settlement, with an idempotency key", async function () {
    const b = await billing();
    const [mine, theirs] = [await b.customerId(PAYER), await b.customerId(OTHER)];
    for (let i = 0; i < 3; i++) await b.debit(mine, 2, "write", "addGroup");
    await b.debit(theirs, 5, "run", "5s");
    expect(await b.settle()).to.deep.equal({ batches: 2, cents: 11, failed: 0 });
    expect(atStripe(PAYER)).to.deep.equal({ credit: -6, debitedCents: 6, debitsCounted: 3, transactions: 1 });
    expect(atStripe(OTHER)).to.deep.equal({ credit: -5, debitedCents: 5, debitsCounted: 1, transactions: 1 });
    const posts = double.requests.filter((r) => r.path.endsWith("/balance_transactions") && r.method === "POST");
    expect(posts.map((r) => r.idempotencyKey)).to.satisfy((keys: string[]) => keys.every((k) => /^vesta-batch-[0-9a-f-]{36}$/.test(k)));
    expect(await b.settle(), "nothing left").to.deep.equal({ batches: 0, cents: 0, failed: 0 });
    expect(await b.balance(PAYER)).to.equal(-6);
  });

  it("applies a settlement whose answer was lost once (the SDK retries with the same idempotency key)", async function () {
    const b = await billing();
    const customer = await b.customerId(PAYER);
    await b.debit(customer, 3, "run", "3s");
    double.failNext("POST", /balance_transactions$/, "drop");
    expect(await b.settle()).to.include({ batches: 1, failed: 0 });
    expect(atStripe()).to.include({ debitedCents: 3, transactions: 1 });
    expect(double.requests.filter((r) => r.replayed)).to.have.length(1);
  });

  it("keeps a batch Stripe refused pending and applies it once at the next settlement", async function () {
    const b = await billing();
    await b.debit(await b.customerId(PAYER), 2, "write", "addGroup");
    double.failNext("POST", /balance_transactions$/, "unavailable");
    expect(await b.settle()).to.deep.equal({ batches: 0, cents: 0, failed: 1 });
    expect(await b.balance(PAYER), "still counted").to.equal(-2);
    expect(await b.settle()).to.deep.equal({ batches: 1, cents: 2, failed: 0 });
    expect(atStripe()).to.deep.equal({ credit: -2, debitedCents: 2, debitsCounted: 1, transactions: 1 });
  });

  it("settles at shutdown, and a restarted process finds the customer in its ledger", async function () {
    const b = await billing();
    await b.debit(await b.customerId(PAYER), 4, "run", "4s");
    await b.close();
    expect(atStripe()).to.include({ debitedCents: 4 });
    const again = await billing();
    const requests = double.requests.length;
    expect(await again.balance(PAYER)).to.equal(-4);
    expect(double.requests.length, "no search or create").to.equal(requests);
  });

  it("never loses or double-counts a debit when the process is killed before it settles them", async function () {
    const env = { ...double.env(), CHILD_DATA_DIR: dataDir, CHILD_PAYER: PAYER.key, CHILD_DEBITS: "5,3" };
    await debitThenDie(env); // 5 debits settled, 3 debits recorded, killed
    expect(atStripe()).to.include({ debitedCents: 5, debitsCounted: 5 });
    const fresh = await billing();
    expect(await fresh.balance(PAYER), "unsettled debits count before settlement").to.equal(-8);
    expect(await fresh.settle()).to.deep.equal({ batches: 1, cents: 3, failed: 0 });
    expect(atStripe()).to.deep.equal({ credit: -8, debitedCents: 8, debitsCounted: 8, transactions: 2 });
    expect(await fresh.settle()).to.include({ batches: 0 });
  });

  it("never double-counts a batch Stripe applied when the process died before it heard the answer", async function () {
    double.failNext("POST", /balance_transactions$/, "hang");
    const env = { ...double.env(), CHILD_DATA_DIR: dataDir, CHILD_PAYER: PAYER.key, CHILD_DEBITS: "4", CHILD_SETTLE_LAST: "1" };
    await debitThenDie(env, () => until(() => double.transactions.length === 1, "the child's settlement to reach Stripe"));
    expect(atStripe()).to.include({ debitedCents: 4 });
    const fresh = await billing();
    expect(await fresh.settle()).to.deep.equal({ batches: 1, cents: 4, failed: 0 });
    expect(atStripe(), "applied once").to.deep.equal({ credit: -4, debitedCents: 4, debitsCounted: 4, transactions: 1 });
    expect(double.requests.some((r) => r.method === "GET" && r.path.endsWith("/balance_transactions")), "looked it up").to.equal(true);
    expect(await fresh.balance(PAYER)).to.equal(-4);
  });

  it("local mode: a new customer gets the free credit, debits settle into the local records, idempotently", async function () {
    const env = { VESTA_MODE: "development", VESTA_BILLING: "local", VESTA_FREE_CREDIT_CENTS: "250" };
    const b = await billing(env);
    expect(await b.balance(PAYER)).to.equal(250);
    const customer = await b.customerId(PAYER);
    (await b.reserve(PAYER, 7, "a test", RUN)).settle(7, "7s");
    expect(await b.balance(PAYER)).to.equal(243);
    await b.settle();
    expect(await b.remote.credit(customer)).to.equal(243);
    const once = await b.remote.adjust(customer, -10, "same-key", {});
    expect(await b.remote.adjust(customer, -10, "same-key", {})).to.deep.equal(once);
    await b.refresh(customer);
    expect(await b.balance(PAYER)).to.equal(233);
    await b.close();
    expect(await (await billing(env)).balance(PAYER), "kept across a restart").to.equal(233);
  });
});
