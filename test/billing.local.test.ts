import { expect } from "chai";
import pino from "pino";
import { loadBillingConfig } from "../billing/config";
import { loadConfig } from "../relayer/config";
import { startRelayer } from "../relayer/server";
import { call, type Stack } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, expectError, ok } from "./helpers/relayerWorkflow";

const HELLO = `async function main() { return "hello"; }`;

describe("billing configuration", function () {
  it("development defaults to local mode, 1 cent per write plus its gas (priced at 0), 1 cent per second, 1000 cents of free credit", function () {
    expect(loadBillingConfig({}, "development")).to.deep.equal({
      config: {
        mode: "local",
        writeCents: 1,
        secondCents: 1,
        freeCreditCents: 1000,
        freeCreditCapCents: 10_000,
        gas: { tokenPriceCents: 0, marginPercent: 20 },
        currency: "usd",
        settleMs: 10_000,
      },
      problems: [],
    });
  });

  it("runs Stripe mode when STRIPE_SECRET_KEY is set, pointed at STRIPE_API_HOST/PORT/PROTOCOL when given", function () {
    const { config, problems } = loadBillingConfig({ STRIPE_SECRET_KEY: "sk_test_1", STRIPE_PUBLISHABLE_KEY: "pk_test_1", STRIPE_API_HOST: "127.0.0.1", STRIPE_API_PORT: "12111", STRIPE_API_PROTOCOL: "http" }, "development");
    expect(problems).to.deep.equal([]);
    expect(config).to.include({ mode: "stripe" });
    expect(config.stripe).to.deep.equal({ secretKey: "sk_test_1", publishableKey: "pk_test_1", webhookSecret: undefined, host: "127.0.0.1", port: 12111, protocol: "http" });
  });

  it("stops the relayer at boot with one message naming every bad billing variable", function () {
    const env = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:1", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: "0x" + "11".repeat(32) };
    const bad = { ...env, VESTA_BILLING: "stripe", VESTA_PRICE_PER_WRITE_CENTS: "-1", VESTA_PRICE_PER_SECOND_CENTS: "0.5", STRIPE_WEBHOOK_SECRET: "nope" };
    expect(() => loadConfig(bad)).to.throw(
      /VESTA_PRICE_PER_WRITE_CENTS[\s\S]*VESTA_PRICE_PER_SECOND_CENTS[\s\S]*STRIPE_WEBHOOK_SECRET[\s\S]*STRIPE_SECRET_KEY: required[\s\S]*STRIPE_PUBLISHABLE_KEY: required/,
    );
  });
});

describe("billing in local mode (npm start: no Stripe, free credit per account)", function () {
  this.timeout(120_000);
  // A 1 s time limit: a run reserves 1 s x 3 cents.
  const stack = suiteStack({ env: { VESTA_FREE_CREDIT_CENTS: "12", VESTA_PRICE_PER_WRITE_CENTS: "5", VESTA_PRICE_PER_SECOND_CENTS: "3", VESTA_ACTION_TIMEOUT_MS: "1000" } });

  it("gives a new account the free credit and charges the configured prices until it is spent, across a restart", async function () {
    const owner = await accountClient(stack());
    expect(await ok(owner.get("/billing/balance"))).to.deep.equal({ balance_cents: -12, credit_cents: 12, balance_display: "$0.12 credit" });
    await addGroup(owner, "g"); // 5
    await ok(owner.post("/lit_action", { code: HELLO })); // 3
    expect(await ok(owner.get("/billing/balance"))).to.include({ credit_cents: 4 });
    await expectError(owner.post("/add_group", { group_name: "h" }), 402, "payment_required", "$0.04", "$0.05");
    await ok(owner.post("/lit_action", { code: HELLO })); // 3: a run reserves its time limit (1 s here)
    await expectError(owner.post("/lit_action", { code: HELLO }), 402, "payment_required", "$0.01", "$0.03");
    await stack().restart();
    expect(await ok(owner.get("/billing/balance"))).to.include({ credit_cents: 1 });
  });

  it("tops up with free credit (the dashboard's local top-up), validated, and survives a restart", async function () {
    const owner = await accountClient(stack());
    expect(await ok(owner.post("/billing/free_credit", { amount_cents: 500 }))).to.deep.equal({ amount_cents: 500, balance_cents: -512, credit_cents: 512, balance_display: "$5.12 credit" });
    await expectError(owner.post("/billing/free_credit", { amount_cents: 0 }), 400, "invalid_request", "amount_cents must be at least 1");
    await expectError(owner.post("/billing/free_credit", { amount_cents: 10_001 }), 400, "invalid_request", "at most 10000");
    await expectError(call(stack(), "POST", "/billing/free_credit", { body: { amount_cents: 5 } }), 401, "invalid_api_key");
    await stack().restart();
    expect(await ok(owner.get("/billing/balance"))).to.include({ credit_cents: 512 });
  });

  it("has no card payments: the Stripe routes answer 404 stripe_not_configured", async function () {
    const owner = await accountClient(stack());
    await expectError(call(stack(), "GET", "/billing/stripe_config"), 404, "stripe_not_configured", "local mode");
    await expectError(owner.post("/billing/create_payment_intent", { amount_cents: 500 }), 404, "stripe_not_configured");
    await expectError(owner.post("/billing/confirm_payment", { payment_intent_id: "pi_1" }), 404, "stripe_not_configured");
    await expectError(call(stack(), "POST", "/billing/webhook", { rawBody: "{}", headers: { "stripe-signature": "t=1,v1=x" } }), 404, "stripe_not_configured");
  });

  it("VESTA_BILLING=off charges nothing and the billing routes answer 404 billing_not_configured", async function () {
    const off = await startRelayer({ ...stack().relayerConfig, port: 0, billing: loadBillingConfig({ VESTA_BILLING: "off" }, "development").config }, pino({ level: "silent" }));
    try {
      const offStack: Stack = { ...stack(), api: `${off.url}/core/v1` };
      const owner = await accountClient(offStack);
      for (let i = 0; i < 3; i++) await addGroup(owner, `g${i}`); // more than the free credit would allow
      await expectError(owner.get("/billing/balance"), 404, "billing_not_configured");
      await expectError(call(offStack, "GET", "/billing/stripe_config"), 404, "billing_not_configured", "VESTA_BILLING=off");
    } finally {
      await off.close();
    }
  });
});
