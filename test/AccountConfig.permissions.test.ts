import { expect } from "chai";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { Wallet, ZeroAddress, type ContractTransactionResponse } from "ethers";
import { authorize, deployAccountConfig, flat, hashOf, perms, type AccountConfig, type Permissions } from "./helpers/accountConfig";
import { allScopes } from "./helpers/scenario";

// Scope enum values of contracts/types/AccountConfigTypes.sol
const Scope = { CreateGroups: 0, DeleteGroups: 1, CreatePkps: 2, ManageActions: 3, AddPkp: 4, RemovePkp: 5, Execute: 6 } as const;

const ACCOUNT_KEY = "account-key-permissions";
const CID_A = hashOf("QmActionA");
const CID_B = hashOf("QmActionB");
const SPARE_TO_ADD = "0x000000000000000000000000000000000000bEEF";
const SPARE_TO_REMOVE = "0x000000000000000000000000000000000000dEaD";

/**
 * Account with two PKPs and two groups:
 *   group 1 lists CID_A and pkpA; group 2 lists CID_B and pkpB.
 * A second account owns pkpOther. Writes are relayed by an API payer (the managed path).
 */
async function fixture() {
  const d = await deployAccountConfig();
  const [admin, stranger] = d.others;
  const c = d.config.connect(d.payer);
  const account = hashOf(ACCOUNT_KEY);
  await (await c.newAccount(account, true, "acct", "", await admin.getAddress())).wait();
  const pkpA = Wallet.createRandom().address;
  const pkpB = Wallet.createRandom().address;
  await (await c.registerWalletDerivation(account, pkpA, 1n, "a", "")).wait();
  await (await c.registerWalletDerivation(account, pkpB, 2n, "b", "")).wait();
  await (await c.addGroup(account, "one", "", [CID_A], [pkpA])).wait();
  await (await c.addGroup(account, "two", "", [CID_B], [pkpB])).wait();
  // Spare wallets, in no group, for the add/remove PKP rows.
  await (await c.registerWalletDerivation(account, SPARE_TO_ADD, 77n, "x", "")).wait();
  await (await c.registerWalletDerivation(account, SPARE_TO_REMOVE, 78n, "y", "")).wait();

  const other = hashOf("other-account-key");
  await (await c.newAccount(other, true, "other", "", Wallet.createRandom().address)).wait();
  const pkpOther = Wallet.createRandom().address;
  await (await c.registerWalletDerivation(other, pkpOther, 3n, "o", "")).wait();
  await (await c.addGroup(other, "other-one", "", [CID_A], [pkpOther])).wait();

  let n = 0;
  /** Adds a usage key with `p` to the account and returns its hash. */
  const usageKey = async (p: Permissions) => {
    const h = hashOf(`usage-key-${n++}`);
    await authorize(c, account, h);
    await (await c.setUsageApiKey(account, h, 0, 0, "k", "", ...flat(p))).wait();
    return h;
  };
  return { ...d, c, admin, stranger, account, other, pkpA, pkpB, pkpOther, usageKey };
}

type Ctx = Awaited<ReturnType<typeof fixture>>;

/** What the chain says about the account: groups and their members, wallets, actions. */
async function snapshot(ctx: Ctx) {
  const { config, account } = ctx;
  const [groups] = await config.listGroups(account, 0, 100);
  const members = [];
  for (const g of groups) {
    members.push([g.id, (await config.listWalletsInGroup(account, g.id, 0, 100))[0], (await config.listActionsInGroup(account, g.id, 0, 100))[0]]);
  }
  return JSON.stringify({ groups, members, wallets: (await config.listWallets(account, 0, 100))[0] }, (_k, v) =>
    typeof v === "bigint" ? v.toString() : v,
  );
}

/** A write gated by a scope: how to grant it, set it up so that it can succeed, and run it. */
type GatedWrite = {
  name: string;
  scope: number;
  perGroup: boolean;
  grant: (groups: number[]) => Permissions;
  prepare?: (ctx: Ctx, group: bigint) => Promise<unknown>;
  run: (ctx: Ctx, config: AccountConfig, actor: bigint, group: bigint) => Promise<ContractTransactionResponse>;
};

