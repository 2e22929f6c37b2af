import { Writable } from "node:stream";
import { expect } from "chai";
import hre from "hardhat";
import pino from "pino";
import { Wallet } from "ethers";
import { startStack, chainKeys, type Stack } from "./helpers/relayer";
import { startRelayer, type RunningRelayer } from "../relayer/server";
import type { RelayerConfig } from "../relayer/config";
import { until } from "./helpers/triggers";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { writeCents } from "../billing/pricing";
import { replacedWorstPrice, MAX_FEE_RAISES } from "../relayer/chain/payerWatch";

const rpc = (method: string, params: unknown[] = []) => hre.network.provider.send(method, params);

/** A relayer on the stack's chain with its own payer keys and watch settings, its log lines captured. */
async function relayerWith(stack: Stack, over: Partial<RelayerConfig>, lines: any[]): Promise<RunningRelayer> {
  const sink = new Writable({ write: (chunk, _e, done) => (lines.push(...chunk.toString().trim().split("\n").map((l: string) => JSON.parse(l))), done()) });
  return startRelayer({ ...stack.relayerConfig, port: 0, ...over }, pino({ level: "info" }, sink));
}

const newAccount = (url: string) =>
  fetch(`${url}/core/v1/new_account`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_name: "payers" }) }).then(async (r) => ({ status: r.status, body: await r.json() }));

