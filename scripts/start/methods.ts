import { InvalidInputError } from "hardhat/internal/core/providers/errors";

/** Which JSON-RPC methods of the local chain are journaled, replayed or refused (durableProvider.ts, replay.ts). */

/**
 * Deterministic node settings and state edits: journaled in their place between blocks and
 * replayed as they were (evm_setAutomine and evm_setIntervalMining only set the mode the chain
 * comes back in).
 */
export const REPLAYED_SETTERS = new Set([
  "hardhat_setBalance",
  "hardhat_setCode",
  "hardhat_setNonce",
  "hardhat_setStorageAt",
  "hardhat_setCoinbase",
  "hardhat_setPrevRandao",
  "hardhat_setNextBlockBaseFeePerGas",
  "hardhat_setMinGasPrice",
  "evm_setBlockGasLimit",
  "evm_setAutomine",
  "evm_setIntervalMining",
]);

/** Calls that would make the chain differ from its journal, with why. */
export const REFUSED: Record<string, string> = {
  hardhat_reset: "it would drop acknowledged blocks (start on a new VESTA_DATA_DIR for a fresh chain)",
  evm_revert: "it would drop acknowledged blocks",
  hardhat_impersonateAccount: "transactions of impersonated accounts carry no signature to replay",
  hardhat_stopImpersonatingAccount: "impersonation is not available",
  hardhat_dropTransaction: "an acknowledged transaction stays until mined",
  hardhat_dropAllTransactions: "acknowledged transactions stay until mined",
};

/** hardhat_mine journals each block it mines: past this many in one call it is refused. */
export const MAX_MINE_BLOCKS = 1_000;

/** Hardhat's `mining.interval`: 0 (off), milliseconds, or a [min, max] range drawn from at each block. */
export type MiningInterval = number | [number, number];

export function intervalMs(i: MiningInterval): number {
  return Array.isArray(i) ? i[0] + Math.floor(Math.random() * (i[1] - i[0] + 1)) : i;
}

/** Settings that only move the clock or the node's logging: nothing to replay (block timestamps are journaled). */
const PASS_SETTERS = new Set(["evm_setNextBlockTimestamp", "hardhat_setLoggingEnabled", "hardhat_setLedgerOutputEnabled"]);

/** Why `method` is refused, or undefined; a setter this list does not know is refused (default deny). */
export function refusal(method: string): string | undefined {
  if (REFUSED[method]) return REFUSED[method];
  if (/^(hardhat|evm)_set/.test(method) && !REPLAYED_SETTERS.has(method) && !PASS_SETTERS.has(method)) return "it is not journaled";
  return undefined;
}

/** hardhat_mine's block count (a quantity, 1 when absent); anything unreadable counts as too many. */
export function mineCount(v: unknown): number {
  if (v === undefined || v === null) return 1;
  try {
    return Number(BigInt(v as string));
  } catch {
    return Infinity;
  }
}

/** evm_setIntervalMining's argument, checked. */
export function checkInterval(v: unknown): MiningInterval {
  const ms = (n: unknown, least: number) => typeof n === "number" && Number.isInteger(n) && n >= least;
  if (v === false || v === null) return 0;
  if (ms(v, 0) || (Array.isArray(v) && v.length === 2 && ms(v[0], 1) && ms(v[1], 1) && v[0] <= v[1])) return v as MiningInterval;
  throw new InvalidInputError("evm_setIntervalMining takes a number of milliseconds (0: off) or [min, max] with 1 <= min <= max");
}
