/**
 * eth_estimateGas within the gas the request names, for requests through npm start's JSON-RPC port
 * (./portProvider.ts). Hardhat's node (EDR) runs such a request's transaction at its gas, and when
 * the gas it used is not enough as a limit (code that looks at the gas left), searches for the
 * limit up to the block gas limit (60M), not up to the gas named, keeping the record of every step
 * of every run (./traceMemory.ts) until it answers. An action's estimate, capped at 1M gas
 * (VESTA_ACTION_RPC_GAS_CAP), thus ran ~16M gas in one request: 3.2 s and +1 GB of the chain's
 * process, where one eth_call of 1M gas is ~0.2 s and ~60 MB.
 *
 * Here the search runs within the gas named, as geth's does: one run at that gas, then a binary
 * search from 21,000 with the node's stopping rule (within 200-1,000 gas of the least limit below
 * 1M) and its 20 runs at most (at 1M gas, 14 runs in all); every run is its own eth_call of at
 * most that gas, so the chain gives back what each run kept before the next (./traceMemory.ts),
 * and other callers' requests go in between. The answer is a limit at which the call succeeds; a transaction that
 * fails at the gas named fails as the node's estimate would (the same error: eth_call's and
 * eth_estimateGas's are one). Requests that name no gas (wallets, ethers, the relayer) get the
 * node's own estimate, which needs two runs for most transactions.
 */
import { toQuantity } from "ethers";

/** Runs of the search after the first (EDR's MAX_ITERATIONS). */
export const MAX_SEARCH_RUNS = 20;

/** How close the search comes to the least limit, by the lower bound (EDR's and Hardhat's min_difference). */
function tolerance(lower: bigint): bigint {
  if (lower >= 4_000_000n) return 50_000n;
  if (lower >= 1_000_000n) return 10_000n;
  if (lower >= 100_000n) return 1_000n;
  if (lower >= 50_000n) return 500n;
  if (lower >= 30_000n) return 300n;
  return 200n;
}

/** A transaction's gas when it names one as a quantity (hex or a safe integer), else undefined. */
export function namedGas(tx: unknown): bigint | undefined {
  const gas = tx !== null && typeof tx === "object" ? (tx as { gas?: unknown }).gas : undefined;
  if (typeof gas === "string" && /^0x[0-9a-fA-F]{1,16}$/.test(gas)) return BigInt(gas);
  if (typeof gas === "number" && Number.isSafeInteger(gas) && gas >= 0) return BigInt(gas);
  return undefined;
}

/**
 * The estimate of `params` (eth_estimateGas's: a transaction naming `gas`, then an optional block,
 * "pending" by default as the node's) by eth_calls through `call`, each of at most that gas.
 */
export async function estimateWithin(call: (params: unknown[]) => Promise<unknown>, params: unknown[], gas: bigint): Promise<string> {
  const [tx, block = "pending", ...rest] = params as [Record<string, unknown>, unknown?, ...unknown[]];
  const runs = (limit: bigint) => call([{ ...tx, gas: toQuantity(limit) }, block, ...rest]);
  await runs(gas); // fails as the estimate would
  let [lower, upper] = [21_000n, gas];
  for (let i = 0; i < MAX_SEARCH_RUNS && upper - lower > tolerance(lower); i++) {
    const mid = lower + (upper - lower) / 2n;
    const ok = await runs(mid).then(() => true, () => false);
    if (ok) upper = mid;
    else lower = mid + 1n;
  }
  return toQuantity(upper);
}
