import { expect } from "chai";
import pino from "pino";
import { ethers } from "hardhat";
import type { TransactionReceipt } from "ethers";
import { startRelayer } from "../relayer/server";
import { recoveredWriteCost } from "../relayer/chain/relay";
import { payerOf } from "../billing/charges";
import { call, type Stack } from "./helpers/relayer";
import { payerAddresses, suiteStack } from "./helpers/relayerChecks";
import { accountClient, expectError, hashCid, newCid, ok, type Client } from "./helpers/relayerWorkflow";

const TOKEN_CENTS = 300_000n; // $3000 per native token
const MARGIN = 20n;
const GWEI = 10n ** 9n;

/** What a write that spent `fee` wei is charged, computed here independently: 1 cent + gas in cents with the margin, rounded up. */
const expectedCents = (fee: bigint) => {
  const den = 10n ** 18n * 100n;
  return 1 + Number((fee * TOKEN_CENTS * (100n + MARGIN) + den - 1n) / den);
};

/** The payers' transactions to the contract mined in blocks (from, to], with their receipts. */
async function payerReceipts(stack: Stack, from: number, to: number): Promise<TransactionReceipt[]> {
  const payers = new Set(payerAddresses(stack));
  const contract = (await stack.config.getAddress()).toLowerCase();
  const out: TransactionReceipt[] = [];
  for (let n = from + 1; n <= to; n++) {
    const block = await ethers.provider.getBlock(n, true);
    for (const tx of block!.prefetchedTransactions) {
      if (payers.has(tx.from) && tx.to?.toLowerCase() === contract) out.push((await ethers.provider.getTransactionReceipt(tx.hash))!);
    }
  }
  return out;
}

