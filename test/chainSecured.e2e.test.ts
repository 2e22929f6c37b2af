import { expect } from "chai";
import { ethers } from "hardhat";
import { verifyMessage, Wallet } from "ethers";
import { buildTypedData, PRIMARY_TYPES, type PrimaryType, type TypedData } from "../protocol/eip712";
import { computeCid } from "../executor/cid";
import { LOCAL_TEST_WALLET_KEY, runChainSecuredDemo, SIGN_ACTION, signEnvelope, signedRequest } from "../scripts/lib/chainSecured";
import { call, chainKeys } from "./helpers/relayer";
import { flat, hashOf, perms } from "./helpers/accountConfig";
import { usageKeySeal } from "../protocol/usageKeySeal";
import { accountState } from "./helpers/scenario";
import { suiteStack } from "./helpers/relayerChecks";
import { deploySafeInfrastructure, type SafeKit } from "./helpers/safe";
import { fundedWallet, walletAccount as walletAccountOf, type WalletAccount } from "./helpers/wallets";
import {
  accountClient,
  addGroup,
  addUsageKey,
  createWallet,
  expectError,
  expectRejected,
  failedRun,
  hashCid,
  newCid,
  ok,
  onChain,
  step,
  type Client,
} from "./helpers/relayerWorkflow";

const HELLO = `async function main() { return "hello"; }`;
const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;
const now = () => Math.floor(Date.now() / 1000);
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

const CREATE = "/create_wallet_with_signature";
const ADD_KEY = "/add_usage_api_key_with_signature";
const CONVERT = "/convert_to_chain_secured_account";