const WRITES: GatedWrite[] = [
  {
    name: "create PKP (registerWalletDerivation)",
    scope: Scope.CreatePkps,
    perGroup: false,
    grant: () => perms({ canCreatePkps: true }),
    run: (_ctx, c, actor) => c.registerWalletDerivation(actor, Wallet.createRandom().address, 99n, "new", ""),
  },
  {
    name: "create group (addGroup)",
    scope: Scope.CreateGroups,
    perGroup: false,
    grant: () => perms({ canCreateGroups: true }),
    run: (_ctx, c, actor) => c.addGroup(actor, "new group", "", [], []),
  },
  {
    name: "delete group (removeGroup)",
    scope: Scope.DeleteGroups,
    perGroup: false,
    grant: () => perms({ canDeleteGroups: true }),
    run: (_ctx, c, actor, group) => c.removeGroup(actor, group),
  },
  {
    name: "add action CID to group (addActionToGroup)",
    scope: Scope.ManageActions,
    perGroup: true,
    grant: (groups) => perms({ manageIpfsIdsInGroups: groups }),
    run: (_ctx, c, actor, group) => c.addActionToGroup(actor, group, hashOf("QmNewAction")),
  },
  {
    name: "remove action CID from group (removeActionFromGroup)",
    scope: Scope.ManageActions,
    perGroup: true,
    grant: (groups) => perms({ manageIpfsIdsInGroups: groups }),
    prepare: (ctx, group) => ctx.c.addActionToGroup(ctx.account, group, hashOf("QmToRemove")).then((t) => t.wait()),
    run: (_ctx, c, actor, group) => c.removeActionFromGroup(actor, group, hashOf("QmToRemove")),
  },
  {
    name: "add PKP to group (addPkpToGroup)",
    scope: Scope.AddPkp,
    perGroup: true,
    grant: (groups) => perms({ addPkpToGroups: groups }),
    run: (_ctx, c, actor, group) => c.addPkpToGroup(actor, group, SPARE_TO_ADD),
  },
  {
    name: "remove PKP from group (removePkpFromGroup)",
    scope: Scope.RemovePkp,
    perGroup: true,
    grant: (groups) => perms({ removePkpFromGroups: groups }),
    prepare: (ctx, group) => ctx.c.addPkpToGroup(ctx.account, group, SPARE_TO_REMOVE).then((t) => t.wait()),
    run: (_ctx, c, actor, group) => c.removePkpFromGroup(actor, group, SPARE_TO_REMOVE),
  },
];

