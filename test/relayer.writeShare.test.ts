import { expect } from "chai";
import { ethers, network } from "hardhat";
import { call, newAccount, type Reply } from "./helpers/relayer";
import { expectError, suiteStack } from "./helpers/relayerChecks";
import { hashOf } from "./helpers/accountConfig";
import { WriteShare, type WriteOwner, type WriteTicket } from "../relayer/chain/writeShare";
import { until } from "./helpers/triggers";

const owner = (account: string, payer = account): WriteOwner => ({ account, payer });

describe("relayed writes: each account's fair share (WriteShare)", function () {
  it("holds at most perAccount writes of an account, perPayer of a payer and total in all, queued or in flight, until released", function () {
    const share = new WriteShare<string>({ perAccount: 2, perPayer: 3, total: 5 });
    const a1 = share.admit(owner("a1", "wallet")) as WriteTicket;
    share.admit(owner("a1", "wallet"));
    expect(share.admit(owner("a1", "wallet"))).to.equal("account");
    share.admit(owner("a2", "wallet")); // another account of the same payer
    expect(share.admit(owner("a3", "wallet")), "the payer's share is full").to.equal("payer");
    share.admit(owner("b"));
    expect(share.admit(owner("c"))).to.not.be.a("string");
    expect(share.admit(owner("d")), "the service's").to.equal("total");
    a1.release();
    a1.release(); // twice: released once
    expect(share.holding(owner("a1", "wallet"))).to.deep.equal({ account: 1, payer: 2, total: 4 });
    expect(share.admit(owner("a3", "wallet"))).to.not.be.a("string");
    expect(share.admit(owner("d"))).to.equal("total");
  });

  it("gives payers turns: a payer with many writes waiting delays another's by one turn, and each payer's writes keep their order", function () {
    const share = new WriteShare<string>({ perAccount: 100, perPayer: 100, total: 100 });
    const busy = share.admit(owner("busy")) as WriteTicket;
    for (let i = 1; i <= 5; i++) share.wait(busy, `busy ${i}`);
    const quiet = share.admit(owner("quiet")) as WriteTicket;
    share.wait(quiet, "quiet 1");
    share.wait(quiet, "quiet 2");
    const third = share.admit(owner("third account", "busy")) as WriteTicket; // paid by "busy" too: shares its turns
    share.wait(third, "busy's other account");
    expect(share.waitingCount()).to.equal(8);
    const order = Array.from({ length: 8 }, () => share.next());
    expect(order).to.deep.equal(["busy 1", "quiet 1", "busy 2", "quiet 2", "busy 3", "busy 4", "busy 5", "busy's other account"]);
    expect(share.next()).to.equal(undefined);
  });
});

describe("relayed writes: fair share over HTTP", function () {
  this.timeout(180_000);
  // one payer wallet: every write goes through one nonce queue
  const stack = suiteStack({ payerCount: 1, env: { VESTA_WRITES_PER_ACCOUNT: "4", VESTA_WRITES_PER_PAYER: "8" } });

  /** Transactions waiting in the node's pool (automine off). */
  const pending = async () => ((await ethers.provider.send("eth_getBlockByNumber", ["pending", false])) as { transactions: string[] }).transactions.length;

  it("refuses an account's writes past its share (429 write_queue_full, Retry-After) and lets another account's write through after at most one turn", async function () {
    const attacker = (await newAccount(stack(), "attacker")).apiKey;
    const victim = (await newAccount(stack(), "victim")).apiKey;
    const share = stack().relayer.ctx.payers.share;
    const fromBlock = await ethers.provider.getBlockNumber();
    await network.provider.send("evm_setAutomine", [false]);
    try {
      const replies: (Reply & { retryAfter?: string | null })[] = [];
      const write = async (key: string, name: string) => {
        const res = await fetch(`${stack().api}/add_group`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify({ group_name: name }) });
        const reply = { status: res.status, body: await res.json(), retryAfter: res.headers.get("retry-after") };
        replies.push(reply);
        return reply;
      };
      const flood = Array.from({ length: 10 }, (_, i) => write(attacker, `a${i}`));
      // one write in flight (sent, not mined), three waiting, six refused at once
      await until(async () => replies.length === 6 && (await pending()) === 1 && share.waitingCount() === 3, 30_000, "the flood to be admitted and refused");
      for (const r of replies) {
        expectError(r, 429, "write_queue_full", "VESTA_WRITES_PER_ACCOUNT");
        expect(Number(r.retryAfter)).to.be.at.least(1);
      }
      const victimWrite = write(victim, "v");
      await until(async () => share.waitingCount() === 4, 30_000, "the victim's write to wait for its turn");
      for (let mined = 0; mined < 5; mined++) {
        await until(async () => (await pending()) === 1, 30_000, "the next write to be sent");
        await network.provider.send("evm_mine", []);
      }
      expect((await victimWrite).status).to.equal(200);
      expect((await Promise.all(flood)).map((r) => r.status).sort()).to.deep.equal([200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
      // whose write each block holds, in order
      const iface = stack().config.interface;
      const names = new Map([
        [hashOf(attacker), "attacker"],
        [hashOf(victim), "victim"],
      ]);
      const order: string[] = [];
      for (let b = fromBlock + 1; b <= (await ethers.provider.getBlockNumber()); b++) {
        for (const tx of (await ethers.provider.getBlock(b, true))!.prefetchedTransactions) order.push(names.get(BigInt(iface.decodeFunctionData("addGroup", tx.data)[0])) ?? "?");
      }
      expect(order, "the victim waits one turn, not the attacker's whole queue").to.deep.equal(["attacker", "attacker", "victim", "attacker", "attacker"]);
    } finally {
      await network.provider.send("evm_setAutomine", [true]);
    }
    // the share is free again
    expect(share.holding({ account: "any", payer: "any" }).total).to.equal(0);
    expect((await call(stack(), "POST", "/add_group", { key: attacker, body: { group_name: "after" } })).status).to.equal(200);
  });
});
