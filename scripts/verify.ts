/**
 * `npm run verify -- <base_url> [options]`: checks a Vesta deployment's attestation from its base
 * URL (`/info`, `/attestation`, `/evidences/`) and prints one line per check. Exits 1 when a check
 * fails, 2 on a usage error; skipped checks do not fail the run but prove nothing.
 *
 * Options (or environment):
 *   --rpc-url <url>      chain of the AppAuth contract, for the governance checks (VESTA_VERIFY_RPC_URL)
 *   --collateral <file>  Intel DCAP collateral JSON (dcap-qvl format) for the quote signatures (VESTA_VERIFY_COLLATERAL)
 *   --pccs-url <url>     fetch the collateral from this PCCS instead (VESTA_VERIFY_PCCS_URL)
 *   --insecure           fetch from an https URL without validating its certificate
 *   --json               print the results as JSON
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { formatResults } from "../attestation/report";
import { noFailures, verifyDeployment } from "../attestation/verify";

function usage(message: string): never {
  console.error(`${message}\nusage: npm run verify -- <base_url> [--rpc-url <url>] [--collateral <file>] [--pccs-url <url>] [--insecure] [--json]`);
  process.exit(2);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        "rpc-url": { type: "string" },
        collateral: { type: "string" },
        "pccs-url": { type: "string" },
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
  const results = await verifyDeployment(baseUrl, {
    rpcUrl: values["rpc-url"] ?? process.env.VESTA_VERIFY_RPC_URL,
    collateral,
    pccsUrl: values["pccs-url"] ?? process.env.VESTA_VERIFY_PCCS_URL,
    insecure: values.insecure,
  });
  console.log(values.json ? JSON.stringify(results, null, 2) : `Verifying ${baseUrl}\n\n${formatResults(results)}`);
  process.exitCode = noFailures(results) ? 0 : 1;
}

main().catch((err) => {
  console.error(`verify failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
