/** The contracts of `npm start`'s chain: deployed through Ignition on the first start (and journaled), found in the journal after. */
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { HDNodeWallet } from "ethers";
import { deployVesta, type Deployment } from "../lib/deploy";
import { devComposeHash } from "../../attestation/development";
import type { StartEnv } from "../lib/env";
import type { DurableChain } from "./chain";
import { checkContractsUnchanged, contractCodeHashes } from "./dataDir";

/** The private keys of the local chain's accounts `from`..`from+count-1` (its well-known test mnemonic). */
export function localKeys(hre: HardhatRuntimeEnvironment, from: number, count: number): string[] {
  const accounts = hre.network.config.accounts as { mnemonic: string; path: string };
  return Array.from({ length: count }, (_, i) => HDNodeWallet.fromPhrase(accounts.mnemonic, undefined, `${accounts.path}/${from + i}`).privateKey);
}

export async function deployOrReuse(hre: HardhatRuntimeEnvironment, chain: DurableChain, env: StartEnv, log: (line: string) => void): Promise<Deployment> {
  if (chain.deployment) {
    await checkContractsUnchanged(hre, chain.deployment, env.dataDir);
    const d = chain.deployment.deployment;
    if (process.env.VESTA_PAYER_COUNT && env.payerCount !== d.apiPayers.length) {
      log(`VESTA_PAYER_COUNT=${env.payerCount} is ignored: the contracts in ${env.dataDir} were deployed with ${d.apiPayers.length} API payers`);
    }
    return d;
  }
  const signers = await hre.ethers.getSigners();
  if (env.payerCount > signers.length - 1) throw new Error(`VESTA_PAYER_COUNT must be at most ${signers.length - 1}`);
  const owner = await signers[0].getAddress();
  const payers = await Promise.all(signers.slice(1, 1 + env.payerCount).map((s) => s.getAddress()));
  // The development attestation evidence is allowed from the start, so `npm run verify` can pass its governance checks.
  const deployment = await deployVesta(hre, { owner, adminApiPayer: owner, apiPayers: payers, composeHashes: [`0x${devComposeHash()}`] });
  await chain.provider.record({ k: "deployment", deployment, codeHashes: await contractCodeHashes(hre) });
  return deployment;
}
