import crypto from "node:crypto";
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { CID } from "multiformats/cid";
import { sha256 } from "multiformats/hashes/sha2";
import { ethers } from "hardhat";
import { call, newAccount, type Reply, type Stack } from "./relayer";
import { hashOf } from "./accountConfig";
import { accountState } from "./scenario";
import { expectError as expectErrorReply } from "./relayerChecks";

/** A caller of the API bound to one key and one auth header (`X-Api-Key`, or `Authorization: Bearer`). */
export type Client = {
  key: string;
  /** The key's on-chain hash: keccak256 of its bytes (the account's apiKeyHash for an account key). */
  hash: bigint;
  bearer: boolean;
  get: (pathAndQuery: string) => Promise<Reply>;
  post: (path: string, body?: unknown) => Promise<Reply>;
};

export function client(stack: Stack, key: string, bearer = false): Client {
  return {
    key,
    hash: hashOf(key),
    bearer,
    get: (p) => call(stack, "GET", p, { key, bearer }),
    post: (p, body = {}) => call(stack, "POST", p, { key, bearer, body }),
  };
}

/** A fresh account through the API, as a client of its account key. */
export async function accountClient(stack: Stack, bearer = false, name = "test account"): Promise<Client> {
  return client(stack, (await newAccount(stack, name)).apiKey, bearer);
}

/** Expects a 200 answer and returns its body. */
/** A run that failed: 422 action_failed (as on Chipotle), the run's answer kept in the body. */
export async function failedRun<T = any>(reply: Promise<Reply<T>> | Reply<T>): Promise<T> {
  const r = await reply;
  expect([r.status, (r.body as { code?: string })?.code], JSON.stringify(r.body)).to.deep.equal([422, "action_failed"]);
  return r.body;
}

export async function ok<T = any>(reply: Promise<Reply<T>> | Reply<T>): Promise<T> {
  const r = await reply;
  expect(r.status, `expected 200, got ${r.status} ${JSON.stringify(r.body)}`).to.equal(200);
  return r.body;
}

/** Expects the JSON error body `{error: code, message}` with `status`, the message naming each of `words`; returns the body. */
export async function expectError(reply: Promise<Reply> | Reply, status: number, code: string, ...words: string[]) {
  const r = await reply;
  expectErrorReply(r, status, code, ...words);
  return r.body;
}

/** Everything an account holds on chain (record, groups and members, wallets, actions, usage keys). */
export const onChain = (stack: Stack, account: Client) => accountState(stack.config, account.hash);

/** The block height and what each of `accounts` holds: a rejected request must change neither. */
const snapshot = async (stack: Stack, accounts: Client[]) => ({
  block: await ethers.provider.getBlockNumber(),
  accounts: await Promise.all(accounts.map((a) => onChain(stack, a))),
});

/** expectError, and every account in `accounts` unchanged on chain by the request. */
export async function expectRejected(
  stack: Stack,
  accounts: Client[],
  send: () => Promise<Reply>,
  status: number,
  code: string,
  ...words: string[]
) {
  const before = await snapshot(stack, accounts);
  const body = await expectError(send(), status, code, ...words);
  expect(await snapshot(stack, accounts), "the chain changed").to.deep.equal(before);
  return body;
}

/** A fresh, valid IPFS CID (v1, raw) of random bytes. */
export const newCid = async (): Promise<string> => CID.createV1(0x55, await sha256.digest(crypto.randomBytes(32))).toString();

/** keccak256 of a CID's UTF-8 bytes, as the API shows it (`hashed_cid`). */
export const hashCid = (cid: string): string => keccak256(toUtf8Bytes(cid));

/** The REST permission fields of a usage key (spec 1). */
export type RestPermissions = {
  can_create_groups: boolean;
  can_delete_groups: boolean;
  can_create_pkps: boolean;
  manage_ipfs_ids_in_groups: number[];
  add_pkp_to_groups: number[];
  remove_pkp_from_groups: number[];
  execute_in_groups: number[];
};

/** The defaults of omitted permission fields: nothing granted. */
export const NO_PERMISSIONS: RestPermissions = {
  can_create_groups: false,
  can_delete_groups: false,
  can_create_pkps: false,
  manage_ipfs_ids_in_groups: [],
  add_pkp_to_groups: [],
  remove_pkp_from_groups: [],
  execute_in_groups: [],
};

/**
 * The list_api_keys item of the usage key with hash `hash`: Chipotle's fields with Chipotle's types
 * (api_key_hash, expiration as a string, balance as a number, can_* lists) and spec 1's names beside.
 */
