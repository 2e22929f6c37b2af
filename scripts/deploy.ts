/**
 * `npm run deploy -- --network <name>`: deploys AccountConfig and AppAuth through Ignition to a
 * configured network and prints the addresses as JSON.
 *
 * Environment:
 *   VESTA_OWNER            governance owner of both contracts (a Safe address in production; required
 *                          on any network other than the in-process hardhat one)
 *   VESTA_ADMIN_API_PAYER  manages the payer set (default: VESTA_OWNER)
 *   VESTA_API_PAYERS       comma-separated payer addresses (default: none)
 *   VESTA_COMPOSE_HASHES   comma-separated 0x-prefixed compose hashes to allow from the start
 */
import hre from "hardhat";
import { getAddress, isHexString } from "ethers";
import { deployVesta } from "./lib/deploy";

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

async function main() {
  const problems: string[] = [];
  const address = (name: string, value: string | undefined) => {
    try {
      return getAddress(value ?? "");
    } catch {
      problems.push(`${name}=${JSON.stringify(value ?? "")} is not an address`);
      return "";
    }
  };
  const fallbackOwner = hre.network.name === "hardhat" ? await (await hre.ethers.getSigners())[0].getAddress() : undefined;
  const owner = address("VESTA_OWNER", process.env.VESTA_OWNER || fallbackOwner);
  const adminApiPayer = process.env.VESTA_ADMIN_API_PAYER ? address("VESTA_ADMIN_API_PAYER", process.env.VESTA_ADMIN_API_PAYER) : owner;
  const apiPayers = list(process.env.VESTA_API_PAYERS).map((a) => address("VESTA_API_PAYERS", a));
  const composeHashes = list(process.env.VESTA_COMPOSE_HASHES);
  for (const h of composeHashes) if (!isHexString(h, 32)) problems.push(`VESTA_COMPOSE_HASHES: ${h} is not a 0x-prefixed 32-byte hex`);
  if (problems.length) throw new Error(`bad environment:\n  - ${problems.join("\n  - ")}`);

  console.error(`deploying to network ${hre.network.name} ...`);
  const deployment = await deployVesta(hre, { owner, adminApiPayer, apiPayers, composeHashes });
  console.log(JSON.stringify(deployment, null, 2));
}

main().catch((err) => {
  console.error(`deploy failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
