import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { network } from "hardhat";
import pino from "pino";
import { PermissionCache } from "../executor/permissions";
import { loadConfig } from "../relayer/config";
import { call, type Stack } from "./helpers/relayer";
import { costOf, suiteStack } from "./helpers/relayerChecks";
import { hashOf } from "./helpers/accountConfig";
import { walletAccount } from "./helpers/wallets";
import { signedRequest } from "../scripts/lib/chainSecured";
import { usageKeySeal } from "../protocol/usageKeySeal";
import { accountClient, addUsageKey, expectError, ok, updateUsageKey } from "./helpers/relayerWorkflow";

const unknownKey = () => randomBytes(32).toString("base64");
const reads = (rpc: string[]) => rpc.filter((m) => m === "eth_call").length;
const listGroups = (stack: Stack, key: string) => call(stack, "GET", "/list_groups", { key });

/**
 * Red-team finding 6a: an API key the chain does not know cost the service an eth_call (and a hash)
 * per request, with no memory and no limit. Now a refused key is remembered (bounded, for
 * VESTA_UNKNOWN_KEY_CACHE_MS, and forgotten as soon as an event registers it), concurrent lookups of
 * one key share one read, and each client has a budget of failed authentications.
 */
describe("unknown API keys cost the service one chain read, and a client only so many (red-team finding 6a)", function () {
  this.timeout(180_000);

  describe("remembered refusals", function () {
    // No poll during a test: what makes a key usable again must be the events the relayer handles.
    const stack = suiteStack({ env: { VESTA_PERMISSION_POLL_MS: "60000", VESTA_UNKNOWN_KEY_CACHE_MS: "60000" } });

    it("answers one unknown key 401 fifty times, sequential and racing, with one chain read", async function () {
      const key = unknownKey();
      const { rpc } = await costOf(stack(), async () => {
        for (let i = 0; i < 25; i++) await expectError(listGroups(stack(), key), 401, "invalid_api_key");
        const raced = await Promise.all(Array.from({ length: 25 }, () => listGroups(stack(), key)));
        for (const r of raced) await expectError(r, 401, "invalid_api_key");
      });
      expect(reads(rpc)).to.equal(1);
    });

    it("shares one chain read among concurrent requests with one new key", async function () {
      const key = unknownKey();
      const { rpc } = await costOf(stack(), () => Promise.all(Array.from({ length: 20 }, () => expectError(listGroups(stack(), key), 401, "invalid_api_key"))));
      expect(reads(rpc)).to.equal(1);
    });

    it("accepts a refused key once the contract registers it: a wallet's direct write at the next sync of events", async function () {
      const owner = await walletAccount(stack(), "direct");
      const key = unknownKey();
      expect(await ok(call(stack(), "GET", "/account_exists", { key }))).to.equal(false);
      await (await owner.config.setUsageApiKey(owner.hash, hashOf(key), 0, 0, "k", "", false, false, false, [], [], [], [])).wait();
      await stack().relayer.ctx.executor.permissions.sync(); // what the poll does every VESTA_PERMISSION_POLL_MS
      expect(await ok(call(stack(), "GET", "/account_exists", { key }))).to.equal(true);
      expect(await ok(listGroups(stack(), key))).to.deep.equal([]);
    });

    it("accepts an expired key at once when the owner renews it through the relayer (no sync)", async function () {
      const owner = await accountClient(stack());
      const now = (await stack().relayer.ctx.chain.provider.getBlock("latest"))!.timestamp;
      const usage = await addUsageKey(stack(), owner, { name: "short-lived", expiration: now + 20 });
      await network.provider.send("evm_increaseTime", [30]);
      await network.provider.send("evm_mine", []);
      await stack().relayer.ctx.executor.permissions.sync();
      await expectError(usage.get("/list_groups"), 401, "invalid_api_key"); // read from the chain: expired
      const { rpc } = await costOf(stack(), () => expectError(usage.get("/list_groups"), 401, "invalid_api_key"));
      expect(reads(rpc)).to.equal(0); // remembered as refused
      await updateUsageKey(owner, usage, { expiration: 0 });
      expect(await ok(usage.get("/list_groups"))).to.deep.equal([]);
    });

    it("remembers an inactive key with what the chain said of it: a wallet-owned account's hash keeps its account (billing finds who pays)", async function () {
      const owner = await walletAccount(stack(), "no account key");
      const cache = stack().relayer.ctx.executor.permissions;
      const said = { accountHash: owner.hash, isAccountKey: true, active: false };
      expect(await cache.resolve(owner.hash)).to.deep.equal(said);
      expect(cache.cached(owner.hash)).to.deep.equal(said);
      expect(await cache.resolve(owner.hash)).to.deep.equal(said);
      // and its relayed writes are still billed to it: a reservation for a key it mints
      const minted = await ok(call(stack(), "POST", "/add_usage_api_key_with_signature", { body: await signedRequest(owner.wallet, "AddUsageApiKey", stack().relayer.ctx.chain.chainId) }));
      expect(await stack().config.usageApiKeyHome(usageKeySeal(hashOf(minted.usage_api_key)))).to.equal(owner.hash);
    });

    it("remembers at most its bound of keys, each for its time to live, and none after a reset", async function () {
      const { chain } = stack().relayer.ctx;
      const abort = new AbortController();
      const cache = new PermissionCache(chain.accountConfig, chain.provider, pino({ level: "silent" }), 60_000, 3, 300);
      await cache.start(abort.signal);
      try {
        const keys = Array.from({ length: 5 }, () => hashOf(unknownKey()));
        for (const k of keys) expect(await cache.resolve(k)).to.deep.equal({ accountHash: 0n, isAccountKey: false, active: false });
        expect(cache.size().unknownKeys).to.equal(3);
        expect(cache.cached(keys[4])).to.deep.equal({ accountHash: 0n, isAccountKey: false, active: false });
        expect(cache.cached(keys[0])).to.equal(undefined); // the oldest went first
        await new Promise((r) => setTimeout(r, 350));
        expect(cache.cached(keys[4])).to.equal(undefined); // its time is up: the chain is asked again
        await cache.resolve(keys[4]);
        cache.clear();
        expect(cache.size().unknownKeys).to.equal(0);
      } finally {
        abort.abort();
      }
    });
  });

  describe("a budget of failed authentications per client", function () {
    const stack = suiteStack({ env: { VESTA_AUTH_FAILURE_RATE_LIMIT: "5" } });

    it("reads the chain for 5 unknown keys a minute per client; past that 429 with Retry-After and no read; known keys still pass", async function () {
      const owner = await accountClient(stack());
      await ok(owner.get("/list_groups")); // the owner's key is known from here on
      const remembered = unknownKey();
      const { rpc } = await costOf(stack(), async () => {
        await expectError(listGroups(stack(), remembered), 401, "invalid_api_key");
        // ten new keys at once: four more reads fit the budget, the rest are refused before any read
        const raced = await Promise.all(Array.from({ length: 10 }, () => listGroups(stack(), unknownKey())));
        expect(raced.map((r) => r.status).sort()).to.deep.equal([401, 401, 401, 401, 429, 429, 429, 429, 429, 429]);
        for (const r of raced.filter((r) => r.status === 429)) await expectError(r, 429, "rate_limited", "failed authentications");
      });
      expect(reads(rpc)).to.equal(5);

      const res = await fetch(`${stack().api}/account_exists`, { headers: { "x-api-key": unknownKey() } });
      expect(res.status).to.equal(429);
      expect(Number(res.headers.get("retry-after"))).to.be.within(1, 60);
      // What costs nothing is still answered: a key it remembers unknown (no read), a key the service knows.
      const { rpc: after } = await costOf(stack(), () => expectError(listGroups(stack(), remembered), 401, "invalid_api_key"));
      expect(reads(after)).to.equal(0);
      expect(await ok(owner.get("/list_groups"))).to.deep.equal([]);
      // A key that proved good is read again when the cache dropped it (any event of its account does).
      stack().relayer.ctx.executor.permissions.clear();
      expect(await ok(owner.get("/list_groups"))).to.deep.equal([]);
      // A key never seen, even a good one, waits for the window like any guess.
      const stranger = await accountClient(stack());
      stack().relayer.ctx.executor.permissions.clear();
      await expectError(stranger.get("/list_groups"), 429, "rate_limited");
    });
  });

  describe("an exempt address (a service that presents many users' keys, such as the triggers service)", function () {
    const stack = suiteStack({ env: { VESTA_AUTH_FAILURE_RATE_LIMIT: "2", VESTA_AUTH_FAILURE_EXEMPT: "127.0.0.1, ::1" } });

    it("has no budget: every unknown key is looked up and refused 401", async function () {
      for (let i = 0; i < 6; i++) await expectError(listGroups(stack(), unknownKey()), 401, "invalid_api_key");
    });

    it("reads its settings at boot (defaults: 60 a minute, 10 s of memory, no exempt address) and refuses an exempt list that is not addresses", function () {
      const env = {
        VESTA_MODE: "development",
        VESTA_RPC_URL: "http://127.0.0.1:8545",
        VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        VESTA_PAYER_KEYS: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
      };
      expect(loadConfig(env)).to.deep.include({ authFailureRateLimitPerMinute: 60, unknownKeyCacheMs: 10_000, authFailureExempt: [] });
      expect(loadConfig({ ...env, VESTA_AUTH_FAILURE_EXEMPT: " ::ffff:10.0.0.7 , fd00::1" })).to.deep.include({ authFailureExempt: ["10.0.0.7", "fd00::1"] });
      expect(() => loadConfig({ ...env, VESTA_AUTH_FAILURE_EXEMPT: "127.0.0.1, triggers" })).to.throw(/VESTA_AUTH_FAILURE_EXEMPT: not IP addresses: triggers/);
    });
  });
});
