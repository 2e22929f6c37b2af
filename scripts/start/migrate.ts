/**
 * A data directory made by an older `npm start` deployed the contracts with the local chain's own
 * accounts as owner, admin API payer and API payers: keys of Hardhat's public test mnemonic, which
 * anyone (an action through the chain's RPC URL, any web page through the JSON-RPC port) could use
 * to act as the owner of every managed account. At its next start the roles move to the data
 * directory's own keys (chain/keys.json), by transactions on its chain, journaled as any other, so
 * the accounts, wallets and addresses stay: the new payers are added and funded, the admin API
 * payer set, the old payers removed, both contracts' ownership transferred and accepted (two steps).
 * Each step looks at the chain first, so a start stopped half-way finishes the move the next time.
 */
import { Contract, getAddress, Wallet, toQuantity, type Provider } from "ethers";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import type { Deployment } from "../lib/deploy";
import { JournalError } from "./journal";
import { addressOf, nodeAccountKey, nodeAccounts, type ChainKeys } from "./chainKeys";

/** What each service account starts with on the local chain, as Hardhat funds its own (10,000 ETH). */
export const FUNDS_WEI = 10_000n * 10n ** 18n;

const OWNABLE = ["function owner() view returns (address)", "function pendingOwner() view returns (address)", "function transferOwnership(address)", "function acceptOwnership()"];
const PAYERS = [
  "function isApiPayer(address) view returns (bool)",
  "function getApiPayers() view returns (address[])",
  "function getAdminApiPayer() view returns (address)",
  "function addApiPayer(address)",
  "function removeApiPayer(address)",
  "function setAdminApiPayer(address)",
];

/** Gives each of `addresses` FUNDS_WEI where it has nothing (hardhat_setBalance: journaled and replayed in its place). */
export async function fund(hre: HardhatRuntimeEnvironment, addresses: string[]): Promise<void> {
  for (const a of addresses) {
    if (BigInt(await hre.network.provider.request({ method: "eth_getBalance", params: [a, "latest"] }) as string) === 0n) {
      await hre.network.provider.request({ method: "hardhat_setBalance", params: [a, toQuantity(FUNDS_WEI)] });
    }
  }
}

export async function moveRolesToOwnKeys(hre: HardhatRuntimeEnvironment, d: Deployment, keys: ChainKeys, log: (line: string) => void): Promise<Deployment> {
  const provider = hre.ethers.provider as unknown as Provider;
  const owner = new Wallet(keys.owner, provider);
  const payers = keys.payers.map(addressOf);
  const known = nodeAccounts(hre);
  await fund(hre, [owner.address, ...payers]);
  /** The signer of `address`: the new owner, or the node account holding the role until it moves. */
  const as = (address: string): Wallet => {
    if (getAddress(address) === owner.address) return owner;
    const key = nodeAccountKey(hre, getAddress(address));
    if (!key) throw new JournalError(`cannot move the roles of ${d.accountConfig} to this data directory's keys: ${address} holds one and is neither the local chain's own account nor chain/keys.json's owner`);
    return new Wallet(key, provider);
  };
  const send = async (what: string, tx: Promise<{ wait: () => Promise<unknown> }>) => {
    await (await tx).wait();
    log(`  ${what}`);
  };
  const ac = new Contract(d.accountConfig, [...OWNABLE, ...PAYERS], provider);
  const signerOfOwner = async (c: Contract) => as((await c.owner()) as string);

  let admin = await signerOfOwner(ac);
  for (const p of payers) if (!(await ac.isApiPayer(p))) await send(`added API payer ${p}`, (ac.connect(admin) as Contract).addApiPayer(p));
  if (getAddress(await ac.getAdminApiPayer()) !== owner.address) await send(`set the admin API payer to ${owner.address}`, (ac.connect(admin) as Contract).setAdminApiPayer(owner.address));
  for (const p of (await ac.getApiPayers()) as string[]) {
    if (known.has(getAddress(p))) await send(`removed API payer ${p} (a public test account)`, (ac.connect(admin) as Contract).removeApiPayer(p));
  }
  for (const [name, c] of [["AccountConfig", ac], ["AppAuth", new Contract(d.appAuth, OWNABLE, provider)]] as const) {
    if (!known.has(getAddress(await c.owner()))) continue; // ours already, or someone's the operator chose: not a public key
    admin = await signerOfOwner(c);
    if (getAddress(await c.pendingOwner()) !== owner.address) await send(`${name}: ownership offered to ${owner.address}`, (c.connect(admin) as Contract).transferOwnership(owner.address));
    await send(`${name}: ownership accepted by ${owner.address}`, (c.connect(owner) as Contract).acceptOwnership());
  }
  return { ...d, owner: getAddress(await ac.owner()), adminApiPayer: getAddress(await ac.getAdminApiPayer()), apiPayers: payers };
}