describe("ChainSecured accounts over HTTP (spec 2)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  let chainId: bigint;
  before(() => {
    chainId = stack().relayer.ctx.chain.chainId;
  });

  const walletAccount = () => walletAccountOf(stack());

  /** Mints a wallet with a CreateWallet signature of the account's wallet; nothing is registered yet. */
  const mint = async (a: WalletAccount): Promise<{ wallet_address: string; derivation_path: string }> =>
    ok(call(stack(), "POST", CREATE, { body: await signedRequest(a.wallet, "CreateWallet", chainId) }));

  /** Runs SIGN_ACTION with `key`, signing `message` with `pkp`. */
  const runSign = (key: string, pkp: string, message = "gm") =>
    call(stack(), "POST", "/lit_action", { key, body: { code: SIGN_ACTION, js_params: { pkpId: pkp, message } } });

  /** Expects SIGN_ACTION run by `key` to return a signature of `pkp`. */
  async function expectSigned(key: string, pkp: string, message = "gm") {
    const r = await ok(runSign(key, pkp, message));
    expect(r.has_error, JSON.stringify(r)).to.equal(false);
    expect(r.response.address).to.equal(pkp);
    expect(verifyMessage(message, r.response.signature)).to.equal(pkp);
  }

  /** A managed account (API) holding PKP `pkp`, action metadata for SIGN_ACTION, group {SIGN_ACTION, pkp} and a usage key with execute on it. */
  async function managedAccount() {
    const owner = await accountClient(stack());
    const pkp = await createWallet(owner, "signer");
    const spare = await createWallet(owner, "spare");
    const cid = await computeCid(SIGN_ACTION);
    await ok(owner.post("/add_action", { action_ipfs_cid: cid, name: "sign" }));
    const group = await addGroup(owner, "signers", [pkp], [cid]);
    const runner = await addUsageKey(stack(), owner, { name: "runner", execute_in_groups: [group] });
    return { owner, pkp, spare, cid, group, runner };
  }

  /** The conversion request of `owner`'s account to `admin`, signed by `admin`. */
  const convert = async (owner: Client, admin: Parameters<typeof signedRequest>[0]) =>
    owner.post(CONVERT, { new_admin_wallet_address: admin.address, ...(await signedRequest(admin, "ConvertAccount", chainId)) });

  /** The conversion of `owner`'s account to `admin`, requested and then accepted by `admin` on chain (seen by the relayer at once). */
  async function convertAccepted(owner: Client, admin: Wallet) {
    const answer = await ok(convert(owner, admin));
    await (await stack().config.connect(admin).acceptAccountOwnership(owner.hash)).wait();
    await stack().relayer.ctx.executor.permissions.sync();
    return answer;
  }

  describe("create_wallet_with_signature", function () {
    it("mints a wallet that belongs to no account until the wallet registers its derivation from itself", async function () {
      const a = await walletAccount();
      const minted = await mint(a);
      expect(minted).to.have.all.keys("wallet_address", "derivation_path");
      expect(minted.derivation_path).to.match(/^0x[0-9a-f]{64}$/);
      expect((await mint(a)).wallet_address).not.to.equal(minted.wallet_address);
      const config = stack().config;
      await expect(config.getWallet(a.hash, minted.wallet_address)).to.be.revertedWithCustomError(config, "PkpNotFound").withArgs(a.hash, minted.wallet_address);

      await expect(a.config.registerWalletDerivation(a.hash, minted.wallet_address, minted.derivation_path, "pkp", "minted by signature"))
        .to.emit(config, "WalletRegistered")
        .withArgs(a.hash, minted.wallet_address, BigInt(minted.derivation_path), a.hash, "pkp", "minted by signature");
      const view = await config.getWallet(a.hash, minted.wallet_address);
      expect(view.derivationPath).to.equal(BigInt(minted.derivation_path));
    });

    it("a wallet registered under another derivation path than it was minted with gets no key from the executor", async function () {
      const a = await walletAccount();
      const [first, second] = [await mint(a), await mint(a)];
      await (await a.config.registerWalletDerivation(a.hash, first.wallet_address, second.derivation_path, "mismatched", "")).wait();
      await (await a.config.addGroup(a.hash, "signers", "", [hashCid(await computeCid(SIGN_ACTION))], [first.wallet_address])).wait();
      const key = `usage-key-${Date.now()}-${Math.random()}`;
      const keyHash = hashOf(key);
      await (await a.config.setUsageApiKey(a.hash, keyHash, 0n, 0n, "runner", "", ...flat(perms({ executeInGroups: [1] })))).wait();
      const r = await failedRun(runSign(key, first.wallet_address));
      expect(r.has_error).to.equal(true);
      expect(JSON.stringify(r)).to.match(/not a wallet this service derived/);
    });

    // Regression (fixed): convert_to_chain_secured_account answers api_key_hash as 0x-hex, but the api_key_hash field of
    // create_wallet_with_signature and add_usage_api_key_with_signature (relayer/routes/chainSecured.ts,
    // uint256() of relayer/schemas/common.ts) accepts only a JSON number or a decimal string, so the value
    // the API hands out cannot be sent back: 400 invalid_request "api_key_hash must be a non-negative integer".
    it("takes api_key_hash in the 0x-hex form the conversion answers with", async function () {
      const m = await managedAccount();
      const admin = await fundedWallet();
      const { api_key_hash } = await convertAccepted(m.owner, admin);
      for (const path of [CREATE, ADD_KEY]) {
        const primaryType: PrimaryType = path === CREATE ? "CreateWallet" : "AddUsageApiKey";
        const request = await signedRequest(admin, primaryType, chainId);
        await step(path, () => ok(call(stack(), "POST", path, { body: { ...request, api_key_hash } })));
      }
    });
  });

  describe("add_usage_api_key_with_signature", function () {
    it("mints a usage key that, once the wallet registers it with setUsageApiKey, runs actions like any usage key", async function () {
      const a = await walletAccount();
      const { wallet_address: pkp, derivation_path } = await mint(a);
      await (await a.config.registerWalletDerivation(a.hash, pkp, derivation_path, "pkp", "")).wait();
      await (await a.config.addGroup(a.hash, "signers", "", [hashCid(await computeCid(SIGN_ACTION))], [pkp])).wait();

      const minted = await ok(call(stack(), "POST", ADD_KEY, { body: await signedRequest(a.wallet, "AddUsageApiKey", chainId) }));
      expect(minted).to.have.all.keys("usage_api_key", "usage_api_key_hash", "wallet_address", "derivation_path");
      expect(BigInt(minted.usage_api_key_hash), "keccak256 of the key's bytes (spec 1 rule 6)").to.equal(hashOf(minted.usage_api_key));
      expect(await stack().config.usageApiKeyHome(usageKeySeal(BigInt(minted.usage_api_key_hash))), "reserved for the account on chain").to.equal(a.hash);
      // until the wallet registers it, the key is a bare secret that authenticates nothing
      await expectError(runSign(minted.usage_api_key, pkp), 401, "invalid_api_key");

      await (await a.config.registerWalletDerivation(a.hash, minted.wallet_address, minted.derivation_path, "usage key wallet", "")).wait();
      await (
        await a.config.setUsageApiKey(a.hash, minted.usage_api_key_hash, 0n, 0n, "runner", "executes in group 1", ...flat(perms({ executeInGroups: [1] })))
      ).wait();
      // refused above, the key is remembered unknown until the relayer sees the registration's event (its next poll)
      await stack().relayer.ctx.executor.permissions.sync();

      await expectSigned(minted.usage_api_key, pkp);
      expect((await ok(call(stack(), "GET", "/list_groups", { key: minted.usage_api_key }))).map((g: { name: string }) => g.name)).to.deep.equal(["signers"]);
      await expectError(call(stack(), "POST", "/lit_action", { key: minted.usage_api_key, body: { code: HELLO } }), 403, "not_permitted");
      expect((await stack().config.getWallet(a.hash, minted.wallet_address)).derivationPath).to.equal(BigInt(minted.derivation_path));
    });
  });

  describe("convert_to_chain_secured_account", function () {
    it("proposes the signer as admin; the account stays managed until the signer accepts on chain", async function () {
      const m = await managedAccount();
      const admin = await fundedWallet();
      const before = (await onChain(stack(), m.owner)) as any;
      expect(await ok(convert(m.owner, admin))).to.deep.equal({ success: true, admin_wallet_address: admin.address, api_key_hash: hex32(m.owner.hash), pending_acceptance: true });
      const pending = (await onChain(stack(), m.owner)) as any;
      expect(pending.account).to.deep.equal({ ...before.account, pendingAdminWalletAddress: admin.address, pendingConversion: true });
      // still managed: the master key still writes and runs
      await ok(m.owner.post("/add_group", { group_name: "while pending" }));
      await expectSigned(m.owner.key, m.pkp, "still managed");
    });

    it("makes the signer the admin (managed = false) once it accepts, and keeps the hash, groups, PKPs, actions and usage keys", async function () {
      const m = await managedAccount();
      const admin = await fundedWallet();
      const before = (await onChain(stack(), m.owner)) as any;
      await convertAccepted(m.owner, admin);
      const after = (await onChain(stack(), m.owner)) as any;
      expect(after.account).to.deep.equal({ ...before.account, adminWalletAddress: admin.address, managed: false });
      expect({ ...after, account: null }).to.deep.equal({ ...before, account: null });
    });

    it("leaves the old master key reading (200) while every write with it, or with a usage key, is 403 account_chain_secured and changes nothing", async function () {
      const m = await managedAccount();
      await convertAccepted(m.owner, await fundedWallet());
      expect((await ok(m.owner.get("/list_groups"))).map((g: { name: string }) => g.name)).to.deep.equal(["signers"]);
      for (const path of ["/list_wallets", "/list_actions", "/list_api_keys", `/list_wallets_in_group?group_id=${m.group}`]) await step(path, () => ok(m.owner.get(path)));

      const cid2 = await newCid();
      const hashed = hashCid(m.cid);
      const writes: [string, Record<string, unknown>][] = [
        ["/add_group", { group_name: "g" }],
        ["/update_group", { group_id: m.group, name: "renamed" }],
        ["/remove_group", { group_id: m.group }],
        ["/add_pkp_to_group", { group_id: m.group, pkp_id: m.spare }],
        ["/remove_pkp_from_group", { group_id: m.group, pkp_id: m.pkp }],
        ["/add_action_to_group", { group_id: m.group, action_ipfs_cid: cid2 }],
        ["/remove_action_from_group", { group_id: m.group, hashed_cid: hashed }],
        ["/create_wallet", {}],
        ["/add_action", { action_ipfs_cid: cid2, name: "a" }],
        ["/update_action_metadata", { hashed_cid: hashed, name: "renamed" }],
        ["/delete_action", { hashed_cid: hashed }],
        ["/add_usage_api_key", { name: "k" }],
        ["/update_usage_api_key", { usage_api_key: m.runner.key, execute_in_groups: [] }],
        ["/update_usage_api_key_metadata", { usage_api_key: m.runner.key, name: "renamed" }],
        ["/remove_usage_api_key", { usage_api_key: m.runner.key }],
      ];
      for (const [path, body] of writes) {
        await step(path, () => expectRejected(stack(), [m.owner], () => m.owner.post(path, body), 403, "account_chain_secured", "admin wallet"));
      }
      await expectRejected(stack(), [m.owner], () => m.runner.post("/add_group", { group_name: "g" }), 403, "account_chain_secured");
    });

    it("keeps usage keys running actions with the account's PKPs", async function () {
      const m = await managedAccount();
      await expectSigned(m.runner.key, m.pkp, "before");
      await convertAccepted(m.owner, await fundedWallet());
      await expectSigned(m.runner.key, m.pkp, "after");
    });

    it("ends the old master key's right to run actions (403 account_chain_secured, with or without a PKP)", async function () {
      const m = await managedAccount();
      await expectSigned(m.owner.key, m.pkp, "before");
      await convertAccepted(m.owner, await fundedWallet());
      await expectError(runSign(m.owner.key, m.pkp, "after"), 403, "account_chain_secured");
      await expectError(call(stack(), "POST", "/lit_action", { key: m.owner.key, body: { code: HELLO } }), 403, "account_chain_secured");
    });

    it("refuses a second conversion once accepted (409 already_chain_secured); the new admin writes directly on chain", async function () {
      const m = await managedAccount();
      const admin = await fundedWallet();
      await convertAccepted(m.owner, admin);
      for (const next of [Wallet.createRandom(), admin]) {
        await expectRejected(stack(), [m.owner], () => convert(m.owner, next), 409, "already_chain_secured");
      }
      await (await stack().config.connect(admin).addGroup(m.owner.hash, "direct", "", [], [m.pkp])).wait();
      await stack().relayer.ctx.executor.permissions.sync();
      expect((await ok(m.owner.get("/list_groups"))).map((g: { name: string }) => g.name)).to.deep.equal(["signers", "direct"]);
    });
  });

  describe("Errors of spec 2 over HTTP: a clear 4xx, and nothing changes", function () {
    const ENDPOINTS: { path: string; primaryType: PrimaryType }[] = [
      { path: CREATE, primaryType: "CreateWallet" },
      { path: ADD_KEY, primaryType: "AddUsageApiKey" },
      { path: CONVERT, primaryType: "ConvertAccount" },
    ];
    let owner: Client; // a managed account, which every refused conversion must leave managed
    let ownerAdmin: string; // its admin wallet, derived by the service
    let usageKey: Client;
    const admin = Wallet.createRandom(); // the would-be admin: signs every envelope
    before(async () => {
      owner = await accountClient(stack());
      usageKey = await addUsageKey(stack(), owner, { name: "not the master key" });
      ownerAdmin = (await stack().config.getAccount(owner.hash)).adminWalletAddress;
    });

    const envelope = (primaryType: PrimaryType, over: { issuedAt?: number; chainId?: number } = {}) =>
      buildTypedData(primaryType, { chainId: over.chainId ?? chainId, address: admin.address, issuedAt: over.issuedAt ?? now() });

    /** POSTs to `path` (for conversion: with the master key and the admin's address). */
    const post = (path: string, typed_data: unknown, signature: unknown, opts: { key?: string; extra?: Record<string, unknown> } = {}) => {
      const conversion = path === CONVERT;
      const body = { typed_data, signature, ...(conversion ? { new_admin_wallet_address: admin.address } : {}), ...opts.extra };
      return call(stack(), "POST", path, { key: conversion ? (opts.key ?? owner.key) : undefined, body });
    };

    /** Expects `send` refused with `status`/`code`, no block mined, the account unchanged and still managed by its own admin. */
    async function refused(label: string, send: () => ReturnType<typeof call>, status: number, code: string, ...words: string[]) {
      await step(label, async () => {
        await expectRejected(stack(), [owner], send, status, code, ...words);
        const account = await stack().config.getAccount(owner.hash);
        expect([account.managed, account.adminWalletAddress]).to.deep.equal([true, ownerAdmin]);
      });
    }

    it("accepts the untouched requests at the mint endpoints (the baseline the cases below change)", async function () {
      const td = envelope("CreateWallet");
      await step(CREATE, async () => ok(post(CREATE, td, await signEnvelope(admin, td))));
      // a usage key is reserved on chain for the signer's account at once: without an account, a clear 404 (and nothing written)
      const key = envelope("AddUsageApiKey");
      const signature = await signEnvelope(admin, key);
      await refused(ADD_KEY, () => post(ADD_KEY, key, signature), 404, "account_not_found", "creates its account first");
    });

    it("refuses a typed_data payload over 4 KiB (400)", async function () {
      for (const e of ENDPOINTS) {
        const td = clone(envelope(e.primaryType));
        const signature = await signEnvelope(admin, td);
        td.domain.name = "x".repeat(5000);
        await refused(e.path, () => post(e.path, td, signature), 400, "invalid_typed_data", "at most 4096");
      }
    });

    it("refuses types that differ from the envelope in a field or in order (400)", async function () {
      for (const e of ENDPOINTS) {
        const signature = await signEnvelope(admin, envelope(e.primaryType));
        const extra = clone(envelope(e.primaryType)) as any;
        extra.types[e.primaryType].push({ name: "nonce", type: "uint256" });
        const reordered = clone(envelope(e.primaryType)) as any;
        reordered.types[e.primaryType].reverse();
        for (const td of [extra, reordered]) await refused(e.path, () => post(e.path, td, signature), 400, "invalid_typed_data", `types.${e.primaryType}`);
      }
    });

    it("refuses a signature made for another primaryType (400), and relabelled to the endpoint's primaryType (401)", async function () {
      for (const e of ENDPOINTS) {
        for (const other of PRIMARY_TYPES.filter((p) => p !== e.primaryType)) {
          const td = envelope(other);
          const signature = await signEnvelope(admin, td);
          await refused(`${e.path} ${other}`, () => post(e.path, td, signature), 400, "invalid_typed_data", `takes primaryType ${e.primaryType}`);
          await refused(`${e.path} ${other} relabelled`, () => post(e.path, envelope(e.primaryType), signature), 401, "invalid_signature", "does not prove");
        }
      }
    });

    it("refuses issuedAt outside ±300 s, on either side, and absurd values (400)", async function () {
      for (const e of ENDPOINTS) {
        for (const issuedAt of [now() - 400, now() + 400]) {
          const td = envelope(e.primaryType, { issuedAt });
          await refused(`${e.path} ${issuedAt}`, async () => post(e.path, td, await signEnvelope(admin, td)), 400, "invalid_typed_data", "issuedAt", "within 300 s");
        }
        const signature = await signEnvelope(admin, envelope(e.primaryType));
        for (const value of [(1n << 256n).toString(), "9".repeat(100), -1, 1e30, "soon", null]) {
          const td = clone(envelope(e.primaryType)) as any;
          td.message.issuedAt = value;
          await refused(`${e.path} ${value}`, () => post(e.path, td, signature), 400, "invalid_typed_data", "issuedAt");
        }
      }
    });

    it("refuses another chain id (400)", async function () {
      for (const e of ENDPOINTS) {
        const td = envelope(e.primaryType, { chainId: 1 });
        await refused(e.path, async () => post(e.path, td, await signEnvelope(admin, td)), 400, "invalid_typed_data", `not this node's chain ${chainId}`);
      }
    });

    it("refuses a signature that does not recover to message.address (401)", async function () {
      for (const e of ENDPOINTS) {
        const td = envelope(e.primaryType);
        await refused(e.path, async () => post(e.path, td, await signEnvelope(Wallet.createRandom(), td)), 401, "invalid_signature", `does not prove ${admin.address}`);
      }
    });

    it("refuses a signature that is not 0x-prefixed hex of whole bytes (400)", async function () {
      for (const e of ENDPOINTS) {
        for (const signature of ["0xzz", "ab".repeat(65), "0x", "", `0x${"ab".repeat(65)}0`]) {
          await refused(`${e.path} ${JSON.stringify(signature)}`, () => post(e.path, envelope(e.primaryType), signature), 400, "invalid_typed_data", "signature must be");
        }
      }
    });

    it("refuses extra domain fields (400)", async function () {
      for (const e of ENDPOINTS) {
        const td = clone(envelope(e.primaryType)) as any;
        const signature = await signEnvelope(admin, td);
        td.domain.verifyingContract = "0x0000000000000000000000000000000000000001";
        await refused(e.path, () => post(e.path, td, signature), 400, "invalid_typed_data", "domain must have exactly name, version and chainId");
      }
    });

    it("conversion: refuses message.address other than new_admin_wallet_address (400)", async function () {
      const td = envelope("ConvertAccount");
      const signature = await signEnvelope(admin, td);
      const elsewhere = Wallet.createRandom().address;
      await refused(CONVERT, () => post(CONVERT, td, signature, { extra: { new_admin_wallet_address: elsewhere } }), 400, "invalid_typed_data", "is not new_admin_wallet_address");
    });

    it("conversion: refuses a usage key instead of the master key (403) and no key (401)", async function () {
      const td = envelope("ConvertAccount");
      const signature = await signEnvelope(admin, td);
      await refused("usage key", () => post(CONVERT, td, signature, { key: usageKey.key }), 403, "owner_only");
      await refused("no key", () => call(stack(), "POST", CONVERT, { body: { typed_data: td, signature, new_admin_wallet_address: admin.address } }), 401, "invalid_api_key");
    });

    it("mint endpoints: refuses api_key_hash of an account the signer does not administer (403)", async function () {
      for (const e of ENDPOINTS.filter((x) => x.path !== CONVERT)) {
        const td = envelope(e.primaryType);
        const signature = await signEnvelope(admin, td);
        await refused(e.path, () => post(e.path, td, signature, { extra: { api_key_hash: owner.hash.toString() } }), 403, "not_account_admin", admin.address);
      }
    });
  });

  describe("contract-account owners (ERC-1271): a 2-of-3 Safe", function () {
    let kit: SafeKit;
    let safe: string;
    let owners: string[];
    before(async () => {
      kit = await deploySafeInfrastructure();
      const signers = await ethers.getSigners();
      owners = [signers[6].address, signers[7].address, signers[8].address];
      safe = await kit.createSafe(owners, 2, String(Date.now()));
    });

    /**
     * The Safe's signature of `primaryType` (ERC-1271): a Safe message over the envelope's EIP-712 digest, signed by `signers`.
     * Each request is issued a second earlier than the last, counted from the first (within the window): two
     * requests with one issuedAt would be the same signature, and a ConvertAccount signature converts one account only.
     */
    let first: number | undefined;
    let age = 0;
    async function safeRequest(primaryType: PrimaryType, signers: string[]) {
      first ??= now();
      const typed_data: TypedData = buildTypedData(primaryType, { chainId, address: safe, issuedAt: first - age++ });
      let message = (await kit.connect(safe, signers[0])).createMessage(typed_data as never);
      for (const s of signers) message = await (await kit.connect(safe, s)).signMessage(message, "eth_signTypedData_v4");
      return { typed_data, signature: message.encodedSignatures() };
    }

    /** A managed account converted to the Safe: requested with owners 0 and 1's signature, accepted by a Safe transaction of owners 1 and 2. */
    async function safeAccount() {
      const m = await managedAccount();
      const answer = await ok(m.owner.post(CONVERT, { new_admin_wallet_address: safe, ...(await safeRequest("ConvertAccount", owners.slice(0, 2))) }));
      const config = stack().config;
      await kit.proposeSignExecute(safe, [{ to: await config.getAddress(), data: config.interface.encodeFunctionData("acceptAccountOwnership", [m.owner.hash]) }], [owners[1], owners[2]]);
      await stack().relayer.ctx.executor.permissions.sync();
      return { ...m, answer };
    }

    it("converts a managed account to the Safe, proven by two owners' Safe message signature and accepted by a Safe transaction", async function () {
      const m = await safeAccount();
      expect(m.answer).to.deep.equal({ success: true, admin_wallet_address: safe, api_key_hash: hex32(m.owner.hash), pending_acceptance: true });
      const account = await stack().config.getAccount(m.owner.hash);
      expect([account.adminWalletAddress, account.managed]).to.deep.equal([safe, false]);
    });

    it("refuses one owner's signature (401) and changes nothing", async function () {
      const m = await managedAccount();
      const request = await safeRequest("ConvertAccount", [owners[2]]);
      await expectRejected(stack(), [m.owner], () => m.owner.post(CONVERT, { new_admin_wallet_address: safe, ...request }), 401, "invalid_signature", safe);
      expect((await stack().config.getAccount(m.owner.hash)).managed).to.equal(true);
    });

    it("mints a wallet for the Safe's account with create_wallet_with_signature and registers it by a Safe transaction", async function () {
      const m = await safeAccount();
      const request = await safeRequest("CreateWallet", [owners[1], owners[2]]);
      const minted = await ok(call(stack(), "POST", CREATE, { body: { ...request, api_key_hash: m.owner.hash.toString() } }));
      const config = stack().config;
      await expect(config.getWallet(m.owner.hash, minted.wallet_address)).to.be.revertedWithCustomError(config, "PkpNotFound");

      const to = await config.getAddress();
      await kit.proposeSignExecute(
        safe,
        [
          { to, data: config.interface.encodeFunctionData("registerWalletDerivation", [m.owner.hash, minted.wallet_address, minted.derivation_path, "safe pkp", ""]) },
          { to, data: config.interface.encodeFunctionData("addPkpToGroup", [m.owner.hash, m.group, minted.wallet_address]) },
        ],
        [owners[0], owners[2]],
      );
      expect((await config.getWallet(m.owner.hash, minted.wallet_address)).derivationPath).to.equal(BigInt(minted.derivation_path));
      // the key derived for (account, path) is the registered wallet: the usage key signs with it
      await expectSigned(m.runner.key, minted.wallet_address, "signed by the Safe's new wallet");
    });
  });

  describe("wallet-owned account end to end (scripts/chain-secured-demo.ts)", function () {
    it("defaults to the local chain's account 5 as the owning wallet", function () {
      expect(LOCAL_TEST_WALLET_KEY).to.equal(chainKeys(5, 1)[0]);
    });

    it("runs the demo flow against this stack: account, PKP, usage key and group from the wallet; the PKP signs for the usage key", async function () {
      const wallet = await fundedWallet();
      const lines: string[] = [];
      const demo = (message: string) =>
        runChainSecuredDemo({ apiUrl: stack().api, rpcUrl: stack().rpcUrl, walletKey: wallet.privateKey, log: (l) => lines.push(l), message });
      const first = await demo("first run");
      expect(first.accountCreated).to.equal(true);
      expect(verifyMessage("first run", first.signature)).to.equal(first.pkp);
      expect(lines.join("\n")).to.include("newChainSecuredAccount").and.include(`recovers to ${first.pkp}`);

      const state = (await accountState(stack().config, first.accountHash)) as any;
      expect(state.account).to.include({ adminWalletAddress: wallet.address, managed: false, hasApiKey: false });
      expect(state.wallets.map((w: { walletAddress: string }) => w.walletAddress)).to.have.members([first.pkp, first.usageKeyWallet]);
      expect(state.groups.map((g: { id: bigint }) => g.id)).to.deep.equal([first.groupId]);
      expect(state.members[0].actions.map((a: { cidHash: bigint }) => a.cidHash)).to.deep.equal([BigInt(hashCid(first.cid))]);
      expect(state.usageKeys.map((k: { usageApiKeyHash: bigint }) => k.usageApiKeyHash)).to.deep.equal([hashOf(first.usageApiKey)]);

      // a second run with the same wallet reuses its account
      const second = await demo("second run");
      expect([second.accountCreated, second.accountHash]).to.deep.equal([false, first.accountHash]);
      expect(verifyMessage("second run", second.signature)).to.equal(second.pkp);
    });
  });
});
