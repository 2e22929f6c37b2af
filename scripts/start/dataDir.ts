/**
 * `npm start`'s data directory (VESTA_DATA_DIR, default .vesta): what off-chain state it holds,
 * the deployment file, and the check that the contracts this checkout builds are the ones the
 * journaled chain runs.
 */
import fs from "node:fs";
import path from "node:path";
import { keccak256 } from "ethers";
import type { HardhatRuntimeEnvironment } from "hardhat/types";
import { syncDir, JournalError } from "./journal";
import type { DeploymentRecord } from "./records";

/** Files that only make sense with the chain they were written beside. */
const OFF_CHAIN = ["deployment.json", "actions.sqlite", "billing.sqlite", path.join("triggers", "triggers.sqlite")];

export function offChainState(dataDir: string): string[] {
  return OFF_CHAIN.filter((f) => fs.existsSync(path.join(dataDir, f)));
}

/** The contracts `npm start` deploys, by artifact name. */
export const DEPLOYED_CONTRACTS = ["AccountConfig", "AccountConfigViews", "AppAuth"];

/** keccak256 of each deployed contract's creation code, as this checkout compiles it. */
export async function contractCodeHashes(hre: HardhatRuntimeEnvironment): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of DEPLOYED_CONTRACTS) out[name] = keccak256((await hre.artifacts.readArtifact(name)).bytecode);
  return out;
}

/** Refuses a chain whose contracts were compiled from other sources than this checkout's (the chain keeps running the old code). */
export async function checkContractsUnchanged(hre: HardhatRuntimeEnvironment, rec: DeploymentRecord, dataDir: string): Promise<void> {
  const now = await contractCodeHashes(hre);
  const changed = DEPLOYED_CONTRACTS.filter((n) => rec.codeHashes[n] !== now[n]);
  if (changed.length) {
    throw new JournalError(
      `the contracts changed since ${dataDir} was created (${changed.join(", ")}: this checkout compiles other code than the chain there runs). ` +
        `Its accounts live in the old contracts: go back to the sources that deployed them, or move ${dataDir} away (or set VESTA_DATA_DIR to a new directory) to deploy the new ones on a new chain`,
    );
  }
  for (const [name, address] of [["AccountConfig", rec.deployment.accountConfig], ["AppAuth", rec.deployment.appAuth]]) {
    const code = await hre.network.provider.request({ method: "eth_getCode", params: [address, "latest"] });
    if (code === "0x") throw new JournalError(`the replayed chain has no ${name} at ${address}, where ${dataDir}'s deployment says it is: move ${dataDir} away to start a new chain`);
  }
}

/** Writes `file` whole or not at all (a temporary file, fsync, rename, fsync of the directory). */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, "w", 0o644);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDir(path.dirname(file));
}