export function keyItem(hash: bigint, item: { name: string; description?: string; expiration?: string; balance?: number } & Partial<RestPermissions>) {
  const p = { ...NO_PERMISSIONS, ...item };
  const id = `0x${hash.toString(16).padStart(64, "0")}`;
  return {
    id,
    api_key_hash: id,
    name: item.name,
    description: item.description ?? "",
    expiration: item.expiration ?? "0",
    balance: item.balance ?? 0,
    can_create_groups: p.can_create_groups,
    can_delete_groups: p.can_delete_groups,
    can_create_pkps: p.can_create_pkps,
    can_manage_ipfs_ids_in_groups: p.manage_ipfs_ids_in_groups,
    can_add_pkp_to_groups: p.add_pkp_to_groups,
    can_remove_pkp_from_groups: p.remove_pkp_from_groups,
    can_execute_in_groups: p.execute_in_groups,
    manage_ipfs_ids_in_groups: p.manage_ipfs_ids_in_groups,
    add_pkp_to_groups: p.add_pkp_to_groups,
    remove_pkp_from_groups: p.remove_pkp_from_groups,
    execute_in_groups: p.execute_in_groups,
  };
}

/** Every scope on every group (the wildcard [0]). */
export const ALL_PERMISSIONS: RestPermissions = {
  can_create_groups: true,
  can_delete_groups: true,
  can_create_pkps: true,
  manage_ipfs_ids_in_groups: [0],
  add_pkp_to_groups: [0],
  remove_pkp_from_groups: [0],
  execute_in_groups: [0],
};

/** Adds a usage key through `owner` and returns a client of it (same auth header as `owner`). */
export async function addUsageKey(stack: Stack, owner: Client, body: Record<string, unknown> = {}): Promise<Client> {
  const r = await ok(owner.post("/add_usage_api_key", body));
  return client(stack, r.usage_api_key, owner.bearer);
}

/** Replaces the whole permission set (and metadata) of `usageKey` through `owner`. */
export const updateUsageKey = (owner: Client, usageKey: Client, body: Record<string, unknown>) =>
  ok(owner.post("/update_usage_api_key", { usage_api_key: usageKey.key, ...body }));

/** The list_api_keys item of `usageKey` (undefined when it is not listed). */
export async function listedUsageKey(owner: Client, usageKey: Client) {
  const items: { id: string }[] = await ok(owner.get("/list_api_keys?page_size=100"));
  return items.find((i) => BigInt(i.id) === usageKey.hash);
}

/** Creates a wallet through `owner` and returns its address. */
export async function createWallet(owner: Client, name = "wallet"): Promise<string> {
  return (await ok(owner.post("/create_wallet", { name, description: `${name} description` }))).wallet_address;
}

/** Creates a group through `owner` and returns its id. */
export async function addGroup(owner: Client, name: string, pkps: string[] = [], cids: string[] = []): Promise<number> {
  const body = { group_name: name, group_description: `${name} description`, pkp_ids_permitted: pkps, cid_hashes_permitted: cids.map(hashCid) };
  return Number((await ok(owner.post("/add_group", body))).group_id);
}

/**
 * A fresh account holding wallets w1 and w2 and groups g1 and g2, each listing w1 and action cid;
 * w2 and cid2 are in no group.
 */
export async function groupsFixture(stack: Stack, bearer = false) {
  const owner = await accountClient(stack, bearer);
  const [w1, w2] = [await createWallet(owner, "w1"), await createWallet(owner, "w2")];
  const [cid, cid2] = [await newCid(), await newCid()];
  const g1 = await addGroup(owner, "g1", [w1], [cid]);
  const g2 = await addGroup(owner, "g2", [w1], [cid]);
  return { owner, w1, w2, cid, cid2, g1, g2 };
}
export type GroupsFixture = Awaited<ReturnType<typeof groupsFixture>>;

/** Sends a request that must succeed and change the account's on-chain state; returns the answer's body. */
export async function expectChanged(stack: Stack, account: Client, send: () => Promise<Reply>) {
  const before = await onChain(stack, account);
  const body = await ok(send());
  expect(await onChain(stack, account)).not.to.deep.equal(before);
  return body;
}


/** The account's admin wallet as a signer on the in-process chain (impersonated and funded): the direct path. */
export async function adminSigner(stack: Stack, account: Client) {
  const admin = (await stack.config.getAccount(account.hash)).adminWalletAddress;
  await ethers.provider.send("hardhat_impersonateAccount", [admin]);
  await ethers.provider.send("hardhat_setBalance", [admin, ethers.toQuantity(ethers.parseEther("1"))]);
  return ethers.getSigner(admin);
}

/** Runs `fn`, prefixing any failure with `label` (for assertions made in loops). */
export async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    (e as Error).message = `${label}: ${(e as Error).message}`;
    throw e;
  }
}
