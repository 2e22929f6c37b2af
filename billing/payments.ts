import type { Logger } from "pino";
import { AppError } from "../protocol/errors";
import { applyOnce } from "./applyOnce";
import { providerCall } from "./errors";
import type { Billing } from "./service";
import type { PaymentIntent, PaymentsRemote, Payer } from "./types";

export type Confirmed = { credited: boolean; amountCents: number };

/**
 * Card payments (Stripe mode): a payment intent is created for the payer's customer record, and
 * once it succeeded its amount is credited exactly once, whichever comes first and however often:
 * confirm_payment, the `payment_intent.succeeded` webhook, or a retry of either. Per intent: one
 * credit at a time in this process, a ledger row, an idempotency key, and a marker on the intent.
 */
export class Payments {
  private readonly inflight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly billing: Billing,
    readonly remote: PaymentsRemote,
    private readonly logger: Pick<Logger, "warn" | "info">,
  ) {}

  async createIntent(payer: Payer, amountCents: number): Promise<{ id: string; clientSecret: string }> {
    const customerId = await this.billing.customerId(payer);
    return providerCall(this.remote.createIntent(customerId, amountCents, { vesta_payer: payer.key, vesta_account: payer.account }), "creating the payment intent");
  }

  /** Verifies with the provider that the intent succeeded and is the payer's, then credits it (once). */
  async confirm(payer: Payer, id: string): Promise<Confirmed> {
    const pi = await providerCall(this.remote.retrieveIntent(id), "retrieving the payment intent");
    if (!pi) throw new AppError(404, "payment_intent_not_found", `no payment intent ${id} at the payment provider`);
    const customerId = await this.billing.customerId(payer);
    if (pi.customer !== customerId || pi.metadata.vesta_payer !== payer.key) {
      throw new AppError(403, "payment_intent_not_yours", `payment intent ${id} was not created for this account's billing; nothing was credited`);
    }
    if (pi.status !== "succeeded") {
      throw new AppError(409, "payment_not_succeeded", `payment intent ${id} is ${pi.status}, not succeeded; nothing was credited (confirm it again once it succeeded)`);
    }
    if (pi.currency !== this.billing.config.currency) {
      throw new AppError(409, "payment_currency_mismatch", `payment intent ${id} is in ${pi.currency}; this node bills in ${this.billing.config.currency}`);
    }
    return { credited: await this.credit(pi, customerId), amountCents: pi.amountReceivedCents };
  }

  /** A webhook delivery: verifies its signature (400 when it does not hold) and credits a succeeded intent of ours. */
  async webhook(rawBody: Buffer, signature: string): Promise<void> {
    let pi: PaymentIntent | undefined;
    try {
      pi = this.remote.succeededIntent(rawBody, signature);
    } catch (err) {
      throw new AppError(400, "invalid_webhook_signature", `the webhook's Stripe-Signature does not hold: ${(err as Error).message}`);
    }
    if (!pi) return; // another event type: acknowledged, nothing to do
    if (!pi.customer || !pi.metadata.vesta_payer || pi.currency !== this.billing.config.currency) {
      this.logger.warn({ paymentIntent: pi.id }, "billing: a succeeded payment intent that is not a Vesta credit (no payer, or another currency); ignored");
      return;
    }
    await this.credit(pi, pi.customer);
  }

  /** Credits `pi` to `customerId` unless it was credited before; true when this call credited it. */
  private credit(pi: PaymentIntent, customerId: string): Promise<boolean> {
    const running = this.inflight.get(pi.id);
    if (running) return running.then(() => false);
    const p = this.creditNow(pi, customerId).finally(() => this.inflight.delete(pi.id));
    this.inflight.set(pi.id, p);
    return p;
  }

  private async creditNow(pi: PaymentIntent, customerId: string): Promise<boolean> {
    if (pi.metadata.vesta_credited) return false;
    const ledger = this.billing.ledger;
    const claim = await ledger.claimCredit(pi.id, customerId, pi.amountReceivedCents);
    if (claim.state === "done") return false;
    await ledger.durable();
    const adjustment = await providerCall(
      this.billing.settler.serial(async () => {
        // In turn with every replica's settlements and credit reads for this customer (Ledger.creditTurn).
        const a = await ledger.creditTurn(customerId, async (q) => {
          if (await ledger.credited(pi.id, q)) return undefined; // another replica's credit of it came first, in its turn
          const applied = await applyOnce(this.billing.remote, {
            customerId,
            deltaCents: pi.amountReceivedCents,
            key: `vesta-credit-${pi.id}`,
            metadata: { description: `Vesta credit: payment ${pi.id}`, vesta_payment_intent: pi.id },
            retry: claim.state === "retry",
            since: claim.since,
          });
          return (await ledger.finishCredit(pi.id, customerId, applied.id, applied.endingCreditCents, q)) ? applied : undefined;
        });
        this.billing.reload(customerId);
        return a;
      }),
      "crediting the payment (it is credited once when confirmed again)",
    );
    if (!adjustment) return false;
    this.logger.info({ paymentIntent: pi.id, customer: customerId, cents: pi.amountReceivedCents }, "billing: payment credited");
    await this.remote.markCredited(pi.id, adjustment.id).catch((err) => this.logger.warn({ err: (err as Error).message, paymentIntent: pi.id }, "billing: could not mark the intent credited"));
    return true;
  }
}
