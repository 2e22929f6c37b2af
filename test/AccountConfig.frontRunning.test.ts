import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { Interface, Signer, TransactionResponse } from "ethers";
import { chainSecuredHash, deployAccountConfig, hashOf, perms, proofFor, usageKeyOf } from "./helpers/accountConfig";
import { WHOLE, plain } from "./helpers/scenario";

/**
 * Issue 16 finding 2: an observer of the mempool copies a victim's pending registration, points it
 * at its own account and pays a higher gas price, so that its transaction is mined first. Neither a
 * usage key nor a wallet (PKP) registration may be blocked or taken that way.
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
    const iface: Interface = (await ethers.getContractAt("AccountConfig", configAddress)).interface;
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
    it("cannot be taken: a copy of the pending registration, pointed at another account, reverts; the victim's lands", async function () {
      const { config, victim, attacker, victimAccount, attackerAccount } = await loadFixture(frontRunFixture);
      const key = usageKeyOf("the victim's fresh usage key");
      const proof = await proofFor(config, victimAccount, key);
      const address = await config.getAddress();
      const r = await raced(
        () => config.connect(victim).setUsageApiKey(victimAccount, key, 0, 0, "runner", "", perms({ executeInGroups: [0] }), proof),
        (pending) => copyFor(attacker, pending, attackerAccount, address),
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect(plain(await config.resolveApiKey(key))).to.deep.equal({ apiKeyHash: victimAccount, isAccountKey: false, active: true });
      expect((await config.listUsageApiKeys(attackerAccount, 0, WHOLE)).total).to.equal(0n);
      // and now that it is the victim's, the same copy cannot move it either
      await expect(config.connect(attacker).setUsageApiKey.staticCall(attackerAccount, key, 0, 0, "runner", "", perms(), proof))
        .to.be.revertedWithCustomError(config, "KeyHashInUse")
        .withArgs(key);
    });

    it("cannot be blocked: the attacker's own signature for the victim's key hash is no proof", async function () {
      const { config, attacker, attackerAccount } = await loadFixture(frontRunFixture);
      const key = usageKeyOf("another fresh usage key");
      const attackersOwn = usageKeyOf("the attacker's own key");
      const forged = await proofFor(config, attackerAccount, attackersOwn); // a valid signature, by the wrong key
      for (const proof of ["0x", forged, await proofFor(config, attackerAccount + 1n, key)]) {
        await expect(config.connect(attacker).setUsageApiKey(attackerAccount, key, 0, 0, "squat", "", perms(), proof))
          .to.be.revertedWithCustomError(config, "InvalidUsageKeyProof")
          .withArgs(attackerAccount, key);
      }
      expect((await config.resolveApiKey(key)).apiKeyHash).to.equal(0n);
    });
  });

  describe("newAccount", function () {
    it("cannot be blocked: the pending account hash, copied into a usage key of another account, has no proof", async function () {
      const { config, payer, attacker, attackerAccount } = await loadFixture(frontRunFixture);
      const accountKeyHash = hashOf("a fresh account key the relayer just generated");
      const r = await raced(
        () => config.connect(payer).newAccount(accountKeyHash, ethers.Wallet.createRandom().address, "acct", ""),
        async (pending) => {
          // the observer tries to take the hash first, as a usage key of its own account
          const data = config.interface.encodeFunctionData("setUsageApiKey", [attackerAccount, accountKeyHash, 0, 0, "squat", "", perms(), "0x"]);
          return attacker.sendTransaction({ to: await config.getAddress(), data, gasLimit: 2_000_000n, maxFeePerGas: pending.maxFeePerGas! * 2n, maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 2n + 1n });
        },
      );
      expect([r.attacker.status, r.victim.status]).to.deep.equal([0, 1]);
      expect(plain(await config.resolveApiKey(accountKeyHash))).to.deep.equal({ apiKeyHash: accountKeyHash, isAccountKey: true, active: true });
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
      await expect(config.connect(victim).addGroup(victimAccount, "signers", "", [pkp], [])).to.emit(config, "PkpAddedToGroup").withArgs(victimAccount, 1n, pkp, victimAccount);
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
