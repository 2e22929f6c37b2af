import { expect } from "chai";
import { call } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, expectError, ok } from "./helpers/relayerWorkflow";
import { until } from "./helpers/triggers";

const HELLO = `async function main() { return "hello"; }`;
const today = () => new Date().toISOString().slice(0, 10);

describe("GET /billing/usage: charges by day and kind, top-ups, credit over time (local billing)", function () {
  this.timeout(120_000);
  // Known prices: a write costs 5 cents, a run 3 cents a second (a 1 s time limit: 3 cents); 100 cents free to start.
  const stack = suiteStack({ env: { VESTA_FREE_CREDIT_CENTS: "100", VESTA_PRICE_PER_WRITE_CENTS: "5", VESTA_PRICE_PER_SECOND_CENTS: "3", VESTA_ACTION_TIMEOUT_MS: "1000" } });

  it("counts today's runs and writes with their cents, the free credit top-up, and walks the credit back day by day", async function () {
    const owner = await accountClient(stack());
    await addGroup(owner, "g"); // a write: 5
    await ok(owner.post("/lit_action", { code: HELLO })); // a run: 3
    await ok(owner.post("/lit_action", { code: HELLO })); // 3
    await ok(owner.post("/billing/free_credit", { amount_cents: 250 }));
    const usage = await until(async () => {
      const u = await ok(owner.get("/billing/usage?days=3"));
      return u.days[2].run_count === 2 ? u : undefined;
    }, 10_000, "the runs' debits");
    const balance = await ok(owner.get("/billing/balance"));
    expect(usage.currency).to.equal("usd");
    expect(usage.credit_cents).to.equal(balance.credit_cents);
    expect(usage.days.map((d: { date: string }) => d.date)).to.deep.equal([-2, -1, 0].map((n) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)));
    const last = usage.days[2];
    expect(last).to.deep.equal({ date: today(), run_cents: 6, run_count: 2, write_cents: 5, write_count: 1, topup_cents: 250, credit_cents: balance.credit_cents });
    expect(balance.credit_cents).to.equal(100 - 5 - 6 + 250);
    // Before today: the credit it started the day with (no flows on the days before).
    expect(usage.days[1]).to.deep.equal({ date: usage.days[1].date, run_cents: 0, run_count: 0, write_cents: 0, write_count: 0, topup_cents: 0, credit_cents: 100 });
    expect(usage.days[0].credit_cents).to.equal(100);
    expect(usage.topups).to.have.length(1);
    expect(usage.topups[0]).to.include({ cents: 250, kind: "free_credit" });
    expect(Date.parse(usage.topups[0].at)).to.be.closeTo(Date.now(), 60_000);
  });

  it("answers 30 days by default; a usage key of the account reads the same; another account sees only its own", async function () {
    const owner = await accountClient(stack());
    await addGroup(owner, "g");
    const mine = await ok(owner.get("/billing/usage"));
    expect(mine.days).to.have.length(30);
    expect(mine.days[29]).to.include({ write_count: 1, write_cents: 5 });
    const usage = await addUsageKey(stack(), owner);
    const viaUsageKey = await ok(usage.get("/billing/usage"));
    expect(viaUsageKey.days[29]).to.include({ write_count: 2, write_cents: 10 }); // minting the usage key was a write too
    const other = await accountClient(stack(), false, "other");
    const theirs = await ok(other.get("/billing/usage?days=1"));
    expect(theirs.days).to.deep.equal([{ date: today(), run_cents: 0, run_count: 0, write_cents: 0, write_count: 0, topup_cents: 0, credit_cents: 100 }]);
    expect(theirs.topups).to.deep.equal([]);
  });

  it("400 for days out of 1..366, not a number, or an unknown parameter; 401 without a key", async function () {
    const owner = await accountClient(stack());
    for (const q of ["days=0", "days=367", "days=1.5", "days=abc", "days=-1", "day=3"]) {
      const r = await owner.get(`/billing/usage?${q}`);
      expect([r.status, r.body.code], q).to.deep.equal([400, "invalid_request"]);
    }
    expect((await owner.get("/billing/usage?days=366")).body.days).to.have.length(366);
    const anon = await call(stack(), "GET", "/billing/usage");
    expect(anon.status).to.equal(401);
  });
});
