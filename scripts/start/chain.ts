/**
 * Opens `npm start`'s local chain on its data directory: a fresh Hardhat (EDR) chain, then either
 * a new journal (first start) or the replay of the existing one, and `hre.network.provider`
 * replaced by the durable provider, so that everything in this process (Ignition, hre.ethers) and
 * the JSON-RPC server goes through the journal.
 */
import fs from "node:fs";
import path from "node:path";
import type { HardhatNetworkConfig, HardhatRuntimeEnvironment, EthereumProvider } from "hardhat/types";
import { BackwardsCompatibilityProviderAdapter } from "hardhat/internal/core/providers/backwards-compatibility";
import { frame, JournalError, JournalFile, readJournal } from "./journal";
import { DurableProvider } from "./durableProvider";
import { replay, type Replayed } from "./replay";
import type { DeploymentRecord, GenesisRecord, JournalRecord, Request } from "./records";
import { lockDataDir, offChainState } from "./dataDir";

export const journalPath = (dataDir: string): string => path.join(dataDir, "chain", "journal");

export type DurableChain = {
  provider: DurableProvider;
  /** The journal's deployment, absent on a first start. */
  deployment?: DeploymentRecord;
  replayed?: Replayed & { ms: number };
  close: () => Promise<void>;
};

export async function openDurableChain(hre: HardhatRuntimeEnvironment, dataDir: string, log: (line: string) => void): Promise<DurableChain> {
  const file = journalPath(dataDir);
  const unlock = lockDataDir(path.join(path.dirname(file), "lock"), dataDir);
  try {
    return await open(hre, dataDir, file, unlock, log);
  } catch (err) {
    unlock();
    throw err;
  }
}

async function open(hre: HardhatRuntimeEnvironment, dataDir: string, file: string, unlock: () => void, log: (line: string) => void): Promise<DurableChain> {
  const net = hre.network.config as HardhatNetworkConfig;
  const { auto: automine, interval } = net.mining;
  net.mining = { ...net.mining, interval: 0 }; // the durable provider mines on the interval itself, through the journal
  let read = fs.existsSync(file) ? readJournal(file) : undefined;
  if (read?.tornBytes) log(`the chain journal ended in a torn record (${read.tornBytes} bytes that a stop cut short, never acknowledged): dropped`);
  let records = (read?.records ?? []) as JournalRecord[];
  if (records.length && !records.some((r) => r.k === "deployment")) {
    const aside = `${file}.incomplete-${Date.now()}`;
    fs.renameSync(file, aside);
    log(`the chain journal holds no deployment (the first start stopped before it deployed the contracts): starting a new chain (the old journal is kept as ${aside})`);
    [records, read] = [[], undefined];
  }
  if (!records.length) {
    const found = offChainState(dataDir);
    if (found.length) {
      throw new JournalError(
        `${dataDir} holds off-chain state (${found.join(", ")}) but no chain journal (${file}): the chain it belongs to is gone ` +
          `(a data directory from before the chain was durable, or its journal was deleted). Move ${dataDir} away (e.g. mv ${dataDir} ${dataDir}.old) or set VESTA_DATA_DIR to a new directory`,
      );
    }
  }
  const genesis = records[0]?.k === "genesis" ? records[0] : undefined;
  if (genesis) net.initialDate = new Date(genesis.ts * 1000).toISOString(); // the same genesis block, hash and all
  const inner = hre.network.provider;
  const request: Request = (method, params = []) => inner.request({ method, params }) as Promise<any>;

  let journal: JournalFile;
  let replayed: DurableChain["replayed"];
  if (records.length) {
    const t0 = Date.now();
    const blocks = records.filter((r) => r.k === "block").length;
    if (blocks > 500) log(`replaying the chain journal (${blocks} blocks) ...`);
    replayed = { ...(await replay(request, records, { automine, interval, progress: log, where: file })), ms: Date.now() - t0 };
    journal = await JournalFile.open(file, read!.goodBytes);
  } else {
    const g = await request("eth_getBlockByNumber", ["0x0", false]);
    const rec: GenesisRecord = { k: "genesis", v: 1, chainId: Number(await request("eth_chainId")), hash: g.hash, ts: Number(g.timestamp) };
    journal = await JournalFile.open(file);
    await journal.append([frame(rec)]);
  }
  const provider = new DurableProvider(inner, journal, replayed?.head ?? 0, replayed?.interval ?? interval, (err) => log(`CHAIN JOURNAL FAILURE: ${err.message}`));
  hre.network.provider = new BackwardsCompatibilityProviderAdapter(provider) as unknown as EthereumProvider;
  return { provider, deployment: replayed?.deployment, replayed, close: () => provider.close().finally(unlock) };
}
