/**
 * Replays a chain journal into a fresh local chain built from the same genesis (same Hardhat
 * config, chain id and genesis timestamp): each block's raw transactions are sent with automine
 * off and the block is mined at its recorded timestamp, then its hash must equal the recorded
 * one (the hash covers the state root, the transactions and the parent, so equal hashes mean the
 * same chain). Any difference stops the boot with a message saying where and what to do.
 */
import { JournalError } from "./journal";
import { txHash, type DeploymentRecord, type GenesisRecord, type JournalRecord, type Request } from "./records";
import type { MiningInterval } from "./methods";

export type Replayed = { head: number; automine: boolean; interval: MiningInterval; deployment?: DeploymentRecord; blocks: number; resent: number };
export type ReplayOptions = { automine: boolean; interval: MiningInterval; progress: (line: string) => void; progressEveryMs?: number; where: string };

const FRESH_START = "move the data directory away (or set VESTA_DATA_DIR to a new one) to start a new chain";

/** Checks that the fresh chain has the journal's genesis. */
export async function checkGenesis(request: Request, g: GenesisRecord, where: string): Promise<void> {
  const chainId = Number(await request("eth_chainId"));
  const genesis = await request("eth_getBlockByNumber", ["0x0", false]);
  if (chainId !== g.chainId || genesis.hash !== g.hash) {
    throw new JournalError(
      `${where} was written by another chain (chain id ${g.chainId}, genesis ${g.hash}; this one: chain id ${chainId}, genesis ${genesis.hash}): ` +
        `hardhat.config.ts's hardhat network (chain id, accounts, hardfork, gas limit) changed since. Restore that configuration, or ${FRESH_START}`,
    );
  }
}

export async function replay(request: Request, records: JournalRecord[], opts: ReplayOptions): Promise<Replayed> {
  const [first, ...rest] = records;
  if (first?.k !== "genesis") throw new JournalError(`${opts.where} does not start with its genesis record: ${FRESH_START}`);
  await checkGenesis(request, first, opts.where);
  await request("evm_setAutomine", [false]);
  const out: Replayed = { head: 0, automine: opts.automine, interval: opts.interval, blocks: 0, resent: 0 };
  const pending = new Map<string, string>();
  const total = rest.filter((r) => r.k === "block").length;
  const every = opts.progressEveryMs ?? 2_000;
  let lastLine = Date.now();
  for (const r of rest) {
    if (r.k === "block") {
      for (const raw of r.txs) {
        await request("eth_sendRawTransaction", [raw]).catch((err: Error) => {
          throw new JournalError(`${opts.where} does not match this chain: block ${r.n}'s transaction ${txHash(raw)} is refused at replay (${err.message}); ${FRESH_START}`);
        });
        if (pending.size) pending.delete(txHash(raw));
      }
      await request("evm_mine", [r.ts]);
      const got = await request("eth_getBlockByNumber", ["latest", false]);
      if (Number(got.number) !== r.n || got.hash !== r.hash) {
        throw new JournalError(`${opts.where} does not match this chain: block ${r.n} replays as block ${Number(got.number)} with hash ${got.hash}, not ${r.hash}; ${FRESH_START}`);
      }
      out.head = r.n;
      out.blocks++;
      if (Date.now() - lastLine >= every) {
        opts.progress(`replaying the chain journal: block ${out.blocks} of ${total} (${Math.floor((100 * out.blocks) / total)}%)`);
        lastLine = Date.now();
      }
    } else if (r.k === "tx") pending.set(r.hash, r.raw);
    else if (r.k === "deployment") out.deployment = r;
    else if (r.k === "rpc" && r.method === "evm_setAutomine") out.automine = Boolean(r.params[0]);
    else if (r.k === "rpc" && r.method === "evm_setIntervalMining") out.interval = (r.params[0] || 0) as MiningInterval;
    else if (r.k === "rpc") await request(r.method, r.params);
    else throw new JournalError(`${opts.where} holds a record this version does not know (${JSON.stringify(r).slice(0, 80)})`);
  }
  // Acknowledged but never mined: back into the mempool, as they were.
  for (const raw of pending.values()) {
    await request("eth_sendRawTransaction", [raw]).then(() => out.resent++, () => undefined);
  }
  await request("evm_setAutomine", [out.automine]);
  // Mining at recorded timestamps set the clock back to the last block: catch up with the wall clock.
  const next = await request("eth_getBlockByNumber", ["pending", false]);
  const behind = Math.floor(Date.now() / 1000) - Number(next.timestamp);
  if (behind > 0) await request("evm_increaseTime", [behind]);
  return out;
}
