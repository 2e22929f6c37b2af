import { expect } from "chai";
import { ethers } from "hardhat";
import { Result, type Signer } from "ethers";
import { authorize, createManagedAccount, deployAccountConfig, flat, hashOf, perms, type AccountConfig, type Permissions } from "./accountConfig";

export const ACCOUNT_KEY = "vesta-account-key";
export const USAGE_KEY = "vesta-usage-key";
/** pageSize that fits any list in one page. */
export const WHOLE = ethers.MaxUint256;

/** A deterministic, non-zero PKP (wallet) address. */
export const pkpAddress = (n: number): string => ethers.getAddress(ethers.toBeHex(0x1000 + n, 20));

/** keccak256 of a made-up action CID. */
export const cidHash = (n: number): bigint => hashOf(`bafy-action-${n}`);

/** The Scope enum of contracts/types/AccountConfigTypes.sol. */
export const Scope = { CreateGroups: 0, DeleteGroups: 1, CreatePkps: 2, ManageActions: 3, AddPkp: 4, RemovePkp: 5, Execute: 6 } as const;

/** A permission set that holds every scope on every group (the wildcard [0] everywhere). */
export const allScopes = (): Permissions =>
  perms({
    canCreateGroups: true,
    canDeleteGroups: true,
    canCreatePkps: true,
    manageIpfsIdsInGroups: [0],
    addPkpToGroups: [0],
    removePkpFromGroups: [0],
    executeInGroups: [0],
  });

