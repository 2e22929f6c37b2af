/**
 * Whitelists a compose hash on AppAuth through the Safe that owns it:
 *
 *   npm run governance:propose   writes the Safe transaction addComposeHash(hash) to the proposal file
 *   npm run governance:sign      one owner adds its signature to the file (run once per owner)
 *   npm run governance:execute   submits it once the file holds the Safe's threshold of signatures
 *
 * (or: node --require ts-node/register/transpile-only scripts/governance/compose-hash.ts <step>)
 *
 * Environment:
 *   VESTA_RPC_URL                 the chain's JSON-RPC URL (required)
 *   VESTA_PROPOSAL_FILE           the file passed between the steps (default .vesta/compose-hash-proposal.json)
 *   VESTA_APP_AUTH_ADDRESS        AppAuth (propose; or VESTA_DEPLOYMENT_FILE with appAuth)
 *   VESTA_COMPOSE_HASH            the compose hash to allow, 64 hex (propose)
 *   VESTA_SIGNER_KEY              private key of the signing owner (sign) or of the sender paying gas (execute)
 *   VESTA_SAFE_CONTRACT_NETWORKS  JSON file of Safe contract addresses, for chains without the canonical deployments
 */
import fs from "node:fs";
import path from "node:path";
import { readGovernanceEnv } from "./env";
import { executeProposal, proposeComposeHash, readProposal, signProposal, writeProposal } from "./lib";

async function main(step: string | undefined) {
  if (step === "propose") {
    const env = readGovernanceEnv(process.env, { proposal: true });
    const proposal = await proposeComposeHash(env.connection, { appAuth: env.appAuth!, composeHash: env.composeHash! });
    fs.mkdirSync(path.dirname(env.file), { recursive: true });
    writeProposal(env.file, proposal);
    console.log(`Proposed addComposeHash(${proposal.composeHash}) on ${proposal.appAuth}
  Safe ${proposal.safe} (chain ${proposal.chainId}), nonce ${proposal.tx.nonce}, Safe transaction hash ${proposal.safeTxHash}
  written to ${env.file}: each owner runs "npm run governance:sign" on it, then "npm run governance:execute".`);
  } else if (step === "sign") {
    const env = readGovernanceEnv(process.env, { signer: true });
    const signed = await signProposal(env.connection, readProposal(env.file));
    writeProposal(env.file, signed);
    console.log(`Signed ${signed.safeTxHash}; signatures so far: ${Object.keys(signed.signatures).join(", ")}`);
  } else if (step === "execute") {
    const env = readGovernanceEnv(process.env, { signer: true });
    const proposal = readProposal(env.file);
    const hash = await executeProposal(env.connection, proposal);
    console.log(`Executed: ${proposal.composeHash} is allowed on ${proposal.appAuth} (transaction ${hash})`);
  } else {
    throw new Error(`unknown step ${JSON.stringify(step)}: use propose, sign or execute`);
  }
}

main(process.argv[2]).catch((err) => {
  console.error(`governance ${process.argv[2] ?? ""} failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
