import { ethers, ignition } from "hardhat";
import { keccak256, toUtf8Bytes, solidityPackedKeccak256, type Signer } from "ethers";
import AccountConfigModule from "../../ignition/modules/AccountConfig";
import type { IAccountConfig } from "../../typechain-types";
import { usageKeySeal } from "../../protocol/usageKeySeal";

/** AccountConfig at its one address, with the merged ABI (writes, and the reads its fallback serves). */
export type AccountConfig = IAccountConfig;

/** keccak256 of a key's (or CID's) UTF-8 bytes, as the uint256 the contract uses (account keys and usage keys alike). */
export const hashOf = (value: string): bigint => BigInt(keccak256(toUtf8Bytes(value)));

/** The apiKeyHash of a ChainSecured account: keccak256(abi.encodePacked(wallet)). */
export const chainSecuredHash = (wallet: string): bigint => BigInt(solidityPackedKeccak256(["address"], [wallet]));

export type Permissions = {
  canCreateGroups: boolean;
  canDeleteGroups: boolean;
  canCreatePkps: boolean;
  manageIpfsIdsInGroups: bigint[];
  addPkpToGroups: bigint[];
  removePkpFromGroups: bigint[];
  executeInGroups: bigint[];
};

/** A permission set that grants nothing, with `overrides` applied (the UsageKeyPermissions of the views). */
export function perms(overrides: Partial<Record<keyof Permissions, boolean | (number | bigint)[]>> = {}): Permissions {
  const list = (v: unknown) => ((v as (number | bigint)[] | undefined) ?? []).map(BigInt);
  return {
    canCreateGroups: Boolean(overrides.canCreateGroups),
    canDeleteGroups: Boolean(overrides.canDeleteGroups),
    canCreatePkps: Boolean(overrides.canCreatePkps),
    manageIpfsIdsInGroups: list(overrides.manageIpfsIdsInGroups),
    addPkpToGroups: list(overrides.addPkpToGroups),
    removePkpFromGroups: list(overrides.removePkpFromGroups),
    executeInGroups: list(overrides.executeInGroups),
  };
}

/** `p` as the last seven arguments of setUsageApiKey (Chipotle's signature). */
export const flat = (p: Permissions) =>
  [p.canCreateGroups, p.canDeleteGroups, p.canCreatePkps, p.manageIpfsIdsInGroups, p.addPkpToGroups, p.removePkpFromGroups, p.executeInGroups] as const;

/** An API payer's reservation of usage key `keyHash` for `account` (what the relayer does before a registration). */
export async function authorize(c: AccountConfig, account: bigint, keyHash: bigint) {
  await (await c.authorizeUsageApiKey(account, usageKeySeal(keyHash))).wait();
}

export type Deployment = {
  config: AccountConfig;
  owner: Signer;
  payer: Signer;
  payer2: Signer;
  others: Signer[];
};

/** Deploys AccountConfig through its Ignition module: owner = signer 0, payers = signers 1 and 2. */
export async function deployAccountConfig(): Promise<Deployment> {
  const [owner, payer, payer2, ...others] = await ethers.getSigners();
  const { accountConfig } = await ignition.deploy(AccountConfigModule, {
    parameters: {
      AccountConfigModule: {
        owner: await owner.getAddress(),
        adminApiPayer: await owner.getAddress(),
        apiPayers: [await payer.getAddress(), await payer2.getAddress()],
      },
    },
  });
  return { config: accountConfig as unknown as AccountConfig, owner, payer, payer2, others };
}

/** Creates a managed account for `apiKey` through `payer`, with `admin` as its derived wallet. */
export async function createManagedAccount(config: AccountConfig, payer: Signer, apiKey: string, admin: string) {
  await (await config.connect(payer).newAccount(hashOf(apiKey), true, "acct", "", admin)).wait();
  return hashOf(apiKey);
}
