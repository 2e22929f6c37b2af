import Stripe from "stripe";
import type { StripeSettings } from "./config";
import type { Adjustment, BalanceRemote, PaymentIntent, PaymentsRemote, Payer } from "./types";

type StripeClient = InstanceType<typeof Stripe>;
type StripeIntent = { id: string; status: string; amount_received: number; currency: string; customer: string | { id: string } | null; metadata: Record<string, string> | null };
type StripeBalanceTransaction = { id: string; ending_balance: number };

// Stripe's customer `balance` is what the customer owes: a credit is negative. Here credits are positive.
const fromStripe = (stripeBalance: number) => 0 - stripeBalance; // (never -0)
const toAdjustment = (t: StripeBalanceTransaction): Adjustment => ({ id: t.id, endingCreditCents: fromStripe(t.ending_balance) });

const toIntent = (pi: StripeIntent): PaymentIntent => ({
  id: pi.id,
  status: pi.status,
  amountReceivedCents: pi.amount_received,
  currency: pi.currency,
  customer: typeof pi.customer === "string" ? pi.customer : (pi.customer?.id ?? null),
  metadata: pi.metadata ?? {},
});

/** Balances in Stripe customer records, through the official SDK (pointed at a test double by host/port/protocol). */
export class StripeRemote implements BalanceRemote {
  readonly stripe: StripeClient;
  readonly payments: PaymentsRemote;

  constructor(
    settings: StripeSettings,
    private readonly currency: string,
  ) {
    this.stripe = new Stripe(settings.secretKey, {
      maxNetworkRetries: 2, // retries reuse the idempotency key, so a retried adjustment is applied once
      timeout: 20_000,
      ...(settings.host ? { host: settings.host } : {}),
      ...(settings.port ? { port: settings.port } : {}),
      ...(settings.protocol ? { protocol: settings.protocol } : {}),
    });
    this.payments = stripePayments(this.stripe, settings, currency);
  }

  async customer(payer: Payer): Promise<{ id: string; creditCents: number }> {
    const found = await this.stripe.customers.search({ query: `metadata['vesta_payer']:'${payer.key}'`, limit: 1 });
    const customer =
      found.data[0] ??
      (await this.stripe.customers.create(
        { description: `Vesta ${payer.key}`, metadata: { vesta_payer: payer.key, vesta_account: payer.account } },
        { idempotencyKey: `vesta-customer-${payer.key}` }, // two replicas racing create it once (search lags behind writes)
      ));
    return { id: customer.id, creditCents: fromStripe(customer.balance) };
  }

  async credit(customerId: string): Promise<number> {
    const c = await this.stripe.customers.retrieve(customerId);
    if (c.deleted) throw new Error(`Stripe customer ${customerId} was deleted`);
    return fromStripe(c.balance);
  }

  async adjust(customerId: string, deltaCents: number, idempotencyKey: string, metadata: Record<string, string>): Promise<Adjustment> {
    const t = await this.stripe.customers.createBalanceTransaction(
      customerId,
      { amount: -deltaCents, currency: this.currency, description: metadata.description, metadata },
      { idempotencyKey },
    );
    return toAdjustment(t);
  }

  async findAdjustment(customerId: string, key: string, value: string, sinceSeconds: number): Promise<Adjustment | undefined> {
    for await (const t of this.stripe.customers.listBalanceTransactions(customerId, { limit: 100 })) {
      if (t.metadata?.[key] === value) return toAdjustment(t);
      if (t.created < sinceSeconds) return undefined; // newest first: nothing older can match
    }
    return undefined;
  }
}

function stripePayments(stripe: StripeClient, settings: StripeSettings, currency: string): PaymentsRemote {
  return {
    publishableKey: settings.publishableKey,
    async createIntent(customerId, amountCents, metadata) {
      const pi = await stripe.paymentIntents.create({ amount: amountCents, currency, customer: customerId, metadata, automatic_payment_methods: { enabled: true } });
      return { id: pi.id, clientSecret: pi.client_secret ?? "" };
    },
    async retrieveIntent(id) {
      try {
        return toIntent(await stripe.paymentIntents.retrieve(id));
      } catch (err) {
        if ((err as { code?: string }).code === "resource_missing") return undefined;
        throw err;
      }
    },
    async markCredited(id, adjustmentId) {
      await stripe.paymentIntents.update(id, { metadata: { vesta_credited: adjustmentId } });
    },
    succeededIntent(rawBody, signature) {
      if (!settings.webhookSecret) throw new Error("no webhook secret");
      const event = stripe.webhooks.constructEvent(rawBody, signature, settings.webhookSecret);
      return event.type === "payment_intent.succeeded" ? toIntent(event.data.object as StripeIntent) : undefined;
    },
  };
}