describe("AccountConfig permission matrix", function () {
  for (const w of WRITES) {
    describe(w.name, function () {
      it("succeeds for the owner through an API payer (account key)", async function () {
        const ctx = await loadFixture(fixture);
        await w.prepare?.(ctx, 1n);
        const before = await snapshot(ctx);
        await expect(w.run(ctx, ctx.c, ctx.account, 1n)).not.to.be.reverted;
        expect(await snapshot(ctx)).to.not.equal(before);
      });

      it("succeeds for the owner's admin wallet calling directly", async function () {
        const ctx = await loadFixture(fixture);
        await w.prepare?.(ctx, 1n);
        await expect(w.run(ctx, ctx.config.connect(ctx.admin), ctx.account, 1n)).not.to.be.reverted;
      });

      it("succeeds for a usage key holding the scope", async function () {
        const ctx = await loadFixture(fixture);
        const key = await ctx.usageKey(w.grant([1]));
        await w.prepare?.(ctx, 1n);
        await expect(w.run(ctx, ctx.c, key, 1n)).not.to.be.reverted;
      });

      it("reverts when the usage key lacks the scope, and changes nothing", async function () {
        const ctx = await loadFixture(fixture);
        // every other capability, on every group, but not this one
        const all = allScopes();
        const field = Object.keys(w.grant([1])).find((k) => {
          const v = (w.grant([1]) as Record<string, unknown>)[k];
          return v === true || (Array.isArray(v) && v.length > 0);
        }) as keyof Permissions;
        const without = { ...all, [field]: typeof all[field] === "boolean" ? false : [] };
        const key = await ctx.usageKey(without);
        await w.prepare?.(ctx, 1n);
        const before = await snapshot(ctx);
        await expect(w.run(ctx, ctx.c, key, 1n))
          .to.be.revertedWithCustomError(ctx.config, "MissingScope")
          .withArgs(key, w.scope, w.perGroup ? 1n : 0n);
        expect(await snapshot(ctx)).to.equal(before);
      });

      it("reverts for any caller that is neither a payer nor the admin wallet", async function () {
        const ctx = await loadFixture(fixture);
        await w.prepare?.(ctx, 1n);
        const before = await snapshot(ctx);
        const caller = await ctx.stranger.getAddress();
        await expect(w.run(ctx, ctx.config.connect(ctx.stranger), ctx.account, 1n))
          .to.be.revertedWithCustomError(ctx.config, "NotAuthorizedCaller")
          .withArgs(caller, ctx.account);
        expect(await snapshot(ctx)).to.equal(before);
      });

      if (w.perGroup) {
        it("reverts when the per-group scope is used on another group", async function () {
          const ctx = await loadFixture(fixture);
          const key = await ctx.usageKey(w.grant([1]));
          await w.prepare?.(ctx, 2n);
          const before = await snapshot(ctx);
          await expect(w.run(ctx, ctx.c, key, 2n)).to.be.revertedWithCustomError(ctx.config, "MissingScope").withArgs(key, w.scope, 2n);
          expect(await snapshot(ctx)).to.equal(before);
        });

        it("succeeds on any group with the wildcard 0", async function () {
          const ctx = await loadFixture(fixture);
          const key = await ctx.usageKey(w.grant([0]));
          await w.prepare?.(ctx, 2n);
          await expect(w.run(ctx, ctx.c, key, 2n)).not.to.be.reverted;
          // a group created after the grant is covered too
          await (await ctx.c.addGroup(ctx.account, "three", "", [], [])).wait();
          await w.prepare?.(ctx, 3n);
          await expect(w.run(ctx, ctx.c, key, 3n)).not.to.be.reverted;
        });

        it("reverts on every group with an empty list", async function () {
          const ctx = await loadFixture(fixture);
          const key = await ctx.usageKey(w.grant([]));
          for (const g of [1n, 2n]) {
            await w.prepare?.(ctx, g);
            const before = await snapshot(ctx);
            await expect(w.run(ctx, ctx.c, key, g)).to.be.revertedWithCustomError(ctx.config, "MissingScope").withArgs(key, w.scope, g);
            expect(await snapshot(ctx)).to.equal(before);
          }
        });

        it("reverts with GroupNotFound on a group that does not exist, even with the wildcard", async function () {
          const ctx = await loadFixture(fixture);
          const key = await ctx.usageKey(w.grant([0]));
          await expect(w.run(ctx, ctx.c, key, 9n)).to.be.revertedWithCustomError(ctx.config, "GroupNotFound").withArgs(ctx.account, 9n);
        });
      }
    });
  }

  describe("owner-only operations", function () {
    const everything = allScopes();

    it("reverts when a usage key with every scope tries to add, update or revoke a key, or transfer ownership", async function () {
      const ctx = await loadFixture(fixture);
      const key = await ctx.usageKey(everything);
      const victim = await ctx.usageKey(perms({ executeInGroups: [1] }));
      const before = JSON.stringify(await ctx.config.listUsageApiKeys(ctx.account, 0, 100), (_k, v) => (typeof v === "bigint" ? v.toString() : v));
      const stranger = await ctx.stranger.getAddress();
      // thunks, sent one at a time, so that no rejection is left unobserved
      const attempts: (() => Promise<ContractTransactionResponse>)[] = [
        () => ctx.c.setUsageApiKey(key, hashOf("minted-by-a-usage-key"), 0, 0, "", "", ...flat(everything)),
        () => ctx.c.setUsageApiKey(key, key, 0, 0, "", "", ...flat(everything)),
        () => ctx.c.setUsageApiKey(key, victim, 0, 0, "", "", ...flat(everything)),
        () => ctx.c.updateUsageApiKeyMetadata(key, victim, "renamed", ""),
        () => ctx.c.removeUsageApiKey(key, victim),
        () => ctx.c.transferAccountOwnership(key, stranger),
      ];
      for (const attempt of attempts) {
        await expect(attempt()).to.be.revertedWithCustomError(ctx.config, "OwnerOnly").withArgs(ctx.account, key);
      }
      const after = JSON.stringify(await ctx.config.listUsageApiKeys(ctx.account, 0, 100), (_k, v) => (typeof v === "bigint" ? v.toString() : v));
      expect(after).to.equal(before);
      expect((await ctx.config.getAccount(ctx.account)).adminWalletAddress).to.equal(await ctx.admin.getAddress());
    });

    it("lets the owner add, update and revoke keys through a payer and directly", async function () {
      const ctx = await loadFixture(fixture);
      const k = hashOf("owner-managed-key");
      await authorize(ctx.c, ctx.account, k);
      await expect(ctx.c.setUsageApiKey(ctx.account, k, 0, 0, "n", "d", ...flat(perms({ executeInGroups: [1] }))))
        .to.emit(ctx.config, "UsageApiKeySet")
        .withArgs(ctx.account, k, true, 0, 0);
      await expect(ctx.config.connect(ctx.admin).setUsageApiKey(ctx.account, k, 0, 0, "n", "d", ...flat(perms({ executeInGroups: [2] }))))
        .to.emit(ctx.config, "UsageApiKeySet")
        .withArgs(ctx.account, k, false, 0, 0);
      await expect(ctx.config.connect(ctx.admin).removeUsageApiKey(ctx.account, k)).to.emit(ctx.config, "UsageApiKeyRemoved").withArgs(ctx.account, k);
    });

    it("cannot be reached through another account's hash", async function () {
      const ctx = await loadFixture(fixture);
      // The admin wallet of `account` naming the other account acts for nobody.
      const x = hashOf("x");
      await expect(ctx.config.connect(ctx.admin).setUsageApiKey(ctx.other, x, 0, 0, "", "", ...flat(perms())))
        .to.be.revertedWithCustomError(ctx.config, "NotAuthorizedCaller")
        .withArgs(await ctx.admin.getAddress(), ctx.other);
    });
  });

  // Issue 16 finding 3: group:manageActions is scoped to the groups it names; action metadata is
  // account-wide, so its writes are the owner's alone (spec 1: "a per-group scope applies only to
  // the groups named when the scope is granted").
  describe("action metadata (addAction, updateActionMetadata, removeAction) is owner-only", function () {
    const CID_NEW = hashOf("QmNotYetRegistered");
    /** The three metadata writes as `actor`, each on its own CID (CID_A and CID_B carry metadata, CID_NEW none). */
    const metadataWrites = (c: AccountConfig, actor: bigint): [string, () => Promise<ContractTransactionResponse>][] => [
      ["addAction", () => c.addAction(actor, "added", "", CID_NEW)],
      ["updateActionMetadata", () => c.updateActionMetadata(actor, CID_B, 0n, "renamed", "")],
      ["removeAction", () => c.removeAction(actor, CID_A)],
    ];
    /** The account's action metadata as listed. */
    const actions = async (ctx: Ctx) => JSON.stringify((await ctx.config.listActions(ctx.account, 0, 100))[0], (_k, v) => (typeof v === "bigint" ? v.toString() : v));
    async function withMetadata() {
      const ctx = await loadFixture(fixture);
      await (await ctx.c.addAction(ctx.account, "a", "", CID_A)).wait();
      await (await ctx.c.addAction(ctx.account, "b", "", CID_B)).wait();
      return ctx;
    }

    const keyRows: [string, Permissions][] = [
      ["group:manageActions on the group that lists the action (group 2 lists CID_B)", perms({ manageIpfsIdsInGroups: [2] })],
      ["group:manageActions on another group", perms({ manageIpfsIdsInGroups: [1] })],
      ["group:manageActions on every group (wildcard 0)", perms({ manageIpfsIdsInGroups: [0] })],
      ["every scope on every group", allScopes()],
      ["no scope", perms()],
    ];
    for (const [label, grant] of keyRows) {
      it(`reverts (OwnerOnly) for a usage key holding ${label}, and changes nothing`, async function () {
        const ctx = await withMetadata();
        const key = await ctx.usageKey(grant);
        const before = await actions(ctx);
        for (const [name, send] of metadataWrites(ctx.c, key)) {
          await expect(send(), name).to.be.revertedWithCustomError(ctx.config, "OwnerOnly").withArgs(ctx.account, key);
        }
        expect(await actions(ctx)).to.equal(before);
      });
    }

    it("succeeds for the owner through an API payer (account key)", async function () {
      const ctx = await withMetadata();
      for (const [name, send] of metadataWrites(ctx.c, ctx.account)) await expect(send(), name).not.to.be.reverted;
      expect((await ctx.config.listActions(ctx.account, 0, 100))[0].map((a) => [a.cidHash, a.name])).to.have.deep.members([
        [CID_B, "renamed"],
        [CID_NEW, "added"],
      ]);
    });

    it("succeeds for the owner's admin wallet calling directly, whichever key of its account it names", async function () {
      const ctx = await withMetadata();
      const key = await ctx.usageKey(perms());
      const direct = ctx.config.connect(ctx.admin);
      for (const [name, send] of metadataWrites(direct, key)) await expect(send(), name).to.emit(ctx.config, name === "addAction" ? "ActionAdded" : name === "removeAction" ? "ActionRemoved" : "ActionMetadataUpdated");
    });

    it("reverts for any caller that is neither a payer nor the admin wallet", async function () {
      const ctx = await withMetadata();
      const before = await actions(ctx);
      const stranger = await ctx.stranger.getAddress();
      for (const [name, send] of metadataWrites(ctx.config.connect(ctx.stranger), ctx.account)) {
        await expect(send(), name).to.be.revertedWithCustomError(ctx.config, "NotAuthorizedCaller").withArgs(stranger, ctx.account);
      }
      expect(await actions(ctx)).to.equal(before);
    });
  });

  describe("addGroup with initial members", function () {
    it("reverts when a key that may only create groups lists PKPs or CIDs", async function () {
      const ctx = await loadFixture(fixture);
      const key = await ctx.usageKey(perms({ canCreateGroups: true, addPkpToGroups: [1], manageIpfsIdsInGroups: [1] }));
      const before = await snapshot(ctx);
      await expect(ctx.c.addGroup(key, "g", "", [], [ctx.pkpA]))
        .to.be.revertedWithCustomError(ctx.config, "MissingScope")
        .withArgs(key, Scope.AddPkp, 3n);
      await expect(ctx.c.addGroup(key, "g", "", [CID_A], []))
        .to.be.revertedWithCustomError(ctx.config, "MissingScope")
        .withArgs(key, Scope.ManageActions, 3n);
      expect(await snapshot(ctx)).to.equal(before);
    });

    it("succeeds for a key with group:create and the wildcard member scopes", async function () {
      const ctx = await loadFixture(fixture);
      const key = await ctx.usageKey(perms({ canCreateGroups: true, addPkpToGroups: [0], manageIpfsIdsInGroups: [0] }));
      await expect(ctx.c.addGroup(key, "g", "", [CID_A], [ctx.pkpA]))
        .to.emit(ctx.config, "GroupCreated")
        .withArgs(ctx.account, 3n, key, "g", "");
      expect((await ctx.config.getGroup(ctx.account, 3n)).pkpCount).to.equal(1n);
    });

    it("reverts when a PKP of another account is listed (the account registered no such wallet)", async function () {
      const ctx = await loadFixture(fixture);
      await expect(ctx.c.addGroup(ctx.account, "g", "", [], [ctx.pkpOther]))
        .to.be.revertedWithCustomError(ctx.config, "PkpNotFound")
        .withArgs(ctx.account, ctx.pkpOther);
      await expect(ctx.c.addPkpToGroup(ctx.account, 1n, ctx.pkpOther))
        .to.be.revertedWithCustomError(ctx.config, "PkpNotFound")
        .withArgs(ctx.account, ctx.pkpOther);
    });
  });

  describe("updateGroup", function () {
    it("replaces the name, description and members (owner)", async function () {
      const ctx = await loadFixture(fixture);
      await expect(ctx.c.updateGroup(ctx.account, 1n, "uno", "first", [CID_B], [ctx.pkpB]))
        .to.emit(ctx.config, "GroupUpdated")
        .withArgs(ctx.account, 1n, ctx.account);
      const [wallets] = await ctx.config.listWalletsInGroup(ctx.account, 1n, 0, 10);
      const [actions] = await ctx.config.listActionsInGroup(ctx.account, 1n, 0, 10);
      expect(wallets.map((w) => w.walletAddress)).to.deep.equal([ctx.pkpB]);
      expect(actions.map((a) => a.cidHash)).to.deep.equal([CID_B]);
      const g = await ctx.config.getGroup(ctx.account, 1n);
      expect([g.name, g.description]).to.deep.equal(["uno", "first"]);
    });

    it("needs all three per-group scopes on the group from a usage key", async function () {
      const ctx = await loadFixture(fixture);
      const partial = await ctx.usageKey(perms({ manageIpfsIdsInGroups: [1], addPkpToGroups: [1] }));
      const before = await snapshot(ctx);
      await expect(ctx.c.updateGroup(partial, 1n, "x", "", [], []))
        .to.be.revertedWithCustomError(ctx.config, "MissingScope")
        .withArgs(partial, Scope.RemovePkp, 1n);
      expect(await snapshot(ctx)).to.equal(before);
      const full = await ctx.usageKey(perms({ manageIpfsIdsInGroups: [1], addPkpToGroups: [1], removePkpFromGroups: [1] }));
      await expect(ctx.c.updateGroup(full, 1n, "x", "", [], [])).not.to.be.reverted;
      await expect(ctx.c.updateGroup(full, 2n, "x", "", [], []))
        .to.be.revertedWithCustomError(ctx.config, "MissingScope")
        .withArgs(full, Scope.ManageActions, 2n);
    });
  });
});

