import { z } from "zod";

/**
 * How billing runs:
 * - "stripe": balances live in Stripe customer records (the official SDK; STRIPE_SECRET_KEY);
 * - "local": no payment provider, balances in the local SQLite file, each new customer record gets
 *   `freeCreditCents` (development, `npm start`);
 * - "off": nothing is charged and the billing routes answer 404.
 */
export type BillingMode = "stripe" | "local" | "off";

export type StripeSettings = {
  secretKey: string;
  publishableKey: string;
  /** Without it the webhook endpoint answers 404 (confirm_payment still credits). */
  webhookSecret?: string;
  /** Where the SDK sends its requests (default api.stripe.com:443 over https; a test double in tests). */
  host?: string;
  port?: number;
  protocol?: "http" | "https";
};

export type BillingConfig = {
  mode: BillingMode;
  /** Price of one relayed management write, in cents. */
  writeCents: number;
  /** Price of each started second of action execution, in cents. */
  secondCents: number;
  /** Credit of a new customer record in local mode, in cents. */
  freeCreditCents: number;
  currency: string;
  /** How often pending debits are settled to the provider (also at shutdown). */
  settleMs: number;
  stripe?: StripeSettings;
};

const cents = (name: string, def: number) => z.coerce.number().int(`${name} must be a whole number of cents`).min(0, `${name} must be >= 0`).default(def);

const BillingEnv = z.object({
  VESTA_BILLING: z.enum(["stripe", "local", "off"], { message: "VESTA_BILLING must be stripe, local or off" }).optional(),
  VESTA_PRICE_PER_WRITE_CENTS: cents("VESTA_PRICE_PER_WRITE_CENTS", 1),
  VESTA_PRICE_PER_SECOND_CENTS: cents("VESTA_PRICE_PER_SECOND_CENTS", 1),
  VESTA_FREE_CREDIT_CENTS: cents("VESTA_FREE_CREDIT_CENTS", 1000),
  VESTA_BILLING_CURRENCY: z.string().regex(/^[a-z]{3}$/, "VESTA_BILLING_CURRENCY must be a lower-case ISO currency code such as usd").default("usd"),
  VESTA_BILLING_SETTLE_MS: z.coerce.number().int().min(100, "VESTA_BILLING_SETTLE_MS must be >= 100").max(3_600_000).default(10_000),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_\w+$/, "STRIPE_SECRET_KEY must be a Stripe secret key (sk_... or rk_...)").optional(),
  STRIPE_PUBLISHABLE_KEY: z.string().regex(/^pk_\w+$/, "STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_...)").optional(),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_\w+$/, "STRIPE_WEBHOOK_SECRET must be a webhook signing secret (whsec_...)").optional(),
  STRIPE_API_HOST: z.string().min(1).optional(),
  STRIPE_API_PORT: z.coerce.number().int().min(1).max(65535, "STRIPE_API_PORT must be a port").optional(),
  STRIPE_API_PROTOCOL: z.enum(["http", "https"], { message: "STRIPE_API_PROTOCOL must be http or https" }).optional(),
});

/** Reads billing's part of the environment; `problems` lists every bad variable (the relayer reports them with its own). */
export function loadBillingConfig(env: NodeJS.ProcessEnv): { config: BillingConfig; problems: string[] } {
  const parsed = BillingEnv.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  const rest = { ...env };
  for (const i of parsed.success ? [] : parsed.error.issues) delete rest[String(i.path[0])];
  const e = parsed.success ? parsed.data : BillingEnv.parse(rest);
  const mode = e.VESTA_BILLING ?? (env.STRIPE_SECRET_KEY ? "stripe" : "local");
  const config: BillingConfig = {
    mode,
    writeCents: e.VESTA_PRICE_PER_WRITE_CENTS,
    secondCents: e.VESTA_PRICE_PER_SECOND_CENTS,
    freeCreditCents: e.VESTA_FREE_CREDIT_CENTS,
    currency: e.VESTA_BILLING_CURRENCY,
    settleMs: e.VESTA_BILLING_SETTLE_MS,
  };
  if (mode === "stripe") {
    if (!env.STRIPE_SECRET_KEY) problems.push("STRIPE_SECRET_KEY: required with VESTA_BILLING=stripe");
    if (!env.STRIPE_PUBLISHABLE_KEY) problems.push("STRIPE_PUBLISHABLE_KEY: required with VESTA_BILLING=stripe (clients need it to pay)");
    if (e.STRIPE_SECRET_KEY && e.STRIPE_PUBLISHABLE_KEY) {
      config.stripe = {
        secretKey: e.STRIPE_SECRET_KEY,
        publishableKey: e.STRIPE_PUBLISHABLE_KEY,
        webhookSecret: e.STRIPE_WEBHOOK_SECRET,
        host: e.STRIPE_API_HOST,
        port: e.STRIPE_API_PORT,
        protocol: e.STRIPE_API_PROTOCOL,
      };
    }
  }
  return { config, problems };
}
