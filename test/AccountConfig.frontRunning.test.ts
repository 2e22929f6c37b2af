import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { Interface, Signer, TransactionResponse } from "ethers";
import { authorize, chainSecuredHash, deployAccountConfig, flat, hashOf, perms } from "./helpers/accountConfig";
import { usageKeySeal } from "../protocol/usageKeySeal";
import { WHOLE, plain } from "./helpers/scenario";

/**
 * Issue 16 finding 2: an observer of the mempool copies a victim's pending registration, points it
 * at its own account and pays a higher gas price, so that its transaction is mined first. Neither a
 * usage key Vesta minted nor a wallet (PKP) registration may be blocked or taken that way. Usage
 * keys are known by keccak256 of their bytes (spec 1, rule 6), so a key's hash is no proof of
 * possession: a key Vesta mints is reserved for its account under a seal (keccak256 of the hash)
 * before any transaction shows the hash (issue 19).
 */
describe("AccountConfig: front-running registrations", function () {
  /** Two wallet-owned (ChainSecured) accounts: the victim's and the attacker's. */
  async function frontRunFixture() {
    const d = await deployAccountConfig();
    const [victim, attacker] = d.others;
    for (const s of [victim, attacker]) await (await d.config.connect(s).newChainSecuredAccount("acct", "")).wait();
    return { ...d, victim, attacker, victimAccount: chainSecuredHash(await victim.getAddress()), attackerAccount: chainSecuredHash(await attacker.getAddress()) };
  }

  /**
   * Mines one block holding the victim's transaction and the attacker's copy of it, the copy with a
   * higher gas price: `attack` gets the victim's pending transaction as the mempool shows it.
   */
  async function raced(victimSends: () => Promise<TransactionResponse>, attack: (pending: TransactionResponse) => Promise<TransactionResponse>) {
    await ethers.provider.send("evm_setAutomine", [false]);
    try {
      const victimTx = await victimSends();
      const seen = (await ethers.provider.getTransaction(victimTx.hash))!;
      expect(seen.blockNumber, "the victim's transaction is pending").to.equal(null);
      const attackTx = await attack(seen);
      await ethers.provider.send("evm_mine", []);
      const [v, a] = [await ethers.provider.getTransactionReceipt(victimTx.hash), await ethers.provider.getTransactionReceipt(attackTx.hash)];
      expect(a!.blockNumber, "both are in the same block").to.equal(v!.blockNumber);
      expect(a!.index, "the attacker's copy is mined first").to.be.lessThan(v!.index);
      return { victim: v!, attacker: a! };
    } finally {
      await ethers.provider.send("evm_setAutomine", [true]);
    }
  }

  /** The attacker's copy of `pending`: the same call with the account argument replaced by `account`, at a higher gas price. */
  async function copyFor(attacker: Signer, pending: TransactionResponse, account: bigint, configAddress: string) {
    const iface: Interface = (await ethers.getContractAt("IAccountConfig", configAddress)).interface;
    const call = iface.parseTransaction({ data: pending.data })!;
    const args = [account, ...call.args.slice(1)];
    return attacker.sendTransaction({
      to: configAddress,
      data: iface.encodeFunctionData(call.fragment, args),
      gasLimit: 2_000_000n, // sent even though it would revert: the attacker pays to try
      maxFeePerGas: pending.maxFeePerGas! * 2n,
      maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n,
    });
  }

  describe("setUsageApiKey", function () {
    it("cannot be taken or blocked: a copy of the pending registration of a key Vesta reserved, pointed at another account, reverts; the victim's lands", async function () {
      const { config, payer, victim, attacker, victimAccount, attackerAccount } = await loadFixture(frontRunFixture);
      const key = hashOf("the victim's fresh usage key");
      await authorize(config.connect(payer), victimAccount, key); // what add_usage_api_key_with_signature does
      const address = await config.getAddress();
      const r = await raced(
        () => config.connect(victim).setUsageApiKey(victimAccount, key, 0, 0, "runner", "", ...flat(perms({ executeInGroups: [0] }))),
        (pending) => copyFor(attacker, pending, attackerAccount, address),
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect(plain(await config.resolveApiKey(key))).to.deep.equal({ apiKeyHash: victimAccount, isAccountKey: false, active: true });
      expect((await config.listUsageApiKeys(attackerAccount, 0, WHOLE)).total).to.equal(0n);
      // and now that it is the victim's, the same copy cannot move it either
      await expect(config.connect(attacker).setUsageApiKey.staticCall(attackerAccount, key, 0, 0, "runner", "", ...flat(perms())))
        .to.be.revertedWithCustomError(config, "KeyHashInUse")
        .withArgs(key);
    });

    it("the pending reservation shows nothing to copy: its seal is not the key hash, and only an API payer reserves", async function () {
      const { config, payer, victim, attacker, victimAccount, attackerAccount } = await loadFixture(frontRunFixture);
      const key = hashOf("another fresh usage key");
      const seal = usageKeySeal(key);
      const address = await config.getAddress();
      // the observer copies the pending reservation: as its own reservation (not a payer), and the seal as a key hash of its own
      const r = await raced(
        () => config.connect(payer).authorizeUsageApiKey(victimAccount, seal),
        async (pending) => {
          await copyFor(attacker, pending, attackerAccount, address);
          const asKey = config.interface.encodeFunctionData("setUsageApiKey", [attackerAccount, BigInt(seal), 0, 0, "squat", "", ...flat(perms())]);
          return attacker.sendTransaction({ to: address, data: asKey, gasLimit: 2_000_000n, maxFeePerGas: pending.maxFeePerGas! * 2n, maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n });
        },
      );
      expect(r.victim.status).to.equal(1);
      expect(await config.usageApiKeyHome(seal)).to.equal(victimAccount);
      await expect(config.connect(victim).setUsageApiKey(victimAccount, key, 0, 0, "runner", "", ...flat(perms()))).to.emit(config, "UsageApiKeySet");
      expect((await config.resolveApiKey(key)).apiKeyHash).to.equal(victimAccount);
    });

    it("a key the wallet minted itself (no reservation, Chipotle's flow): first registration wins, so a copy mined first makes the owner's registration revert, visibly", async function () {
      const { config, victim, attacker, victimAccount, attackerAccount } = await loadFixture(frontRunFixture);
      const key = hashOf("lk_a key the victim's browser minted");
      const address = await config.getAddress();
      const r = await raced(
        () => config.connect(victim).setUsageApiKey(victimAccount, key, 0, 0, "runner", "", ...flat(perms({ executeInGroups: [0] }))),
        (pending) => copyFor(attacker, pending, attackerAccount, address),
      );
      // The owner's transaction fails (its client reports the error and never hands the key out):
      // the copier holds a hash whose key it does not know and nobody will present.
      expect([r.attacker.status, r.victim.status]).to.deep.equal([1, 0]);
      expect((await config.resolveApiKey(key)).apiKeyHash).to.equal(attackerAccount);
      expect((await config.listUsageApiKeys(victimAccount, 0, WHOLE)).total).to.equal(0n);
    });
  });

  describe("newAccount", function () {
    it("cannot be blocked: the account key's hash is reserved under its seal before the creation shows it; a copy into another account's usage key reverts", async function () {
      const { config, payer, attacker, attackerAccount } = await loadFixture(frontRunFixture);
      const accountKeyHash = hashOf("a fresh account key the relayer just generated");
      await authorize(config.connect(payer), accountKeyHash, accountKeyHash); // what new_account does first
      const r = await raced(
        () => config.connect(payer).newAccount(accountKeyHash, true, "acct", "", ethers.Wallet.createRandom().address),
        async (pending) => {
          // the observer tries to take the hash first, as a usage key of its own account (its wallet needs no reservation for a key it minted)
          const data = config.interface.encodeFunctionData("setUsageApiKey", [attackerAccount, accountKeyHash, 0, 0, "squat", "", ...flat(perms())]);
          return attacker.sendTransaction({ to: await config.getAddress(), data, gasLimit: 2_000_000n, maxFeePerGas: pending.maxFeePerGas! * 2n, maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n });
        },
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect(plain(await config.resolveApiKey(accountKeyHash))).to.deep.equal({ apiKeyHash: accountKeyHash, isAccountKey: true, active: true });
      expect((await config.listUsageApiKeys(attackerAccount, 0, WHOLE)).total).to.equal(0n);
      expect(await config.usageApiKeyHome(usageKeySeal(accountKeyHash)), "the hash stays reserved for the account").to.equal(accountKeyHash);
    });

    it("a wallet's own account: a usage key that took keccak256(wallet) first is dropped when the wallet creates its account", async function () {
      const { config, attacker, attackerAccount, others } = await loadFixture(frontRunFixture);
      const wallet = others[2];
      const walletHash = chainSecuredHash(await wallet.getAddress());
      const r = await raced(
        () => config.connect(wallet).newChainSecuredAccount("mine", ""),
        async (pending) => {
          const data = config.interface.encodeFunctionData("setUsageApiKey", [attackerAccount, walletHash, 0, 0, "squat", "", ...flat(perms())]);
          return attacker.sendTransaction({ to: await config.getAddress(), data, gasLimit: 2_000_000n, maxFeePerGas: pending.maxFeePerGas! * 2n, maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n });
        },
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([1, 1]);
      expect(plain(await config.resolveApiKey(walletHash))).to.deep.equal({ apiKeyHash: walletHash, isAccountKey: true, active: false });
      expect((await config.listUsageApiKeys(attackerAccount, 0, WHOLE)).total, "the squatted usage key is gone").to.equal(0n);
      const dropped = config.interface.getEvent("UsageApiKeyRemoved");
      const logs = await ethers.provider.getLogs({ address: await config.getAddress(), topics: [dropped.topicHash], fromBlock: r.victim.blockNumber, toBlock: r.victim.blockNumber });
      expect(logs.map((l) => config.interface.parseLog(l)!.args.toArray())).to.deep.equal([[attackerAccount, walletHash]]);
    });
  });

  describe("registerWalletDerivation", function () {
    it("cannot be blocked: a copy registered first to another account leaves the victim's registration to land", async function () {
      const { config, victim, attacker, victimAccount, attackerAccount } = await loadFixture(frontRunFixture);
      const pkp = ethers.Wallet.createRandom().address; // a freshly minted PKP
      const address = await config.getAddress();
      const r = await raced(
        () => config.connect(victim).registerWalletDerivation(victimAccount, pkp, 42n, "mine", ""),
        (pending) => copyFor(attacker, pending, attackerAccount, address),
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([1, 1]);
      const [victimWallets] = await config.listWallets(victimAccount, 0, WHOLE);
      expect(plain(victimWallets)).to.deep.equal([{ walletAddress: pkp, derivationPath: 42n, name: "mine", description: "" }]);
      // the attacker's copy is a record of its own account only, which the victim's group writes never see
      expect((await config.getWallet(attackerAccount, pkp)).derivationPath).to.equal(42n);
      await expect(config.connect(victim).addGroup(victimAccount, "signers", "", [], [pkp])).to.emit(config, "PkpAddedToGroup").withArgs(victimAccount, 1n, pkp, victimAccount);
      await expect(config.connect(attacker).addPkpToGroup(attackerAccount, 1n, pkp)).to.be.revertedWithCustomError(config, "GroupNotFound");
    });

    it("refuses the same address twice in one account only", async function () {
      const { config, victim, victimAccount } = await loadFixture(frontRunFixture);
      const pkp = ethers.Wallet.createRandom().address;
      await (await config.connect(victim).registerWalletDerivation(victimAccount, pkp, 1n, "", "")).wait();
      await expect(config.connect(victim).registerWalletDerivation(victimAccount, pkp, 2n, "", ""))
        .to.be.revertedWithCustomError(config, "PkpAlreadyRegistered")
        .withArgs(victimAccount, pkp);
      expect((await config.getWallet(victimAccount, pkp)).derivationPath).to.equal(1n);
    });
  });
});