describe("canExecute / findExecutionGroup (execution flow of spec 1)", function () {
  it("allows a key with execute on a group that lists both the CID and the PKP, with that group as witness", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(true);
    expect(await ctx.config.canExecute(key, CID_A, ZeroAddress, 1n)).to.equal(true); // action without a PKP
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpA)).to.deep.equal([true, 1n]);
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 2n)).to.equal(false); // wrong witness
  });

  it("rejects a CID that the permitted group does not list", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    expect(await ctx.config.canExecute(key, CID_B, ctx.pkpA, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(key, hashOf("QmUnknown"), ZeroAddress, 1n)).to.equal(false);
    expect(await ctx.config.findExecutionGroup(key, CID_B, ctx.pkpA)).to.deep.equal([false, 0n]);
  });

  it("rejects a PKP that the permitted group does not list, even when another group lists it", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpB, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(key, CID_B, ctx.pkpB, 2n)).to.equal(false); // no execute on group 2
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpB)).to.deep.equal([false, 0n]);
  });

  it("rejects a PKP of another account, also through the wildcard", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpOther, 1n)).to.equal(false);
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpOther)).to.deep.equal([false, 0n]);
  });

  it("widens the groups with the wildcard 0 but never skips the listing", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    expect(await ctx.config.canExecute(key, CID_B, ctx.pkpB, 2n)).to.equal(true);
    expect(await ctx.config.findExecutionGroup(key, CID_B, ctx.pkpB)).to.deep.equal([true, 2n]);
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpB, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpB, 2n)).to.equal(false);
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpB)).to.deep.equal([false, 0n]);
  });

  it("grants nothing with an empty execute list", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ manageIpfsIdsInGroups: [0], addPkpToGroups: [0] }));
    for (const [cid, pkp, g] of [
      [CID_A, ctx.pkpA, 1n],
      [CID_B, ctx.pkpB, 2n],
    ] as const) {
      expect(await ctx.config.canExecute(key, cid, pkp, g)).to.equal(false);
    }
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpA)).to.deep.equal([false, 0n]);
  });

  it("lets the account key run any action with its own PKPs only", async function () {
    const ctx = await loadFixture(fixture);
    expect(await ctx.config.canExecute(ctx.account, hashOf("QmAnything"), ctx.pkpA, 0n)).to.equal(true);
    expect(await ctx.config.canExecute(ctx.account, hashOf("QmAnything"), ZeroAddress, 0n)).to.equal(true);
    expect(await ctx.config.canExecute(ctx.account, CID_A, ctx.pkpOther, 0n)).to.equal(false);
    expect(await ctx.config.findExecutionGroup(ctx.account, CID_A, ctx.pkpA)).to.deep.equal([true, 0n]);
  });

  it("denies on the very next block after a permission is removed on chain", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(true);
    await (await ctx.c.removeActionFromGroup(ctx.account, 1n, CID_A)).wait();
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(false);
    await (await ctx.c.addActionToGroup(ctx.account, 1n, CID_A)).wait();
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(true);
    await (await ctx.c.removePkpFromGroup(ctx.account, 1n, ctx.pkpA)).wait();
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(key, CID_A, ZeroAddress, 1n)).to.equal(true);
    await (await ctx.c.removeGroup(ctx.account, 1n)).wait();
    expect(await ctx.config.canExecute(key, CID_A, ZeroAddress, 1n)).to.equal(false);
  });

  it("denies a revoked key and an unknown key", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    await (await ctx.c.removeUsageApiKey(ctx.account, key)).wait();
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(hashOf("never-issued"), CID_A, ctx.pkpA, 1n)).to.equal(false);
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpA)).to.deep.equal([false, 0n]);
  });

  it("replaces the whole permission set on update", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    await (await ctx.c.setUsageApiKey(ctx.account, key, 0, 0, "k", "", ...flat(perms({ executeInGroups: [2] })))).wait();
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpA, 1n)).to.equal(false);
    expect(await ctx.config.canExecute(key, CID_B, ctx.pkpB, 2n)).to.equal(true);
  });

  it("is not confused by a group id of another account", async function () {
    const ctx = await loadFixture(fixture);
    // The other account's group 1 lists CID_A and pkpOther; our key's group 1 is ours.
    const key = await ctx.usageKey(perms({ executeInGroups: [1] }));
    expect(await ctx.config.canExecute(key, CID_A, ctx.pkpOther, 1n)).to.equal(false);
  });

  it("costs the same with 1 and with many groups when given the witness", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const few = await ctx.config.canExecute.estimateGas(key, CID_B, ctx.pkpB, 2n);
    for (let i = 0; i < 50; i++) await (await ctx.c.addGroup(ctx.account, `g${i}`, "", [], [])).wait();
    await (await ctx.c.addActionToGroup(ctx.account, 52n, CID_B)).wait();
    await (await ctx.c.addPkpToGroup(ctx.account, 52n, ctx.pkpB)).wait();
    const many = await ctx.config.canExecute.estimateGas(key, CID_B, ctx.pkpB, 52n);
    expect(Number(many)).to.be.at.most(Number(few) * 1.05);
  });
});


