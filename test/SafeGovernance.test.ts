import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers, ignition } from "hardhat";
import { ZeroAddress, type BaseContract, type Result } from "ethers";

import AppAuthModule from "../ignition/modules/AppAuth";
import type { AppAuth } from "../typechain-types";
import { chainSecuredHash, deployAccountConfig, flat, hashOf, perms, type AccountConfig } from "./helpers/accountConfig";
import { deploySafeInfrastructure, type SafeCall, type SafeKit } from "./helpers/safe";

const COMPOSE_HASH = ethers.id("vesta-compose-v2");
const MISSING_ONE_SIGNATURE = "There is 1 signature missing";
const GS020_NOT_ENOUGH_SIGNATURES = "GS020";

/** One call of `contract` for a Safe transaction. */
function call(contract: BaseContract, fn: string, args: unknown[] = []): SafeCall {
  return { to: contract.target as string, data: contract.interface.encodeFunctionData(fn, args) };
}

/** Expects a Safe transaction signed by `signer` alone to be refused by protocol-kit and by the Safe. */
async function expectSingleSignatureRefused(kit: SafeKit, safe: string, calls: SafeCall[], signer: string) {
  const safeTx = await kit.sign(safe, calls, [signer]);
  await expect(kit.execute(safe, safeTx)).to.be.rejectedWith(MISSING_ONE_SIGNATURE);
  await expect(kit.execTransactionOnChain(safe, safeTx, signer)).to.be.revertedWith(GS020_NOT_ENOUGH_SIGNATURES);
}

