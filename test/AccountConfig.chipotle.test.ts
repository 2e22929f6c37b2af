import { loadFixture, time } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { Contract, FunctionFragment, Interface, type Signer } from "ethers";
import { chainSecuredHash, flat, hashOf, perms } from "./helpers/accountConfig";
import { CHIPOTLE_ABI, CHIPOTLE_VIEW_ABI, CHIPOTLE_WRITE_ABI } from "./helpers/chipotleAbi";
import { Scope, WHOLE, cidHash, expectAccountUnchanged, expectRejected, managedAccountScenario, plain, setUsageKey } from "./helpers/scenario";

const U64_MAX = 2n ** 64n - 1n;

/**
 * Issue 19, section 3: Chipotle's sovereign-mode SDK calls AccountConfig with Chipotle's ABI. Each of
 * its 25 functions is at Vesta's address with Chipotle's signature, semantics and return types,
 * under Vesta's rules (scopes, owner-only metadata, limits, events, no wildcard members).
 */
describe("AccountConfig: Chipotle's ABI", function () {
  /** The managed scenario, a ChainSecured account (wallet2) with a group, and the contract under Chipotle's ABI for several callers. */
  async function chipotleFixture() {
    const s = await managedAccountScenario();
    const address = await s.config.getAddress();
    const chipotle = (who: Signer) => new Contract(address, CHIPOTLE_ABI, who);
    const csAccount = chainSecuredHash(s.wallet2.address);
    await (await chipotle(s.wallet2).newChainSecuredAccount("cs", "")).wait();
    return { ...s, chipotle, csAccount };
  }
  type Fixture = Awaited<ReturnType<typeof chipotleFixture>>;

  describe("the ABI", function () {
    it("has every function Chipotle's SDK calls, by selector; the writes return what Chipotle's return (newChainSecuredAccount adds the hash, which its callers ignore)", async function () {
      const { config } = await loadFixture(chipotleFixture);
      const ours = new Interface(config.interface.fragments);
      const theirs = new Interface(CHIPOTLE_ABI);
      expect(CHIPOTLE_VIEW_ABI.length + CHIPOTLE_WRITE_ABI.length).to.equal(25);
      const missing: string[] = [];
      theirs.forEachFunction((f) => {
        const mine = ours.getFunction(f.selector);
        if (!mine) return missing.push(f.format());
        if (!f.constant) expect(mine.outputs.slice(0, f.outputs.length).map((o) => o.type), f.format()).to.deep.equal(f.outputs.map((o) => o.type));
      });
      expect(missing).to.deep.equal([]);
    });

    it("api_payers() answers the payer set", async function () {
      const { config, chipotle, stranger } = await loadFixture(chipotleFixture);
      expect(await chipotle(stranger).api_payers()).to.deep.equal(await config.getApiPayers());
    });
  });

  describe("accountExistsAndIsMutable (msg.sender-gated, as Chipotle's)", function () {
    /** As the SDK asks: a read-only contract, `from` the address to check. */
    const ask = async (s: Fixture, from: string, hash: bigint) =>
      new Contract(await s.config.getAddress(), CHIPOTLE_VIEW_ABI, ethers.provider).accountExistsAndIsMutable.staticCall(hash, { from });

    it("is true for the admin wallet (any key of its account) and for an API payer of a managed account", async function () {
      const s = await loadFixture(chipotleFixture);
      for (const hash of [s.account, s.usageKey]) {
        expect(await ask(s, s.admin.address, hash), "admin").to.equal(true);
        expect(await ask(s, await s.payer.getAddress(), hash), "payer").to.equal(true);
      }
      expect(await ask(s, s.wallet2.address, s.csAccount), "the wallet of its ChainSecured account").to.equal(true);
    });

    it("is false for an API payer on a ChainSecured account, for strangers, for unknown hashes and for an expired usage key through a payer", async function () {
      const s = await loadFixture(chipotleFixture);
      const payer = await s.payer.getAddress();
      expect(await ask(s, payer, s.csAccount)).to.equal(false);
      expect(await ask(s, s.stranger.address, s.account)).to.equal(false);
      expect(await ask(s, s.stranger.address, s.csAccount)).to.equal(false);
      expect(await ask(s, s.admin.address, hashOf("nobody"))).to.equal(false);
      const expiring = hashOf("expiring key");
      const expiration = BigInt(await time.latest()) + 100n;
      await setUsageKey(s.relay, s.account, expiring, perms(), { expiration });
      expect(await ask(s, payer, expiring)).to.equal(true);
      await time.increaseTo(expiration);
      expect(await ask(s, payer, expiring), "the write would revert UsageApiKeyExpired").to.equal(false);
      expect(await ask(s, s.admin.address, expiring), "the admin wallet acts as owner").to.equal(true);
    });
  });

  describe("lists, decoded with Chipotle's ABI", function () {
    it("listGroups, listPkps, listWalletsInGroup, listActions and listActionsInGroup give Chipotle's items", async function () {
      const { chipotle, stranger, account, pkp, group1 } = await loadFixture(chipotleFixture);
      const c = chipotle(stranger);
      expect(plain(await c.listGroups(account, 0, 10))).to.deep.equal([
        { id: 1n, name: "group 1", description: "group 1 description" },
        { id: 2n, name: "group 2", description: "group 2 description" },
      ]);
      const wallet = { id: 1001n, pkpId: pkp, name: "wallet 1", description: "wallet 1 description" }; // id: the derivation path
      expect(plain(await c.listPkps(account, 0, 10))).to.deep.equal([wallet]);
      expect(plain(await c.listWalletsInGroup(account, group1, 0, 10))).to.deep.equal([wallet]);
      expect(plain(await c.listActions(account, 0, 10))).to.deep.equal([{ id: cidHash(1), name: "action 1", description: "action 1 description" }]);
      expect(plain(await c.listActionsInGroup(account, group1, 0, 10))).to.deep.equal([{ id: cidHash(1), name: "action 1", description: "action 1 description" }]);
      // a usage key's hash lists its account (Chipotle resolves it too)
      expect(await c.listGroups(hashOf("vesta-usage-key"), 0, 10)).to.have.length(2);
    });

    it("listApiKeys gives Chipotle's items: metadata.id and apiKeyHash are keccak256 of the key's bytes, with the permission lists", async function () {
      const { config, chipotle, stranger, account, usageKey, group1 } = await loadFixture(chipotleFixture);
      expect(usageKey).to.equal(BigInt(ethers.keccak256(ethers.toUtf8Bytes("vesta-usage-key"))));
      const [item] = plain(await chipotle(stranger).listApiKeys(account, 0, 10)) as object[];
      expect(item).to.deep.equal({
        metadata: { id: usageKey, name: "runner", description: "" },
        apiKeyHash: usageKey,
        expiration: 0n,
        balance: 0n,
        executeInGroups: [group1],
        createGroups: false,
        deleteGroups: false,
        createPKPs: false,
        manageIPFSIdsInGroups: [],
        addPkpToGroups: [],
        removePkpFromGroups: [],
      });
      const [ours, total] = await config.listApiKeys(account, 0, 10);
      expect([ours.length, total]).to.deep.equal([1, 1n]);
    });

    it("reverts GroupNotFound for a group id beyond uint64 or of another account", async function () {
      const { config, chipotle, stranger, account, csAccount } = await loadFixture(chipotleFixture);
      for (const [hash, id] of [
        [account, U64_MAX + 1n],
        [account, 99n],
        [csAccount, 1n],
      ] as const) {
        await expect(chipotle(stranger).listWalletsInGroup(hash, id, 0, 10)).to.be.revertedWithCustomError(config, "GroupNotFound").withArgs(hash, id);
        await expect(chipotle(stranger).listActionsInGroup(hash, id, 0, 10)).to.be.revertedWithCustomError(config, "GroupNotFound").withArgs(hash, id);
      }
    });
  });

  describe("newAccount (Chipotle's signature)", function () {
    it("creates a managed account for an API payer, and a ChainSecured one for the wallet itself only", async function () {
      const { config, chipotle, payer, stranger, wallet } = await loadFixture(chipotleFixture);
      const managed = hashOf("a managed account key");
      await expect(chipotle(payer).newAccount(managed, true, "m", "", wallet.address)).to.emit(config, "AccountCreated").withArgs(managed, wallet.address, true, "m", "");
      const own = chainSecuredHash(stranger.address);
      await expect(chipotle(stranger).newAccount(own, false, "mine", "", stranger.address)).to.emit(config, "AccountCreated").withArgs(own, stranger.address, false, "mine", "");
      expect(plain(await config.resolveApiKey(own))).to.deep.equal({ apiKeyHash: own, isAccountKey: true, active: false });
    });

    it("reverts when an unmanaged account would be pushed onto another wallet, or under another hash; and a managed one from anyone but a payer", async function () {
      const { config, chipotle, payer, stranger, wallet } = await loadFixture(chipotleFixture);
      const strangerHash = chainSecuredHash(stranger.address);
      const walletHash = chainSecuredHash(wallet.address);
      const cases: [Signer, bigint, boolean, string, string, unknown[]][] = [
        [payer, walletHash, false, wallet.address, "NotOwnChainSecuredAccount", [walletHash, wallet.address]], // the payer cannot push an account onto a wallet
        [stranger, walletHash, false, wallet.address, "NotOwnChainSecuredAccount", [walletHash, wallet.address]],
        [stranger, hashOf("any"), false, stranger.address, "NotOwnChainSecuredAccount", [hashOf("any"), stranger.address]],
        [stranger, strangerHash, false, wallet.address, "NotOwnChainSecuredAccount", [strangerHash, wallet.address]],
        [stranger, hashOf("managed"), true, stranger.address, "NotApiPayer", [stranger.address]],
      ];
      for (const [who, hash, managed, admin, error, args] of cases) {
        await expectRejected(config, () => chipotle(who).newAccount(hash, managed, "x", "", admin), error, args, async () => [
          await config.accountExists(hash),
          await config.accountExists(walletHash),
          await config.accountExists(strangerHash),
        ]);
      }
    });
  });

  describe("group writes (Chipotle's argument order: CIDs before PKPs; uint256 group ids)", function () {
    it("addGroup returns the new id to a simulation (what the SDK shows) and lists CIDs and PKPs", async function () {
      const { config, chipotle, wallet2, csAccount } = await loadFixture(chipotleFixture);
      const c = chipotle(wallet2);
      const pkp = ethers.Wallet.createRandom().address;
      await (await c.registerWalletDerivation(csAccount, pkp, 7n, "w", "")).wait();
      expect(await c.addGroup.staticCall(csAccount, "g", "d", [cidHash(5)], [pkp])).to.equal(1n);
      await expect(c.addGroup(csAccount, "g", "d", [cidHash(5)], [pkp]))
        .to.emit(config, "ActionAddedToGroup")
        .withArgs(csAccount, 1n, cidHash(5), csAccount)
        .and.to.emit(config, "PkpAddedToGroup")
        .withArgs(csAccount, 1n, pkp, csAccount);
      expect(await config.canExecute(csAccount, cidHash(5), pkp, 1n), "a ChainSecured account key runs nothing").to.equal(false);
    });

    it("refuses Chipotle's wildcard members (CID 0, an unregistered PKP such as address 0): the execute rule never skips the listing", async function () {
      const s = await loadFixture(chipotleFixture);
      const c = s.chipotle(s.wallet2);
      await expectAccountUnchanged(s.config, s.csAccount, () => c.addGroup(s.csAccount, "all", "", [0n], []), "InvalidCidHash", []);
      await expectAccountUnchanged(s.config, s.csAccount, () => c.addGroup(s.csAccount, "all", "", [], [ethers.ZeroAddress]), "PkpNotFound", [s.csAccount, ethers.ZeroAddress]);
    });

    it("updateGroupMetadata changes only the name and description, with the rights of updateGroup", async function () {
      const s = await loadFixture(chipotleFixture);
      const before = plain(await s.config.getGroup(s.account, s.group1)) as object;
      await expect(s.chipotle(s.payer).updateGroupMetadata(s.account, s.group1, "renamed", "new words"))
        .to.emit(s.config, "GroupMetadataUpdated")
        .withArgs(s.account, s.group1, s.account, "renamed", "new words");
      expect(plain(await s.config.getGroup(s.account, s.group1))).to.deep.equal({ ...before, name: "renamed", description: "new words" });
      expect(await s.config.canExecute(s.usageKey, cidHash(1), s.pkp, s.group1), "members unchanged").to.equal(true);
      // a usage key needs group:manageActions, group:addPkp and group:removePkp on the group
      const partial = hashOf("two of three scopes");
      await setUsageKey(s.relay, s.account, partial, perms({ manageIpfsIdsInGroups: [0], addPkpToGroups: [0] }));
      await expectAccountUnchanged(s.config, s.account, () => s.chipotle(s.payer).updateGroupMetadata(partial, s.group1, "x", ""), "MissingScope", [partial, Scope.RemovePkp, s.group1]);
      const full = hashOf("all three scopes");
      await setUsageKey(s.relay, s.account, full, perms({ manageIpfsIdsInGroups: [s.group1], addPkpToGroups: [s.group1], removePkpFromGroups: [s.group1] }));
      await expect(s.chipotle(s.payer).updateGroupMetadata(full, s.group1, "by key", "")).to.emit(s.config, "GroupMetadataUpdated").withArgs(s.account, s.group1, full, "by key", "");
      // an unknown group, a group id beyond uint64, a stranger
      for (const id of [99n, U64_MAX + 1n]) {
        await expectAccountUnchanged(s.config, s.account, () => s.chipotle(s.payer).updateGroupMetadata(s.account, id, "x", ""), "GroupNotFound", [s.account, id]);
      }
      await expectAccountUnchanged(s.config, s.account, () => s.chipotle(s.stranger).updateGroupMetadata(s.account, s.group1, "x", ""), "NotAuthorizedCaller", [s.stranger.address, s.account]);
    });

    it("removeGroup, addActionToGroup, removeActionFromGroup, addPkpToGroup and removePkpFromGroup take a uint256 group id; beyond uint64 is no group", async function () {
      const s = await loadFixture(chipotleFixture);
      const c = s.chipotle(s.payer);
      const big = U64_MAX + 1n + s.group1; // the same low 64 bits as group 1: never truncated onto it
      const sends: (() => Promise<unknown>)[] = [
        () => c.removeGroup(s.account, big),
        () => c.addActionToGroup(s.account, big, cidHash(9)),
        () => c.removeActionFromGroup(s.account, big, cidHash(1)),
        () => c.addPkpToGroup(s.account, big, s.pkp),
        () => c.removePkpFromGroup(s.account, big, s.pkp),
        () => c.updateGroup(s.account, big, "x", "", [], []),
        () => c.setUsageApiKey(s.account, s.usageKey, 0, 0, "x", "", false, false, false, [], [], [], [big]),
      ];
      for (const send of sends) await expectAccountUnchanged(s.config, s.account, send, "GroupNotFound", [s.account, big]);
      await expect(c.removeActionFromGroup(s.account, s.group1, cidHash(1))).to.emit(s.config, "ActionRemovedFromGroup").withArgs(s.account, s.group1, cidHash(1), s.account);
      await expect(c.addActionToGroup(s.account, s.group1, cidHash(1))).to.emit(s.config, "ActionAddedToGroup").withArgs(s.account, s.group1, cidHash(1), s.account);
      await expect(c.removeGroup(s.account, s.group2)).to.emit(s.config, "GroupRemoved").withArgs(s.account, s.group2, s.account);
    });
  });

  describe("action metadata (owner only)", function () {
    it("addAction takes the CID hash last; updateActionMetadata takes a group id it does not use", async function () {
      const s = await loadFixture(chipotleFixture);
      const c = s.chipotle(s.payer);
      await expect(c.addAction(s.account, "seven", "the seventh", cidHash(7))).to.emit(s.config, "ActionAdded").withArgs(s.account, cidHash(7), s.account, "seven", "the seventh");
      for (const groupId of [0n, s.group1, 12345n]) {
        await expect(c.updateActionMetadata(s.account, cidHash(7), groupId, `v${groupId}`, "")).to.emit(s.config, "ActionMetadataUpdated").withArgs(s.account, cidHash(7), s.account, `v${groupId}`, "");
      }
      expect(plain((await s.config.listActions(s.account, 0, WHOLE))[0])).to.deep.include({ cidHash: cidHash(7), name: "v12345", description: "" });
      // a usage key with every scope is refused
      const power = hashOf("power");
      await setUsageKey(s.relay, s.account, power, perms({ manageIpfsIdsInGroups: [0], canCreateGroups: true }));
      await expectAccountUnchanged(s.config, s.account, () => c.updateActionMetadata(power, cidHash(7), 0n, "x", ""), "OwnerOnly", [s.account, power]);
      await expectAccountUnchanged(s.config, s.account, () => c.addAction(power, "x", "", cidHash(8)), "OwnerOnly", [s.account, power]);
    });
  });

  describe("setUsageApiKey (13 arguments, Chipotle's)", function () {
    it("registers a key the wallet minted itself under keccak256 of its bytes, and replaces its set on update", async function () {
      const { config, chipotle, wallet2, csAccount } = await loadFixture(chipotleFixture);
      const c = chipotle(wallet2);
      await (await c.addGroup(csAccount, "g", "", [cidHash(1)], [])).wait();
      const key = `lk_${"ab".repeat(32)}`;
      const h = hashOf(key);
      await expect(c.setUsageApiKey(csAccount, h, 0, 0, "bot", "", false, false, true, [], [], [], [1n])).to.emit(config, "UsageApiKeySet").withArgs(csAccount, h, true, 0, 0);
      expect(plain(await config.getUsageApiKey(h))).to.deep.equal({
        usageApiKeyHash: h,
        expiration: 0n,
        balance: 0n,
        name: "bot",
        description: "",
        permissions: perms({ canCreatePkps: true, executeInGroups: [1] }),
      });
      await expect(c.setUsageApiKey(csAccount, h, 0, 0, "bot", "", false, false, false, [0n], [], [], [])).to.emit(config, "UsageApiKeySet").withArgs(csAccount, h, false, 0, 0);
      expect(await config.hasScope(h, Scope.Execute, 1)).to.equal(false);
      expect(await config.hasScope(h, Scope.ManageActions, 1)).to.equal(true);
    });

    it("keeps Vesta's list rules on uint256 lists: [0] alone, distinct existing groups, at most MAX_PERMISSION_GROUPS", async function () {
      const s = await loadFixture(chipotleFixture);
      const c = s.chipotle(s.admin);
      const k = hashOf("listed");
      const send = (execute: bigint[]) => () => c.setUsageApiKey(s.account, k, 0, 0, "x", "", false, false, false, [], [], [], execute);
      await expectAccountUnchanged(s.config, s.account, send([0n, s.group1]), "InvalidGroupList", [Scope.Execute, 0]);
      await expectAccountUnchanged(s.config, s.account, send([s.group1, s.group1]), "InvalidGroupList", [Scope.Execute, s.group1]);
      await expectAccountUnchanged(s.config, s.account, send(Array.from({ length: 11 }, () => s.group1)), "TooManyItems", [11, 10]);
      await expect(send([s.group1, s.group2])()).to.emit(s.config, "UsageApiKeySet");
      expect((await s.config.getUsageApiKey(k)).permissions.executeInGroups).to.deep.equal([s.group1, s.group2]);
    });
  });

  describe("the split: one address, two contracts", function () {
    it("serves every read through the fallback from a views contract that has view functions only and no state of its own", async function () {
      const { config } = await loadFixture(chipotleFixture);
      const main = await ethers.getContractAt("AccountConfig", await config.getAddress());
      const viewsAddress = await main.VIEWS();
      const views = await ethers.getContractAt("AccountConfigViews", viewsAddress);
      const mutable: string[] = [];
      views.interface.forEachFunction((f) => {
        if (!["view", "pure"].includes(f.stateMutability)) mutable.push(f.format());
      });
      expect(mutable).to.deep.equal([]);
      // called at its own address it reads its own, empty, storage
      expect(await views.getApiPayers()).to.deep.equal([]);
      expect((await config.getApiPayers()).length).to.equal(2);
    });

    it("merges exactly the two contracts' functions in IAccountConfig (no selector clash, none missing)", async function () {
      const { config } = await loadFixture(chipotleFixture);
      const selectors = (iface: Interface) => {
        const out: string[] = [];
        iface.forEachFunction((f: FunctionFragment) => out.push(f.selector));
        return out;
      };
      const main = selectors((await ethers.getContractFactory("AccountConfig")).interface);
      const views = selectors((await ethers.getContractFactory("AccountConfigViews")).interface);
      expect(main.filter((x) => views.includes(x)), "a selector in both halves would never reach the views").to.deep.equal([]);
      expect([...selectors(config.interface)].sort()).to.deep.equal([...main, ...views].sort());
    });

    it("lays out the views contract's storage exactly as AccountConfig's (the compiler's layouts)", async function () {
      const hre = await import("hardhat");
      const layout = async (name: string) => {
        const fq = `contracts/${name}.sol:${name}`;
        const info = (await hre.artifacts.getBuildInfo(fq))!;
        const out = info.output.contracts[`contracts/${name}.sol`][name] as unknown as { storageLayout: { storage: { label: string; slot: string; offset: number; type: string }[] } };
        return out.storageLayout.storage.map((v) => ({ label: v.label, slot: v.slot, offset: v.offset, type: v.type.replace(/\)\d+_storage/g, ")_storage") }));
      };
      const [main, views] = [await layout("AccountConfig"), await layout("AccountConfigViews")];
      expect(views.length).to.be.greaterThan(10);
      expect(main.slice(0, views.length), "the views' variables are AccountConfig's first ones, slot for slot").to.deep.equal(views);
      expect(main.slice(views.length).map((v) => v.label), "AccountConfig adds only OpenZeppelin's ownership after them").to.deep.equal(["_owner", "_pendingOwner"]);
    });

    it("reverts an unknown selector and ether sent to it, and a deployment whose views address has no code", async function () {
      const { config, stranger } = await loadFixture(chipotleFixture);
      const to = await config.getAddress();
      await expect(stranger.sendTransaction({ to, data: "0xdeadbeef" })).to.be.reverted;
      await expect(stranger.call({ to, data: "0xdeadbeef" })).to.be.reverted;
      await expect(stranger.sendTransaction({ to, value: 1n })).to.be.reverted;
      expect(await ethers.provider.getBalance(to)).to.equal(0n);
      const factory = await ethers.getContractFactory("AccountConfig");
      await expect(factory.deploy(stranger.address, stranger.address, [], stranger.address)).to.be.revertedWithCustomError(factory, "ViewsNotAContract").withArgs(stranger.address);
    });

    it("bubbles a view's custom error through the fallback, and keeps msg.sender (accountExistsAndIsMutable)", async function () {
      const s = await loadFixture(chipotleFixture);
      await expect(s.config.getAccount(hashOf("nobody"))).to.be.revertedWithCustomError(s.config, "AccountNotFound").withArgs(hashOf("nobody"));
      expect(await s.chipotle(s.admin).accountExistsAndIsMutable(s.account)).to.equal(true);
      expect(await s.chipotle(s.stranger).accountExistsAndIsMutable(s.account)).to.equal(false);
    });
  });
});
