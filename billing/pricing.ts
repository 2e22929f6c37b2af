import type { BillingConfig, GasPricing } from "./config";

const WEI_PER_TOKEN = 10n ** 18n;
/** Token prices are kept to a millionth of a cent. */
const MICRO = 1_000_000;

/**
 * `wei` of gas in cents: wei / 1e18 x tokenPriceCents x (100 + marginPercent) / 100, rounded up
 * (integer arithmetic throughout, so a larger amount of gas never prices lower).
 */
export function gasCents(wei: bigint, gas: GasPricing): number {
  if (wei <= 0n || gas.tokenPriceCents <= 0) return 0;
  const price = BigInt(Math.round(gas.tokenPriceCents * MICRO));
  const num = wei * price * BigInt(100 + gas.marginPercent);
  const den = WEI_PER_TOKEN * BigInt(MICRO) * 100n;
  return Number((num + den - 1n) / den);
}

/** The price of a relayed write that spent `wei` of gas: the fixed part plus its gas, in cents. */
export const writeCents = (wei: bigint, config: Pick<BillingConfig, "writeCents" | "gas">): number => config.writeCents + gasCents(wei, config.gas);

/** Whole seconds charged for a run that held a worker `durationMs` (each started second; at least one). */
export const runSeconds = (durationMs: number): number => Math.max(1, Math.ceil(durationMs / 1000));
