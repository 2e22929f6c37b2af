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

/** Writes `file` whole or not at all (a temporary file, fsync, rename, fsync of the directory), with `mode` (0644 unless told). */
export function writeFileAtomic(file: string, text: string, mode = 0o644): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true }); // a leftover of a crash keeps its own mode: start from none
  const fd = fs.openSync(tmp, "wx", mode);
  try {
    fs.fchmodSync(fd, mode); // whatever the umask
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  syncDir(path.dirname(file));
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Takes `lockFile` for this process (its pid inside), or refuses while a live process holds it:
 * two chains appending to one journal would corrupt it. A lock left by a process that is gone
 * (a `kill -9`) is taken over. Returns the release.
 */
export function lockDataDir(lockFile: string, dataDir: string): () => void {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: "wx" });
      return () => fs.rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = Number(fs.readFileSync(lockFile, "utf8"));
    if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
      throw new JournalError(`${dataDir} is in use by another npm start (pid ${pid}): stop it, or set VESTA_DATA_DIR to another directory (if no such process runs, remove ${lockFile})`);
    }
    fs.rmSync(lockFile, { force: true }); // its process is gone
  }
}