/** Turns ethers Results (structs, arrays, tuples) into plain objects and arrays, for deep comparisons. */
export function plain(value: unknown): unknown {
  if (value instanceof Result) {
    // A struct or tuple has one distinct name per field; the entries of an array have none (or all "_").
    let fields: Record<string, unknown> = {};
    try {
      fields = value.toObject();
    } catch {
      // unnamed entries: an array
    }
    const names = Object.keys(fields);
    const isStruct = value.length > 0 && names.length === value.length && !names.includes("_");
    return isStruct ? plain(fields) : value.toArray().map(plain);
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

/** Everything an account holds, as the views show it: the record and every list (members per group). */
export async function accountState(config: AccountConfig, apiKeyHash: bigint) {
  const [groups] = await config.listGroups(apiKeyHash, 0, WHOLE);
  const members = [];
  for (const g of groups) {
    members.push({
      wallets: (await config.listWalletsInGroup(apiKeyHash, g.id, 0, WHOLE))[0],
      actions: (await config.listActionsInGroup(apiKeyHash, g.id, 0, WHOLE))[0],
    });
  }
  return plain({
    account: (await config.accountExists(apiKeyHash)) ? await config.getAccount(apiKeyHash) : null,
    groups,
    members,
    wallets: (await config.listWallets(apiKeyHash, 0, WHOLE))[0],
    actions: (await config.listActions(apiKeyHash, 0, WHOLE))[0],
    usageKeys: (await config.listUsageApiKeys(apiKeyHash, 0, WHOLE))[0],
  });
}

/** The payer set and the admin payer. */
export async function payerState(config: AccountConfig) {
  return plain({ payers: await config.getApiPayers(), admin: await config.getAdminApiPayer() });
}

/**
 * Expects `send()` to revert with the custom error `error(...args)` and the state read by
 * `snapshot` (before and after) to be unchanged.
 */
export async function expectRejected(
  config: AccountConfig,
  send: () => Promise<unknown>,
  error: string,
  args: unknown[],
  snapshot: () => Promise<unknown>
) {
  const before = plain(await snapshot());
  await expect(send())
    .to.be.revertedWithCustomError(config, error)
    .withArgs(...args);
  expect(plain(await snapshot())).to.deep.equal(before);
}

/** expectRejected, with everything account `apiKeyHash` holds as the state that must not change. */
export function expectAccountUnchanged(
  config: AccountConfig,
  apiKeyHash: bigint,
  send: () => Promise<unknown>,
  error: string,
  args: unknown[]
) {
  return expectRejected(config, send, error, args, () => accountState(config, apiKeyHash));
}

/** Creates a group through `c` (a contract connected to the caller) and returns its id. */
export async function addGroup(c: AccountConfig, actor: bigint, name: string, pkpIds: string[] = [], cids: bigint[] = []) {
  const id = await c.addGroup.staticCall(actor, name, `${name} description`, cids, pkpIds);
  await (await c.addGroup(actor, name, `${name} description`, cids, pkpIds)).wait();
  return id;
}

/** Registers PKP number `n` (address pkpAddress(n), derivation path 1000 + n) and returns its address. */
export async function registerWallet(c: AccountConfig, actor: bigint, n: number) {
  const address = pkpAddress(n);
  await (await c.registerWalletDerivation(actor, address, 1000n + BigInt(n), `wallet ${n}`, `wallet ${n} description`)).wait();
  return address;
}

export type KeyOptions = { expiration?: bigint; balance?: bigint; name?: string; description?: string };

/**
 * Adds (or replaces) usage key `keyHash` through `c`; a new key relayed by an API payer is reserved
 * for the account first, as the relayer does (an admin wallet registers without).
 */
export async function setUsageKey(c: AccountConfig, account: bigint, keyHash: bigint, permissions: Permissions, opts: KeyOptions = {}) {
  const { expiration = 0n, balance = 0n, name = "key", description = "" } = opts;
  const relayed = await c.isApiPayer(await (c.runner as Signer).getAddress());
  if (relayed && (await c.resolveApiKey(keyHash)).apiKeyHash === 0n) await authorize(c, account, keyHash);
  await (await c.setUsageApiKey(account, keyHash, expiration, balance, name, description, ...flat(permissions))).wait();
}

/**
 * A managed account (key ACCOUNT_KEY, admin wallet `admin`) relayed by `payer`, holding:
 * PKP 1; action metadata for CID 1; group 1 = {PKP 1, CID 1}; group 2 = {PKP 1, CID 2};
 * usage key USAGE_KEY with execute on group 1 only.
 */
export async function managedAccountScenario() {
  const deployment = await deployAccountConfig();
  const [, , , admin, stranger, wallet, wallet2] = await ethers.getSigners();
  const { config, payer } = deployment;
  const relay = config.connect(payer);
  const account = await createManagedAccount(config, payer, ACCOUNT_KEY, admin.address);
  const pkp = await registerWallet(relay, account, 1);
  await (await relay.addAction(account, "action 1", "action 1 description", cidHash(1))).wait();
  const group1 = await addGroup(relay, account, "group 1", [pkp], [cidHash(1)]);
  const group2 = await addGroup(relay, account, "group 2", [pkp], [cidHash(2)]);
  const usageKey = hashOf(USAGE_KEY);
  await setUsageKey(relay, account, usageKey, perms({ executeInGroups: [group1] }), { name: "runner" });
  return { ...deployment, relay, admin, stranger, wallet, wallet2, account, pkp, group1, group2, usageKey };
}

export type WriteTargets = { group: bigint; pkp: string; cid: bigint; usageKey: bigint; newAdmin: string };

/** One call of every write that names an acting key, each with `actor` as that key. */
export function everyWrite(c: AccountConfig, actor: bigint, t: WriteTargets): [string, () => Promise<unknown>][] {
  return [
    ["addGroup", () => c.addGroup(actor, "new group", "", [], [])],
    ["updateGroup", () => c.updateGroup(actor, t.group, "renamed", "", [], [])],
    ["updateGroupMetadata", () => c.updateGroupMetadata(actor, t.group, "renamed", "")],
    ["removeGroup", () => c.removeGroup(actor, t.group)],
    ["addPkpToGroup", () => c.addPkpToGroup(actor, t.group, t.pkp)],
    ["removePkpFromGroup", () => c.removePkpFromGroup(actor, t.group, t.pkp)],
    ["addActionToGroup", () => c.addActionToGroup(actor, t.group, t.cid)],
    ["removeActionFromGroup", () => c.removeActionFromGroup(actor, t.group, t.cid)],
    ["registerWalletDerivation", () => c.registerWalletDerivation(actor, pkpAddress(999), 999n, "w", "")],
    ["addAction", () => c.addAction(actor, "a", "", t.cid)],
    ["updateActionMetadata", () => c.updateActionMetadata(actor, t.cid, 0n, "a", "")],
    ["removeAction", () => c.removeAction(actor, t.cid)],
    ["setUsageApiKey", () => c.setUsageApiKey(actor, hashOf("yet another usage key"), 0n, 0n, "k", "", ...flat(perms()))],
    ["updateUsageApiKeyMetadata", () => c.updateUsageApiKeyMetadata(actor, t.usageKey, "n", "d")],
    ["removeUsageApiKey", () => c.removeUsageApiKey(actor, t.usageKey)],
    ["transferAccountOwnership", () => c.transferAccountOwnership(actor, t.newAdmin)],
  ];
}

/** expectRejected for each of `writes`, naming the write that failed the expectation. */
export async function expectAllRejected(
  config: AccountConfig,
  writes: [string, () => Promise<unknown>][],
  error: string,
  args: unknown[],
  snapshot: () => Promise<unknown>
) {
  for (const [name, send] of writes) {
    try {
      await expectRejected(config, send, error, args, snapshot);
    } catch (e) {
      throw new Error(`${name}: ${(e as Error).message}`);
    }
  }
}
