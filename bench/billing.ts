import pino from "pino";
import { call, newAccount, startStack, type Stack } from "../test/helpers/relayer";
import { startStripeDouble } from "../test/helpers/stripeDouble";
import { startRelayer } from "../relayer/server";
import { loadBillingConfig } from "../billing/config";
import { compareOnOff } from "./relayer";
import { defaultSandboxCount } from "../executor/sandbox/host/pool";

const HELLO = `async function main(params) { return { hello: params.name }; }`;
const TARGET = 0.9;

/**
 * End to end: hello-world action runs over HTTP with billing on (Stripe mode against the local
 * Stripe test double: each run admitted against the cached balance, debited in the SQLite ledger,
 * settled in batches every second while the load runs) against the same relayer code with billing
 * off, on the same chain and the same account, in one run (best of interleaved rounds).
 */
export async function printBillingBench() {
  console.log("== Billing: action runs over HTTP with billing on (Stripe mode, test double) vs off");
  const double = await startStripeDouble();
  const workers = String(defaultSandboxCount()); // the relayer's default
  let stack: Stack | undefined;
  let off: Awaited<ReturnType<typeof startRelayer>> | undefined;
  try {
    stack = await startStack({ payerCount: 1, env: { ...double.env(), VESTA_SANDBOX_WORKERS: workers, VESTA_RUNS_PER_ACCOUNT: workers, VESTA_BILLING_SETTLE_MS: "1000" } }); // one account: all workers
    off = await startRelayer({ ...stack.relayerConfig, port: 0, billing: loadBillingConfig({ VESTA_BILLING: "off" }).config }, pino({ level: "silent" }));
    const { apiKey } = await newAccount(stack, "billing bench");
    const intent = await call(stack, "POST", "/billing/create_payment_intent", { key: apiKey, body: { amount_cents: 50_000_000 } });
    double.succeed(intent.body.payment_intent_id);
    await call(stack, "POST", "/billing/confirm_payment", { key: apiKey, body: { payment_intent_id: intent.body.payment_intent_id } });
    const first = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code: HELLO, js_params: { name: "bench" } } });
    if (first.status !== 200 || first.body.has_error) throw new Error(`warm-up run failed: ${JSON.stringify(first.body)}`);
    const request = (api: string) => ({
      url: `${api}/lit_action`,
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({ ipfs_id: first.body.ipfs_id, js_params: { name: "bench" } }),
    });
    await compareOnOff("billing", { off: request(`${off.url}/core/v1`), on: request(stack.api) }, TARGET);
    const billing = stack.relayer.ctx.billing!;
    await billing.settle();
    const balance = await call(stack, "GET", "/billing/balance", { key: apiKey });
    const settled = double.transactions.filter((t) => t.amount > 0);
    console.log(
      `  ${settled.reduce((n, t) => n + Number(t.metadata.vesta_debits), 0)} debits settled to Stripe in ${settled.length} balance transactions; balance now ${balance.body.balance_display}`,
    );
  } finally {
    await off?.close();
    await stack?.stop();
    await double.close();
  }
}
