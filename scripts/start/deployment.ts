/**
 * The contracts of `npm start`'s chain: deployed through Ignition on the first start (and
 * journaled), found in the journal after. Their owner (also the admin API payer) and API payers are
 * the data directory's own random keys (./chainKeys.ts), funded on its chain and signed for here:
 * the node itself holds none of them.
 */
import type { EIP1193Provider, EthereumProvider, HardhatRuntimeEnvironment } from "hardhat/types";
import { LocalAccountsProvider } from "hardhat/internal/core/providers/accounts";
import { BackwardsCompatibilityProviderAdapter } from "hardhat/internal/core/providers/backwards-compatibility";
import { deployVesta, type Deployment } from "../lib/deploy";
import { devComposeHash } from "../../attestation/development";
import type { StartEnv } from "../lib/env";
import type { DurableChain } from "./chain";
import { checkContractsUnchanged, contractCodeHashes } from "./dataDir";
import { addressOf, checkKeysMatch, createChainKeys, keysPath, publicRoles, readChainKeys, type ChainKeys } from "./chainKeys";
import { fund, moveRolesToOwnKeys } from "./migrate";
import { JournalError } from "./journal";

export async function deployOrReuse(hre: HardhatRuntimeEnvironment, chain: DurableChain, env: StartEnv, log: (line: string) => void): Promise<{ deployment: Deployment; keys: ChainKeys }> {
  if (chain.deployment) {
    await checkContractsUnchanged(hre, chain.deployment, env.dataDir);
    let d = chain.deployment.deployment;
    let keys = readChainKeys(env.dataDir);
    const roles = publicRoles(hre, d);
    if (roles.length) {
      log(`WARNING: ${env.dataDir} was made by an older npm start: its contracts' ${roles.join(", ")} are Hardhat's public test accounts, whose keys anyone can use. Moving these roles to keys of this data directory's own (${keysPath(env.dataDir)}) ...`);
      keys ??= createChainKeys(env.dataDir, d.apiPayers.length);
      d = await moveRolesToOwnKeys(hre, d, keys, log);
      await chain.provider.record({ ...chain.deployment, deployment: d });
      log(`moved: owner and admin API payer ${d.owner}, API payers ${d.apiPayers.join(", ")} (the accounts, wallets and contract addresses are unchanged)`);
    } else if (!keys) {
      throw new JournalError(`${keysPath(env.dataDir)} is missing: it holds the keys of the contracts' API payers. Restore it from a copy of ${env.dataDir}, or move ${env.dataDir} away to start a new chain`);
    }
    checkKeysMatch(keys, d, env.dataDir);
    if (process.env.VESTA_PAYER_COUNT && env.payerCount !== d.apiPayers.length) {
      log(`VESTA_PAYER_COUNT=${env.payerCount} is ignored: the contracts in ${env.dataDir} were deployed with ${d.apiPayers.length} API payers`);
    }
    return { deployment: d, keys };
  }
  // A first start: new keys (any left by a first start that stopped before deploying held nothing).
  const keys = createChainKeys(env.dataDir, env.payerCount);
  const owner = addressOf(keys.owner);
  const payers = keys.payers.map(addressOf);
  await fund(hre, [owner, ...payers]);
  // The development attestation evidence is allowed from the start, so `npm run verify` can pass its governance checks.
  const deployment = await signingAs(hre, chain.provider, keys.owner, () =>
    deployVesta(hre, { owner, adminApiPayer: owner, apiPayers: payers, composeHashes: [`0x${devComposeHash()}`] }),
  );
  await chain.provider.record({ k: "deployment", deployment, codeHashes: await contractCodeHashes(hre) });
  return { deployment, keys };
}

/** Runs `fn` with `hre.network.provider` signing for `key` alone (Ignition sends from the provider's first account). */
async function signingAs<T>(hre: HardhatRuntimeEnvironment, durable: EIP1193Provider, key: string, fn: () => Promise<T>): Promise<T> {
  const before = hre.network.provider;
  hre.network.provider = new BackwardsCompatibilityProviderAdapter(new LocalAccountsProvider(durable, [key])) as unknown as EthereumProvider;
  try {
    return await fn();
  } finally {
    hre.network.provider = before;
  }
}
