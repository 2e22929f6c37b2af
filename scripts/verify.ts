/**
 * `npm run verify -- <base_url> [options]`: checks a Vesta deployment's attestation from its base
 * URL (`/info`, `/attestation`, `/evidences/`) and prints one line per check. Exits 1 when a check
 * fails, 2 on a usage error; skipped checks do not fail the run but prove nothing.
 *
 * Options (or environment):
 *   --rpc-url <url>      chain of the AppAuth contract, for the governance checks (VESTA_VERIFY_RPC_URL)
 *   --safe <address>     the Safe that must own AppAuth (VESTA_VERIFY_SAFE)
 *   --safe-threshold <n> its signature threshold (VESTA_VERIFY_SAFE_THRESHOLD)
 *   --safe-owners <a,b>  its owners, comma-separated (VESTA_VERIFY_SAFE_OWNERS)
 *   --app-auth-code-hash <0x..>  AppAuth's EXTCODEHASH (VESTA_VERIFY_APP_AUTH_CODE_HASH; default:
 *                        computed from the compiled contracts/AppAuth.sol for the app id's address)
 *   --collateral <file>  Intel DCAP collateral JSON (dcap-qvl format) for the quote signatures (VESTA_VERIFY_COLLATERAL)
 *   --pccs-url <url>     fetch the collateral from this PCCS instead (VESTA_VERIFY_PCCS_URL)
 *   --compose <file>     the compose file the deployment must run (VESTA_VERIFY_COMPOSE_FILE)
 *   --image-policy <file>  who must have signed each image (JSON; e.g. deploy/image-policy.json) (VESTA_VERIFY_IMAGE_POLICY)
 *   --signatures <dir>   the images' Sigstore bundles: sha256-<hex>.jsonl (one bundle a line) or sha256-<hex>*.json (VESTA_VERIFY_SIGNATURES)
 *   --trusted-root <file>  Sigstore trusted root (trusted_root.json); default: the public-good root through TUF (VESTA_VERIFY_TRUSTED_ROOT)
 *   --insecure           fetch from an https URL without validating its certificate
 *   --json               print the results as JSON
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { getAddress } from "ethers";
import { z } from "zod";
import { formatResults } from "../attestation/report";
import { readImageSignatureOptions } from "./lib/imageSignatures";
import { noFailures, verifyDeployment, type GovernancePins } from "../attestation/verify";

const address = z.string().transform((a, ctx) => {
  try {
    return getAddress(a.trim());
  } catch {
    ctx.addIssue({ code: "custom", message: `not an address: ${a}` });
    return z.NEVER;
  }
});
/** The governance pins, from the flags or the environment. */
const Pins = z.object({
  appAuthCodeHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "--app-auth-code-hash must be 0x and 64 hex characters").optional(),
  safe: address.optional(),
  safeThreshold: z.coerce.number({ message: "--safe-threshold must be a number" }).int().min(1, "--safe-threshold must be at least 1").max(1000).optional(),
  safeOwners: z
    .string()
    .transform((list) => list.split(","))
    .pipe(z.array(address).min(1).max(1000).refine((owners) => new Set(owners).size === owners.length, "--safe-owners lists an owner twice"))
    .optional(),
});

function usage(message: string): never {
  console.error(`${message}\nusage: npm run verify -- <base_url> [--rpc-url <url>] [--safe <address> --safe-threshold <n> --safe-owners <a,b,...>] [--app-auth-code-hash <0x..>] [--collateral <file>] [--pccs-url <url>] [--compose <file>] [--image-policy <file> --signatures <dir> [--trusted-root <file>]] [--insecure] [--json]`);
  process.exit(2);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        "rpc-url": { type: "string" },
        safe: { type: "string" },
        "safe-threshold": { type: "string" },
        "safe-owners": { type: "string" },
        "app-auth-code-hash": { type: "string" },
        collateral: { type: "string" },
        "pccs-url": { type: "string" },
        compose: { type: "string" },
        "image-policy": { type: "string" },
        signatures: { type: "string" },
        "trusted-root": { type: "string" },
        insecure: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
    });
  } catch (err) {
    usage((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) usage("give exactly one base URL");
  const baseUrl = positionals[0];
  if (!/^https?:\/\//.test(baseUrl)) usage(`not an http(s) URL: ${baseUrl}`);
  const collateralFile = values.collateral ?? process.env.VESTA_VERIFY_COLLATERAL;
  let collateral;
  if (collateralFile) {
    try {
      collateral = JSON.parse(fs.readFileSync(collateralFile, "utf8"));
    } catch (err) {
      usage(`cannot read the collateral file ${collateralFile}: ${(err as Error).message}`);
    }
  }
  const pins = Pins.safeParse({
    appAuthCodeHash: values["app-auth-code-hash"] ?? process.env.VESTA_VERIFY_APP_AUTH_CODE_HASH,
    safe: values.safe ?? process.env.VESTA_VERIFY_SAFE,
    safeThreshold: values["safe-threshold"] ?? process.env.VESTA_VERIFY_SAFE_THRESHOLD,
    safeOwners: values["safe-owners"] ?? process.env.VESTA_VERIFY_SAFE_OWNERS,
  });
  if (!pins.success) usage(pins.error.issues.map((i) => i.message).join("; "));
  const governance: GovernancePins = pins.data;
  const composePath = values.compose ?? process.env.VESTA_VERIFY_COMPOSE_FILE;
  let composeFile;
  if (composePath) {
    try {
      composeFile = { name: composePath, text: fs.readFileSync(composePath, "utf8") };
    } catch (err) {
      usage(`cannot read the compose file ${composePath}: ${(err as Error).message}`);
    }
  }
  let imageSignatures;
  try {
    imageSignatures = await readImageSignatureOptions({
      policy: values["image-policy"] ?? process.env.VESTA_VERIFY_IMAGE_POLICY,
      signatures: values.signatures ?? process.env.VESTA_VERIFY_SIGNATURES,
      trustedRoot: values["trusted-root"] ?? process.env.VESTA_VERIFY_TRUSTED_ROOT,
    });
  } catch (err) {
    usage((err as Error).message);
  }
  const results = await verifyDeployment(baseUrl, {
    governance,
    rpcUrl: values["rpc-url"] ?? process.env.VESTA_VERIFY_RPC_URL,
    collateral,
    pccsUrl: values["pccs-url"] ?? process.env.VESTA_VERIFY_PCCS_URL,
    insecure: values.insecure,
    composeFile,
    imageSignatures,
  });
  console.log(values.json ? JSON.stringify(results, null, 2) : `Verifying ${baseUrl}\n\n${formatResults(results)}`);
  process.exitCode = noFailures(results) ? 0 : 1;
}

main().catch((err) => {
  console.error(`verify failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
