import { expect } from "chai";
import { ethers } from "hardhat";
import { signedRequest, signEnvelope } from "../scripts/lib/chainSecured";
import { buildTypedData } from "../protocol/eip712";
import { usageKeySeal } from "../protocol/usageKeySeal";
import { call } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { hashOf } from "./helpers/accountConfig";
import { walletAccount } from "./helpers/wallets";
import { accountClient, addGroup, addUsageKey, expectError, expectRejected, keyItem, newCid, ok } from "./helpers/relayerWorkflow";

/**
 * Issue 19 over HTTP, for the usage-key routes: keys are known by keccak256 of their bytes (spec 1
 * rule 6, what Chipotle's clients match on), every key the service mints is reserved on chain under
 * its seal before its hash is public, and a registration the contract would refuse is refused before
 * anything is written or charged.
 */
describe("usage keys over HTTP (issue 19)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  const chainId = () => stack().relayer.ctx.chain.chainId;

  /** The seal reservations written in blocks after `from` (AccountConfig's UsageApiKeyAuthorized events). */
  async function reservationsSince(from: number) {
    const config = stack().config;
    const event = config.interface.getEvent("UsageApiKeyAuthorized");
    const logs = await ethers.provider.getLogs({ address: await config.getAddress(), topics: [event.topicHash], fromBlock: from + 1 });
    return logs.map((l) => config.interface.parseLog(l)!.args.toArray() as [bigint, string]);
  }

  describe("add_usage_api_key", function () {
    it("registers keccak256 of the key's bytes, reserved for the account under its seal first", async function () {
      const owner = await accountClient(stack());
      const from = await ethers.provider.getBlockNumber();
      const key = await addUsageKey(stack(), owner, { name: "runner" });
      expect(key.hash).to.equal(BigInt(ethers.keccak256(ethers.toUtf8Bytes(key.key))));
      expect(await reservationsSince(from)).to.deep.equal([[owner.hash, usageKeySeal(key.hash)]]);
      expect(await stack().config.usageApiKeyHome(usageKeySeal(key.hash))).to.equal(owner.hash);
      expect((await stack().config.resolveApiKey(key.hash)).apiKeyHash).to.equal(owner.hash);
      const listed = await ok(owner.get("/list_api_keys"));
      expect(listed).to.deep.equal([keyItem(key.hash, { name: "runner" })]);
    });

    it("answers what the contract would refuse before anything is written: an unknown group (404), an expiration in the past (400)", async function () {
      const owner = await accountClient(stack());
      const from = await ethers.provider.getBlockNumber();
      await expectRejected(stack(), [owner], () => owner.post("/add_usage_api_key", { name: "x", execute_in_groups: [99] }), 404, "group_not_found", "99");
      const past = (await ethers.provider.getBlock("latest"))!.timestamp - 10;
      await expectRejected(stack(), [owner], () => owner.post("/add_usage_api_key", { name: "x", expiration: past }), 400, "invalid_request", "expiration");
      expect(await reservationsSince(from), "no reservation left behind").to.deep.equal([]);
    });

    it("refuses a balance that list_api_keys could not show exactly as a JSON number (400), and lists one that it can as a number", async function () {
      const owner = await accountClient(stack());
      await expectRejected(stack(), [owner], () => owner.post("/add_usage_api_key", { name: "x", balance: "9007199254740992" }), 400, "invalid_request", "balance");
      const key = await addUsageKey(stack(), owner, { name: "rich", balance: Number.MAX_SAFE_INTEGER });
      expect(await ok(owner.get("/list_api_keys"))).to.deep.equal([keyItem(key.hash, { name: "rich", balance: Number.MAX_SAFE_INTEGER })]);
    });

    it("update_usage_api_key changes a key in one write, with no reservation", async function () {
      const owner = await accountClient(stack());
      const group = await addGroup(owner, "g", [], [await newCid()]);
      const key = await addUsageKey(stack(), owner, { name: "k" });
      const from = await ethers.provider.getBlockNumber();
      await ok(owner.post("/update_usage_api_key", { usage_api_key: key.key, name: "k", execute_in_groups: [group] }));
      expect(await ethers.provider.getBlockNumber()).to.equal(from + 1);
      expect(await reservationsSince(from)).to.deep.equal([]);
      expect(await ok(owner.get("/list_api_keys"))).to.deep.equal([keyItem(key.hash, { name: "k", execute_in_groups: [Number(group)] })]);
    });
  });

  describe("new_account", function () {
    it("reserves the account key's hash under its seal before the creation shows it", async function () {
      const from = await ethers.provider.getBlockNumber();
      const { api_key } = await ok(call(stack(), "POST", "/new_account", { body: { account_name: "sealed" } }));
      const h = hashOf(api_key);
      expect(await reservationsSince(from)).to.deep.equal([[h, usageKeySeal(h)]]);
      expect(await stack().config.usageApiKeyHome(usageKeySeal(h))).to.equal(h);
      expect((await stack().config.resolveApiKey(h)).isAccountKey).to.equal(true);
    });
  });

  describe("add_usage_api_key_with_signature", function () {
    it("answers keccak256 of the minted key and reserves it on chain for the signer's account; the key works once the wallet registers it", async function () {
      const a = await walletAccount(stack(), "signer");
      const minted = await ok(call(stack(), "POST", "/add_usage_api_key_with_signature", { body: await signedRequest(a.wallet, "AddUsageApiKey", chainId()) }));
      expect(BigInt(minted.usage_api_key_hash)).to.equal(hashOf(minted.usage_api_key));
      expect(await stack().config.usageApiKeyHome(usageKeySeal(hashOf(minted.usage_api_key)))).to.equal(a.hash);
      // another account's wallet cannot register it, even before its owner does
      const thief = await walletAccount(stack(), "thief");
      await expect(thief.config.setUsageApiKey(thief.hash, minted.usage_api_key_hash, 0, 0, "t", "", false, false, false, [], [], [], [])).to.be.revertedWithCustomError(
        stack().config,
        "KeyHashInUse",
      );
      await (await a.config.setUsageApiKey(a.hash, minted.usage_api_key_hash, 0, 0, "mine", "", false, false, false, [], [], [], [])).wait();
      await stack().relayer.ctx.executor.permissions.sync();
      expect(await ok(call(stack(), "GET", "/account_exists", { key: minted.usage_api_key }))).to.equal(true);
    });

    it("takes a signature once: a replay answers 409 signature_used and reserves nothing more", async function () {
      const a = await walletAccount(stack(), "replayed");
      const body = await signedRequest(a.wallet, "AddUsageApiKey", chainId());
      await ok(call(stack(), "POST", "/add_usage_api_key_with_signature", { body }));
      const from = await ethers.provider.getBlockNumber();
      await expectError(call(stack(), "POST", "/add_usage_api_key_with_signature", { body }), 409, "signature_used", "AddUsageApiKey");
      expect(await ethers.provider.getBlockNumber()).to.equal(from);
      // a new signature (another issuedAt) reserves another key
      const typed_data = buildTypedData("AddUsageApiKey", { chainId: chainId(), address: a.wallet.address, issuedAt: Number(body.typed_data.message.issuedAt) - 1 });
      const again = { typed_data, signature: await signEnvelope(a.wallet, typed_data) };
      expect(await ok(call(stack(), "POST", "/add_usage_api_key_with_signature", { body: again }))).to.have.property("usage_api_key");
    });
  });
});