describe("Safe governance", function () {
  async function safeGovernanceFixture() {
    const { config } = await deployAccountConfig();
    // deployAccountConfig: signer 0 owns the contract and is its admin API payer; 1 and 2 are payers.
    const [deployer, payer, , alice, bob, carol, stranger] = await ethers.getSigners();
    const { appAuth: deployed } = await ignition.deploy(AppAuthModule, {
      parameters: { AppAuthModule: { owner: deployer.address } },
    });
    const appAuth = deployed as unknown as AppAuth;

    const kit = await deploySafeInfrastructure();
    const owners = [alice.address, bob.address, carol.address];
    const safe = await kit.createSafe(owners, 2);

    // Ownable2Step: the deployer proposes the Safe, the Safe accepts (two of its owners sign).
    await (await appAuth.connect(deployer).transferOwnership(safe)).wait();
    await (await config.connect(deployer).transferOwnership(safe)).wait();
    const handover = await kit.proposeSignExecute(
      safe,
      [call(appAuth, "acceptOwnership"), call(config, "acceptOwnership")],
      [alice.address, bob.address],
    );
    return { config, appAuth, kit, safe, owners, deployer, payer, alice, bob, carol, stranger, handover };
  }

  describe("ownership", function () {
    it("hands AppAuth and AccountConfig to the Safe, accepted by a Safe transaction", async function () {
      const { config, appAuth, safe, deployer, handover } = await loadFixture(safeGovernanceFixture);
      for (const contract of [appAuth, config]) {
        expect(await contract.owner()).to.equal(safe);
        expect(await contract.pendingOwner()).to.equal(ZeroAddress);
      }
      await expect(handover)
        .to.emit(appAuth, "OwnershipTransferred")
        .withArgs(deployer.address, safe)
        .and.to.emit(config, "OwnershipTransferred")
        .withArgs(deployer.address, safe);
    });

    it("hands ownership on to another Safe, which cannot accept with one signature", async function () {
      const { appAuth, kit, safe, owners, alice, bob } = await loadFixture(safeGovernanceFixture);
      const nextSafe = await kit.createSafe(owners, 2, "1");
      await kit.proposeSignExecute(safe, [call(appAuth, "transferOwnership", [nextSafe])], [alice.address, bob.address]);
      const accept = [call(appAuth, "acceptOwnership")];

      await expectSingleSignatureRefused(kit, nextSafe, accept, alice.address);
      expect(await appAuth.owner()).to.equal(safe);
      expect(await appAuth.pendingOwner()).to.equal(nextSafe);

      await expect(kit.proposeSignExecute(nextSafe, accept, [alice.address, bob.address]))
        .to.emit(appAuth, "OwnershipTransferred")
        .withArgs(safe, nextSafe);
      expect(await appAuth.owner()).to.equal(nextSafe);
    });
  });

  describe("AppAuth.addComposeHash", function () {
    it("whitelists a compose hash with two of three signatures", async function () {
      const { appAuth, kit, safe, bob, carol } = await loadFixture(safeGovernanceFixture);
      await expect(kit.proposeSignExecute(safe, [call(appAuth, "addComposeHash", [COMPOSE_HASH])], [bob.address, carol.address]))
        .to.emit(appAuth, "ComposeHashAdded")
        .withArgs(COMPOSE_HASH);
      expect(await appAuth.allowedComposeHashes(COMPOSE_HASH)).to.equal(true);
    });

    it("cannot be executed with one owner's signature", async function () {
      const { appAuth, kit, safe, alice } = await loadFixture(safeGovernanceFixture);
      await expectSingleSignatureRefused(kit, safe, [call(appAuth, "addComposeHash", [COMPOSE_HASH])], alice.address);
      expect(await appAuth.allowedComposeHashes(COMPOSE_HASH)).to.equal(false);
    });

    it("reverts when a Safe owner or the former owner calls it directly", async function () {
      const { appAuth, alice, deployer } = await loadFixture(safeGovernanceFixture);
      for (const caller of [alice, deployer]) {
        await expect(appAuth.connect(caller).addComposeHash(COMPOSE_HASH))
          .to.be.revertedWithCustomError(appAuth, "OwnableUnauthorizedAccount")
          .withArgs(caller.address);
      }
    });
  });

  describe("AccountConfig API payers", function () {
    it("sets the admin API payer and adds an API payer with two signatures", async function () {
      const { config, kit, safe, deployer, alice, carol, stranger } = await loadFixture(safeGovernanceFixture);
      const newPayer = ethers.Wallet.createRandom().address;
      await expect(
        kit.proposeSignExecute(
          safe,
          [call(config, "setAdminApiPayer", [stranger.address]), call(config, "addApiPayer", [newPayer])],
          [alice.address, carol.address],
        ),
      )
        .to.emit(config, "AdminApiPayerChanged")
        .withArgs(deployer.address, stranger.address)
        .and.to.emit(config, "ApiPayerAdded")
        .withArgs(newPayer);
      expect(await config.getAdminApiPayer()).to.equal(stranger.address);
      expect(await config.isApiPayer(newPayer)).to.equal(true);

      // The deployer lost the owner role to the Safe and the admin payer role by this transaction.
      await expect(config.connect(deployer).addApiPayer(ethers.Wallet.createRandom().address))
        .to.be.revertedWithCustomError(config, "NotApiPayerAdmin")
        .withArgs(deployer.address);
    });

    it("cannot set the admin API payer or add a payer with one owner's signature", async function () {
      const { config, kit, safe, deployer, bob, stranger } = await loadFixture(safeGovernanceFixture);
      const newPayer = ethers.Wallet.createRandom().address;
      await expectSingleSignatureRefused(kit, safe, [call(config, "setAdminApiPayer", [stranger.address])], bob.address);
      await expectSingleSignatureRefused(kit, safe, [call(config, "addApiPayer", [newPayer])], bob.address);
      expect(await config.getAdminApiPayer()).to.equal(deployer.address);
      expect(await config.isApiPayer(newPayer)).to.equal(false);
    });

    it("reverts when the former EOA owner or a Safe owner sets the admin API payer", async function () {
      const { config, deployer, alice, stranger } = await loadFixture(safeGovernanceFixture);
      for (const caller of [deployer, alice]) {
        await expect(config.connect(caller).setAdminApiPayer(stranger.address))
          .to.be.revertedWithCustomError(config, "OwnableUnauthorizedAccount")
          .withArgs(caller.address);
      }
      expect(await config.getAdminApiPayer()).to.equal(deployer.address);
    });
  });

  describe("a ChainSecured account administered by the Safe", function () {
    const wallet = ethers.getAddress("0x00000000000000000000000000000000000000a1");
    const cidHash = hashOf("QmSafeAction");
    const usageHash = hashOf("usage-key-of-the-safe");

    /** The calls that set the account up: a wallet, group 1 with it and the CID, a usage key (the Safe registers it directly). */
    const setupCalls = async (config: AccountConfig, accountHash: bigint) => [
      call(config, "registerWalletDerivation", [accountHash, wallet, 7n, "pkp", "signing wallet"]),
      call(config, "addGroup", [accountHash, "ops", "operations", [cidHash], [wallet]]),
      call(config, "setUsageApiKey", [accountHash, usageHash, 0n, 0n, "runner", "", ...flat(perms({ executeInGroups: [1] }))]),
    ];

    /** The fixture, then the Safe creates its ChainSecured account (two signatures). */
    async function withSafeAccount() {
      const f = await loadFixture(safeGovernanceFixture);
      const create = call(f.config, "newChainSecuredAccount", ["safe", "ChainSecured"]);
      await f.kit.proposeSignExecute(f.safe, [create], [f.alice.address, f.bob.address]);
      return { ...f, accountHash: chainSecuredHash(f.safe) };
    }

    /** The Safe's account, configured by `setupCalls` (two signatures). */
    async function withConfiguredSafeAccount() {
      const f = await withSafeAccount();
      await f.kit.proposeSignExecute(f.safe, await setupCalls(f.config, f.accountHash), [f.alice.address, f.bob.address]);
      return f;
    }

    /** Everything the rejected writes could have touched. */
    async function accountState(config: AccountConfig, accountHash: bigint) {
      const results = await Promise.all([
        config.getAccount(accountHash),
        config.listGroups(accountHash, 0, 10),
        config.listWallets(accountHash, 0, 10),
        config.listUsageApiKeys(accountHash, 0, 10),
        config.listActionsInGroup(accountHash, 1, 0, 10),
      ]);
      return results.map((r) => (r as unknown as Result).toArray(true)); // typechain outputs are ethers Results
    }

    it("is created by a Safe transaction, keyed by the Safe's address and not managed", async function () {
      const { config, kit, safe, alice, carol } = await loadFixture(safeGovernanceFixture);
      const accountHash = chainSecuredHash(safe);
      await expect(kit.proposeSignExecute(safe, [call(config, "newChainSecuredAccount", ["safe", "ChainSecured"])], [carol.address, alice.address]))
        .to.emit(config, "AccountCreated")
        .withArgs(accountHash, safe, false, "safe", "ChainSecured");
      const account = await config.getAccount(accountHash);
      expect(account.adminWalletAddress).to.equal(safe);
      expect(account.managed).to.equal(false);
      expect(account.hasApiKey).to.equal(false);
    });

    it("is configured by one MultiSend batch of Safe calls, after which the usage key can execute", async function () {
      const { config, kit, safe, alice, bob, accountHash } = await withSafeAccount();
      await expect(kit.proposeSignExecute(safe, await setupCalls(config, accountHash), [alice.address, bob.address]))
        .to.emit(config, "WalletRegistered")
        .withArgs(accountHash, wallet, 7n, accountHash, "pkp", "signing wallet")
        .and.to.emit(config, "GroupCreated")
        .withArgs(accountHash, 1n, accountHash, "ops", "operations")
        .and.to.emit(config, "UsageApiKeySet")
        .withArgs(accountHash, usageHash, true, 0n, 0n);
      expect(await config.canExecute(usageHash, cidHash, wallet, 1)).to.equal(true);
    });

    it("cannot be configured with one owner's signature", async function () {
      const { config, kit, safe, alice, accountHash } = await withSafeAccount();
      await expectSingleSignatureRefused(kit, safe, await setupCalls(config, accountHash), alice.address);
      expect(await config.canExecute(usageHash, cidHash, wallet, 1)).to.equal(false);
      expect((await config.listGroups(accountHash, 0, 10)).total).to.equal(0n);
    });

    it("reverts when an API payer relays a write for it (AccountNotManaged), leaving it unchanged", async function () {
      const { config, payer, accountHash } = await withConfiguredSafeAccount();
      const before = await accountState(config, accountHash);
      await expect(config.connect(payer).addGroup(accountHash, "rogue", "", [cidHash], [wallet]))
        .to.be.revertedWithCustomError(config, "AccountNotManaged")
        .withArgs(accountHash);
      await expect(config.connect(payer).removeUsageApiKey(accountHash, usageHash))
        .to.be.revertedWithCustomError(config, "AccountNotManaged")
        .withArgs(accountHash);
      expect(await accountState(config, accountHash)).to.deep.equal(before);
      expect(await config.canExecute(usageHash, cidHash, wallet, 1)).to.equal(true);
    });

    it("reverts when a single Safe owner calls it directly (NotAuthorizedCaller), leaving it unchanged", async function () {
      const { config, alice, accountHash } = await withConfiguredSafeAccount();
      const before = await accountState(config, accountHash);
      await expect(config.connect(alice).addGroup(accountHash, "rogue", "", [cidHash], [wallet]))
        .to.be.revertedWithCustomError(config, "NotAuthorizedCaller")
        .withArgs(alice.address, accountHash);
      await expect(config.connect(alice).removePkpFromGroup(accountHash, 1, wallet))
        .to.be.revertedWithCustomError(config, "NotAuthorizedCaller")
        .withArgs(alice.address, accountHash);
      expect(await accountState(config, accountHash)).to.deep.equal(before);
      expect(await config.canExecute(usageHash, cidHash, wallet, 1)).to.equal(true);
    });
  });
});
