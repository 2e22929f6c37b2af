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
