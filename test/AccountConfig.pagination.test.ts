import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { BigNumberish } from "ethers";
import { createManagedAccount, deployAccountConfig, hashOf, perms, type AccountConfig } from "./helpers/accountConfig";
import { WHOLE, accountState, addGroup, cidHash, expectRejected, pkpAddress, plain, registerWallet, setUsageKey } from "./helpers/scenario";

const N = 5; // items of each list in the full account: two full pages of 2 and a partial one
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const usageKeyHash = (i: number) => hashOf(`paged usage key ${i}`);
const usageKeyPerms = (i: number) => perms({ canCreateGroups: i % 2 === 1, executeInGroups: [i] });

describe("AccountConfig: pagination", function () {
  /**
   * A full account: wallets 1..5; action metadata for CIDs 1..5; groups 1..5, group 1 holding
   * wallets 1..5 and CIDs 1, 2, 3, 6, 7 (6 and 7 without metadata), the others empty; usage keys
   * 1..5. And an account with nothing at all.
   */
  async function paginationFixture() {
    const { config, payer } = await deployAccountConfig();
    const [, , , admin, emptyAdmin] = await ethers.getSigners();
    const relay = config.connect(payer);
    const account = await createManagedAccount(config, payer, "paged account key", admin.address);
    const emptyAccount = await createManagedAccount(config, payer, "empty account key", emptyAdmin.address);
    const wallets = [];
    for (const i of range(1, N)) wallets.push(await registerWallet(relay, account, i));
    for (const i of range(1, N)) await relay.addAction(account, `action ${i}`, `action ${i} description`, cidHash(i));
    await addGroup(relay, account, "group 1", wallets, [1, 2, 3, 6, 7].map(cidHash));
    for (const i of range(2, N)) await addGroup(relay, account, `group ${i}`);
    for (const i of range(1, N)) {
      await setUsageKey(relay, account, usageKeyHash(i), usageKeyPerms(i), {
        balance: BigInt(i),
        name: `key ${i}`,
        description: `key ${i} description`,
      });
    }
    return { config, relay, account, emptyAccount };
  }
  type Fixture = Awaited<ReturnType<typeof paginationFixture>>;

  const wallet = (i: number) => ({
    walletAddress: pkpAddress(i),
    derivationPath: 1000n + BigInt(i),
    name: `wallet ${i}`,
    description: `wallet ${i} description`,
  });
  const action = (i: number, registered = true) => ({
    cidHash: cidHash(i),
    name: registered ? `action ${i}` : "",
    description: registered ? `action ${i} description` : "",
  });

  type Page = Promise<[unknown, bigint]>;
  type ListCase = {
    view: string;
    /** The view on (account, group); account-wide views ignore the group. */
    list: (c: AccountConfig, account: bigint, groupId: bigint, page: BigNumberish, size: BigNumberish) => Page;
    /** Whether the view lists the members of one group. */
    perGroup: boolean;
    expected: () => unknown[];
    /** Removes expected()[removedIndex] (none: the list has no removal). */
    remove?: (f: Fixture) => Promise<unknown>;
    removedIndex?: number;
    /** Tests of this view alone. */
    more?: () => void;
  };

  const CASES: ListCase[] = [
    {
      view: "listGroups",
      list: (c, a, _g, p, s) => c.listGroups(a, p, s),
      perGroup: false,
      expected: () =>
        range(1, N).map((i) => ({
          id: BigInt(i),
          name: `group ${i}`,
          description: `group ${i} description`,
          pkpCount: i === 1 ? 5n : 0n,
          cidCount: i === 1 ? 5n : 0n,
        })),
      remove: (f) => f.relay.removeGroup(f.account, 3),
      removedIndex: 2,
    },
    {
      view: "listWallets",
      list: (c, a, _g, p, s) => c.listWallets(a, p, s),
      perGroup: false,
      expected: () => range(1, N).map(wallet),
    },
    {
      view: "listWalletsInGroup",
      list: (c, a, g, p, s) => c.listWalletsInGroup(a, g, p, s),
      perGroup: true,
      expected: () => range(1, N).map(wallet),
      remove: (f) => f.relay.removePkpFromGroup(f.account, 1, pkpAddress(2)),
      removedIndex: 1,
    },
    {
      view: "listActions",
      list: (c, a, _g, p, s) => c.listActions(a, p, s),
      perGroup: false,
      expected: () => range(1, N).map((i) => action(i)),
      remove: (f) => f.relay.removeAction(f.account, cidHash(2)),
      removedIndex: 1,
      more: () =>
        it("shows metadata updates", async function () {
          const f = await loadFixture(paginationFixture);
          await f.relay.updateActionMetadata(f.account, cidHash(3), 0n, "renamed", "redescribed");
          const [items] = await f.config.listActions(f.account, 1, 2);
          expect(plain(items)).to.deep.equal([{ ...action(3), name: "renamed", description: "redescribed" }, action(4)]);
        }),
    },
    {
      view: "listActionsInGroup",
      list: (c, a, g, p, s) => c.listActionsInGroup(a, g, p, s),
      perGroup: true,
      expected: () => [action(1), action(2), action(3), action(6, false), action(7, false)],
      remove: (f) => f.relay.removeActionFromGroup(f.account, 1, cidHash(6)),
      removedIndex: 3,
      more: () =>
        it("keeps listing a CID whose metadata was removed, with empty strings", async function () {
          const f = await loadFixture(paginationFixture);
          await f.relay.removeAction(f.account, cidHash(1));
          const [items, total] = await f.config.listActionsInGroup(f.account, 1, 0, WHOLE);
          expect({ items: plain(items), total }).to.deep.equal({
            items: [action(1, false), action(2), action(3), action(6, false), action(7, false)],
            total: 5n,
          });
        }),
    },
    {
      view: "listUsageApiKeys",
      list: (c, a, _g, p, s) => c.listUsageApiKeys(a, p, s),
      perGroup: false,
      expected: () =>
        range(1, N).map((i) => ({
          usageApiKeyHash: usageKeyHash(i),
          expiration: 0n,
          balance: BigInt(i),
          name: `key ${i}`,
          description: `key ${i} description`,
          permissions: usageKeyPerms(i),
        })),
      remove: (f) => f.relay.removeUsageApiKey(f.account, usageKeyHash(1)),
      removedIndex: 0,
    },
  ];

  for (const c of CASES) {
    describe(c.view, function () {
      /** A page of the full account (group 1) as plain values. */
      async function page(f: Fixture, pageNumber: BigNumberish, pageSize: BigNumberish) {
        const [items, total] = await c.list(f.config, f.account, 1n, pageNumber, pageSize);
        return { items: plain(items), total };
      }

      it(`returns no items and a total of 0 for an empty ${c.perGroup ? "group" : "account"}`, async function () {
        const f = await loadFixture(paginationFixture);
        const [account, groupId] = c.perGroup ? [f.account, 2n] : [f.emptyAccount, 1n];
        for (const [p, s] of [
          [0n, 10n],
          [0n, WHOLE],
          [1n, 1n],
        ]) {
          const [items, total] = await c.list(f.config, account, groupId, p, s);
          expect({ items: plain(items), total }).to.deep.equal({ items: [], total: 0n });
        }
      });

      it("returns full pages in order, with their fields", async function () {
        const f = await loadFixture(paginationFixture);
        const all = c.expected();
        expect(await page(f, 0, 2)).to.deep.equal({ items: all.slice(0, 2), total: BigInt(N) });
        expect(await page(f, 1, 2)).to.deep.equal({ items: all.slice(2, 4), total: BigInt(N) });
        expect(await page(f, 0, N)).to.deep.equal({ items: all, total: BigInt(N) });
      });

      it("returns the last, partial page", async function () {
        const f = await loadFixture(paginationFixture);
        expect(await page(f, 2, 2)).to.deep.equal({ items: c.expected().slice(4), total: BigInt(N) });
        expect(await page(f, 0, N + 1)).to.deep.equal({ items: c.expected(), total: BigInt(N) });
      });

      it("returns an empty page past the end, with the right total", async function () {
        const f = await loadFixture(paginationFixture);
        for (const [p, s] of [
          [3, 2],
          [1, N],
          [7, 1],
          [100, 3],
        ]) {
          expect(await page(f, p, s)).to.deep.equal({ items: [], total: BigInt(N) });
        }
      });

      it("returns an empty page for a page size of 0", async function () {
        const f = await loadFixture(paginationFixture);
        for (const p of [0n, 1n, WHOLE]) expect(await page(f, p, 0)).to.deep.equal({ items: [], total: BigInt(N) });
      });

      it("does not revert on huge page numbers and sizes", async function () {
        const f = await loadFixture(paginationFixture);
        const all = { items: c.expected(), total: BigInt(N) };
        const none = { items: [], total: BigInt(N) };
        const cases: [bigint, bigint, unknown][] = [
          [2n ** 255n, 1n, none],
          [2n ** 255n, 2n, none],
          [WHOLE, 1n, none],
          [WHOLE, WHOLE, none],
          [1n, WHOLE, none],
          [2n ** 128n, 2n ** 128n, none],
          [0n, 2n ** 255n, all],
          [0n, WHOLE, all],
        ];
        for (const [p, s, expected] of cases) expect(await page(f, p, s), `page ${p}, size ${s}`).to.deep.equal(expected);
      });

      if (c.remove) {
        const { remove, removedIndex } = c;
        it("drops a removed item", async function () {
          const f = await loadFixture(paginationFixture);
          await remove(f);
          const left = c.expected().filter((_, i) => i !== removedIndex);
          const { items, total } = await page(f, 0, WHOLE);
          expect(total).to.equal(BigInt(N - 1));
          expect(items).to.have.deep.members(left);
        });
      }

      if (c.perGroup) {
        it("reverts when the group does not exist, was removed or is another account's", async function () {
          const f = await loadFixture(paginationFixture);
          await f.relay.removeGroup(f.account, 3);
          for (const [account, groupId] of [
            [f.account, 0n],
            [f.account, 99n],
            [f.account, 3n],
            [f.emptyAccount, 1n],
          ]) {
            await expectRejected(
              f.config,
              () => c.list(f.config, account, groupId, 0, 10),
              "GroupNotFound",
              [account, groupId],
              () => accountState(f.config, f.account)
            );
          }
        });
      }

      c.more?.();
    });
  }
});
