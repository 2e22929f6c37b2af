/**
 * Whitelists a compose hash on AppAuth through the Safe that owns it:
 *
 *   npm run compose:hash         the compose hash of the compose file; writes its app_compose (what to deploy)
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
 *   VESTA_COMPOSE_FILE            the compose file whose hash to allow (hash, propose; default docker-compose.yml)
 *   VESTA_APP_COMPOSE_FILE        where to write its app_compose manifest (default .vesta/app-compose.json)
 *   VESTA_COMPOSE_HASH            optional (propose): the hash the compose file must have (refused if it differs)
 *   VESTA_SIGNER_KEY              private key of the signing owner (sign) or of the sender paying gas (execute)
 *   VESTA_SAFE_CONTRACT_NETWORKS  JSON file of Safe contract addresses, for chains without the canonical deployments
 */
import fs from "node:fs";
import path from "node:path";
import { appComposeFor, deployProblems } from "../../attestation/appCompose";
import { readGovernanceEnv, type GovernanceEnv } from "./env";
import { executeProposal, proposeComposeHash, readProposal, signProposal, writeProposal } from "./lib";

/**
 * The compose file's app_compose, written to env.appComposeFile (the manifest to deploy, byte for
 * byte), and its compose hash (0x...). Refuses a file dstack could not run as it is, and a hash that
 * differs from VESTA_COMPOSE_HASH when that is set.
 */
function composeFileHash(env: GovernanceEnv): string {
  const file = fs.readFileSync(env.composeFile, "utf8");
  const problems = deployProblems(file);
  if (problems.length) throw new Error(`${env.composeFile} cannot be deployed as it is:\n  - ${problems.join("\n  - ")}`);
  const { appCompose, composeHash } = appComposeFor(file);
  if (env.composeHash && env.composeHash !== `0x${composeHash}`) throw new Error(`${env.composeFile} has compose hash 0x${composeHash}, not VESTA_COMPOSE_HASH ${env.composeHash}`);
  fs.mkdirSync(path.dirname(env.appComposeFile), { recursive: true });
  fs.writeFileSync(env.appComposeFile, appCompose);
  return `0x${composeHash}`;
}

async function main(step: string | undefined) {
  if (step === "hash") {
    const env = readGovernanceEnv({ VESTA_RPC_URL: "http://unused.invalid", ...process.env }, {});
    const hash = composeFileHash(env);
    console.log(`${hash}\n  the compose hash of ${env.composeFile}; its app_compose (deploy this file as it is) is ${env.appComposeFile}`);
  } else if (step === "propose") {
    const env = readGovernanceEnv(process.env, { proposal: true });
    const composeHash = composeFileHash(env);
    console.log(`${env.composeFile}: compose hash ${composeHash}, app_compose written to ${env.appComposeFile}`);
    const proposal = await proposeComposeHash(env.connection, { appAuth: env.appAuth!, composeHash });
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
    throw new Error(`unknown step ${JSON.stringify(step)}: use hash, propose, sign or execute`);
  }
}

main(process.argv[2]).catch((err) => {
  console.error(`governance ${process.argv[2] ?? ""} failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
