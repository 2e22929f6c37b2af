/**
 * Who pays: one customer record at the provider. A managed account pays as itself; a ChainSecured
 * (wallet-owned, or converted) account pays as its admin wallet (spec 2: after conversion billing
 * routes to the new admin wallet's customer record).
 */
export type Payer = {
  /** "account:0x<64 hex>" or "wallet:0x<checksummed address>": the customer record's metadata `vesta_payer`. */
  key: string;
  /** The account hash, 0x + 64 hex. */
  account: string;
};

/** One balance adjustment as the provider recorded it. */
export type Adjustment = { id: string; endingCreditCents: number };

/**
 * The customer balances at the payment provider. Credits are positive here (Stripe's customer
 * `balance` uses the opposite sign: a negative balance is a credit); every adjustment carries an
 * idempotency key, so sending it again never applies it twice.
 */
export interface BalanceRemote {
  /** Finds `payer`'s customer record (by its metadata) or creates it; returns its id and credit. */
  customer(payer: Payer): Promise<{ id: string; creditCents: number }>;
  /** The customer's current credit. */
  credit(customerId: string): Promise<number>;
  /** Adds `deltaCents` to the credit (negative: a debit), once per `idempotencyKey`. */
  adjust(customerId: string, deltaCents: number, idempotencyKey: string, metadata: Record<string, string>): Promise<Adjustment>;
  /** The adjustment of `customerId` whose metadata has `key` = `value`, made after `sinceSeconds`, if any. */
  findAdjustment(customerId: string, key: string, value: string, sinceSeconds: number): Promise<Adjustment | undefined>;
  /** Card payments (Stripe mode only). */
  payments?: PaymentsRemote;
}

export type PaymentIntent = {
  id: string;
  status: string;
  amountReceivedCents: number;
  currency: string;
  customer: string | null;
  metadata: Record<string, string>;
};

export interface PaymentsRemote {
  publishableKey: string;
  createIntent(customerId: string, amountCents: number, metadata: Record<string, string>): Promise<{ id: string; clientSecret: string }>;
  /** The intent, or undefined when the provider does not know it. */
  retrieveIntent(id: string): Promise<PaymentIntent | undefined>;
  /** Records on the intent that it was credited (a marker that outlives idempotency keys). */
  markCredited(id: string, adjustmentId: string): Promise<void>;
  /** Verifies a webhook's signature (throws when it does not hold) and returns the succeeded intent it reports, if any. */
  succeededIntent(rawBody: Buffer, signature: string): PaymentIntent | undefined;
}
