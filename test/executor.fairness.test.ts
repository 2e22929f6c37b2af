import { expect } from "chai";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { until } from "./helpers/triggers";

const SLEEP = "async function main(p) { await new Promise((r) => setTimeout(r, p.ms)); return 'slept' }";
const HELLO = "async function main() { return 'hello' }";

describe("fair share of the sandbox over HTTP (issue 15)", function () {
  this.timeout(120_000);
  let stack: Stack;
  before(async () => {
    // 2 workers: each account may hold 1 at a time (all but one), with 2 more runs waiting.
    stack = await startStack({ env: { VESTA_SANDBOX_WORKERS: "2", VESTA_RUN_QUEUE_PER_ACCOUNT: "2" } });
  });
  after(async () => stack?.stop());

  const run = (key: string, body: unknown) => call(stack, "POST", "/lit_action", { key, body });
  const balance = async (key: string) => (await call(stack, "GET", "/billing/balance", { key })).body.credit_cents;

  it("starts another account's trivial run at once while one account saturates its share, and answers 429 with Retry-After past its queue", async function () {
    const attacker = await newAccount(stack, "attacker");
    const victim = await newAccount(stack, "victim");
    expect((await run(victim.apiKey, { code: HELLO })).status).to.equal(200); // warm
    const reservation = Math.ceil(stack.relayerConfig.limits.timeoutMs / 1000) * stack.relayerConfig.billing.secondCents;
    const funded = await balance(attacker.apiKey);
    const attacks = [1, 2, 3].map(() => run(attacker.apiKey, { code: SLEEP, js_params: { ms: 3000 } }));
    let attackerDone = 0;
    attacks.forEach((a) => a.then(() => attackerDone++));
    // the three are admitted (each reserved its worst case) and handed to the sandbox: one runs, two wait
    await until(async () => ((await balance(attacker.apiKey)) <= funded - 3 * reservation ? true : undefined), 20_000, "the attacker's runs admitted");
    await new Promise((r) => setTimeout(r, 200));
    const before = await balance(attacker.apiKey);
    const refused = await fetch(`${stack.api}/lit_action`, {
      method: "POST",
      headers: { "x-api-key": attacker.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ code: SLEEP, js_params: { ms: 3000 } }),
    });
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
    const body = await refused.json();
    expect(body.code).to.equal("run_queue_full");
    expect(body.message).to.match(/^this account already has 1 run\(s\) in the sandbox and 2 waiting \(its share\); retry in \d+ s$/);
    expect(await balance(attacker.apiKey)).to.equal(before); // the refused run costs nothing

    const r = await run(victim.apiKey, { code: HELLO });
    expect([r.status, r.body.response]).to.deep.equal([200, "hello"]);
    expect(attackerDone).to.equal(0); // the victim waited for none of the attacker's runs (its latency: bench/fairness.ts)
    expect((await Promise.all(attacks)).map((a) => a.body.response)).to.deep.equal(["slept", "slept", "slept"]);
  });
});