// Red-team finding 6c: with the wildcard, finding a group that lists the CID and the PKP walked every
// group of the account, so an account with thousands of groups made every run's check expensive.
describe("findExecutionGroup with the wildcard: its work does not grow with the account's groups", function () {
  this.timeout(300_000);
  const gasOf = (ctx: Ctx, key: bigint, cid: bigint, pkp: string) => ctx.config.findExecutionGroup.estimateGas(key, cid, pkp);

  /** The four questions a run asks with a wildcard key: allowed and denied, with and without a PKP. */
  async function checks(ctx: Ctx, key: bigint) {
    const unlisted = hashOf("QmListedNowhere");
    expect(await ctx.config.findExecutionGroup(key, CID_B, ctx.pkpB)).to.deep.equal([true, 2n]);
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpB)).to.deep.equal([false, 0n]);
    expect(await ctx.config.findExecutionGroup(key, CID_B, ZeroAddress)).to.deep.equal([true, 2n]);
    expect(await ctx.config.findExecutionGroup(key, unlisted, ZeroAddress)).to.deep.equal([false, 0n]);
    return Promise.all([gasOf(ctx, key, CID_B, ctx.pkpB), gasOf(ctx, key, CID_A, ctx.pkpB), gasOf(ctx, key, CID_B, ZeroAddress), gasOf(ctx, key, unlisted, ZeroAddress)]);
  }

  it("costs the same gas with 2 groups and with 300 more that list neither the CID nor the PKP", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const few = await checks(ctx, key);
    for (let i = 0; i < 300; i++) await (await ctx.c.addGroup(ctx.account, `empty ${i}`, "", [], [])).wait();
    for (let i = 0; i < 20; i++) await (await ctx.c.addGroup(ctx.account, `other members ${i}`, "", [hashOf(`QmOther${i}`)], [SPARE_TO_ADD])).wait();
    expect(await checks(ctx, key)).to.deep.equal(few);
  });

  it("costs the same gas when 100 groups each list the CID with their own PKP as when 2 do (a group per end user)", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const pkps: string[] = [];
    const addUser = async (i: number) => {
      // No zero byte: a zero byte of calldata costs 4 gas, any other 16, and the gas is compared.
      let pkp = Wallet.createRandom().address;
      while (/^0x(?:..)*?00/.test(pkp.toLowerCase())) pkp = Wallet.createRandom().address;
      await (await ctx.c.registerWalletDerivation(ctx.account, pkp, 1000n + BigInt(i), `user ${i}`, "")).wait();
      await (await ctx.c.addGroup(ctx.account, `user ${i}`, "", [CID_A], [pkp])).wait();
      pkps.push(pkp);
    };
    // The first user's group is the oldest in the CID's index, the newest user's the first.
    const gas = () => Promise.all([gasOf(ctx, key, CID_A, pkps[0]), gasOf(ctx, key, CID_A, pkps.at(-1)!), gasOf(ctx, key, CID_B, pkps[0])]);
    for (let i = 0; i < 2; i++) await addUser(i);
    const two = await gas();
    for (let i = 2; i < 100; i++) await addUser(i);
    expect(await ctx.config.findExecutionGroup(key, CID_A, pkps[0])).to.deep.equal([true, 3n]);
    expect(await ctx.config.findExecutionGroup(key, CID_A, pkps[99])).to.deep.equal([true, 102n]);
    expect(await ctx.config.findExecutionGroup(key, CID_B, pkps[0])).to.deep.equal([false, 0n]); // an action the user's group does not list
    expect(await gas()).to.deep.equal(two);
  });

  it("follows every change of the listing: removed from a group, re-added, replaced by updateGroup, group removed", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const found = (cid: bigint, pkp: string) => ctx.config.findExecutionGroup(key, cid, pkp);
    await (await ctx.c.removeActionFromGroup(ctx.account, 2n, CID_B)).wait();
    expect(await found(CID_B, ctx.pkpB)).to.deep.equal([false, 0n]);
    expect(await found(CID_B, ZeroAddress)).to.deep.equal([false, 0n]);
    await (await ctx.c.addActionToGroup(ctx.account, 2n, CID_B)).wait();
    expect(await found(CID_B, ctx.pkpB)).to.deep.equal([true, 2n]);
    await (await ctx.c.removePkpFromGroup(ctx.account, 2n, ctx.pkpB)).wait();
    expect(await found(CID_B, ctx.pkpB)).to.deep.equal([false, 0n]);
    expect(await found(CID_B, ZeroAddress)).to.deep.equal([true, 2n]);
    // updateGroup replaces the members: what it drops is no longer found, what it lists is.
    await (await ctx.c.updateGroup(ctx.account, 2n, "two", "", [CID_A], [ctx.pkpB])).wait();
    expect(await found(CID_B, ZeroAddress)).to.deep.equal([false, 0n]);
    expect(await found(CID_A, ctx.pkpB)).to.deep.equal([true, 2n]);
    expect(await found(CID_A, ctx.pkpA)).to.deep.equal([true, 1n]);
    await (await ctx.c.removeGroup(ctx.account, 1n)).wait();
    expect(await found(CID_A, ctx.pkpA)).to.deep.equal([false, 0n]);
    expect(await found(CID_A, ZeroAddress)).to.deep.equal([true, 2n]);
    await (await ctx.c.removeGroup(ctx.account, 2n)).wait();
    expect(await found(CID_A, ZeroAddress)).to.deep.equal([false, 0n]);
  });

  it("never skips the listing: a CID and a PKP in many groups, never together, are refused", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    for (let i = 0; i < 15; i++) {
      await (await ctx.c.addGroup(ctx.account, `cid ${i}`, "", [CID_A], [])).wait();
      await (await ctx.c.addGroup(ctx.account, `pkp ${i}`, "", [], [ctx.pkpB])).wait();
    }
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpB)).to.deep.equal([false, 0n]);
    await (await ctx.c.addPkpToGroup(ctx.account, 3n, ctx.pkpB)).wait(); // the oldest "cid" group: last in both indexes
    expect(await ctx.config.findExecutionGroup(key, CID_A, ctx.pkpB)).to.deep.equal([true, 3n]);
  });

  it("skips what a group grown past one write's members listed before its update (left in the index, never found)", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const cids = Array.from({ length: 14 }, (_, i) => hashOf(`QmGrown${i}`));
    await (await ctx.c.addGroup(ctx.account, "grown", "", cids.slice(0, 10), [])).wait();
    for (const cid of cids.slice(10)) await (await ctx.c.addActionToGroup(ctx.account, 3n, cid)).wait();
    for (const cid of cids) expect(await ctx.config.findExecutionGroup(key, cid, ZeroAddress)).to.deep.equal([true, 3n]);
    await (await ctx.c.updateGroup(ctx.account, 3n, "grown", "", [cids[13]], [])).wait();
    for (const cid of cids.slice(0, 13)) expect(await ctx.config.findExecutionGroup(key, cid, ZeroAddress)).to.deep.equal([false, 0n]);
    expect(await ctx.config.findExecutionGroup(key, cids[13], ZeroAddress)).to.deep.equal([true, 3n]);
    await (await ctx.c.removeGroup(ctx.account, 3n)).wait();
    for (const cid of cids) expect(await ctx.config.findExecutionGroup(key, cid, ZeroAddress)).to.deep.equal([false, 0n]);
    // re-listed elsewhere, each is found again
    await (await ctx.c.addGroup(ctx.account, "again", "", [cids[0], cids[5]], [])).wait();
    expect(await ctx.config.findExecutionGroup(key, cids[0], ZeroAddress)).to.deep.equal([true, 4n]);
    expect(await ctx.config.findExecutionGroup(key, cids[5], ZeroAddress)).to.deep.equal([true, 4n]);
  });

  it("costs the same gas after 100 short-lived groups listed the CID and were removed", async function () {
    const ctx = await loadFixture(fixture);
    const key = await ctx.usageKey(perms({ executeInGroups: [0] }));
    const before = await checks(ctx, key);
    for (let i = 0; i < 100; i++) {
      const receipt = await (await ctx.c.addGroup(ctx.account, `session ${i}`, "", [CID_B, CID_A], [ctx.pkpA])).wait();
      const id = ctx.config.interface.parseLog(receipt!.logs[0])!.args.groupId as bigint;
      await (await ctx.c.removeGroup(ctx.account, id)).wait();
    }
    expect(await checks(ctx, key)).to.deep.equal(before);
  });
});
