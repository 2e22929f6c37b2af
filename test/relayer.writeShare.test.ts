import { expect } from "chai";
import { ethers } from "hardhat";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { until } from "./helpers/triggers";
import { expectError } from "./helpers/relayerChecks";
import { hashKey } from "../relayer/http/auth";

describe("relayed writes: the payers shared by who pays (red team round 2: one account's flood of writes)", function () {
  this.timeout(300_000);
  let stack: Stack;
  before(async () => {
    // One payer wallet: each billing payer may keep it busy with one write and keep 20 waiting.
    stack = await startStack({ payerCount: 1, env: { VESTA_WRITE_QUEUE_PER_PAYER: "20" } });
  });
  after(async () => {
    await ethers.provider.send("evm_setAutomine", [true]);
    await stack?.stop();
  });

  const addGroup = (key: string, name: string) => call(stack, "POST", "/add_group", { key, body: { group_name: name } });
  const credit = async (key: string) => (await call(stack, "GET", "/billing/balance", { key })).body.credit_cents as number;

  it("another account's write goes next while one account floods writes; past its share and queue, 429 write_queue_full, nothing sent or charged", async function () {
    const attacker = (await newAccount(stack, "attacker")).apiKey;
    const victim = (await newAccount(stack, "victim")).apiKey;
    const from = (await ethers.provider.getBlockNumber()) + 1;
    await ethers.provider.send("evm_setAutomine", [false]); // nothing is mined until the queue is built
    let floods: ReturnType<typeof addGroup>[] = [];
    try {
      const initial = await credit(attacker);
      floods = Array.from({ length: 21 }, (_, i) => addGroup(attacker, `flood ${i}`));
      // Twenty waiting, and the write in its turn has reserved its worst case (it does so after its
      // simulation: read before that, the balance would move by its reservation, not by the refusal).
      await until(async () => (stack.relayer.ctx.payers.stats().waiting === 20 && (await credit(attacker)) < initial ? true : undefined), 60_000, "one write sending (its reservation made), twenty waiting");
      const before = await credit(attacker);
      expectError(await addGroup(attacker, "one too many"), 429, "write_queue_full", "billed to this payer");
      expect(await credit(attacker)).to.equal(before);
      const mine = addGroup(victim, "mine");
      await until(async () => (stack.relayer.ctx.payers.stats().waiting === 21 ? true : undefined), 60_000, "the victim's write waiting too");
      await ethers.provider.send("evm_setAutomine", [true]);
      await ethers.provider.send("evm_mine", []); // the write already sent
      expect((await mine).status).to.equal(200);
    } finally {
      await ethers.provider.send("evm_setAutomine", [true]);
    }
    expect((await Promise.all(floods)).map((r) => r.status)).to.deep.equal(Array(21).fill(200));
    // The order the groups landed in: the victim's right after the attacker's write that was being sent.
    const logs = await stack.config.queryFilter(stack.config.filters.GroupCreated(), from);
    const owners = logs.map((l) => (BigInt(l.args.apiKeyHash) === hashKey(victim) ? "victim" : BigInt(l.args.apiKeyHash) === hashKey(attacker) ? "attacker" : "other"));
    expect(owners).to.have.length(22);
    expect(owners.indexOf("victim")).to.equal(1);
    expect(logs.map((l) => l.args.name)).to.not.include("one too many");
  });

  it("a burst of one account's writes: its share and queue admitted, exactly the rest refused at once (429, Retry-After), and every place given back once they land", async function () {
    const flooder = (await newAccount(stack, "flooder")).apiKey;
    const from = (await ethers.provider.getBlockNumber()) + 1;
    const refused: { status: number; body: any; retryAfter: string | null }[] = [];
    const write = async (name: string) => {
      const res = await fetch(`${stack.api}/add_group`, { method: "POST", headers: { "x-api-key": flooder, "content-type": "application/json" }, body: JSON.stringify({ group_name: name }) });
      const reply = { status: res.status, body: await res.json(), retryAfter: res.headers.get("retry-after") };
      if (res.status !== 200) refused.push(reply);
      return reply;
    };
    await ethers.provider.send("evm_setAutomine", [false]);
    let burst: ReturnType<typeof write>[] = [];
    try {
      burst = Array.from({ length: 30 }, (_, i) => write(`burst ${i}`));
      // one sending and twenty waiting: the other nine are refused before any is mined
      await until(async () => (refused.length === 9 && stack.relayer.ctx.payers.stats().waiting === 20 ? true : undefined), 60_000, "nine refused, twenty waiting").catch((err: Error) => {
        throw new Error(`${err.message}: ${refused.length} refused (${JSON.stringify(refused.slice(0, 3))}), payers ${JSON.stringify(stack.relayer.ctx.payers.stats())}`);
      });
      for (const r of refused) {
        expectError(r, 429, "write_queue_full", "billed to this payer");
        expect(Number(r.retryAfter)).to.be.a("number").and.to.be.at.least(1).and.at.most(60);
      }
    } finally {
      await ethers.provider.send("evm_setAutomine", [true]);
    }
    await ethers.provider.send("evm_mine", []); // the write already sent
    const replies = await Promise.all(burst);
    expect(replies.filter((r) => r.status === 200)).to.have.length(21);
    expect(replies.filter((r) => r.status === 429)).to.have.length(9);
    // exactly the admitted writes landed, and the places are free again
    const logs = await stack.config.queryFilter(stack.config.filters.GroupCreated(), from);
    expect(logs.filter((l) => BigInt(l.args.apiKeyHash) === hashKey(flooder))).to.have.length(21);
    expect(stack.relayer.ctx.payers.stats()).to.deep.equal({ sending: 0, waiting: 0 });
    expect((await addGroup(flooder, "after the burst")).status).to.equal(200);
  });
});
