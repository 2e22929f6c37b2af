import { loadFixture, time } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { authorize, createManagedAccount, flat, hashOf, perms, type Permissions } from "./helpers/accountConfig";
import { usageKeySeal } from "../protocol/usageKeySeal";
import {
  USAGE_KEY,
  Scope,
  WHOLE,
  accountState,
  addGroup,
  allScopes,
  cidHash,
  everyWrite,
  expectAllRejected,
  expectRejected,
  managedAccountScenario,
  plain,
  setUsageKey,
  type KeyOptions,
} from "./helpers/scenario";

const NEW_USAGE_KEY = "a new usage key";
const U64_MAX = 2n ** 64n - 1n;
const U128_MAX = 2n ** 128n - 1n;
const LISTS = [
  ["manageIpfsIdsInGroups", Scope.ManageActions],
  ["addPkpToGroups", Scope.AddPkp],
  ["removePkpFromGroups", Scope.RemovePkp],
  ["executeInGroups", Scope.Execute],
] as const;

/** A usage key as the views return it. */
function keyView(usageApiKeyHash: bigint, permissions: Permissions, opts: KeyOptions = {}) {
  const { expiration = 0n, balance = 0n, name = "key", description = "" } = opts;
  return { usageApiKeyHash, expiration, balance, name, description, permissions };
}

