import fs from "node:fs";
import { getAddress, isHexString } from "ethers";
import { z } from "zod";
import type { Connection } from "./lib";

const Env = z.object({
  VESTA_RPC_URL: z.string().url("VESTA_RPC_URL must be the chain's JSON-RPC URL"),
  VESTA_PROPOSAL_FILE: z.string().default(".vesta/compose-hash-proposal.json"),
  VESTA_SIGNER_KEY: z.string().refine((k) => isHexString(k.startsWith("0x") ? k : `0x${k}`, 32), "VESTA_SIGNER_KEY must be a 32-byte hex private key").optional(),
  VESTA_APP_AUTH_ADDRESS: z.string().optional(),
  VESTA_DEPLOYMENT_FILE: z.string().optional(),
  VESTA_COMPOSE_HASH: z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, "VESTA_COMPOSE_HASH must be 64 hex characters (0x optional)").optional(),
  VESTA_SAFE_CONTRACT_NETWORKS: z.string().optional(),
  VESTA_COMPOSE_FILE: z.string().min(1).default("docker-compose.yml"),
  VESTA_APP_COMPOSE_FILE: z.string().min(1).default(".vesta/app-compose.json"),
});

export type GovernanceEnv = { connection: Connection; file: string; appAuth?: string; composeHash?: string; composeFile: string; appComposeFile: string };

/**
 * Reads the governance tasks' environment; `need` names what this step requires. Throws one error
 * listing every problem.
 */
export function readGovernanceEnv(env: NodeJS.ProcessEnv, need: { signer?: boolean; proposal?: boolean }): GovernanceEnv {
  const parsed = Env.safeParse(env);
  if (!parsed.success) throw new Error(`bad environment:\n  - ${parsed.error.issues.map((i) => i.message).join("\n  - ")}`);
  const e = parsed.data;
  const problems: string[] = [];
  if (need.signer && !e.VESTA_SIGNER_KEY) problems.push("VESTA_SIGNER_KEY: required (the private key that signs or sends)");
  let appAuth = e.VESTA_APP_AUTH_ADDRESS;
  if (!appAuth && e.VESTA_DEPLOYMENT_FILE) appAuth = JSON.parse(fs.readFileSync(e.VESTA_DEPLOYMENT_FILE, "utf8")).appAuth;
  if (need.proposal) {
    try {
      appAuth = getAddress(appAuth ?? "");
    } catch {
      problems.push("VESTA_APP_AUTH_ADDRESS: required, the AppAuth address (or VESTA_DEPLOYMENT_FILE with appAuth)");
    }
  }
  if (problems.length) throw new Error(`bad environment:\n  - ${problems.join("\n  - ")}`);
  const key = e.VESTA_SIGNER_KEY;
  return {
    connection: {
      provider: e.VESTA_RPC_URL,
      signer: key && (key.startsWith("0x") ? key : `0x${key}`),
      contractNetworks: e.VESTA_SAFE_CONTRACT_NETWORKS ? JSON.parse(fs.readFileSync(e.VESTA_SAFE_CONTRACT_NETWORKS, "utf8")) : undefined,
    },
    file: e.VESTA_PROPOSAL_FILE,
    appAuth,
    composeHash: e.VESTA_COMPOSE_HASH && `0x${e.VESTA_COMPOSE_HASH.replace(/^0x/i, "").toLowerCase()}`,
    composeFile: e.VESTA_COMPOSE_FILE,
    appComposeFile: e.VESTA_APP_COMPOSE_FILE,
  };
}
