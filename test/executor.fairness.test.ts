import { expect } from "chai";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

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
  const balance = async (key: string) => (await call(stack, "GET", "/billing/balance", { key })).body.balance_cents;

  it("starts another account's trivial run at once while one account saturates its share, and answers 429 with Retry-After past its queue", async function () {
    const attacker = await newAccount(stack, "attacker");
    const victim = await newAccount(stack, "victim");
    expect((await run(victim.apiKey, { code: HELLO })).status).to.equal(200); // warm
    const initial = await balance(attacker.apiKey);
    const attacks = [1, 2, 3].map(() => run(attacker.apiKey, { code: SLEEP, js_params: { ms: 3000 } }));
    let attackerDone = 0;
    attacks.forEach((a) => a.then(() => attackerDone++));
    // The three runs are admitted (each reserves its worst case) when the balance stops moving.
    let before = initial;
    for (let unchanged = 0; unchanged < 3; ) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await balance(attacker.apiKey);
      unchanged = now === before && now < initial ? unchanged + 1 : 0;
      before = now;
    }
    const refused = await fetch(`${stack.api}/lit_action`, {
      method: "POST",
      headers: { "x-api-key": attacker.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ code: SLEEP, js_params: { ms: 3000 } }),
    });
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 60);
    const body = await refused.json();
    expect(body.error).to.equal("run_queue_full");
    expect(body.message).to.match(/^this account already has 1 run\(s\) in the sandbox and 2 waiting \(its share\); retry in \d+ s$/);
    expect(await balance(attacker.apiKey)).to.equal(before); // the refused run costs nothing

    const started = Date.now();
    const r = await run(victim.apiKey, { code: HELLO });
    const waited = Date.now() - started;
    expect([r.status, r.body.response]).to.deep.equal([200, "hello"]);
    expect(attackerDone).to.equal(0); // the victim waited for none of the attacker's runs
    expect(waited).to.be.below(1000);
    expect((await Promise.all(attacks)).map((a) => a.body.response)).to.deep.equal(["slept", "slept", "slept"]);
  });
});
