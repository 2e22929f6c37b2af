/**
 * What the chain journal holds, and how a mined block is turned into a record: its number,
 * timestamp, hash and raw signed transactions (the bytes a caller sent, or, for transactions the
 * node signed itself with its unlocked accounts, rebuilt from the block and checked against the
 * transaction hash). Replaying the raw transactions into the same genesis with the same timestamps
 * reproduces each block's hash, which replay checks.
 */
import { Transaction, keccak256 } from "ethers";
import type { Deployment } from "../lib/deploy";

/** The first record: the chain the journal belongs to (the genesis is rebuilt from the Hardhat config and this timestamp). */
export type GenesisRecord = { k: "genesis"; v: 1; chainId: number; hash: string; ts: number };
/** A mined block. */
export type BlockRecord = { k: "block"; n: number; ts: number; hash: string; txs: string[] };
/** A transaction acknowledged (its hash returned) but not mined yet: sent again at replay unless a later block holds it. */
export type PendingRecord = { k: "tx"; hash: string; raw: string };
/** A deterministic node setting or state edit (hardhat_setBalance, evm_setAutomine, ...), replayed at its place. */
export type RpcRecord = { k: "rpc"; method: string; params: unknown[] };
/** What `npm start` deployed, with the hashes of the contracts' creation code it deployed. */
export type DeploymentRecord = { k: "deployment"; deployment: Deployment; codeHashes: Record<string, string> };
export type JournalRecord = GenesisRecord | BlockRecord | PendingRecord | RpcRecord | DeploymentRecord;

export type Request = (method: string, params?: unknown[]) => Promise<any>;

type RpcTx = {
  hash: string; type: string; chainId?: string; nonce: string; gas: string; gasPrice?: string; maxFeePerGas?: string;
  maxPriorityFeePerGas?: string; to: string | null; value: string; input: string; accessList?: unknown[];
  r: string; s: string; v: string; yParity?: string;
};

/** Rebuilds the signed bytes of a transaction the node returned; throws when they do not hash to it. */
export function rawFromRpc(t: RpcTx): string {
  const type = Number(t.type);
  const tx = Transaction.from({
    type,
    chainId: t.chainId === undefined ? undefined : BigInt(t.chainId),
    nonce: Number(t.nonce),
    gasLimit: BigInt(t.gas),
    ...(type === 2 ? { maxFeePerGas: BigInt(t.maxFeePerGas!), maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas!) } : { gasPrice: BigInt(t.gasPrice!) }),
    to: t.to,
    value: BigInt(t.value),
    data: t.input,
    ...(type === 0 ? {} : { accessList: t.accessList as never }),
    signature: type === 0 ? { r: t.r, s: t.s, v: Number(t.v) } : { r: t.r, s: t.s, yParity: Number(t.yParity ?? t.v) as 0 | 1 },
  });
  if (tx.hash !== t.hash) throw new Error(`cannot rebuild the signed bytes of transaction ${t.hash} (type ${type})`);
  return tx.serialized;
}

/**
 * Reads blocks `from`..`to` as records. `sent` maps a transaction hash to the raw bytes a caller
 * sent; those found are taken out of it.
 */
export async function blockRecords(request: Request, from: number, to: number, sent: Map<string, string>): Promise<BlockRecord[]> {
  const out: BlockRecord[] = [];
  for (let n = from; n <= to; n++) {
    const b = await request("eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
    const txs = (b.transactions as RpcTx[]).map((t) => {
      const raw = sent.get(t.hash);
      sent.delete(t.hash);
      return raw ?? rawFromRpc(t);
    });
    out.push({ k: "block", n, ts: Number(b.timestamp), hash: b.hash, txs });
  }
  return out;
}

export const txHash = (raw: string): string => keccak256(raw);
