/**
 * The service's own accounts on its chain: whoever signs for one acts for the service (an API payer
 * acts as the owner of every managed account; the admin API payer manages the payers; the owner
 * governs both contracts). Actions may not send their transactions through a deployment RPC URL
 * (executor/sandbox/host/rpc-guard.ts). Read once when the relayer starts: the relayer's own payer
 * keys, and what the contracts name (every replica's payers, the admin API payer, the owners).
 */
import { Contract, getAddress, ZeroAddress } from "ethers";
import type { Logger } from "pino";
import type { Chain } from "./client";

export async function serviceAccounts(chain: Chain, ownPayers: string[], appAuthAddress: string | undefined, logger: Logger): Promise<string[]> {
  const found = new Set(ownPayers.map((a) => getAddress(a)));
  const read = async (what: string, get: () => Promise<string | string[]>) => {
    try {
      for (const a of [await get()].flat()) if (a !== ZeroAddress) found.add(getAddress(a));
    } catch (err) {
      logger.warn({ err: (err as Error).message, what }, "could not read a service account from the chain: actions' transactions from it are not refused (the relayer's own payers are)");
    }
  };
  const ac = chain.accountConfig;
  await read("AccountConfig.owner", () => ac.owner());
  await read("AccountConfig.pendingOwner", () => ac.pendingOwner());
  await read("AccountConfig.getAdminApiPayer", () => ac.getAdminApiPayer());
  await read("AccountConfig.getApiPayers", async () => [...(await ac.getApiPayers())]);
  if (appAuthAddress) {
    const appAuth = new Contract(appAuthAddress, ["function owner() view returns (address)", "function pendingOwner() view returns (address)"], chain.provider);
    await read("AppAuth.owner", () => appAuth.owner() as Promise<string>);
    await read("AppAuth.pendingOwner", () => appAuth.pendingOwner() as Promise<string>);
  }
  return [...found];
}