describe("relayed writes cost the account what they cost the payers (gas priced, local billing)", function () {
  this.timeout(180_000);
  const stack = suiteStack({ env: { VESTA_GAS_TOKEN_PRICE_CENTS: String(TOKEN_CENTS), VESTA_GAS_MARGIN_PERCENT: String(MARGIN), VESTA_PRICE_PER_WRITE_CENTS: "1" } });
  const balance = async (c: Client) => (await ok(c.get("/billing/balance"))).credit_cents as number;

  beforeEach(async () => {
    // A real gas price: the latest block at 10 gwei (the in-process chain's base fee decays towards 0 between tests).
    await ethers.provider.send("hardhat_setNextBlockBaseFeePerGas", [ethers.toQuantity(10n * GWEI)]);
    await ethers.provider.send("evm_mine", []);
  });
  afterEach(async () => {
    await ethers.provider.send("evm_setAutomine", [true]);
  });

  it("a write is charged its fixed price plus gas used x effective gas price, at VESTA_GAS_TOKEN_PRICE_CENTS and VESTA_GAS_MARGIN_PERCENT", async function () {
    const owner = await accountClient(stack());
    const before = await balance(owner);
    const block = await ethers.provider.getBlockNumber();
    await ok(owner.post("/add_group", { group_name: "g", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [await newCid(), await newCid()].map(hashCid) }));
    const [receipt] = await payerReceipts(stack(), block, await ethers.provider.getBlockNumber());
    expect(receipt.gasPrice, "a real gas price").to.be.greaterThan(5n * GWEI);
    const cents = expectedCents(receipt.fee);
    expect(cents, "priced from its gas, not flat").to.be.greaterThan(100);
    expect(before - (await balance(owner))).to.equal(cents);
  });

  it("identical writes racing each other all pass simulation, one lands, the others revert on chain: each is charged its gas", async function () {
    const owner = await accountClient(stack());
    const before = await balance(owner);
    const block = await ethers.provider.getBlockNumber();
    const cid = await newCid();
    await ethers.provider.send("evm_setAutomine", [false]);
    const answers = Array.from({ length: 4 }, () => owner.post("/add_action", { action_ipfs_cid: cid, name: "same" })); // one per payer
    for (let i = 0; ; i++) {
      const pending = await ethers.provider.send("eth_getBlockByNumber", ["pending", false]);
      if (pending.transactions.length === 4) break;
      if (i > 500) throw new Error(`only ${pending.transactions.length} writes reached the mempool`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await ethers.provider.send("evm_mine", []);
    await ethers.provider.send("evm_setAutomine", [true]);
    const replies = await Promise.all(answers);
    expect(replies.map((r) => r.status).sort()).to.deep.equal([200, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.code).to.equal("already_exists");
    const receipts = await payerReceipts(stack(), block, await ethers.provider.getBlockNumber());
    expect(receipts.map((r) => r.status).sort()).to.deep.equal([0, 0, 0, 1]);
    const charged = receipts.reduce((sum, r) => sum + expectedCents(r.fee), 0);
    expect(before - (await balance(owner)), "the reverted writes are charged too").to.equal(charged);
  });

  it("with automine, whatever the split between writes refused in simulation and writes that revert on chain (reported at send), the account pays exactly the gas the payers spent", async function () {
    const owner = await accountClient(stack());
    const before = await balance(owner);
    const block = await ethers.provider.getBlockNumber();
    const cid = await newCid();
    const replies = await Promise.all(Array.from({ length: 8 }, () => owner.post("/add_action", { action_ipfs_cid: cid, name: "same" })));
    expect(replies.filter((r) => r.status === 200)).to.have.length(1);
    for (const r of replies.filter((x) => x.status !== 200)) expect([r.status, r.body.code]).to.deep.equal([409, "already_exists"]);
    const receipts = await payerReceipts(stack(), block, await ethers.provider.getBlockNumber());
    expect(before - (await balance(owner))).to.equal(receipts.reduce((sum, r) => sum + expectedCents(r.fee), 0));
  });

  it("admission reserves the worst case (gas limit x max fee): a balance that covers the expected cost but not the worst gets 402, nothing sent", async function () {
    const owner = await accountClient(stack());
    const billing = stack().relayer.ctx.billing!;
    const customer = await billing.customerId(await payerOf(stack().relayer.ctx, owner.hash));
    const setBalance = async (cents: number) => {
      await billing.remote.adjust(customer, cents - (await balance(owner)), `test-set-credit-${cents}`, {});
      await billing.refresh(customer);
    };
    const group = { group_name: "g", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] };
    // With nothing left, the cheapest write (checked before any simulation) is refused: its price is the floor.
    await setBalance(0);
    const least = (await expectError(owner.post("/add_group", group), 402, "payment_required", "a management call")).details.price_cents as number;
    // A balance above that floor, but under this write's worst case, is refused at the reservation.
    await setBalance(least + 1);
    const block = await ethers.provider.getBlockNumber();
    const body = await expectError(owner.post("/add_group", group), 402, "payment_required", "the most gas it may use");
    expect(body.details.credit_cents).to.equal(least + 1);
    expect(body.details.price_cents, "the worst case").to.be.greaterThan(least + 1);
    expect(await ethers.provider.getBlockNumber(), "nothing sent").to.equal(block);
    expect(await balance(owner)).to.equal(least + 1);
  });

  it("recovery prices a write left by a stopped process from its receipt (reverted or not), and keeps one that may still land", async function () {
    const owner = await accountClient(stack());
    const block = await ethers.provider.getBlockNumber();
    await ok(owner.post("/add_group", { group_name: "g", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }));
    const [receipt] = await payerReceipts(stack(), block, await ethers.provider.getBlockNumber());
    const ctx = stack().relayer.ctx;
    const row = { id: "x", customerId: "c", cents: 10_000, unitCents: 0, kind: "write" as const, detail: "addGroup", owner: "", createdAt: Date.now(), startedAt: null, aliveAt: Date.now() };
    expect(await recoveredWriteCost(ctx, { ...row, txHashes: [receipt.hash] })).to.equal(expectedCents(receipt.fee));
    const unknown = "0x" + "ab".repeat(32);
    expect(await recoveredWriteCost(ctx, { ...row, txHashes: [unknown] }), "young: may still land").to.equal("pending");
    expect(await recoveredWriteCost(ctx, { ...row, txHashes: [unknown], createdAt: Date.now() - ctx.config.txTimeoutMs - 1 }), "old and unknown to the node: never landed").to.equal(0);
  });

  it("recovery charges a write whose transaction was replaced (same nonce) from the one that was mined, not only the last signed (a replacement that never landed)", async function () {
    const owner = await accountClient(stack());
    const block = await ethers.provider.getBlockNumber();
    await ok(owner.post("/add_group", { group_name: "g", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }));
    const [mined] = await payerReceipts(stack(), block, await ethers.provider.getBlockNumber());
    const ctx = stack().relayer.ctx;
    const billing = ctx.billing!;
    const before = await balance(owner);
    // A write as the relay records it: its transaction, then a replacement with higher fees that the node refused
    // (or that lost to the original); the process stops before either receipt came, and recovery looks later.
    const r = await billing.reserve(await payerOf(ctx, owner.hash), 10_000, "a write", { kind: "write", detail: "addGroup" });
    await r.noteTx(mined.hash);
    await r.noteTx("0x" + "cd".repeat(32));
    r.abandon();
    const orphan = async () => (await billing.reservations.orphans(billing.owner, 0)).find((o) => o.detail === "addGroup" && o.cents === 10_000);
    for (let i = 0; i < 50 && !(await orphan()); i++) await new Promise((done) => setTimeout(done, 20));
    await billing.ledger.db.updateTable("reservations").set({ created_at: Date.now() - ctx.config.txTimeoutMs - 1 }).where("id", "=", (await orphan())!.id).execute(); // past the time it may land
    await billing.recover((row) => recoveredWriteCost(ctx, row));
    expect(await orphan(), "ended").to.equal(undefined);
    expect(before - (await balance(owner)), "charged what the mined transaction cost").to.equal(expectedCents(mined.fee));
  });
});

describe("new_account abuse is bounded per real client address", function () {
  this.timeout(120_000);
  const stack = suiteStack();
  const newAccountFrom = (s: Stack, forwardedFor?: string) =>
    call(s, "POST", "/new_account", { body: { account_name: "rate" }, headers: forwardedFor ? { "x-forwarded-for": forwardedFor } : {} });

  it("without a trusted proxy, X-Forwarded-For is the client's own words: rotating it does not dodge the per-address limit", async function () {
    const relayer = await startRelayer({ ...stack().relayerConfig, port: 0, newAccountRateLimitPerMinute: 2 }, pino({ level: "silent" }));
    try {
      const s = { ...stack(), api: `${relayer.url}/core/v1` };
      for (const ip of ["1.1.1.1", "2.2.2.2"]) await ok(newAccountFrom(s, ip));
      await expectError(newAccountFrom(s, "3.3.3.3"), 429, "rate_limited", "at most 2 a minute");
    } finally {
      await relayer.close();
    }
  });

  it("behind a trusted proxy (VESTA_TRUST_PROXY), the limit keys on the client the proxy names, so one client cannot exhaust it for all", async function () {
    const relayer = await startRelayer({ ...stack().relayerConfig, port: 0, newAccountRateLimitPerMinute: 2, trustProxy: "loopback" }, pino({ level: "silent" }));
    try {
      const s = { ...stack(), api: `${relayer.url}/core/v1` };
      for (let i = 0; i < 2; i++) await ok(newAccountFrom(s, "203.0.113.7"));
      const block = await ethers.provider.getBlockNumber();
      await expectError(newAccountFrom(s, "203.0.113.7"), 429, "rate_limited");
      expect(await ethers.provider.getBlockNumber(), "a refused creation sends nothing").to.equal(block);
      await ok(newAccountFrom(s, "198.51.100.9")); // another client behind the same proxy
    } finally {
      await relayer.close();
    }
  });
});
