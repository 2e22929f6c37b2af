import { expect } from "chai";
import { ethers } from "hardhat";
import { call, newAccount, type Stack } from "./helpers/relayer";
import { hashOf } from "./helpers/accountConfig";
import { WHOLE } from "./helpers/scenario";
import { apiGroup, CID_V0, chainGroups, expectError, expectErrorBody, ok, payerAddresses, payerNonces, suiteStack } from "./helpers/relayerChecks";

const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one transaction from `key` straight to the chain, behind the relayer's back. */
async function sendDirectly(key: string) {
  const payer = new ethers.Wallet(key, ethers.provider);
  await (await payer.sendTransaction({ to: payer.address, value: 0 })).wait();
}

/** `count` add_group calls sent at once, named `${prefix} ${i}`; expects each to answer 200 and returns the ids. */
async function parallelGroups(stack: Stack, key: string, prefix: string, count: number): Promise<number[]> {
  const replies = await Promise.all(range(count).map((i) => call(stack, "POST", "/add_group", { key, body: { group_name: `${prefix} ${i}` } })));
  return replies.map((r, i) => Number(ok(r, `${prefix} ${i}`).group_id));
}

/** Expects the account to hold exactly the groups `expected` (id → name). */
async function expectGroups(stack: Stack, key: string, expected: Map<number, string>) {
  const groups = await chainGroups(stack, key);
  expect(new Map(groups.map((g) => [Number(g.id), g.name]))).to.deep.equal(expected);
}

/** How far each payer's nonce moved since `before`. */
async function nonceMoves(stack: Stack, before: number[]): Promise<number[]> {
  return (await payerNonces(stack)).map((n, i) => n - before[i]);
}

describe("relayer concurrency, 4 payers", function () {
  // 60 writes of one account at once: within its payer's share of 4 wallets and 64 waiting (relayer.writeShare.test.ts tests that share)
  const stack = suiteStack({ payerCount: 4 });

  it("lands 50 parallel add_group calls (and 10 create_wallet) from one account once each, over all 4 payers", async function () {
    const { apiKey } = await newAccount(stack());
    const nonces = await payerNonces(stack());
    const names = range(50).map((i) => `parallel group ${i}`);
    const [groups, wallets] = await Promise.all([
      Promise.all(names.map((n) => call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: n, group_description: `about ${n}` } }))),
      Promise.all(range(10).map(() => call(stack(), "POST", "/create_wallet", { key: apiKey, body: {} }))),
    ]);
    const ids = groups.map((r, i) => Number(ok(r, names[i]).group_id));
    expect([...ids].sort((a, b) => a - b)).to.deep.equal(range(50, 1));
    await expectGroups(stack(), apiKey, new Map(ids.map((id, i) => [id, names[i]])));
    const addresses = wallets.map((r) => ok(r, "create_wallet").wallet_address as string);
    expect(new Set(addresses).size).to.equal(10);
    const [listed] = await stack().config.listWallets(hashOf(apiKey), 0, WHOLE);
    expect(listed.map((w) => w.walletAddress).sort()).to.deep.equal([...addresses].sort());
    const moves = await nonceMoves(stack(), nonces);
    expect(sum(moves), "one transaction per write, none retried on chain").to.equal(60);
    for (const [i, m] of moves.entries()) expect(m, `payer ${i} sent nothing`).to.be.above(0);
  });

  it("answers a lone write soon after it is mined, on a chain that mines only on demand", async function () {
    const { apiKey } = await newAccount(stack());
    const start = Date.now();
    await apiGroup(stack(), apiKey);
    expect(Date.now() - start, "ms for one add_group").to.be.below(2000);
  });

  it("keeps writing after a restart, reading every payer's nonce back from the chain", async function () {
    const { apiKey } = await newAccount(stack());
    const first = await apiGroup(stack(), apiKey, "before restart");
    // every payer has a nonce cached by the old relayer
    const warm = await parallelGroups(stack(), apiKey, "warm", 8);
    await stack().restart();
    const nonces = await payerNonces(stack());
    const after = await parallelGroups(stack(), apiKey, "after restart", 8);
    const moves = await nonceMoves(stack(), nonces);
    expect(sum(moves)).to.equal(8);
    for (const [i, m] of moves.entries()) expect(m, `payer ${i} sent nothing after the restart`).to.be.above(0);
    const last = await apiGroup(stack(), apiKey, "last");
    await expectGroups(
      stack(),
      apiKey,
      new Map([
        [first, "before restart"],
        ...warm.map((id, i): [number, string] => [id, `warm ${i}`]),
        ...after.map((id, i): [number, string] => [id, `after restart ${i}`]),
        [last, "last"],
      ]),
    );
  });

  it("keeps writing when a payer's nonce moved behind the relayer's back", async function () {
    const { apiKey } = await newAccount(stack());
    const warm = await parallelGroups(stack(), apiKey, "warm", 8); // every payer has a nonce cached
    for (const [i, key] of stack().relayerConfig.payerKeys.entries()) for (const _ of range(i + 1)) await sendDirectly(key);
    // past ethers' 250 ms request cache, which would still hand the relayer the old nonce (see the
    // skipped test in the 1-payer suite)
    await sleep(300);
    const nonces = await payerNonces(stack());
    const parallel = await parallelGroups(stack(), apiKey, "after the move", 8);
    const sequential = [];
    for (const i of range(4)) sequential.push(await apiGroup(stack(), apiKey, `sequential ${i}`));
    expect(sum(await nonceMoves(stack(), nonces)), "the sends with a stale nonce never reached the chain").to.equal(12);
    await expectGroups(
      stack(),
      apiKey,
      new Map([
        ...warm.map((id, i): [number, string] => [id, `warm ${i}`]),
        ...parallel.map((id, i): [number, string] => [id, `after the move ${i}`]),
        ...sequential.map((id, i): [number, string] => [id, `sequential ${i}`]),
      ]),
    );
  });
});

