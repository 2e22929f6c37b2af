import { Wallet } from "ethers";
import { authorize, deployAccountConfig, flat, hashOf, perms } from "../test/helpers/accountConfig";
import { LIMITS } from "../protocol/limits";
import { usageKeySeal } from "../protocol/usageKeySeal";

export type WorstRow = { write: string; gas: bigint };

/** A string of exactly `bytes` bytes of UTF-8, all non-zero (the most calldata and storage a string can cost). */
const text = (bytes: number, seed: string) => seed.repeat(Math.ceil(bytes / seed.length)).slice(0, bytes);

/**
 * The worst-case gas of every relayed write at the limits of relayer/limits.ts (names and
 * descriptions at their byte limits, every list full of fresh items, storage written from zero),
 * as an API payer pays it. Writes that take a usage key as actor are measured with one (the scope
 * reads make it the dearer path).
 */
export async function worstCaseGas(): Promise<WorstRow[]> {
  const { config, payer } = await deployAccountConfig();
  const c = config.connect(payer);
  const rows: WorstRow[] = [];
  const measure = async (write: string, tx: Promise<{ wait: () => Promise<{ gasUsed: bigint } | null> }>) => {
    rows.push({ write, gas: (await (await tx).wait())!.gasUsed });
  };
  const name = () => text(LIMITS.nameBytes, "n");
  const description = () => text(LIMITS.descriptionBytes, "d");
  const members = LIMITS.groupMembers;
  let fresh = 0;
  const freshCids = () => Array.from({ length: members }, () => hashOf(`worst-case cid ${fresh++}`));

  const account = hashOf("worst-case account key");
  await measure("newAccount", c.newAccount(account, true, name(), description(), Wallet.createRandom().address));
  const pkps: string[] = [];
  for (let i = 0; i < members * 2; i++) pkps.push(Wallet.createRandom().address);
  await measure("registerWalletDerivation", c.registerWalletDerivation(account, pkps[0], 1n, name(), description()));
  for (let i = 1; i < pkps.length; i++) await (await c.registerWalletDerivation(account, pkps[i], BigInt(i + 1), "", "")).wait();

  // Groups for the permission lists, then the usage key with every list full.
  const groupIds: bigint[] = [];
  for (let i = 0; i < LIMITS.permissionGroups; i++) {
    await (await c.addGroup(account, `g${i}`, "", [], [])).wait();
    groupIds.push(BigInt(i + 1));
  }
  const full = () =>
    perms({ canCreateGroups: true, canDeleteGroups: true, canCreatePkps: true, manageIpfsIdsInGroups: groupIds, addPkpToGroups: groupIds, removePkpFromGroups: groupIds, executeInGroups: groupIds });
  const key = hashOf("worst-case usage key");
  await measure("authorizeUsageApiKey", c.authorizeUsageApiKey(account, usageKeySeal(key)));
  await measure("setUsageApiKey (new, full lists)", c.setUsageApiKey(account, key, 0, 0, name(), description(), ...flat(full())));
  await measure("setUsageApiKey (update, full lists)", c.setUsageApiKey(account, key, 0, 0, name(), description(), ...flat(full())));
  const plain = hashOf("worst-case plain key"); // created without metadata: the update writes every slot from zero
  await authorize(c, account, plain);
  await (await c.setUsageApiKey(account, plain, 0, 0, "", "", ...flat(perms()))).wait();
  await measure("updateUsageApiKeyMetadata", c.updateUsageApiKeyMetadata(account, plain, name(), description()));

  // Group writes by a usage key holding the member scopes on every group (wildcards).
  const scoped = hashOf("worst-case scoped key");
  const wild = perms({ canCreateGroups: true, canCreatePkps: true, manageIpfsIdsInGroups: [0], addPkpToGroups: [0], removePkpFromGroups: [0] });
  await authorize(c, account, scoped);
  await (await c.setUsageApiKey(account, scoped, 0, 0, "", "", ...flat(wild))).wait();
  await measure("addGroup [usage key], full lists", c.addGroup(scoped, name(), description(), freshCids(), pkps.slice(0, members)));
  const groupId = BigInt(LIMITS.permissionGroups + 1);
  await measure("updateGroup [usage key], full lists", c.updateGroup(scoped, groupId, name(), description(), freshCids(), pkps.slice(members)));
  await measure("updateGroupMetadata [usage key]", c.updateGroupMetadata(scoped, groupId, name(), description()));
  await measure("registerWalletDerivation [usage key]", c.registerWalletDerivation(scoped, Wallet.createRandom().address, 99999n, name(), description()));
  await measure("addActionToGroup [usage key]", c.addActionToGroup(scoped, groupId, hashOf("worst-case single cid")));
  await measure("addPkpToGroup [usage key]", c.addPkpToGroup(scoped, groupId, pkps[0]));
  await measure("removeActionFromGroup [usage key]", c.removeActionFromGroup(scoped, groupId, hashOf("worst-case single cid")));
  await measure("removePkpFromGroup [usage key]", c.removePkpFromGroup(scoped, groupId, pkps[0]));

  const cid = hashOf("worst-case action");
  await measure("addAction", c.addAction(account, name(), description(), cid));
  const unnamed = hashOf("worst-case unnamed action"); // registered without metadata: the update writes every slot from zero
  await (await c.addAction(account, "", "", unnamed)).wait();
  await measure("updateActionMetadata", c.updateActionMetadata(account, unnamed, 0n, name(), description()));
  await measure("removeAction", c.removeAction(account, cid));
  await measure("removeGroup", c.removeGroup(account, groupId));
  await measure("removeUsageApiKey", c.removeUsageApiKey(account, key));
  await measure("transferAccountOwnership", c.transferAccountOwnership(account, Wallet.createRandom().address));
  await measure("convertToChainSecuredAccount", c.convertToChainSecuredAccount(account, Wallet.createRandom().address));
  return rows;
}

export async function printWorstCaseGas() {
  console.log(
    `== AccountConfig worst-case gas per relayed write at the limits (names ${LIMITS.nameBytes} B, descriptions ${LIMITS.descriptionBytes} B, ` +
      `${LIMITS.groupMembers} PKPs + ${LIMITS.groupMembers} CIDs per group write, ${LIMITS.permissionGroups} groups per permission list)`,
  );
  const rows = await worstCaseGas();
  for (const { write, gas } of rows) console.log(`${write.padEnd(40)} ${gas.toString().padStart(9)}`);
  const max = rows.reduce((a, b) => (b.gas > a.gas ? b : a));
  console.log(`(largest: ${max.write}, ${max.gas} gas)`);
}