describe("payers: balance threshold, stuck transactions, nonces after a restart", function () {
  this.timeout(180_000);
  let stack: Stack;
  const [payerA, payerB] = chainKeys(1, 2);
  const [addrA, addrB] = [new Wallet(payerA).address, new Wallet(payerB).address];

  before(async () => {
    stack = await startStack({ payerCount: 2 });
  });
  after(async () => {
    await rpc("evm_setAutomine", [true]);
    await stack?.stop();
  });

  it("takes a payer under VESTA_PAYER_MIN_BALANCE_WEI out of the pool with a warning, sends from the others, and takes it back once funded", async function () {
    const lines: any[] = [];
    const min = 10n ** 18n;
    const relayer = await relayerWith(stack, { payerWatch: { ...stack.relayerConfig.payerWatch, minBalanceWei: min } }, lines);
    const balanceA = await stack.relayer.ctx.chain.provider.getBalance(addrA);
    try {
      await rpc("hardhat_setBalance", [addrA, "0x" + (min - 1n).toString(16)]);
      await relayer.ctx.payers.check();
      expect(relayer.ctx.payers.health().map((p) => [p.address, p.active])).to.deep.equal([[addrA, false], [addrB, true]]);
      expect(lines.filter((l) => l.level === 40 && l.payer === addrA && /taken out of the pool/.test(l.msg))).to.have.length(1);
      const nonceA = await relayer.ctx.chain.provider.getTransactionCount(addrA);
      const nonceB = await relayer.ctx.chain.provider.getTransactionCount(addrB);
      for (let i = 0; i < 2; i++) expect((await newAccount(relayer.url)).status).to.equal(200);
      expect(await relayer.ctx.chain.provider.getTransactionCount(addrA), "the unfunded payer sent nothing").to.equal(nonceA);
      expect(await relayer.ctx.chain.provider.getTransactionCount(addrB)).to.equal(nonceB + 4); // two writes per new account
      await rpc("hardhat_setBalance", [addrA, "0x" + min.toString(16)]);
      await relayer.ctx.payers.check();
      expect(relayer.ctx.payers.health().map((p) => p.active)).to.deep.equal([true, true]);
      expect(lines.filter((l) => l.level === 30 && l.payer === addrA && /back in the pool/.test(l.msg))).to.have.length(1);
    } finally {
      await rpc("hardhat_setBalance", [addrA, "0x" + balanceA.toString(16)]);
      await relayer.close();
    }
  });

  it("replaces a transaction not mined within VESTA_TX_REPLACE_MS (underpriced after a fee rise) with higher fees and the same nonce", async function () {
    const lines: any[] = [];
    const relayer = await relayerWith(stack, { payerKeys: [payerA], payerWatch: { ...stack.relayerConfig.payerWatch, replaceAfterMs: 1_000 } }, lines);
    const provider = relayer.ctx.chain.provider;
    try {
      await rpc("evm_setAutomine", [false]);
      const nonce = await provider.getTransactionCount(addrA, "latest");
      const answer = newAccount(relayer.url);
      await until(async () => (await provider.getTransactionCount(addrA, "pending")) === nonce + 1, 20_000, "the first write in the mempool");
      // The base fee jumps: the transaction sent is now underpriced and stays out of the next blocks.
      await rpc("hardhat_setNextBlockBaseFeePerGas", ["0x" + (1000n * 10n ** 9n).toString(16)]);
      await rpc("evm_mine");
      expect(await provider.getTransactionCount(addrA, "latest"), "the underpriced transaction was not mined").to.equal(nonce);
      const replaced = await until(async () => lines.find((l) => /replaced with higher fees/.test(l.msg)), 20_000, "the replacement");
      expect([replaced.payer, replaced.nonce]).to.deep.equal([addrA, nonce]);
      // Mine until the request is answered (new_account makes two writes).
      let done = false;
      const result = answer.finally(() => (done = true));
      while (!done) {
        await rpc("evm_mine");
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await result).status).to.equal(200);
      const receipt = await provider.getTransactionReceipt(replaced.hash);
      expect(receipt?.status, "the replacement was mined").to.equal(1);
      const tx = await provider.getTransaction(replaced.hash);
      expect([tx!.from, tx!.nonce]).to.deep.equal([addrA, nonce]);
      expect(await provider.getTransactionCount(addrA, "latest")).to.equal(nonce + 2); // the replaced one and the second write: one transaction per nonce
    } finally {
      await rpc("evm_setAutomine", [true]);
      await relayer.close();
    }
  });

  it("charges the account for a replacement's higher fee as for the first transaction: the write reserves the replaced worst price, its debit is what the mined replacement cost, and no replacement offers more than was reserved", async function () {
    const lines: any[] = [];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-replace-bill-"));
    const billing = { ...stack.relayerConfig.billing, mode: "local" as const, writeCents: 1, freeCreditCents: 10_000_000, freeCreditCapCents: 10_000_000, gas: { ...stack.relayerConfig.billing.gas, tokenPriceCents: 10_000_000, marginPercent: 0 } };
    const relayer = await relayerWith(stack, { payerKeys: [payerA], dataDir, localRootSecretFile: path.join(dataDir, "root-secret"), billing, payerWatch: { ...stack.relayerConfig.payerWatch, replaceAfterMs: 1_000, feeBumpPercent: 25 } }, lines);
    const provider = relayer.ctx.chain.provider;
    try {
      const account = await newAccount(relayer.url);
      expect(account.status).to.equal(200);
      await rpc("evm_setAutomine", [false]);
      const nonce = await provider.getTransactionCount(addrA, "latest");
      const answer = fetch(`${relayer.url}/core/v1/add_group`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": account.body.api_key },
        body: JSON.stringify({ group_name: "billed", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
      await until(async () => (await provider.getTransactionCount(addrA, "pending")) === nonce + 1, 20_000, "the write in the mempool");
      const first = ((await provider.send("eth_getBlockByNumber", ["pending", true])).transactions as any[]).find((t) => t.from.toLowerCase() === addrA.toLowerCase());
      const offered = BigInt(first.maxFeePerGas);
      // The base fee rises past what the transaction offers (but within what its replacements may offer): it is stuck.
      await rpc("hardhat_setNextBlockBaseFeePerGas", ["0x" + ((offered * 17n) / 10n).toString(16)]);
      await rpc("evm_mine");
      expect(await provider.getTransactionCount(addrA, "latest"), "the underpriced transaction was not mined").to.equal(nonce);
      const replaced = await until(async () => lines.find((l) => /replaced with higher fees/.test(l.msg)), 20_000, "the replacement");
      let done = false;
      const result = answer.finally(() => (done = true));
      while (!done) {
        await rpc("evm_mine");
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await result).status, JSON.stringify(await result)).to.equal(200);
      const mined = (await provider.getTransactionReceipt(replaced.hash))!;
      expect(mined?.status, "a replacement was mined").to.equal(1);
      const cap = replacedWorstPrice(offered, 25, MAX_FEE_RAISES);
      for (const l of lines.filter((x) => /replaced with higher fees/.test(x.msg))) expect(BigInt((await provider.getTransaction(l.hash))!.maxFeePerGas!) <= cap, "never above the reserved price").to.equal(true);
      expect(mined.gasPrice > offered, "the replacement paid more per gas than the first transaction offered").to.equal(true);
      const db = new Database(path.join(dataDir, "billing.sqlite"), { readonly: true });
      const debits = db.prepare("SELECT cents, detail FROM debits WHERE kind = 'write'").all() as { cents: number; detail: string }[];
      db.close();
      const addGroup = debits.filter((d) => /addGroup/i.test(d.detail));
      expect(addGroup, JSON.stringify(debits)).to.have.length(1);
      expect(addGroup[0].cents, "the replacement's whole fee is charged").to.equal(writeCents(mined.fee, billing));
    } finally {
      await rpc("evm_setAutomine", [true]);
      await relayer.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("after a restart, counts the transactions its payers left pending and sends the next write after them (nonce from the chain's pending count)", async function () {
    const lines: any[] = [];
    const provider = stack.relayer.ctx.chain.provider;
    await rpc("evm_setAutomine", [false]);
    let relayer: RunningRelayer | undefined;
    try {
      const nonce = await provider.getTransactionCount(addrB, "latest");
      // What a stopped process left: a transaction of payer B signed and sent, not mined.
      const left = await new Wallet(payerB, provider).sendTransaction({ to: addrB, value: 1n, nonce });
      relayer = await relayerWith(stack, { payerKeys: [payerB] }, lines);
      expect(relayer.ctx.payers.health()).to.deep.include({ address: addrB, active: true, balance: relayer.ctx.payers.health()[0].balance, pending: 1 });
      let done = false;
      const result = newAccount(relayer.url).finally(() => (done = true));
      while (!done) {
        await rpc("evm_mine");
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await result).status).to.equal(200);
      expect((await provider.getTransactionReceipt(left.hash))?.status).to.equal(1);
      expect(await provider.getTransactionCount(addrB, "latest"), "the left transaction and the two writes after it").to.equal(nonce + 3);
    } finally {
      await rpc("evm_setAutomine", [true]);
      await relayer?.close();
    }
  });
});