describe("relayer concurrency, 1 payer", function () {
  const stack = suiteStack({ payerCount: 1 });

  it("lands 10 parallel writes one after another, with consecutive nonces and group ids in nonce order", async function () {
    const { apiKey } = await newAccount(stack());
    const [payer] = payerAddresses(stack());
    const [nonce] = await payerNonces(stack());
    const fromBlock = await ethers.provider.getBlockNumber();
    const ids = await parallelGroups(stack(), apiKey, "serial", 10);
    expect([...ids].sort((a, b) => a - b)).to.deep.equal(range(10, 1));

    const sent = [];
    for (let b = fromBlock + 1; b <= (await ethers.provider.getBlockNumber()); b++) {
      const block = await ethers.provider.getBlock(b, true);
      for (const tx of block!.prefetchedTransactions) if (tx.from === payer) sent.push(tx);
    }
    expect(sent.map((tx) => tx.nonce)).to.deep.equal(range(10, nonce));
    const created = [];
    for (const tx of sent) {
      const receipt = (await tx.wait())!;
      expect(receipt.status).to.equal(1);
      const log = receipt.logs.map((l) => stack().config.interface.parseLog(l)).find((l) => l?.name === "GroupCreated");
      created.push(Number(log!.args.groupId));
    }
    expect(created, "group ids follow the nonces").to.deep.equal(range(10, 1));
  });

  // Regression (fixed): relayer/chain/client.ts keeps ethers' default 250 ms request cache, so when the
  // pool re-reads a nonce after "nonce too low" within 250 ms of its last read, it gets the old
  // count again; the one retry fails too and the write is answered 503 chain_unavailable.
  it("keeps writing when the payer's nonce moved right after the relayer read it", async function () {
    const { apiKey } = await newAccount(stack());
    await stack().restart(); // the new pool reads the nonce at its first write
    await apiGroup(stack(), apiKey, "first");
    await sendDirectly(stack().relayerConfig.payerKeys[0]);
    await apiGroup(stack(), apiKey, "after the move");
    expect((await chainGroups(stack(), apiKey)).map((g) => g.name)).to.deep.equal(["first", "after the move"]);
  });
});

describe("relayer concurrency, conflicting writes", function () {
  const stack = suiteStack({ payerCount: 4 });

  /** Sends the same add_action_to_group 5 times at once on a fresh group; returns the replies and the actions it then lists. */
  async function conflictingWrites() {
    const { apiKey } = await newAccount(stack());
    const group = await apiGroup(stack(), apiKey);
    const replies = await Promise.all(range(5).map(() => call(stack(), "POST", "/add_action_to_group", { key: apiKey, body: { group_id: group, action_ipfs_cid: CID_V0 } })));
    const [actions] = await stack().config.listActionsInGroup(hashOf(apiKey), group, 0, WHOLE);
    return { replies, listed: actions.map((a) => a.cidHash), losers: replies.filter((r) => r.status !== 200) };
  }

  it("of parallel writes that conflict, lands exactly one and refuses the others", async function () {
    const { replies, listed, losers } = await conflictingWrites();
    expect(replies.filter((r) => r.status === 200)).to.have.length(1);
    expect(listed).to.deep.equal([hashOf(CID_V0)]);
    for (const r of losers) expectErrorBody(r);
  });

  // Regression (fixed): a write that passed the simulation but reverts on chain (it lost a race) is
  // answered 503 chain_unavailable "could not be sent" on a Hardhat node, which answers the send of
  // a reverting transaction with an error carrying the revert data (relayer/chain/payers.ts only
  // decodes reverts of mined receipts); it should be the decoded 409 already_exists.
  it("of parallel writes that conflict, answers the losers 409 already_exists", async function () {
    const { losers } = await conflictingWrites();
    expect(losers).to.have.length(4);
    for (const r of losers) expectError(r, 409, "already_exists");
  });
});
