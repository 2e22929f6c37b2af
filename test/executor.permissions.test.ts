import { expect } from "chai";
import path from "node:path";
import { ethers, network } from "hardhat";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import pino from "pino";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { hashOf } from "./helpers/accountConfig";
import { computeCid } from "../executor/cid";
import { deriveWallet, paths } from "../executor/keys/provider";
import { LocalKeyProvider } from "../executor/keys/local";
import { PermissionCache } from "../executor/permissions";

/**
 * The execution rules the contract enforces (tested in AccountConfig.permissions.test.ts), checked
 * again where the executor enforces them from its event-synced cache, through HTTP as users reach them.
 */
const SIGN = `async function main(p) { const pk = await Lit.Actions.getPrivateKey({ pkpId: p.pkpId }); return new ethers.Wallet(pk).address; }`;

const run = (stack: Stack, key: string, pkpId: string) => call(stack, "POST", "/lit_action", { key, body: { code: SIGN, js_params: { pkpId } } });

/** An account with a wallet, group 1 listing `code` and the wallet, and a usage key executing in `groups`. */
async function setup(stack: Stack, groups: number[], usageKeyFields: Record<string, unknown> = {}, code = SIGN) {
  const { apiKey } = await newAccount(stack);
  const wallet = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address as string;
  const cidHash = keccak256(toUtf8Bytes(await computeCid(code)));
  const group = await call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: "g", pkp_ids_permitted: [wallet], cid_hashes_permitted: [cidHash] } });
  expect(group.status, JSON.stringify(group.body)).to.equal(200);
  const key = await call(stack, "POST", "/add_usage_api_key", { key: apiKey, body: { name: "runner", execute_in_groups: groups, ...usageKeyFields } });
  expect(key.status, JSON.stringify(key.body)).to.equal(200);
  return { apiKey, wallet, usageKey: key.body.usage_api_key as string };
}

/** The managed account's admin wallet (derived by the local provider), funded: the direct contract path. */
async function directAdmin(stack: Stack, apiKey: string) {
  const keys = LocalKeyProvider.open(path.join(stack.relayerConfig.dataDir, "root-secret"), pino({ level: "silent" }));
  const admin = await deriveWallet(keys, paths.accountAdmin(hashOf(apiKey)));
  const [funder] = await ethers.getSigners();
  await (await funder.sendTransaction({ to: admin.address, value: ethers.parseEther("1") })).wait();
  return stack.config.connect(new Wallet(admin.privateKey, ethers.provider));
}

describe("execution rules at the executor, through HTTP (the layer users reach)", function () {
  this.timeout(120_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  for (const [label, groups] of [
    ["named in its execute list", [1]],
    ["reached through the wildcard", [0]],
  ] as const) {
    it(`refuses a run through a group that was removed, for a key whose group is ${label}`, async function () {
      const { apiKey, wallet, usageKey } = await setup(stack, [...groups]);
      const before = await run(stack, usageKey, wallet);
      expect([before.status, before.body.response]).to.deep.equal([200, wallet]);
      expect((await call(stack, "POST", "/remove_group", { key: apiKey, body: { group_id: "1" } })).status).to.equal(200);
      const after = await run(stack, usageKey, wallet);
      expect([after.status, after.body.code]).to.deep.equal([403, "not_permitted"]);
    });
  }

  it("refuses a run through a group removed on the contract directly, once its block is seen", async function () {
    const { apiKey, wallet, usageKey } = await setup(stack, [1]);
    expect((await run(stack, usageKey, wallet)).status).to.equal(200);
    await (await (await directAdmin(stack, apiKey)).removeGroup(hashOf(apiKey), 1)).wait();
    await stack.relayer.ctx.executor.permissions.sync();
    const after = await run(stack, usageKey, wallet);
    expect([after.status, after.body.code]).to.deep.equal([403, "not_permitted"]);
  });

  it("gives 401 to a usage key once it expired, though its resolution is cached (expiry judged by block time)", async function () {
    const latest = await ethers.provider.getBlock("latest");
    const expiration = latest!.timestamp + 20;
    const { wallet, usageKey } = await setup(stack, [1], { expiration });
    await stack.relayer.ctx.executor.permissions.sync();
    // warm the cache: the key's resolution (with its expiration) and the execution decision
    for (let i = 0; i < 2; i++) expect((await run(stack, usageKey, wallet)).status).to.equal(200);
    await network.provider.send("evm_increaseTime", [30]);
    await network.provider.send("evm_mine", []);
    await stack.relayer.ctx.executor.permissions.sync();
    const after = await run(stack, usageKey, wallet);
    expect([after.status, after.body.code]).to.deep.equal([401, "invalid_api_key"]);
    // the contract agrees
    expect((await stack.config.resolveApiKey(BigInt(keccak256(toUtf8Bytes(usageKey)))))[2]).to.equal(false);
  });

  it("never answers an expired key from a cached decision whose key resolution was not cached (it raced an invalidation)", async function () {
    const latest = await ethers.provider.getBlock("latest");
    const { wallet, usageKey } = await setup(stack, [1], { expiration: latest!.timestamp + 20 });
    const { chain } = stack.relayer.ctx;
    const abort = new AbortController();
    const cache = new PermissionCache(chain.accountConfig, chain.provider, pino({ level: "silent" }), 60_000);
    await cache.start(abort.signal);
    try {
      const keyHash = hashOf(usageKey);
      const who = { keyHash, accountHash: (await cache.resolve(keyHash)).accountHash, isAccountKey: false };
      cache.clear(); // as an invalidation racing the key's read leaves it: the decision cached, the key not
      const cidHash = keccak256(toUtf8Bytes(await computeCid(SIGN)));
      expect(await cache.allowed(who, cidHash, wallet)).to.equal(true);
      await network.provider.send("evm_increaseTime", [30]);
      await network.provider.send("evm_mine", []);
      expect(await cache.allowed(who, cidHash, wallet)).to.equal(false);
    } finally {
      abort.abort();
    }
  });

  it("refuses the key requests of a run whose usage key expires while it runs", async function () {
    const code = `async function main(p) {
      const first = new ethers.Wallet(await Lit.Actions.getPrivateKey({ pkpId: p.pkpId })).address;
      await fetch(p.pause);
      try { await Lit.Actions.getPrivateKey({ pkpId: p.pkpId }); return [first, "second key given"]; }
      catch (e) { return [first, e.message]; }
    }`;
    const latest = await ethers.provider.getBlock("latest");
    const { wallet, usageKey } = await setup(stack, [1], { expiration: latest!.timestamp + 20 }, code);
    await stack.relayer.ctx.executor.permissions.sync();
    // a local endpoint that moves the chain past the expiration before it answers
    const http = await import("node:http");
    const server = http.createServer(async (_req, res) => {
      await network.provider.send("evm_increaseTime", [30]);
      await network.provider.send("evm_mine", []);
      await stack.relayer.ctx.executor.permissions.sync();
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const pause = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
      const r = await call(stack, "POST", "/lit_action", { key: usageKey, body: { code, js_params: { pkpId: wallet, pause } } });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.response[0]).to.equal(wallet);
      expect(r.body.response[1]).to.match(/may not use wallet/);
    } finally {
      server.close();
    }
  });
});
