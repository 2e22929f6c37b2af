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
 * Fee raises reserved for (and allowed to) one transaction: one per VESTA_TX_REPLACE_MS within
 * VESTA_TX_TIMEOUT_MS, at most MAX_FEE_RAISES (so a short replace interval does not multiply
 * reservations: once the fees reach the cap no replacement is sent, and waiting goes on).
 */
export const MAX_FEE_RAISES = 3;
export const maxReplacements = (watch: Pick<PayerWatch, "replaceAfterMs">, txTimeoutMs: number): number => Math.min(MAX_FEE_RAISES, Math.max(0, Math.floor(txTimeoutMs / watch.replaceAfterMs)));

/**
 * The highest price per gas a write sent at `price` may pay once replaced: `price` raised by
 * `percent` `times` times (at the defaults, 25 % three times: about 1.95 times `price`). Relayed writes reserve their gas at this price (pay before work: the
 * replacements' fees are the account's, as the first transaction's), and a replacement never
 * offers more (bumpedFees' `cap`), so what is mined never costs more than was reserved.
 */
export function replacedWorstPrice(price: bigint, percent: number, times: number): bigint {
  let p = price;
  for (let i = 0; i < times; i++) p = bump(p, percent);
  return p;
}

/** The price per gas a transaction offers at most: maxFeePerGas, or the legacy gas price. */
export const offeredPrice = (tx: TransactionRequest): bigint => BigInt(tx.maxFeePerGas ?? tx.gasPrice ?? 0n);

/**
 * The fee fields of the replacement of `tx` (same nonce): each fee raised by `percent` (plus 1 wei,
 * so rounding never leaves it equal), and never under what the chain asks now; never above `cap`
 * per gas (what was reserved for it). Undefined when the cap leaves no raise (nothing to replace with).
 */
export function bumpedFees(
  tx: TransactionRequest,
  percent: number,
  now: { maxFeePerGas: bigint | null; maxPriorityFeePerGas: bigint | null; gasPrice: bigint | null },
  cap?: bigint,
): Pick<TransactionRequest, "maxFeePerGas" | "maxPriorityFeePerGas" | "gasPrice"> | undefined {
  const max = (a: bigint, b: bigint | null) => (b !== null && b > a ? b : a);
  const capped = (v: bigint) => (cap !== undefined && v > cap ? cap : v);
  if (tx.maxFeePerGas != null) {
    const priority = capped(max(bump(BigInt(tx.maxPriorityFeePerGas ?? 0n), percent), now.maxPriorityFeePerGas));
    const fee = capped(max(bump(BigInt(tx.maxFeePerGas), percent), now.maxFeePerGas));
    // Nodes take a replacement only when both fees rose (by 10 % or more): a capped one that did not is not sent.
    if (fee <= BigInt(tx.maxFeePerGas) || priority <= BigInt(tx.maxPriorityFeePerGas ?? 0n)) return undefined;
    return { maxFeePerGas: fee > priority ? fee : priority, maxPriorityFeePerGas: priority };
  }
  const price = capped(max(bump(BigInt(tx.gasPrice ?? 0n), percent), now.gasPrice));
  return price > BigInt(tx.gasPrice ?? 0n) ? { gasPrice: price } : undefined;
}
