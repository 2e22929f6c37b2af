import { ethers, ignition } from "hardhat";
import { keccak256, toUtf8Bytes, solidityPackedKeccak256, type Signer } from "ethers";
import AccountConfigModule from "../../ignition/modules/AccountConfig";
import type { AccountConfig } from "../../typechain-types";
import { usageKeyHash, usageKeyProof } from "../../protocol/usageKeyProof";

/** keccak256 of an account key's (or CID's) UTF-8 bytes, as the uint256 the contract uses. */
export const hashOf = (value: string): bigint => BigInt(keccak256(toUtf8Bytes(value)));

/** Usage key values by on-chain hash, for proofFor. */
const usageKeyValues = new Map<bigint, string>();

/** The on-chain hash of usage key `key` (keccak256 of its keypair's public key); remembered so that `proofFor` can sign for it. */
export function usageKeyOf(key: string): bigint {
  const h = usageKeyHash(key);
  usageKeyValues.set(h, key);
  return h;
}

/** The proof of possession registering usage key `keyHash` (from usageKeyOf) to `account` on `c`'s contract; "0x" for a hash with no known key. */
export async function proofFor(c: AccountConfig, account: bigint, keyHash: bigint): Promise<string> {
  const key = usageKeyValues.get(keyHash);
  if (!key) return "0x";
  const { chainId } = await c.runner!.provider!.getNetwork();
  return usageKeyProof(key, { chainId, contract: await c.getAddress(), apiKeyHash: account });
}

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

/** A permission set that grants nothing, with `overrides` applied. */
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
  await (await config.connect(payer).newAccount(hashOf(apiKey), admin, "acct", "")).wait();
  return hashOf(apiKey);
}