describe("AccountConfig: usage keys", function () {
  /** The managed scenario, plus a second managed account with a usage key of its own, and a key holding every scope. */
  async function usageKeysFixture() {
    const s = await managedAccountScenario();
    const otherAccount = await createManagedAccount(s.config, s.payer, "another account key", s.stranger.address);
    const otherUsageKey = hashOf("another account's usage key");
    await setUsageKey(s.relay, otherAccount, otherUsageKey, perms());
    const powerKey = hashOf("power key");
    await setUsageKey(s.relay, s.account, powerKey, allScopes(), { name: "power" });
    return { ...s, otherAccount, otherUsageKey, powerKey, newKey: hashOf(NEW_USAGE_KEY) };
  }
  type Fixture = Awaited<ReturnType<typeof usageKeysFixture>>;

  /** The account's state and how `keyHash` resolves. */
  const keyState = (s: Fixture, keyHash: bigint) => async () =>
    [await accountState(s.config, s.account), await s.config.resolveApiKey(keyHash)];

  /** Expects setUsageApiKey with these arguments to fail, both creating a new key and updating USAGE_KEY. */
  async function expectSetRejected(s: Fixture, args: KeyOptions & { permissions?: Permissions }, error: string, errorArgs: unknown[]) {
    const { expiration = 0n, balance = 0n, permissions = perms() } = args;
    for (const keyHash of [s.newKey, s.usageKey]) {
      await expectRejected(
        s.config,
        async () => s.relay.setUsageApiKey(s.account, keyHash, expiration, balance, "x", "", ...flat(permissions)),
        error,
        errorArgs,
        keyState(s, keyHash)
      );
    }
  }

  describe("setUsageApiKey (create)", function () {
    it("creates an active key with its permission set, expiration, balance and metadata", async function () {
      const { config, relay, account, newKey, group1, group2, pkp } = await loadFixture(usageKeysFixture);
      const expiration = BigInt(await time.latest()) + 3600n;
      const permissions = perms({ canCreatePkps: true, executeInGroups: [group1], addPkpToGroups: [group1, group2] });
      await authorize(relay, account, newKey);
      await expect(relay.setUsageApiKey(account, newKey, expiration, 500n, "ci", "the CI's key", ...flat(permissions)))
        .to.emit(config, "UsageApiKeySet")
        .withArgs(account, newKey, true, expiration, 500n);
      const expected = keyView(newKey, permissions, { expiration, balance: 500n, name: "ci", description: "the CI's key" });
      expect(plain(await config.getUsageApiKey(newKey))).to.deep.equal(expected);
      expect(plain(await config.resolveApiKey(newKey))).to.deep.equal({ apiKeyHash: account, isAccountKey: false, active: true });
      expect(await config.canExecute(newKey, cidHash(1), pkp, group1)).to.equal(true);
      expect(await config.hasScope(newKey, Scope.AddPkp, group2)).to.equal(true);
      expect(await config.hasScope(newKey, Scope.Execute, group2)).to.equal(false);
    });

    it("lists the key's hash, metadata and permission set, never the key", async function () {
      const { config, relay, account, newKey, group1 } = await loadFixture(usageKeysFixture);
      await setUsageKey(relay, account, newKey, perms({ executeInGroups: [group1] }), { name: "listed", description: "d" });
      const [items, total] = await config.listUsageApiKeys(account, 0, WHOLE);
      const item = (plain(items) as { usageApiKeyHash: bigint }[]).find((k) => k.usageApiKeyHash === newKey);
      expect(total).to.equal(3n);
      expect(item).to.deep.equal(keyView(newKey, perms({ executeInGroups: [group1] }), { name: "listed", description: "d" }));
      const listed = JSON.stringify(plain(items), (_k, v) => (typeof v === "bigint" ? ethers.toBeHex(v) : v));
      expect(listed).not.to.include(NEW_USAGE_KEY);
      expect(listed).not.to.include(ethers.hexlify(ethers.toUtf8Bytes(NEW_USAGE_KEY)).slice(2));
    });

    it("lets the account's admin wallet add a key directly", async function () {
      const { config, admin, account, newKey } = await loadFixture(usageKeysFixture);
      await expect(config.connect(admin).setUsageApiKey(account, newKey, 0, 0, "direct", "", ...flat(perms({ canCreateGroups: true }))))
        .to.emit(config, "UsageApiKeySet")
        .withArgs(account, newKey, true, 0, 0);
      expect(await config.hasScope(newKey, Scope.CreateGroups, 0)).to.equal(true);
    });

    it("reverts when the caller is neither the admin wallet nor an API payer", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expectRejected(
        s.config,
        async () => s.config.connect(s.stranger).setUsageApiKey(s.account, s.newKey, 0, 0, "x", "", ...flat(perms())),
        "NotAuthorizedCaller",
        [s.stranger.address, s.account],
        keyState(s, s.newKey)
      );
    });
  });

  describe("setUsageApiKey (authorization of a new key)", function () {
    /** Everything that an attempt on `keyHash` could change: both accounts, the key, its authorization. */
    const everything = (s: Fixture, keyHash: bigint) => async () => [
      await keyState(s, keyHash)(),
      await accountState(s.config, s.otherAccount),
      await s.config.usageApiKeyHome(usageKeySeal(keyHash)),
    ];

    it("publishes the seal an API payer authorizes, as relayer/usageKeySeal.ts computes it", async function () {
      const { config, newKey } = await loadFixture(usageKeysFixture);
      expect(await config.usageApiKeySeal(newKey)).to.equal(usageKeySeal(newKey));
      expect(usageKeySeal(newKey)).to.equal(ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(["uint256"], [newKey])));
      expect(usageKeySeal(newKey)).not.to.equal(ethers.toBeHex(newKey, 32));
    });

    it("authorizeUsageApiKey: an API payer reserves a seal for an account once; the views show it", async function () {
      const { config, relay, account, newKey } = await loadFixture(usageKeysFixture);
      const seal = usageKeySeal(newKey);
      await expect(relay.authorizeUsageApiKey(account, seal)).to.emit(config, "UsageApiKeyAuthorized").withArgs(account, seal);
      expect(await config.usageApiKeyHome(seal)).to.equal(account);
      expect((await config.resolveApiKey(newKey)).apiKeyHash, "an authorization registers nothing").to.equal(0n);
    });

    it("authorizeUsageApiKey reverts for anyone but an API payer (the account's admin wallet too), for account 0, and for a seal authorized already", async function () {
      const s = await loadFixture(usageKeysFixture);
      const seal = usageKeySeal(s.newKey);
      for (const who of [s.admin, s.stranger]) {
        await expectRejected(s.config, () => s.config.connect(who).authorizeUsageApiKey(s.account, seal), "NotApiPayer", [who.address], everything(s, s.newKey));
      }
      await expectRejected(s.config, () => s.relay.authorizeUsageApiKey(0n, seal), "InvalidKeyHash", [0n], everything(s, s.newKey));
      await authorize(s.relay, s.account, s.newKey);
      for (const account of [s.account, s.otherAccount]) {
        await expectRejected(s.config, () => s.relay.authorizeUsageApiKey(account, seal), "UsageApiKeyAlreadyAuthorized", [seal], everything(s, s.newKey));
      }
    });

    it("registers a new key relayed by an API payer only with an authorization for this account", async function () {
      const s = await loadFixture(usageKeysFixture);
      const send = () => s.relay.setUsageApiKey(s.account, s.newKey, 0, 0, "x", "", ...flat(perms({ executeInGroups: [s.group1] })));
      await expectRejected(s.config, send, "UsageApiKeyNotAuthorized", [s.account, s.newKey], everything(s, s.newKey));
      await authorize(s.relay, s.account, s.newKey);
      await expect(send()).to.emit(s.config, "UsageApiKeySet").withArgs(s.account, s.newKey, true, 0, 0);
      expect(await s.config.usageApiKeyHome(usageKeySeal(s.newKey)), "the key's home, for ever").to.equal(s.account);
      expect(plain(await s.config.resolveApiKey(s.newKey))).to.deep.equal({ apiKeyHash: s.account, isAccountKey: false, active: true });
    });

    it("checks the authorization last: every other refusal comes first (so the relayer's simulation answers them before it writes)", async function () {
      const s = await loadFixture(usageKeysFixture);
      const past = BigInt(await time.latest()) - 1n;
      await expectRejected(s.config, () => s.relay.setUsageApiKey(s.account, s.newKey, past, 0, "x", "", ...flat(perms())), "InvalidExpiration", [past], everything(s, s.newKey));
      await expectRejected(
        s.config,
        () => s.relay.setUsageApiKey(s.account, s.newKey, 0, 0, "x", "", ...flat(perms({ executeInGroups: [99] }))),
        "GroupNotFound",
        [s.account, 99n],
        everything(s, s.newKey)
      );
    });

    it("reverts (KeyHashInUse) when the key is authorized for another account, relayed or from the admin wallet; the authorization stays its account's", async function () {
      const s = await loadFixture(usageKeysFixture);
      await authorize(s.relay, s.otherAccount, s.newKey);
      for (const c of [s.relay, s.config.connect(s.admin)]) {
        await expectRejected(s.config, () => c.setUsageApiKey(s.account, s.newKey, 0, 0, "x", "", ...flat(perms())), "KeyHashInUse", [s.newKey], everything(s, s.newKey));
      }
      await expect(s.relay.setUsageApiKey(s.otherAccount, s.newKey, 0, 0, "its own", "", ...flat(perms())))
        .to.emit(s.config, "UsageApiKeySet")
        .withArgs(s.otherAccount, s.newKey, true, 0, 0);
    });

    it("lets the admin wallet register a key it minted itself without an authorization (Chipotle's sovereign flow); first registration wins", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expect(s.config.connect(s.admin).setUsageApiKey(s.account, s.newKey, 0, 0, "self-minted", "", ...flat(perms({ executeInGroups: [s.group1] }))))
        .to.emit(s.config, "UsageApiKeySet")
        .withArgs(s.account, s.newKey, true, 0, 0);
      expect(await s.config.canExecute(s.newKey, cidHash(1), s.pkp, s.group1)).to.equal(true);
      // the other account's admin wallet cannot take it, nor can its payer-authorized registration
      await expectRejected(
        s.config,
        () => s.config.connect(s.stranger).setUsageApiKey(s.otherAccount, s.newKey, 0, 0, "x", "", ...flat(perms())),
        "KeyHashInUse",
        [s.newKey],
        everything(s, s.newKey)
      );
      // nor can an API payer reserve it for the other account any more: the key has its home
      const seal = usageKeySeal(s.newKey);
      await expectRejected(s.config, () => s.relay.authorizeUsageApiKey(s.otherAccount, seal), "UsageApiKeyAlreadyAuthorized", [seal], everything(s, s.newKey));
      expect(await s.config.usageApiKeyHome(seal)).to.equal(s.account);
      expect((await s.config.resolveApiKey(s.newKey)).apiKeyHash).to.equal(s.account);
    });

    it("never registers a removed key again, for any account (a leaked, revoked key is neither re-pointed nor brought back)", async function () {
      const s = await loadFixture(usageKeysFixture);
      await s.relay.removeUsageApiKey(s.account, s.usageKey);
      // another account, by its admin wallet or with its payer's authorization: refused all the same
      await expectRejected(
        s.config,
        () => s.config.connect(s.stranger).setUsageApiKey(s.otherAccount, s.usageKey, 0, 0, "x", "", ...flat(perms())),
        "KeyHashInUse",
        [s.usageKey],
        everything(s, s.usageKey)
      );
      const seal = usageKeySeal(s.usageKey);
      await expectRejected(s.config, () => s.relay.authorizeUsageApiKey(s.otherAccount, seal), "UsageApiKeyAlreadyAuthorized", [seal], everything(s, s.usageKey));
      await expectRejected(s.config, () => s.relay.setUsageApiKey(s.otherAccount, s.usageKey, 0, 0, "x", "", ...flat(perms())), "KeyHashInUse", [s.usageKey], everything(s, s.usageKey));
      // nor by its own account: an update sent before the removal and mined after it (a race) is refused
      for (const sender of [s.relay, s.config.connect(s.admin)]) {
        await expectRejected(
          s.config,
          () => sender.setUsageApiKey(s.account, s.usageKey, 0, 0, "back", "", ...flat(perms({ executeInGroups: [s.group1] }))),
          "UsageApiKeyNotFound",
          [s.account, s.usageKey],
          everything(s, s.usageKey)
        );
      }
      expect((await s.config.resolveApiKey(s.usageKey)).active).to.equal(false);
    });

    it("needs no authorization to update a key the account holds", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expect(s.relay.setUsageApiKey(s.account, s.usageKey, 0, 0, "renamed", "", ...flat(perms())))
        .to.emit(s.config, "UsageApiKeySet")
        .withArgs(s.account, s.usageKey, false, 0, 0);
    });
  });

  describe("setUsageApiKey (update: replace-all)", function () {
    it("drops per-group grants absent from the update (created = false)", async function () {
      const { config, relay, account, usageKey, group1, group2, pkp } = await loadFixture(usageKeysFixture);
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(true);
      await expect(relay.setUsageApiKey(account, usageKey, 0, 0, "runner", "", ...flat(perms({ executeInGroups: [group2] }))))
        .to.emit(config, "UsageApiKeySet")
        .withArgs(account, usageKey, false, 0, 0);
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(false);
      expect(await config.hasScope(usageKey, Scope.Execute, group1)).to.equal(false);
      expect(await config.canExecute(usageKey, cidHash(2), pkp, group2)).to.equal(true);
      expect((await config.getUsageApiKey(usageKey)).permissions.executeInGroups).to.deep.equal([group2]);
      expect((await config.listUsageApiKeys(account, 0, WHOLE)).total).to.equal(2n);
    });

    it("resets account-wide flags absent from the update", async function () {
      const { config, relay, account, usageKey } = await loadFixture(usageKeysFixture);
      await setUsageKey(relay, account, usageKey, perms({ canCreateGroups: true, canDeleteGroups: true, canCreatePkps: true }));
      await setUsageKey(relay, account, usageKey, perms({ executeInGroups: [1] }));
      for (const scope of [Scope.CreateGroups, Scope.DeleteGroups, Scope.CreatePkps]) {
        expect(await config.hasScope(usageKey, scope, 0)).to.equal(false);
      }
      expect(plain(await config.getUsageApiKey(usageKey))).to.deep.equal(keyView(usageKey, perms({ executeInGroups: [1] })));
    });

    it("replaces the wildcard [0] with a list", async function () {
      const { config, relay, account, usageKey, group1, group2 } = await loadFixture(usageKeysFixture);
      await setUsageKey(relay, account, usageKey, perms({ manageIpfsIdsInGroups: [0] }));
      expect(await config.hasScope(usageKey, Scope.ManageActions, group2)).to.equal(true);
      await setUsageKey(relay, account, usageKey, perms({ manageIpfsIdsInGroups: [group1] }));
      expect(await config.hasScope(usageKey, Scope.ManageActions, group2)).to.equal(false);
      expect(await config.hasScope(usageKey, Scope.ManageActions, group1)).to.equal(true);
      expect((await config.getUsageApiKey(usageKey)).permissions.manageIpfsIdsInGroups).to.deep.equal([group1]);
    });

    it("replaces a list with the wildcard [0]", async function () {
      const { config, relay, account, usageKey, group2, pkp } = await loadFixture(usageKeysFixture);
      expect(await config.canExecute(usageKey, cidHash(2), pkp, group2)).to.equal(false);
      await setUsageKey(relay, account, usageKey, perms({ executeInGroups: [0] }));
      expect(await config.canExecute(usageKey, cidHash(2), pkp, group2)).to.equal(true);
      expect((await config.getUsageApiKey(usageKey)).permissions.executeInGroups).to.deep.equal([0n]);
    });

    it("replaces the expiration, balance, name and description", async function () {
      const { config, relay, account, usageKey } = await loadFixture(usageKeysFixture);
      const opts = { expiration: BigInt(await time.latest()) + 100n, balance: 7n, name: "renamed", description: "new" };
      await setUsageKey(relay, account, usageKey, perms(), opts);
      expect(plain(await config.getUsageApiKey(usageKey))).to.deep.equal(keyView(usageKey, perms(), opts));
    });

    it("keeps the previous set whole when the update is rejected", async function () {
      const { config, relay, account, usageKey, group1, pkp } = await loadFixture(usageKeysFixture);
      const before = plain(await config.getUsageApiKey(usageKey));
      await expect(
        relay.setUsageApiKey(account, usageKey, 0, 0, "x", "", ...flat(perms({ canCreateGroups: true, executeInGroups: [group1, 99] })))
      ).to.be.revertedWithCustomError(config, "GroupNotFound");
      expect(plain(await config.getUsageApiKey(usageKey))).to.deep.equal(before);
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(true);
    });
  });

  describe("setUsageApiKey (validation)", function () {
    it("reverts when the usage key hash is 0", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expectRejected(
        s.config,
        () => s.relay.setUsageApiKey(s.account, 0n, 0, 0, "x", "", ...flat(perms())),
        "InvalidKeyHash",
        [0n],
        keyState(s, 0n)
      );
    });

    it("reverts when the hash is an account's or another account's usage key", async function () {
      const s = await loadFixture(usageKeysFixture);
      for (const taken of [s.account, s.otherAccount, s.otherUsageKey]) {
        await expectRejected(
          s.config,
          async () => s.relay.setUsageApiKey(s.account, taken, 0, 0, "x", "", ...flat(perms())),
          "KeyHashInUse",
          [taken],
          async () => [await keyState(s, taken)(), await accountState(s.config, s.otherAccount)]
        );
      }
    });

    it("reverts when the expiration is in the past, now, or beyond uint64", async function () {
      const s = await loadFixture(usageKeysFixture);
      const past = BigInt(await time.latest()) - 1n;
      await expectSetRejected(s, { expiration: past }, "InvalidExpiration", [past]);
      await expectSetRejected(s, { expiration: U64_MAX + 1n }, "InvalidExpiration", [U64_MAX + 1n]);
      const now = BigInt(await time.latest()) + 10n;
      await time.setNextBlockTimestamp(now);
      await expect(s.relay.setUsageApiKey(s.account, s.newKey, now, 0, "x", "", ...flat(perms())))
        .to.be.revertedWithCustomError(s.config, "InvalidExpiration")
        .withArgs(now);
      expect((await s.config.resolveApiKey(s.newKey)).apiKeyHash).to.equal(0n);
    });

    it("accepts the largest expiration and balance", async function () {
      const { config, relay, account, newKey } = await loadFixture(usageKeysFixture);
      await setUsageKey(relay, account, newKey, perms(), { expiration: U64_MAX, balance: U128_MAX });
      const key = await config.getUsageApiKey(newKey);
      expect([key.expiration, key.balance]).to.deep.equal([U64_MAX, U128_MAX]);
    });

    it("reverts when the balance is beyond uint128", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expectSetRejected(s, { balance: U128_MAX + 1n }, "BalanceTooLarge", [U128_MAX + 1n]);
    });

    it("reverts when a list mixes the wildcard 0 with group ids or repeats an id", async function () {
      const s = await loadFixture(usageKeysFixture);
      const g = s.group1;
      for (const [field, scope] of LISTS) {
        await expectSetRejected(s, { permissions: perms({ [field]: [0, g] }) }, "InvalidGroupList", [scope, 0]);
        await expectSetRejected(s, { permissions: perms({ [field]: [g, 0] }) }, "InvalidGroupList", [scope, 0]);
        await expectSetRejected(s, { permissions: perms({ [field]: [0, 0] }) }, "InvalidGroupList", [scope, 0]);
        await expectSetRejected(s, { permissions: perms({ [field]: [g, s.group2, g] }) }, "InvalidGroupList", [scope, g]);
      }
    });

    it("reverts when a list names a group that does not exist or was removed", async function () {
      const s = await loadFixture(usageKeysFixture);
      await s.relay.removeGroup(s.account, s.group2);
      for (const [field] of LISTS) {
        for (const missing of [99n, s.group2]) {
          await expectSetRejected(s, { permissions: perms({ [field]: [s.group1, missing] }) }, "GroupNotFound", [s.account, missing]);
        }
      }
    });

    it("reverts when a list is longer than MAX_PERMISSION_GROUPS, and accepts exactly that many", async function () {
      const s = await loadFixture(usageKeysFixture);
      const max = await s.config.MAX_PERMISSION_GROUPS();
      const ids: bigint[] = [s.group1, s.group2];
      while (BigInt(ids.length) < max) ids.push(await addGroup(s.relay, s.account, `g${ids.length + 1}`));
      for (const [field] of LISTS) {
        await expectSetRejected(s, { permissions: perms({ [field]: [...ids, 1000n] }) }, "TooManyItems", [max + 1n, max]);
      }
      await setUsageKey(s.relay, s.account, s.newKey, perms({ executeInGroups: ids }));
      expect((await s.config.getUsageApiKey(s.newKey)).permissions.executeInGroups).to.have.length(Number(max));
    });
  });

  describe("updateUsageApiKeyMetadata", function () {
    it("changes only the name and description", async function () {
      const { config, relay, account, usageKey, group1, pkp } = await loadFixture(usageKeysFixture);
      const before = plain(await config.getUsageApiKey(usageKey)) as object;
      await expect(relay.updateUsageApiKeyMetadata(account, usageKey, "renamed", "described"))
        .to.emit(config, "UsageApiKeyMetadataUpdated")
        .withArgs(account, usageKey, "renamed", "described");
      expect(plain(await config.getUsageApiKey(usageKey))).to.deep.equal({ ...before, name: "renamed", description: "described" });
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(true);
    });

    it("reverts when the key is not a usage key of the account", async function () {
      const s = await loadFixture(usageKeysFixture);
      for (const keyHash of [s.newKey, s.account, s.otherUsageKey, s.otherAccount]) {
        await expectRejected(
          s.config,
          () => s.relay.updateUsageApiKeyMetadata(s.account, keyHash, "n", "d"),
          "UsageApiKeyNotFound",
          [s.account, keyHash],
          async () => [await keyState(s, keyHash)(), await accountState(s.config, s.otherAccount)]
        );
      }
    });
  });

  describe("removeUsageApiKey", function () {
    it("revokes the key at once", async function () {
      const { config, relay, account, usageKey, powerKey, group1, pkp } = await loadFixture(usageKeysFixture);
      await expect(relay.removeUsageApiKey(account, usageKey)).to.emit(config, "UsageApiKeyRemoved").withArgs(account, usageKey);
      expect(plain(await config.resolveApiKey(usageKey))).to.deep.equal({ apiKeyHash: 0n, isAccountKey: false, active: false });
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(false);
      expect(await config.hasScope(usageKey, Scope.Execute, group1)).to.equal(false);
      await expect(config.getUsageApiKey(usageKey)).to.be.revertedWithCustomError(config, "UsageApiKeyNotFound").withArgs(0n, usageKey);
      const [items, total] = await config.listUsageApiKeys(account, 0, WHOLE);
      expect([total, items.map((k) => k.usageApiKeyHash)]).to.deep.equal([1n, [powerKey]]);
    });

    it("makes the key unknown to relayed writes", async function () {
      const s = await loadFixture(usageKeysFixture);
      await s.relay.removeUsageApiKey(s.account, s.powerKey);
      const targets = { group: s.group1, pkp: s.pkp, cid: cidHash(1), usageKey: s.usageKey, newAdmin: s.wallet.address };
      await expectAllRejected(s.config, everyWrite(s.relay, s.powerKey, targets), "UnknownApiKey", [s.powerKey], keyState(s, s.powerKey));
    });

    it("leaves the other keys and the account untouched", async function () {
      const { config, relay, account, usageKey, powerKey, group1, pkp } = await loadFixture(usageKeysFixture);
      const before = (await accountState(config, account)) as { usageKeys: { usageApiKeyHash: bigint }[] };
      await relay.removeUsageApiKey(account, powerKey);
      expect(await accountState(config, account)).to.deep.equal({
        ...before,
        usageKeys: before.usageKeys.filter((k) => k.usageApiKeyHash !== powerKey),
      });
      expect(await config.canExecute(usageKey, cidHash(1), pkp, group1)).to.equal(true);
      expect(await config.canExecute(account, cidHash(1), pkp, 0)).to.equal(true);
    });

    it("reverts when the key is not a usage key of the account (or was removed already)", async function () {
      const s = await loadFixture(usageKeysFixture);
      await s.relay.removeUsageApiKey(s.account, s.usageKey);
      for (const keyHash of [s.usageKey, s.newKey, s.account, s.otherUsageKey]) {
        await expectRejected(
          s.config,
          () => s.relay.removeUsageApiKey(s.account, keyHash),
          "UsageApiKeyNotFound",
          [s.account, keyHash],
          async () => [await keyState(s, keyHash)(), await accountState(s.config, s.otherAccount)]
        );
      }
    });
  });

  describe("usage-key management is owner-only", function () {
    it("reverts when a usage key with every scope and wildcards manages keys, itself or another (OwnerOnly)", async function () {
      const s = await loadFixture(usageKeysFixture);
      const { relay, powerKey, usageKey, newKey } = s;
      const sends = [
        async () => relay.setUsageApiKey(powerKey, newKey, 0, 0, "x", "", ...flat(allScopes())),
        () => relay.setUsageApiKey(powerKey, powerKey, 0, 0, "x", "", ...flat(allScopes())),
        () => relay.setUsageApiKey(powerKey, usageKey, 0, 0, "x", "", ...flat(allScopes())),
        () => relay.updateUsageApiKeyMetadata(powerKey, powerKey, "x", ""),
        () => relay.updateUsageApiKeyMetadata(powerKey, usageKey, "x", ""),
        () => relay.removeUsageApiKey(powerKey, powerKey),
        () => relay.removeUsageApiKey(powerKey, usageKey),
      ];
      for (const send of sends) await expectRejected(s.config, send, "OwnerOnly", [s.account, powerKey], keyState(s, newKey));
    });

    it("reverts when the admin wallet names a usage key as the account (OwnerOnly)", async function () {
      const s = await loadFixture(usageKeysFixture);
      await expectRejected(
        s.config,
        async () => s.config.connect(s.admin).setUsageApiKey(s.usageKey, s.newKey, 0, 0, "x", "", ...flat(perms())),
        "OwnerOnly",
        [s.account, s.usageKey],
        keyState(s, s.newKey)
      );
    });
  });

  describe("expiration", function () {
    async function expiringKey(s: Fixture) {
      const expiration = BigInt(await time.latest()) + 1000n;
      await setUsageKey(s.relay, s.account, s.newKey, perms({ canCreateGroups: true, executeInGroups: [s.group1] }), { expiration });
      return expiration;
    }

    it("lets a key work before its expiration and not from then on", async function () {
      const s = await loadFixture(usageKeysFixture);
      const { config, relay, account, newKey, group1, pkp } = s;
      const expiration = await expiringKey(s);
      expect((await config.resolveApiKey(newKey)).active).to.equal(true);
      expect(await config.canExecute(newKey, cidHash(1), pkp, group1)).to.equal(true);
      await expect(relay.addGroup(newKey, "before", "", [], [])).to.emit(config, "GroupCreated");

      await time.increaseTo(expiration);
      expect(plain(await config.resolveApiKey(newKey))).to.deep.equal({ apiKeyHash: account, isAccountKey: false, active: false });
      expect(await config.canExecute(newKey, cidHash(1), pkp, group1)).to.equal(false);
      expect(await config.hasScope(newKey, Scope.CreateGroups, 0)).to.equal(false);
      expect(plain(await config.findExecutionGroup(newKey, cidHash(1), pkp))).to.deep.equal({ allowed: false, groupId: 0n });
      const targets = { group: group1, pkp, cid: cidHash(1), usageKey: s.usageKey, newAdmin: s.wallet.address };
      await expectAllRejected(config, everyWrite(relay, newKey, targets), "UsageApiKeyExpired", [newKey, expiration], keyState(s, newKey));
      expect((await config.getUsageApiKey(newKey)).expiration).to.equal(expiration);
    });

    it("treats the expiration second itself as expired", async function () {
      const s = await loadFixture(usageKeysFixture);
      const expiration = await expiringKey(s);
      await time.setNextBlockTimestamp(expiration - 1n);
      await expect(s.relay.addGroup(s.newKey, "last second", "", [], [])).to.emit(s.config, "GroupCreated");
      await time.setNextBlockTimestamp(expiration);
      await expect(s.relay.addGroup(s.newKey, "too late", "", [], []))
        .to.be.revertedWithCustomError(s.config, "UsageApiKeyExpired")
        .withArgs(s.newKey, expiration);
    });

    it("lets the owner renew an expired key", async function () {
      const s = await loadFixture(usageKeysFixture);
      const expiration = await expiringKey(s);
      await time.increaseTo(expiration);
      await setUsageKey(s.relay, s.account, s.newKey, perms({ executeInGroups: [s.group1] }));
      expect(await s.config.canExecute(s.newKey, cidHash(1), s.pkp, s.group1)).to.equal(true);
    });
  });
});
