/**
 * The keys of `npm start`'s service accounts: the contracts' owner (also the admin API payer) and
 * the API payers. Random for each data directory, made at its first start and kept in
 * `<data dir>/chain/keys.json` (mode 0600, beside the journal), used again at every start. Never
 * the local chain's own accounts (Hardhat's test mnemonic, which the world knows and the node signs
 * for on its JSON-RPC): an API payer acts as the owner of every managed account, so whoever can
 * sign for one owns every account. Those accounts stay funded in the genesis, holding no role.
 */
import fs from "node:fs";
import path from "node:path";
import { HDNodeWallet, Wallet, isHexString } from "ethers";
import type { HardhatNetworkAccountsConfig, HardhatRuntimeEnvironment } from "hardhat/types";
import { JournalError } from "./journal";
import { writeFileAtomic } from "./dataDir";
import type { Deployment } from "../lib/deploy";

export type ChainKeys = { owner: string; payers: string[] };

export const keysPath = (dataDir: string): string => path.join(dataDir, "chain", "keys.json");

export const addressOf = (key: string): string => new Wallet(key).address;

/** New random keys for the owner and `payerCount` payers, written to the data directory (replacing any there). */
export function createChainKeys(dataDir: string, payerCount: number): ChainKeys {
  const keys: ChainKeys = { owner: Wallet.createRandom().privateKey, payers: Array.from({ length: payerCount }, () => Wallet.createRandom().privateKey) };
  fs.mkdirSync(path.dirname(keysPath(dataDir)), { recursive: true });
  writeFileAtomic(keysPath(dataDir), JSON.stringify({ v: 1, ...keys }, null, 2) + "\n", 0o600);
  return keys;
}

/** The data directory's keys, or undefined when it has none (a directory made before they existed). */
export function readChainKeys(dataDir: string): ChainKeys | undefined {
  const file = keysPath(dataDir);
  if (!fs.existsSync(file)) return undefined;
  let k: { v?: unknown; owner?: unknown; payers?: unknown };
  try {
    k = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new JournalError(`${file} cannot be read (${(err as Error).message}): it holds the keys of the contracts' owner and API payers; restore it from a copy`);
  }
  const key = (v: unknown) => typeof v === "string" && isHexString(v, 32);
  if (k.v !== 1 || !key(k.owner) || !Array.isArray(k.payers) || !k.payers.every(key)) {
    throw new JournalError(`${file} is not a keys file of npm start ({"v":1,"owner":"0x...","payers":["0x...", ...]}): restore it from a copy`);
  }
  if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600); // the keys are the owner's and the payers': nobody else reads them
  return { owner: k.owner as string, payers: k.payers as string[] };
}

/**
 * The addresses of the local chain's own accounts (hardhat.config.ts's `accounts`; by default
 * Hardhat's public test mnemonic): their keys are known, and the node signs for them.
 */
export function nodeAccounts(hre: HardhatRuntimeEnvironment): Set<string> {
  const a = hre.network.config.accounts as HardhatNetworkAccountsConfig;
  if (Array.isArray(a)) return new Set(a.map((x) => addressOf(x.privateKey)));
  return new Set(Array.from({ length: a.count }, (_, i) => HDNodeWallet.fromPhrase(a.mnemonic, a.passphrase, `${a.path}/${a.initialIndex + i}`).address));
}

/** The node account's private key of `address` (to move a role away from it), or undefined. */
export function nodeAccountKey(hre: HardhatRuntimeEnvironment, address: string): string | undefined {
  const a = hre.network.config.accounts as HardhatNetworkAccountsConfig;
  const keys = Array.isArray(a)
    ? a.map((x) => x.privateKey)
    : Array.from({ length: a.count }, (_, i) => HDNodeWallet.fromPhrase(a.mnemonic, a.passphrase, `${a.path}/${a.initialIndex + i}`).privateKey);
  return keys.find((k) => addressOf(k) === address);
}

/** The roles of `d` that one of the node's own accounts holds. */
export function publicRoles(hre: HardhatRuntimeEnvironment, d: Deployment): string[] {
  const known = nodeAccounts(hre);
  const roles = [
    ["owner", d.owner],
    ["admin API payer", d.adminApiPayer],
    ...d.apiPayers.map((p) => ["API payer", p]),
  ];
  return roles.filter(([, a]) => known.has(a)).map(([role, a]) => `${role} ${a}`);
}

/** Checks that `keys` sign for `d`'s API payers, in their order (what the relayer is given). */
export function checkKeysMatch(keys: ChainKeys, d: Deployment, dataDir: string): void {
  const payers = keys.payers.map(addressOf);
  if (payers.length !== d.apiPayers.length || payers.some((p, i) => p !== d.apiPayers[i])) {
    throw new JournalError(
      `${keysPath(dataDir)} does not hold the keys of the deployment's API payers ${d.apiPayers.join(", ")}: restore the keys file this data directory was made with, or move ${dataDir} away to start a new chain`,
    );
  }
}
