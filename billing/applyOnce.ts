import type { Adjustment, BalanceRemote } from "./types";

/** How far back a retried adjustment is looked for before it is sent again (the provider's clocks may differ). */
const CLOCK_SLACK_SECONDS = 600;

export type OneAdjustment = {
  customerId: string;
  deltaCents: number;
  /** The idempotency key; also stored in the adjustment's metadata as `vesta_key`. */
  key: string;
  metadata: Record<string, string>;
  /** An earlier attempt may have reached the provider (its answer was lost, or its process died). */
  retry: boolean;
  /** When the first attempt was prepared (ms). */
  since: number;
};

/**
 * Applies one adjustment exactly once. The idempotency key makes a resend harmless while the
 * provider remembers it (Stripe: at least 24 hours); a retry first looks for the adjustment by its
 * metadata, so a resend after a longer outage does not apply it twice either. After a retry the
 * customer's credit is read again (a replayed answer carries the credit of its first time).
 */
export async function applyOnce(remote: BalanceRemote, a: OneAdjustment): Promise<Adjustment> {
  if (a.retry) {
    const found = await remote.findAdjustment(a.customerId, "vesta_key", a.key, Math.floor(a.since / 1000) - CLOCK_SLACK_SECONDS);
    const applied = found ?? (await remote.adjust(a.customerId, a.deltaCents, a.key, { ...a.metadata, vesta_key: a.key }));
    return { id: applied.id, endingCreditCents: await remote.credit(a.customerId) };
  }
  return remote.adjust(a.customerId, a.deltaCents, a.key, { ...a.metadata, vesta_key: a.key });
}
