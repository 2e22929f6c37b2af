import { loadFixture } from "@nomicfoundation/hardhat-toolbox/network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import type { ContractTransactionResponse } from "ethers";
import { chainSecuredHash, flat, hashOf, perms, type AccountConfig } from "./helpers/accountConfig";
import { accountState, cidHash, expectRejected, managedAccountScenario, registerWallet } from "./helpers/scenario";
import { LIMITS } from "../protocol/limits";

/** `n` bytes of UTF-8 made of two-byte characters (so that a limit in characters would let twice as many bytes through). */
const bytes = (n: number) => "é".repeat(Math.floor(n / 2)) + "x".repeat(n % 2);

/**
 * Issue 16 finding 5: every string and list of every write is bounded, in bytes of UTF-8, by the
 * contract itself (the HTTP edge enforces the same numbers, relayer/limits.ts), which bounds the gas
 * an API payer can be made to spend on one write.
 */
describe("AccountConfig: limits of every write", function () {
  /** The managed scenario, plus a ChainSecured account and ten spare PKPs (one more than a group write may list). */
  async function limitsFixture() {
    const s = await managedAccountScenario();
    const pkps: string[] = [];
    for (let i = 0; i <= LIMITS.groupMembers; i++) pkps.push(await registerWallet(s.relay, s.account, 100 + i));
    return { ...s, pkps };
  }
  type Fixture = Awaited<ReturnType<typeof limitsFixture>>;

  it("publishes the limits the HTTP edge enforces (relayer/limits.ts)", async function () {
    const { config } = await loadFixture(limitsFixture);
    expect({
      nameBytes: await config.MAX_NAME_BYTES(),
      descriptionBytes: await config.MAX_DESCRIPTION_BYTES(),
      groupMembers: await config.MAX_GROUP_MEMBERS(),
      permissionGroups: await config.MAX_PERMISSION_GROUPS(),
    }).to.deep.equal(Object.fromEntries(Object.entries(LIMITS).map(([k, v]) => [k, BigInt(v)])));
  });

  /** Every write that stores a name and a description, sending `name` and `description`. */
  const TEXT_WRITES: [string, (s: Fixture, name: string, description: string) => Promise<ContractTransactionResponse>][] = [
    ["newAccount", (s, n, d) => s.relay.newAccount(hashOf(`a new account ${n.length} ${d.length}`), true, n, d, s.wallet.address)],
    ["newChainSecuredAccount", (s, n, d) => s.config.connect(s.wallet2).newChainSecuredAccount(n, d)],
    [
      "setUsageApiKey",
      async (s, n, d) => {
        // the admin wallet registers (no reservation needed, so a refusal leaves nothing behind)
        const key = hashOf(`a new usage key ${n.length} ${d.length}`);
        return s.config.connect(s.admin).setUsageApiKey(s.account, key, 0, 0, n, d, ...flat(perms()));
      },
    ],
    ["updateUsageApiKeyMetadata", (s, n, d) => s.relay.updateUsageApiKeyMetadata(s.account, s.usageKey, n, d)],
    ["addGroup", (s, n, d) => s.relay.addGroup(s.account, n, d, [], [])],
    ["updateGroup", (s, n, d) => s.relay.updateGroup(s.account, s.group1, n, d, [], [])],
    ["updateGroupMetadata", (s, n, d) => s.relay.updateGroupMetadata(s.account, s.group1, n, d)],
    ["registerWalletDerivation", (s, n, d) => s.relay.registerWalletDerivation(s.account, ethers.Wallet.createRandom().address, 5n, n, d)],
    ["addAction", (s, n, d) => s.relay.addAction(s.account, n, d, hashOf(`a new action ${n.length} ${d.length}`))],
    ["updateActionMetadata", (s, n, d) => s.relay.updateActionMetadata(s.account, cidHash(1), 0n, n, d)],
  ];

  /** The state a refused write must leave unchanged: the managed account, and the would-be ChainSecured account. */
  const state = (s: Fixture) => async () => [await accountState(s.config, s.account), await s.config.accountExists(chainSecuredHash(s.wallet2.address))];

  for (const [write, send] of TEXT_WRITES) {
    describe(write, function () {
      it("reverts when the name is longer than MAX_NAME_BYTES bytes of UTF-8, and changes nothing", async function () {
        const s = await loadFixture(limitsFixture);
        const over = bytes(LIMITS.nameBytes + 1);
        await expectRejected(s.config, () => send(s, over, ""), "NameTooLong", [LIMITS.nameBytes + 1, LIMITS.nameBytes], state(s));
      });

      it("reverts when the description is longer than MAX_DESCRIPTION_BYTES bytes of UTF-8, and changes nothing", async function () {
        const s = await loadFixture(limitsFixture);
        const over = bytes(LIMITS.descriptionBytes + 1);
        await expectRejected(s.config, () => send(s, "n", over), "DescriptionTooLong", [LIMITS.descriptionBytes + 1, LIMITS.descriptionBytes], state(s));
      });

      it("accepts a name and a description of exactly the limits", async function () {
        const s = await loadFixture(limitsFixture);
        await expect(send(s, bytes(LIMITS.nameBytes), bytes(LIMITS.descriptionBytes))).not.to.be.reverted;
      });
    });
  }

  describe("addGroup and updateGroup member lists", function () {
    const groupWrites: [string, (c: AccountConfig, s: Fixture, pkps: string[], cids: bigint[]) => Promise<ContractTransactionResponse>][] = [
      ["addGroup", (c, s, pkps, cids) => c.addGroup(s.account, "g", "", cids, pkps)],
      ["updateGroup", (c, s, pkps, cids) => c.updateGroup(s.account, s.group1, "g", "", cids, pkps)],
    ];
    const cids = (n: number) => Array.from({ length: n }, (_, i) => hashOf(`member cid ${i}`));

    for (const [write, send] of groupWrites) {
      it(`${write}: reverts with more than MAX_GROUP_MEMBERS PKPs or CIDs, and accepts exactly that many`, async function () {
        const s = await loadFixture(limitsFixture);
        const max = LIMITS.groupMembers;
        await expectRejected(s.config, () => send(s.relay, s, s.pkps, []), "TooManyItems", [max + 1, max], state(s));
        await expectRejected(s.config, () => send(s.relay, s, [], cids(max + 1)), "TooManyItems", [max + 1, max], state(s));
        await expect(send(s.relay, s, s.pkps.slice(0, max), cids(max))).not.to.be.reverted;
      });
    }
  });
});
