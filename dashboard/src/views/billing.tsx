/** Balance and top-up: Stripe Elements where the node takes cards, free credit on a local node. */
import { useEffect, useRef, useState } from "preact/hooks";
import { loadStripe } from "@stripe/stripe-js/pure";
import type { Stripe, StripeElements } from "@stripe/stripe-js";
import { unwrap } from "@client";
import type { Backend } from "../backend";
import type { DashboardConfig } from "../session";
import { Alert, Field, Form, Section, useAction, useLoad } from "../ui";

type Payment = { stripe: Stripe; elements: StripeElements; intentId: string; cents: number };

const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** The amount typed, in cents; an amount that is not dollars (and cents) is refused in dollars. */
const centsOf = (dollars: string) => {
  const t = dollars.trim().replace(/^\$/, "");
  const n = Number(t);
  if (!t || !Number.isFinite(n) || n <= 0) throw new Error(`“${dollars}” is not an amount in dollars: enter one like 10 or 12.50`);
  if (!/^\d+(\.\d{1,2})?$/.test(t)) throw new Error(`$${t} is not a whole number of cents: use at most two decimals, like 12.50`);
  return Math.round(n * 100);
};

/** The API counts cents (amount_cents); the user typed dollars: its limits are said in dollars, with what was typed. */
export function inDollars(message: string, typedCents: number): string {
  const m = /amount_cents must be (at least|at most) (\d+)( per request)?/.exec(message);
  if (!m) return message;
  return `the amount must be ${m[1]} ${usd(Number(m[2]))}${m[3] ? " per top-up" : ""}; you entered ${usd(typedCents)}`;
}

/** Runs a top-up call, its amount errors said in dollars. */
async function topUp<T>(cents: number, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new Error(inDollars((err as Error).message, cents));
  }
}

export function BillingView({ backend, config }: { backend: Backend; config: DashboardConfig }) {
  const balance = useLoad(() => unwrap(backend.api.GET("/core/v1/billing/balance")));
  const act = useAction();
  const [amount, setAmount] = useState(config.billing === "stripe" ? "10" : "5");
  const [payment, setPayment] = useState<Payment>();
  const [done, setDone] = useState<string>();
  const mountAt = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (payment && mountAt.current) payment.elements.create("payment").mount(mountAt.current);
  }, [payment]);

  const freeCredit = () =>
    act.run(async () => {
      setDone(undefined);
      const cents = centsOf(amount);
      const r = await topUp(cents, () => unwrap(backend.api.POST("/core/v1/billing/free_credit", { body: { amount_cents: cents } })));
      setDone(`Added ${usd(r.amount_cents)} of free credit. Balance: ${r.balance_display}.`);
      setAmount("");
      balance.reload();
    });

  const startPayment = () =>
    act.run(async () => {
      setDone(undefined);
      const cents = centsOf(amount);
      const { publishable_key } = await unwrap(backend.api.GET("/core/v1/billing/stripe_config"));
      const intent = await topUp(cents, () => unwrap(backend.api.POST("/core/v1/billing/create_payment_intent", { body: { amount_cents: cents } })));
      const stripe = await loadStripe(publishable_key);
      if (!stripe) throw new Error("Stripe.js could not be loaded (is js.stripe.com reachable from this browser?)");
      setPayment({ stripe, elements: stripe.elements({ clientSecret: intent.client_secret }), intentId: intent.payment_intent_id, cents });
    });

  const pay = () =>
    act.run(async () => {
      const p = payment!;
      const { error } = await p.stripe.confirmPayment({ elements: p.elements, redirect: "if_required" });
      if (error) throw new Error(error.message ?? "the payment failed");
      const r = await unwrap(backend.api.POST("/core/v1/billing/confirm_payment", { body: { payment_intent_id: p.intentId } }));
      setPayment(undefined);
      setAmount("");
      setDone(`Paid ${(r.amount_cents / 100).toFixed(2)}. Balance: ${r.balance_display}.`);
      balance.reload();
    });

  return (
    <Section title="Balance">
      <Alert error={balance.error ?? act.error} />
      <p class="balance">
        Balance: <strong data-testid="balance">{balance.data ? balance.data.balance_display : "…"}</strong>
      </p>
      <p class="hint">Each relayed write and each started second of an action costs credit; a call without enough credit is refused with 402 before anything runs.</p>
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {config.billing === "local" && (
        <Form onSubmit={() => freeCredit()}>
          <h3>Top up (local node: free credit)</h3>
          <p class="hint">This node takes no card payments (no STRIPE_SECRET_KEY): credit is free for development.</p>
          <Field label="Amount (USD)" name="topup_amount" value={amount} onInput={setAmount} />
          <button class="primary" disabled={act.busy}>Add free credit</button>
        </Form>
      )}
      {config.billing === "stripe" && (
        <Form onSubmit={() => (payment ? pay() : startPayment())}>
          <h3>Top up by card</h3>
          {!payment && <Field label="Amount (USD, at least 5)" name="topup_amount" value={amount} onInput={setAmount} />}
          {payment && <p>Paying {(payment.cents / 100).toFixed(2)} USD</p>}
          <div ref={mountAt} id="payment-element" />
          <button class="primary" disabled={act.busy}>{payment ? "Pay" : "Continue to payment"}</button>
          {payment && (
            <button type="button" onClick={() => setPayment(undefined)}>
              Cancel
            </button>
          )}
        </Form>
      )}
      {config.billing === "off" && <p class="hint">Billing is off on this node.</p>}
    </Section>
  );
}
