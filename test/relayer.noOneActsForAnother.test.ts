import { expect } from "chai";
import { ethers } from "hardhat";
import { verifyMessage, type Interface, type Signer, type TransactionResponse } from "ethers";
import { computeCid } from "../executor/cid";
import { SIGN_ACTION, signedRequest } from "../scripts/lib/chainSecured";
import { newSecretKey } from "../relayer/routes/accounts";
import { call, type Reply } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { flat, hashOf, perms } from "./helpers/accountConfig";
import { accountClient, addGroup, addUsageKey, ALL_PERMISSIONS, expectRejected, hashCid, failedRun, newCid, ok, step, type Client } from "./helpers/relayerWorkflow";
import { walletAccount, walletAuthHeaders, type WalletAccount } from "./helpers/wallets";

const HELLO = `async function main() { return "hello"; }`;

/**
 * Issue 16 over HTTP, the way users meet it: nothing is pushed onto a wallet that did not act (and
 * nobody pays for another), registrations cannot be blocked or taken from the mempool, and a per-group
 * scope does not reach account-wide action metadata.
 */
describe("no one acts, or pays, for someone else (issue 16, over HTTP)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  let chainId: bigint;
  let contract: string;
  before(async () => {
    chainId = stack().relayer.ctx.chain.chainId;
    contract = await stack().config.getAddress();
  });

  /** The relayer sees direct contract writes at its next poll; tests that just made one sync it now. */
  const synced = () => stack().relayer.ctx.executor.permissions.sync();
  const balanceOf = async (who: { key?: string; headers?: Record<string, string> }) => (await ok(call(stack(), "GET", "/billing/balance", who))).credit_cents as number;
  const walletBalance = async (a: WalletAccount, account?: bigint) => balanceOf({ headers: await walletAuthHeaders(stack(), a.wallet, account) });
  const runHello = (key: string) => ok(call(stack(), "POST", "/lit_action", { key, body: { code: HELLO } }));

  /**
   * A wallet-owned account with group 1 listing HELLO and a usage key (minted and registered by the
   * wallet itself) that may execute there.
   */
  async function runnerAccount() {
    const a = await walletAccount(stack(), "runner account");
    await (await a.config.addGroup(a.hash, "hello", "", [hashCid(await computeCid(HELLO))], [])).wait();
    const key = newSecretKey();
    await (await a.config.setUsageApiKey(a.hash, hashOf(key), 0, 0, "runner", "", ...flat(perms({ executeInGroups: [1] })))).wait();
    return { ...a, key };
  }

  describe("1. an account cannot be pushed onto a wallet that did not accept it", function () {
    it("a ChainSecured account handed to a wallet that never accepted bills that wallet nothing; its usage key reads its own account's balance", async function () {
      const victim = await walletAccount(stack(), "victim");
      const attacker = await runnerAccount();
      const victimBefore = await walletBalance(victim);
      const attackerBefore = await walletBalance(attacker);

      await (await attacker.config.transferAccountOwnership(attacker.hash, victim.wallet.address)).wait();
      await synced();
      for (let i = 0; i < 3; i++) expect((await runHello(attacker.key)).response).to.equal("hello");

      expect(await walletBalance(victim), "the victim's credit").to.equal(victimBefore);
      const attackerAfter = await walletBalance(attacker);
      expect(attackerAfter, "the runs are the attacker's to pay").to.be.lessThan(attackerBefore);
      expect(await balanceOf({ key: attacker.key }), "the usage key reads the balance it pays from").to.equal(attackerAfter);
      // the account is still the attacker's: the victim cannot even name it in its billing header
      const named = await call(stack(), "GET", "/billing/balance", { headers: await walletAuthHeaders(stack(), victim.wallet, attacker.hash) });
      expect(named.status, JSON.stringify(named.body)).to.equal(401);
      expect((await stack().config.getAccount(attacker.hash)).adminWalletAddress).to.equal(attacker.wallet.address);
    });

    it("once the wallet accepts from its own address, the account and its runs are that wallet's", async function () {
      const next = await walletAccount(stack(), "next owner");
      const seller = await runnerAccount();
      await (await seller.config.transferAccountOwnership(seller.hash, next.wallet.address)).wait();
      await (await stack().config.connect(next.wallet).acceptAccountOwnership(seller.hash)).wait();
      await synced();
      const before = await walletBalance(next);
      await runHello(seller.key);
      expect(await walletBalance(next)).to.be.lessThan(before);
      expect(await balanceOf({ key: seller.key })).to.equal(await walletBalance(next));
    });

    it("a ConvertAccount signature replayed for another managed account only proposes: that account stays managed and bills itself, the wallet pays nothing", async function () {
      const victim = await walletAccount(stack(), "victim of a replay");
      const signed = await signedRequest(victim.wallet, "ConvertAccount", chainId); // e.g. made for the victim's own conversion
      const owner = await accountClient(stack());
      const group = await addGroup(owner, "hello", [], [await computeCid(HELLO)]);
      const runner = await addUsageKey(stack(), owner, { name: "runner", execute_in_groups: [group] });
      const admin = (await stack().config.getAccount(owner.hash)).adminWalletAddress;
      const victimBefore = await walletBalance(victim);
      const ownerBefore = await balanceOf({ key: owner.key });

      expect(await ok(owner.post("/convert_to_chain_secured_account", { new_admin_wallet_address: victim.wallet.address, ...signed }))).to.include({ pending_acceptance: true });
      for (let i = 0; i < 3; i++) await runHello(runner.key);

      const account = await stack().config.getAccount(owner.hash);
      expect([account.managed, account.adminWalletAddress]).to.deep.equal([true, admin]);
      expect(await walletBalance(victim), "the victim's credit").to.equal(victimBefore);
      expect(await balanceOf({ key: owner.key }), "the account pays for its own runs").to.be.lessThan(ownerBefore);
      // and the master key still writes: nothing moved
      await ok(owner.post("/add_group", { group_name: "still managed" }));
    });
  });

  describe("2. front-running cannot block or take a registration", function () {
    /** The pending transaction to AccountConfig, as an observer of the mempool sees it (waits for it). */
    async function pendingWrite(): Promise<TransactionResponse> {
      for (let i = 0; i < 200; i++) {
        const block = await ethers.provider.send("eth_getBlockByNumber", ["pending", false]);
        for (const hash of block.transactions as string[]) {
          const tx = await ethers.provider.getTransaction(hash);
          if (tx?.to?.toLowerCase() === contract.toLowerCase()) return tx;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no write to AccountConfig reached the mempool");
    }

    /**
     * The attacker's copy of `pending`, its account argument replaced by `account` (and, for a usage
     * key, no permissions: the attacker's account has none of the victim's groups), at a higher gas
     * price, sent even if it reverts.
     */
    function copyFor(attacker: Signer, pending: TransactionResponse, account: bigint) {
      const iface: Interface = stack().config.interface;
      const parsed = iface.parseTransaction({ data: pending.data })!;
      const args = [account, ...parsed.args.slice(1)];
      if (parsed.name === "setUsageApiKey") args.splice(6, 7, ...flat(perms()));
      return attacker.sendTransaction({
        to: contract,
        data: iface.encodeFunctionData(parsed.fragment, args),
        gasLimit: 2_000_000n,
        maxFeePerGas: pending.maxFeePerGas! * 2n,
        maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n,
      });
    }

    /**
     * With automine off: starts the victim's request, waits for its write in the mempool (mining the
     * writes that come before it when `at` names the one to race: a request may send several), lets
     * the attacker copy it (or `attack` it otherwise), mines one block and answers the victim's reply
     * and both receipts, after checking that the attacker's transaction was mined first.
     */
    async function raced(
      victim: () => Promise<Reply | TransactionResponse>,
      attacker: WalletAccount,
      at?: string,
      attack: (pending: TransactionResponse) => Promise<TransactionResponse> = (pending) => copyFor(attacker.wallet, pending, attacker.hash),
    ) {
      await ethers.provider.send("evm_setAutomine", [false]);
      let reply: Reply | TransactionResponse;
      let victimTx: TransactionResponse;
      let attackTx: TransactionResponse;
      try {
        const started = victim();
        victimTx = await pendingWrite();
        while (at && stack().config.interface.parseTransaction({ data: victimTx.data })!.name !== at) {
          await ethers.provider.send("evm_mine", []);
          victimTx = await pendingWrite();
        }
        attackTx = await attack(victimTx);
        await ethers.provider.send("evm_mine", []);
        reply = await started;
      } finally {
        await ethers.provider.send("evm_setAutomine", [true]);
      }
      const [v, a] = [(await ethers.provider.getTransactionReceipt(victimTx.hash))!, (await ethers.provider.getTransactionReceipt(attackTx.hash))!];
      expect([a.blockNumber, a.index < v.index], "the attacker's copy is mined first, in the same block").to.deep.equal([v.blockNumber, true]);
      await synced();
      return { reply, victim: v, attacker: a };
    }

    it("/create_wallet: a copy mined first for another account neither blocks the wallet nor gives the copier its key", async function () {
      const owner = await accountClient(stack());
      const attacker = await walletAccount(stack(), "copier");
      const r = await raced(() => owner.post("/create_wallet", { name: "signer" }), attacker);
      const pkp = (await ok(r.reply as Reply)).wallet_address as string;
      expect(r.attacker.status, "the copy registers the address in the copier's own account only").to.equal(1);

      // the wallet is the owner's and signs for it
      const cid = await computeCid(SIGN_ACTION);
      await addGroup(owner, "signers", [pkp], [cid]);
      const signedByPkp = await ok(owner.post("/lit_action", { code: SIGN_ACTION, js_params: { pkpId: pkp, message: "mine" } }));
      expect(verifyMessage("mine", signedByPkp.response.signature)).to.equal(pkp);

      // the copier's registration yields no key: its group and usage key get a refusal, not a signature
      await (await attacker.config.addGroup(attacker.hash, "stolen", "", [hashCid(cid)], [pkp])).wait();
      const key = newSecretKey();
      await (await attacker.config.setUsageApiKey(attacker.hash, hashOf(key), 0, 0, "thief", "", ...flat(perms({ executeInGroups: [1] })))).wait();
      await synced();
      const stolen = await failedRun(call(stack(), "POST", "/lit_action", { key, body: { code: SIGN_ACTION, js_params: { pkpId: pkp, message: "theirs" } } }));
      expect(stolen.has_error).to.equal(true);
      expect(JSON.stringify(stolen)).to.include("not a wallet this service derived");
    });

    it("/add_usage_api_key: a copy of the pending registration pointed at another account reverts; the key is the account's", async function () {
      const owner = await accountClient(stack());
      const group = await addGroup(owner, "hello", [], [await computeCid(HELLO)]);
      const attacker = await walletAccount(stack(), "key thief");
      // the key is reserved under its seal first, then registered: the registration is the write that shows the key hash
      const r = await raced(() => owner.post("/add_usage_api_key", { name: "runner", execute_in_groups: [group] }), attacker, "setUsageApiKey");
      const key = (await ok(r.reply as Reply)).usage_api_key as string;
      expect(r.attacker.status, "the copy reverts").to.equal(0);
      expect(BigInt(stack().config.interface.parseTransaction({ data: (await ethers.provider.getTransaction(r.victim.hash))!.data })!.args[1]), "the key is known by keccak256 of its bytes").to.equal(hashOf(key));
      expect((await runHello(key)).response).to.equal("hello");
      expect((await ok(call(stack(), "GET", "/list_groups", { key }))).map((g: { name: string }) => g.name)).to.deep.equal(["hello"]);
      expect((await stack().config.listUsageApiKeys(attacker.hash, 0, 10)).total).to.equal(0n);
    });

    it("/new_account: the new account key's hash, copied from the pending creation into a usage key of another account, is refused; the account is created", async function () {
      const attacker = await walletAccount(stack(), "account squatter");
      const r = await raced(() => call(stack(), "POST", "/new_account", { body: { account_name: "victim" } }), attacker, "newAccount", async (pending) => {
        const accountHash = stack().config.interface.parseTransaction({ data: pending.data })!.args[0] as bigint;
        const data = stack().config.interface.encodeFunctionData("setUsageApiKey", [attacker.hash, accountHash, 0, 0, "squat", "", ...flat(perms({ executeInGroups: [0] }))]);
        return attacker.wallet.sendTransaction({ to: contract, data, gasLimit: 2_000_000n, maxFeePerGas: pending.maxFeePerGas! * 2n, maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n });
      });
      const apiKey = (await ok(r.reply as Reply)).api_key as string;
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect(await ok(call(stack(), "GET", "/account_exists", { key: apiKey }))).to.equal(true);
      expect((await stack().config.resolveApiKey(hashOf(apiKey))).isAccountKey).to.equal(true);
      expect((await stack().config.listUsageApiKeys(attacker.hash, 0, 10)).total).to.equal(0n);
    });

    it("wallet mode: a key minted by add_usage_api_key_with_signature cannot be taken between the mint and the wallet's setUsageApiKey", async function () {
      const victim = await walletAccount(stack(), "wallet-mode victim");
      await (await victim.config.addGroup(victim.hash, "hello", "", [hashCid(await computeCid(HELLO))], [])).wait();
      const minted = await ok(call(stack(), "POST", "/add_usage_api_key_with_signature", { body: await signedRequest(victim.wallet, "AddUsageApiKey", chainId) }));
      const attacker = await walletAccount(stack(), "wallet-mode thief");
      const r = await raced(() => victim.config.setUsageApiKey(victim.hash, minted.usage_api_key_hash, 0, 0, "runner", "", ...flat(perms({ executeInGroups: [1] }))), attacker);
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect((await runHello(minted.usage_api_key)).response).to.equal("hello");
      expect(await ok(call(stack(), "GET", "/account_exists", { key: minted.usage_api_key }))).to.equal(true);
      expect((await stack().config.resolveApiKey(minted.usage_api_key_hash)).apiKeyHash).to.equal(victim.hash);
    });
  });

  describe("3. group:manageActions does not reach account-wide action metadata", function () {
    it("add_action, update_action_metadata and delete_action: 403 owner_only for every usage key, nothing changes; the account key succeeds", async function () {
      const owner = await accountClient(stack());
      const cid = await newCid();
      await ok(owner.post("/add_action", { action_ipfs_cid: cid, name: "theirs" }));
      const listing = await addGroup(owner, "lists the action", [], [cid]);
      const other = await addGroup(owner, "another group");
      const keys: [string, Client][] = [
        ["group:manageActions on the action's group", await addUsageKey(stack(), owner, { manage_ipfs_ids_in_groups: [listing] })],
        ["group:manageActions on another group", await addUsageKey(stack(), owner, { manage_ipfs_ids_in_groups: [other] })],
        ["group:manageActions on every group", await addUsageKey(stack(), owner, { manage_ipfs_ids_in_groups: [0] })],
        ["every permission", await addUsageKey(stack(), owner, ALL_PERMISSIONS)],
        ["no permission", await addUsageKey(stack(), owner, {})],
      ];
      const writes: [string, () => Promise<Record<string, unknown>>][] = [
        ["/add_action", async () => ({ action_ipfs_cid: await newCid(), name: "added" })],
        ["/update_action_metadata", async () => ({ hashed_cid: hashCid(cid), name: "renamed" })],
        ["/delete_action", async () => ({ hashed_cid: hashCid(cid) })],
      ];
      for (const [label, key] of keys) {
        for (const [path, body] of writes) {
          const b = await body();
          await step(`${label} ${path}`, () => expectRejected(stack(), [owner], () => key.post(path, b), 403, "owner_only", "account key"));
        }
      }
      for (const [path, body] of writes) await step(`account key ${path}`, async () => ok(owner.post(path, await body())));
      const listed = await ok(owner.get("/list_actions"));
      expect(listed.map((a: { name: string }) => a.name)).to.deep.equal(["added"]);
    });
  });
});
