import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { Signer } from "ethers";
import { authorize, chainSecuredHash, flat, hashOf, perms, type AccountConfig } from "./helpers/accountConfig";
import {
  accountState,
  addGroup,
  cidHash,
  everyWrite,
  expectAllRejected,
  expectAccountUnchanged,
  expectRejected,
  managedAccountScenario,
  payerState,
  plain,
  setUsageKey,
} from "./helpers/scenario";

describe("AccountConfig: accounts and payers", function () {
  /** The managed scenario, plus a ChainSecured account of `wallet2` with group 1 and a usage key. */
  async function accountsFixture() {
    const s = await managedAccountScenario();
    const signers = await ethers.getSigners();
    const [newPayer, payerAdmin] = [signers[9], signers[10]];
    const cs = s.config.connect(s.wallet2);
    await (await cs.newChainSecuredAccount("cs", "chain secured")).wait();
    const csAccount = chainSecuredHash(s.wallet2.address);
    const csUsageKey = hashOf("cs-usage-key");
    await addGroup(cs, csAccount, "cs group");
    await setUsageKey(cs, csAccount, csUsageKey, perms({ canCreateGroups: true }));
    return { ...s, newPayer, payerAdmin, cs, csAccount, csUsageKey };
  }

  const NEW_KEY = hashOf("a new account key");

  /** Expects `newAdmin` to write to the account directly, and `oldAdmin` to be refused with nothing changed. */
  async function expectAdminMoved(config: AccountConfig, apiKeyHash: bigint, oldAdmin: Signer, newAdmin: Signer) {
    const groupId = await config.connect(newAdmin).addGroup.staticCall(apiKeyHash, "by new admin", "", [], []);
    await expect(config.connect(newAdmin).addGroup(apiKeyHash, "by new admin", "", [], []))
      .to.emit(config, "GroupCreated")
      .withArgs(apiKeyHash, groupId, apiKeyHash, "by new admin", "");
    const send = () => config.connect(oldAdmin).addGroup(apiKeyHash, "by old admin", "", [], []);
    await expectAccountUnchanged(config, apiKeyHash, send, "NotAuthorizedCaller", [await oldAdmin.getAddress(), apiKeyHash]);
  }

  /** Guards shared by the two writes that propose a new admin wallet. */
  function itGuardsAdminChange(fn: "convertToChainSecuredAccount" | "transferAccountOwnership", unknownHashError: string) {
    it("reverts when the caller is neither an API payer nor the admin wallet", async function () {
      const { config, stranger, account } = await loadFixture(accountsFixture);
      const send = () => config.connect(stranger)[fn](account, stranger.address);
      await expectAccountUnchanged(config, account, send, "NotAuthorizedCaller", [stranger.address, account]);
    });

    it("reverts when no account has the hash", async function () {
      const { config, relay, wallet } = await loadFixture(accountsFixture);
      await expectRejected(
        config,
        () => relay[fn](NEW_KEY, wallet.address),
        unknownHashError,
        [NEW_KEY],
        () => config.accountExists(NEW_KEY)
      );
    });
  }

  describe("newAccount", function () {
    it("reverts when the caller is not an API payer", async function () {
      const { config, stranger } = await loadFixture(accountsFixture);
      await expectRejected(
        config,
        () => config.connect(stranger).newAccount(NEW_KEY, true, "n", "", stranger.address),
        "NotApiPayer",
        [stranger.address],
        () => config.accountExists(NEW_KEY)
      );
    });

    it("reverts when the admin wallet is the zero address", async function () {
      const { config, relay } = await loadFixture(accountsFixture);
      await expectRejected(
        config,
        () => relay.newAccount(NEW_KEY, true, "n", "", ethers.ZeroAddress),
        "ZeroAddress",
        [],
        () => config.accountExists(NEW_KEY)
      );
    });

    it("reverts when the key hash is 0", async function () {
      const { config, relay, wallet } = await loadFixture(accountsFixture);
      await expectRejected(
        config,
        () => relay.newAccount(0n, true, "n", "", wallet.address),
        "InvalidKeyHash",
        [0n],
        () => config.resolveApiKey(0n)
      );
    });

    it("reverts when the account already exists", async function () {
      const { config, relay, account, wallet } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(config, account, () => relay.newAccount(account, true, "n", "", wallet.address), "AccountAlreadyExists", [
        account,
      ]);
    });

    it("reverts when the hash is already used by a usage key (a payer's fresh secret never is: its hash is reserved before it is shown)", async function () {
      const { config, relay, account, usageKey, wallet } = await loadFixture(accountsFixture);
      await expectRejected(
        config,
        () => relay.newAccount(usageKey, true, "n", "", wallet.address),
        "KeyHashInUse",
        [usageKey],
        async () => [await config.resolveApiKey(usageKey), await accountState(config, account)]
      );
    });

    it("stores a managed account with an account key, its admin wallet, name and description", async function () {
      const { config, relay, wallet } = await loadFixture(accountsFixture);
      await relay.newAccount(NEW_KEY, true, "Acme", "Acme's account", wallet.address);
      expect(plain(await config.getAccount(NEW_KEY))).to.deep.equal({
        apiKeyHash: NEW_KEY,
        adminWalletAddress: wallet.address,
        managed: true,
        hasApiKey: true,
        pendingAdminWalletAddress: ethers.ZeroAddress,
        pendingConversion: false,
        name: "Acme",
        description: "Acme's account",
      });
      expect(await config.accountExists(NEW_KEY)).to.equal(true);
      expect(plain(await config.resolveApiKey(NEW_KEY))).to.deep.equal({ apiKeyHash: NEW_KEY, isAccountKey: true, active: true });
    });

    it("emits AccountCreated", async function () {
      const { config, relay, wallet } = await loadFixture(accountsFixture);
      await expect(relay.newAccount(NEW_KEY, true, "Acme", "Acme's account", wallet.address))
        .to.emit(config, "AccountCreated")
        .withArgs(NEW_KEY, wallet.address, true, "Acme", "Acme's account");
    });
  });

  describe("newChainSecuredAccount", function () {
    it("creates an unmanaged account keyed by keccak256 of the caller's address, with no account key", async function () {
      const { config, wallet } = await loadFixture(accountsFixture);
      const hash = chainSecuredHash(wallet.address);
      expect(await config.connect(wallet).newChainSecuredAccount.staticCall("Mine", "self-sovereign")).to.equal(hash);
      await expect(config.connect(wallet).newChainSecuredAccount("Mine", "self-sovereign"))
        .to.emit(config, "AccountCreated")
        .withArgs(hash, wallet.address, false, "Mine", "self-sovereign");
      expect(plain(await config.getAccount(hash))).to.deep.equal({
        apiKeyHash: hash,
        adminWalletAddress: wallet.address,
        managed: false,
        hasApiKey: false,
        pendingAdminWalletAddress: ethers.ZeroAddress,
        pendingConversion: false,
        name: "Mine",
        description: "self-sovereign",
      });
    });

    it("reverts when the caller already has one", async function () {
      const { config, cs, csAccount } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(config, csAccount, () => cs.newChainSecuredAccount("again", ""), "AccountAlreadyExists", [csAccount]);
    });

    it("does not make the bare account hash a credential", async function () {
      const { config, csAccount } = await loadFixture(accountsFixture);
      expect(plain(await config.resolveApiKey(csAccount))).to.deep.equal({ apiKeyHash: csAccount, isAccountKey: true, active: false });
      expect(await config.canExecute(csAccount, cidHash(1), ethers.ZeroAddress, 0)).to.equal(false);
      expect(await config.hasScope(csAccount, 0, 0)).to.equal(false);
    });

    it("lets the wallet manage its account directly", async function () {
      const { config, cs, csAccount, csUsageKey } = await loadFixture(accountsFixture);
      await expect(cs.addGroup(csAccount, "second", "", [], []))
        .to.emit(config, "GroupCreated")
        .withArgs(csAccount, 2, csAccount, "second", "");
      await expect(cs.addAction(csAccount, "seven", "", cidHash(7))).to.emit(config, "ActionAdded");
      await expect(cs.removeUsageApiKey(csAccount, csUsageKey)).to.emit(config, "UsageApiKeyRemoved").withArgs(csAccount, csUsageKey);
    });

    it("reverts when an API payer relays any write for it, with the account hash or a usage key", async function () {
      const { config, relay, csAccount, csUsageKey, wallet } = await loadFixture(accountsFixture);
      const targets = { group: 1n, pkp: ethers.ZeroAddress, cid: cidHash(1), usageKey: csUsageKey, newAdmin: wallet.address };
      const snapshot = () => accountState(config, csAccount);
      await expectAllRejected(config, everyWrite(relay, csAccount, targets), "AccountNotManaged", [csAccount], snapshot);
      await expectAllRejected(config, everyWrite(relay, csUsageKey, targets), "AccountNotManaged", [csAccount], snapshot);
    });

    it("reverts when a stranger writes directly", async function () {
      const { config, stranger, csAccount } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(
        config,
        csAccount,
        () => config.connect(stranger).addGroup(csAccount, "g", "", [], []),
        "NotAuthorizedCaller",
        [stranger.address, csAccount]
      );
    });

    // A usage key must not be able to squat the hash of a wallet's future ChainSecured account
    // (spec 2 rule 4 gives a wallet no other hash). A wallet may register a hash it chose as a
    // usage key of its own account (Chipotle's sovereign flow), keccak256(wallet) included; the
    // wallet creates its account all the same, and the squatted usage key is dropped then.
    it("lets no usage key keep keccak256(wallet): the wallet creates its account and the usage key is dropped", async function () {
      const { config, cs, csAccount, wallet } = await loadFixture(accountsFixture);
      const squatted = chainSecuredHash(wallet.address);
      const keysBefore = plain((await config.listUsageApiKeys(csAccount, 0, 10))[0]);
      await (await cs.setUsageApiKey(csAccount, squatted, 0, 0, "squat", "", ...flat(perms({ executeInGroups: [0] })))).wait();
      expect((await config.resolveApiKey(squatted)).apiKeyHash).to.equal(csAccount);
      await expect(config.connect(wallet).newChainSecuredAccount("Mine", ""))
        .to.emit(config, "AccountCreated")
        .withArgs(squatted, wallet.address, false, "Mine", "")
        .and.to.emit(config, "UsageApiKeyRemoved")
        .withArgs(csAccount, squatted);
      expect(await config.resolveApiKey(squatted)).to.deep.equal([squatted, true, false]);
      expect(plain((await config.listUsageApiKeys(csAccount, 0, 10))[0])).to.deep.equal(keysBefore);
      await expect(config.getUsageApiKey(squatted)).to.be.revertedWithCustomError(config, "UsageApiKeyNotFound");
      // and the squatter cannot name it as its usage key any more
      await expect(cs.removeUsageApiKey(csAccount, squatted)).to.be.revertedWithCustomError(config, "UsageApiKeyNotFound").withArgs(csAccount, squatted);
    });

    it("reverts when a usage key would take an existing account's hash", async function () {
      const { config, cs, csAccount, account } = await loadFixture(accountsFixture);
      await expect(setUsageKey(cs, csAccount, account, perms())).to.be.revertedWithCustomError(config, "KeyHashInUse").withArgs(account);
    });
  });

  /** The account record as getAccount shows it, as a plain object. */
  const recordOf = async (config: AccountConfig, apiKeyHash: bigint) => plain(await config.getAccount(apiKeyHash)) as Record<string, unknown>;

  /**
   * Expects `propose()` to record `proposed` as the pending admin and nothing more (event
   * `[started]`, never `[, completed]`): the account keeps `admin`, `writer` (its current way to
   * write) still writes, and the proposed wallet is refused.
   */
  async function expectProposedOnly(
    config: AccountConfig,
    apiKeyHash: bigint,
    propose: () => Promise<unknown>,
    [started, completed]: [string, string],
    admin: string,
    proposed: Signer & { address: string },
    writer: AccountConfig
  ) {
    const before = await recordOf(config, apiKeyHash);
    await expect(propose()).to.emit(config, started).withArgs(apiKeyHash, admin, proposed.address).and.not.to.emit(config, completed);
    expect(await recordOf(config, apiKeyHash)).to.deep.equal({ ...before, pendingAdminWalletAddress: proposed.address, pendingConversion: started === "AccountConversionStarted" });
    await expect(writer.addGroup(apiKeyHash, "still the admin's", "", [], [])).to.emit(config, "GroupCreated");
    await expectAccountUnchanged(config, apiKeyHash, () => config.connect(proposed).addGroup(apiKeyHash, "g", "", [], []), "NotAuthorizedCaller", [
      proposed.address,
      apiKeyHash,
    ]);
  }

  describe("convertToChainSecuredAccount", function () {
    itGuardsAdminChange("convertToChainSecuredAccount", "AccountNotFound");

    it("reverts when the new admin wallet is the zero address", async function () {
      const { config, relay, account } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(config, account, () => relay.convertToChainSecuredAccount(account, ethers.ZeroAddress), "ZeroAddress", []);
    });

    it("only proposes: the account stays managed under its admin until the new wallet accepts", async function () {
      const { config, relay, account, admin, wallet } = await loadFixture(accountsFixture);
      const propose = () => relay.convertToChainSecuredAccount(account, wallet.address);
      await expectProposedOnly(config, account, propose, ["AccountConversionStarted", "AccountConverted"], admin.address, wallet, relay);
    });

    it("converts when the proposed wallet accepts from its own address", async function () {
      const { config, relay, account, admin, wallet } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await expect(config.connect(wallet).acceptAccountOwnership(account))
        .to.emit(config, "AccountConverted")
        .withArgs(account, admin.address, wallet.address);
      const converted = await config.getAccount(account);
      expect([converted.apiKeyHash, converted.adminWalletAddress, converted.managed, converted.pendingAdminWalletAddress, converted.pendingConversion]).to.deep.equal([
        account,
        wallet.address,
        false,
        ethers.ZeroAddress,
        false,
      ]);
    });

    it("proposes when the account's admin wallet calls", async function () {
      const { config, admin, account, wallet } = await loadFixture(accountsFixture);
      await expect(config.connect(admin).convertToChainSecuredAccount(account, wallet.address))
        .to.emit(config, "AccountConversionStarted")
        .withArgs(account, admin.address, wallet.address);
      await config.connect(wallet).acceptAccountOwnership(account);
      expect((await config.getAccount(account)).managed).to.equal(false);
    });

    it("reverts when anyone but the proposed wallet accepts, and changes nothing", async function () {
      const { config, relay, account, admin, wallet, wallet2, stranger } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      for (const caller of [stranger, wallet2, admin, relay.runner as Signer]) {
        const address = await caller.getAddress();
        await expectAccountUnchanged(config, account, () => config.connect(caller).acceptAccountOwnership(account), "NotPendingAdmin", [address, account]);
      }
    });

    it("lets a new proposal replace a pending one, and the owner cancel it with address(0)", async function () {
      const { config, relay, account, admin, wallet, wallet2 } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await relay.convertToChainSecuredAccount(account, wallet2.address);
      await expectAccountUnchanged(config, account, () => config.connect(wallet).acceptAccountOwnership(account), "NotPendingAdmin", [wallet.address, account]);
      await expect(relay.transferAccountOwnership(account, ethers.ZeroAddress))
        .to.emit(config, "AccountOwnershipTransferStarted")
        .withArgs(account, admin.address, ethers.ZeroAddress);
      await expectAccountUnchanged(config, account, () => config.connect(wallet2).acceptAccountOwnership(account), "NotPendingAdmin", [wallet2.address, account]);
      expect(await recordOf(config, account)).to.include({ adminWalletAddress: admin.address, managed: true, pendingAdminWalletAddress: ethers.ZeroAddress, pendingConversion: false });
    });

    it("reverts when the hash is a usage key's", async function () {
      const { config, relay, account, usageKey, wallet } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(config, account, () => relay.convertToChainSecuredAccount(usageKey, wallet.address), "AccountNotFound", [
        usageKey,
      ]);
    });

    it("reverts when the account is already unmanaged (converted, or ChainSecured from the start)", async function () {
      const { config, relay, account, wallet, wallet2, csAccount } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await config.connect(wallet).acceptAccountOwnership(account);
      for (const [caller, hash] of [
        [relay, account],
        [config.connect(wallet), account],
        [config.connect(wallet2), csAccount],
      ] as const) {
        await expectAccountUnchanged(config, hash, () => caller.convertToChainSecuredAccount(hash, wallet2.address), "AccountNotManaged", [
          hash,
        ]);
      }
    });

    it("preserves the apiKeyHash, groups, PKPs, action metadata and usage keys", async function () {
      const { config, relay, account, wallet } = await loadFixture(accountsFixture);
      const before = (await accountState(config, account)) as Record<string, unknown>;
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await config.connect(wallet).acceptAccountOwnership(account);
      const after = (await accountState(config, account)) as Record<string, unknown>;
      expect({ ...after, account: null }).to.deep.equal({ ...before, account: null });
      expect(after.account).to.deep.equal({ ...(before.account as object), adminWalletAddress: wallet.address, managed: false });
    });

    it("keeps usage keys executing and stops the account key from executing, while it still resolves", async function () {
      const { config, relay, account, usageKey, pkp, group1, wallet } = await loadFixture(accountsFixture);
      expect(await config.canExecute(account, cidHash(1), pkp, 0)).to.equal(true);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      expect(await config.canExecute(account, cidHash(1), pkp, 0)).to.equal(true); // pending: still managed
      await config.connect(wallet).acceptAccountOwnership(account);
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(true);
      expect(await config.canExecute(account, cidHash(1), pkp, 0)).to.equal(false);
      expect(plain(await config.findExecutionGroup(account, cidHash(1), pkp))).to.deep.equal({ allowed: false, groupId: 0n });
      expect(plain(await config.resolveApiKey(account))).to.deep.equal({ apiKeyHash: account, isAccountKey: true, active: true });
    });

    it("makes every relayed write revert once accepted, with the old account key or a usage key", async function () {
      const { config, relay, account, usageKey, pkp, group1, wallet } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await config.connect(wallet).acceptAccountOwnership(account);
      const targets = { group: group1, pkp, cid: cidHash(1), usageKey, newAdmin: wallet.address };
      const snapshot = () => accountState(config, account);
      await expectAllRejected(config, everyWrite(relay, account, targets), "AccountNotManaged", [account], snapshot);
      await expectAllRejected(config, everyWrite(relay, usageKey, targets), "AccountNotManaged", [account], snapshot);
    });

    it("lets the new admin wallet write directly once it accepted, and not the previous one", async function () {
      const { config, relay, admin, account, wallet } = await loadFixture(accountsFixture);
      await relay.convertToChainSecuredAccount(account, wallet.address);
      await config.connect(wallet).acceptAccountOwnership(account);
      await expectAdminMoved(config, account, admin, wallet);
      const minted = hashOf("minted");
      await expect(config.connect(wallet).setUsageApiKey(account, minted, 0, 0, "minted", "", ...flat(perms())))
        .to.emit(config, "UsageApiKeySet")
        .withArgs(account, minted, true, 0, 0);
    });
  });

  describe("transferAccountOwnership and acceptAccountOwnership", function () {
    itGuardsAdminChange("transferAccountOwnership", "UnknownApiKey");

    // Issue 16 finding 1: an account (and so its bills) must never land on a wallet that did not act.
    it("does not make the proposed wallet the admin, nor move the account, until that wallet accepts", async function () {
      const { config, cs, csAccount, wallet, wallet2 } = await loadFixture(accountsFixture);
      const propose = () => cs.transferAccountOwnership(csAccount, wallet.address);
      await expectProposedOnly(config, csAccount, propose, ["AccountOwnershipTransferStarted", "AccountOwnershipTransferred"], wallet2.address, wallet, cs);
    });

    it("moves a ChainSecured account when the proposed wallet accepts", async function () {
      const { config, cs, csAccount, wallet, wallet2 } = await loadFixture(accountsFixture);
      await cs.transferAccountOwnership(csAccount, wallet.address);
      await expect(config.connect(wallet).acceptAccountOwnership(csAccount))
        .to.emit(config, "AccountOwnershipTransferred")
        .withArgs(csAccount, wallet2.address, wallet.address);
      expect(await recordOf(config, csAccount)).to.include({ adminWalletAddress: wallet.address, managed: false, pendingAdminWalletAddress: ethers.ZeroAddress });
      await expectAdminMoved(config, csAccount, wallet2, wallet);
    });

    it("hands a managed account to a new admin wallet (relayed with the account key), which stays managed", async function () {
      const { config, relay, account, admin, wallet } = await loadFixture(accountsFixture);
      await expect(relay.transferAccountOwnership(account, wallet.address))
        .to.emit(config, "AccountOwnershipTransferStarted")
        .withArgs(account, admin.address, wallet.address);
      expect((await config.getAccount(account)).adminWalletAddress).to.equal(admin.address);
      await expect(config.connect(wallet).acceptAccountOwnership(account))
        .to.emit(config, "AccountOwnershipTransferred")
        .withArgs(account, admin.address, wallet.address);
      const after = await config.getAccount(account);
      expect([after.adminWalletAddress, after.managed]).to.deep.equal([wallet.address, true]);
      await expectAdminMoved(config, account, admin, wallet);
    });

    it("reverts when anyone but the proposed wallet accepts, or the wallet accepts twice", async function () {
      const { config, cs, csAccount, wallet, wallet2, stranger } = await loadFixture(accountsFixture);
      await expectAccountUnchanged(config, csAccount, () => config.connect(wallet).acceptAccountOwnership(csAccount), "NotPendingAdmin", [
        wallet.address,
        csAccount,
      ]);
      await cs.transferAccountOwnership(csAccount, wallet.address);
      for (const caller of [stranger, wallet2]) {
        await expectAccountUnchanged(config, csAccount, () => config.connect(caller).acceptAccountOwnership(csAccount), "NotPendingAdmin", [
          caller.address,
          csAccount,
        ]);
      }
      await config.connect(wallet).acceptAccountOwnership(csAccount);
      await expectAccountUnchanged(config, csAccount, () => config.connect(wallet).acceptAccountOwnership(csAccount), "NotPendingAdmin", [
        wallet.address,
        csAccount,
      ]);
    });

    it("reverts when no account has the hash, whoever accepts", async function () {
      const { config, stranger } = await loadFixture(accountsFixture);
      await expectRejected(config, () => config.connect(stranger).acceptAccountOwnership(NEW_KEY), "NotPendingAdmin", [stranger.address, NEW_KEY], () =>
        config.accountExists(NEW_KEY)
      );
    });

    it("cancels a pending transfer with address(0)", async function () {
      const { config, cs, csAccount, wallet, wallet2 } = await loadFixture(accountsFixture);
      await cs.transferAccountOwnership(csAccount, wallet.address);
      await expect(cs.transferAccountOwnership(csAccount, ethers.ZeroAddress))
        .to.emit(config, "AccountOwnershipTransferStarted")
        .withArgs(csAccount, wallet2.address, ethers.ZeroAddress);
      await expectAccountUnchanged(config, csAccount, () => config.connect(wallet).acceptAccountOwnership(csAccount), "NotPendingAdmin", [
        wallet.address,
        csAccount,
      ]);
    });

    it("reverts when a usage key asks, relayed or named by the admin wallet", async function () {
      const { config, relay, admin, account, usageKey, wallet } = await loadFixture(accountsFixture);
      for (const caller of [relay, config.connect(admin)]) {
        await expectAccountUnchanged(config, account, () => caller.transferAccountOwnership(usageKey, wallet.address), "OwnerOnly", [
          account,
          usageKey,
        ]);
      }
    });
  });

  /** expectRejected, with the payer set and the admin payer as the state that must not change. */
  const expectPayersUnchanged = (config: AccountConfig, send: () => Promise<unknown>, error: string, args: unknown[]) =>
    expectRejected(config, send, error, args, () => payerState(config));

  /** The guard shared by the two writes that change the payer set. */
  function itGuardsPayerAdmin(fn: "addApiPayer" | "removeApiPayer") {
    it("reverts when the caller is neither the contract owner nor the admin API payer", async function () {
      const { config, stranger, payer, payer2 } = await loadFixture(accountsFixture);
      for (const caller of [stranger, payer]) {
        const send = () => config.connect(caller)[fn](payer2.getAddress());
        await expectPayersUnchanged(config, send, "NotApiPayerAdmin", [await caller.getAddress()]);
      }
    });
  }

  describe("addApiPayer", function () {
    it("adds a payer when the contract owner calls", async function () {
      const { config, owner, payer, payer2, newPayer } = await loadFixture(accountsFixture);
      await expect(config.connect(owner).addApiPayer(newPayer.address)).to.emit(config, "ApiPayerAdded").withArgs(newPayer.address);
      expect(await config.isApiPayer(newPayer.address)).to.equal(true);
      expect(await config.getApiPayers()).to.deep.equal([await payer.getAddress(), await payer2.getAddress(), newPayer.address]);
    });

    it("adds a payer when the admin API payer calls, and the new payer relays", async function () {
      const { config, owner, payerAdmin, newPayer, wallet } = await loadFixture(accountsFixture);
      await config.connect(owner).setAdminApiPayer(payerAdmin.address);
      await expect(config.connect(payerAdmin).addApiPayer(newPayer.address)).to.emit(config, "ApiPayerAdded").withArgs(newPayer.address);
      await expect(config.connect(newPayer).newAccount(NEW_KEY, true, "n", "", wallet.address)).to.emit(config, "AccountCreated");
    });

    itGuardsPayerAdmin("addApiPayer");

    it("reverts when the payer is already added", async function () {
      const { config, owner, payer } = await loadFixture(accountsFixture);
      const address = await payer.getAddress();
      await expectPayersUnchanged(config, () => config.connect(owner).addApiPayer(address), "ApiPayerAlreadyAdded", [address]);
    });

    it("reverts when the payer is the zero address", async function () {
      const { config, owner } = await loadFixture(accountsFixture);
      await expectPayersUnchanged(config, () => config.connect(owner).addApiPayer(ethers.ZeroAddress), "ZeroAddress", []);
    });
  });

  describe("removeApiPayer", function () {
    it("removes a payer when the contract owner calls", async function () {
      const { config, owner, payer, payer2 } = await loadFixture(accountsFixture);
      const address = await payer2.getAddress();
      await expect(config.connect(owner).removeApiPayer(address)).to.emit(config, "ApiPayerRemoved").withArgs(address);
      expect(await config.isApiPayer(address)).to.equal(false);
      expect(await config.getApiPayers()).to.deep.equal([await payer.getAddress()]);
    });

    it("removes a payer when the admin API payer calls", async function () {
      const { config, owner, payer2, payerAdmin } = await loadFixture(accountsFixture);
      const address = await payer2.getAddress();
      await config.connect(owner).setAdminApiPayer(payerAdmin.address);
      await expect(config.connect(payerAdmin).removeApiPayer(address)).to.emit(config, "ApiPayerRemoved").withArgs(address);
      expect(await config.isApiPayer(address)).to.equal(false);
    });

    itGuardsPayerAdmin("removeApiPayer");

    it("reverts when the address is not a payer", async function () {
      const { config, owner, stranger } = await loadFixture(accountsFixture);
      await expectPayersUnchanged(config, () => config.connect(owner).removeApiPayer(stranger.address), "ApiPayerNotFound", [
        stranger.address,
      ]);
    });

    it("stops a removed payer from relaying", async function () {
      const { config, owner, payer, relay, account, wallet } = await loadFixture(accountsFixture);
      const address = await payer.getAddress();
      await config.connect(owner).removeApiPayer(address);
      await expectRejected(
        config,
        () => relay.newAccount(NEW_KEY, true, "n", "", wallet.address),
        "NotApiPayer",
        [address],
        () => config.accountExists(NEW_KEY)
      );
      const snapshot = () => accountState(config, account);
      for (const send of [
        () => relay.addGroup(account, "g", "", [], []),
        () => relay.convertToChainSecuredAccount(account, wallet.address),
      ]) {
        await expectRejected(config, send, "NotAuthorizedCaller", [address, account], snapshot);
      }
    });
  });

  describe("setAdminApiPayer", function () {
    it("sets the admin API payer", async function () {
      const { config, owner, payerAdmin } = await loadFixture(accountsFixture);
      await expect(config.connect(owner).setAdminApiPayer(payerAdmin.address))
        .to.emit(config, "AdminApiPayerChanged")
        .withArgs(owner.getAddress(), payerAdmin.address);
      expect(await config.getAdminApiPayer()).to.equal(payerAdmin.address);
    });

    it("takes the payer-admin right away from the previous admin payer", async function () {
      const { config, owner, payerAdmin, stranger, newPayer } = await loadFixture(accountsFixture);
      await config.connect(owner).setAdminApiPayer(payerAdmin.address);
      await config.connect(owner).setAdminApiPayer(stranger.address);
      await expectPayersUnchanged(config, () => config.connect(payerAdmin).addApiPayer(newPayer.address), "NotApiPayerAdmin", [
        payerAdmin.address,
      ]);
    });

    it("reverts when the caller is not the contract owner (not even the admin API payer)", async function () {
      const { config, owner, payerAdmin, stranger } = await loadFixture(accountsFixture);
      await config.connect(owner).setAdminApiPayer(payerAdmin.address);
      for (const caller of [stranger, payerAdmin]) {
        await expectPayersUnchanged(config, () => config.connect(caller).setAdminApiPayer(caller.address), "OwnableUnauthorizedAccount", [
          caller.address,
        ]);
      }
    });
  });

  describe("getApiPayers, getAdminApiPayer, isApiPayer", function () {
    it("return the payers and admin payer set at deployment", async function () {
      const { config, owner, payer, payer2, stranger } = await loadFixture(accountsFixture);
      expect(await config.getApiPayers()).to.deep.equal([await payer.getAddress(), await payer2.getAddress()]);
      expect(await config.getAdminApiPayer()).to.equal(await owner.getAddress());
      expect(await config.isApiPayer(payer.getAddress())).to.equal(true);
      expect(await config.isApiPayer(stranger.address)).to.equal(false);
      expect(await config.isApiPayer(owner.getAddress())).to.equal(false);
    });
  });
});
