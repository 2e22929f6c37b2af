import type { JsonRpcProvider, TransactionRequest } from "ethers";

/** What the pool watches for the payer wallets (VESTA_PAYER_MIN_BALANCE_WEI, VESTA_PAYER_CHECK_MS, VESTA_TX_REPLACE_MS, VESTA_TX_FEE_BUMP_PERCENT). */
export type PayerWatch = {
  /** A payer whose balance is under this (wei) is taken out of the pool until it is funded again. */
  minBalanceWei: bigint;
  /** How often balances and pending transactions are read (ms). */
  checkMs: number;
  /** A sent transaction not mined after this long (ms) is replaced: same nonce, higher fees. */
  replaceAfterMs: number;
  /** How much each replacement raises the fees (percent; nodes want at least 10). */
  feeBumpPercent: number;
};

export const DEFAULT_PAYER_WATCH: PayerWatch = { minBalanceWei: 10n ** 16n, checkMs: 30_000, replaceAfterMs: 30_000, feeBumpPercent: 25 };

/** One payer's state as the last check saw it. */
export type PayerHealth = { address: string; active: boolean; balance: bigint | null; pending: number };

/** Balance and transactions sent but not mined (pending nonce count minus mined count) of `address`. */
export async function readPayer(provider: JsonRpcProvider, address: string): Promise<{ balance: bigint; pending: number }> {
  const [balance, mined, sent] = await Promise.all([provider.getBalance(address, "latest"), provider.getTransactionCount(address, "latest"), provider.getTransactionCount(address, "pending")]);
  return { balance, pending: Math.max(0, sent - mined) };
}

const bump = (v: bigint, percent: number): bigint => (v * BigInt(100 + percent)) / 100n + 1n;

/**
 * The fee fields of the replacement of `tx` (same nonce): each fee raised by `percent` (plus 1 wei,
 * so rounding never leaves it equal), and never under what the chain asks now.
 */
export function bumpedFees(tx: TransactionRequest, percent: number, now: { maxFeePerGas: bigint | null; maxPriorityFeePerGas: bigint | null; gasPrice: bigint | null }): Pick<TransactionRequest, "maxFeePerGas" | "maxPriorityFeePerGas" | "gasPrice"> {
  const max = (a: bigint, b: bigint | null) => (b !== null && b > a ? b : a);
  if (tx.maxFeePerGas != null) {
    const priority = max(bump(BigInt(tx.maxPriorityFeePerGas ?? 0n), percent), now.maxPriorityFeePerGas);
    const fee = max(bump(BigInt(tx.maxFeePerGas), percent), now.maxFeePerGas);
    return { maxFeePerGas: fee > priority ? fee : priority, maxPriorityFeePerGas: priority };
  }
  return { gasPrice: max(bump(BigInt(tx.gasPrice ?? 0n), percent), now.gasPrice) };
}
