import { AppError } from "../protocol/errors";

/** "$12.34" (or "-$0.05"): cents in the billing currency, for people. */
export function display(cents: number, currency: string): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency: currency.toUpperCase() }).format(cents / 100);
}

/**
 * A balance as GET billing/balance shows it, in Chipotle's convention (Stripe's customer balance):
 * `balance_cents` is negative while there is credit (-credit), and `balance_display` reads
 * "$9.87 credit", or "No credits" (or "$0.05 owed" after a charge that went past the credit);
 * `credit_cents` is the credit as a positive number.
 */
export function balanceView(creditCents: number, currency: string) {
  const balance_display = creditCents > 0 ? `${display(creditCents, currency)} credit` : creditCents === 0 ? "No credits" : `${display(-creditCents, currency)} owed`;
  return { balance_cents: creditCents === 0 ? 0 : -creditCents, credit_cents: creditCents, balance_display };
}

/** 402: the balance does not cover the operation; nothing was done. */
export function paymentRequired(balanceCents: number, priceCents: number, what: string, currency: string): AppError {
  return new AppError(
    402,
    "payment_required",
    `this account's balance is ${display(balanceCents, currency)}, not enough for ${what} (${display(priceCents, currency)}); nothing was done. ` +
      "Add funds with POST /core/v1/billing/create_payment_intent, pay, then POST /core/v1/billing/confirm_payment",
    { credit_cents: balanceCents, price_cents: priceCents },
  );
}

/** 404: card payments need Stripe; this node runs billing in local mode. */
export const paymentsUnavailable = (): AppError =>
  new AppError(404, "stripe_not_configured", "card payments are not available: billing runs in local mode on this node (no Stripe keys; each new account gets free credit)");

/** Waits for a payment-provider call; a failure that is not already an answer becomes 503 (nothing was done; retry). */
export async function providerCall<T>(call: Promise<T>, what: string): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError(503, "payment_provider_unavailable", `the payment provider failed while ${what} (${(err as Error).message}); try again`);
  }
}
