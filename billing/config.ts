import { z } from "zod";
import type { VestaMode } from "../protocol/mode";

/**
 * How billing runs:
 * - "stripe": balances live in Stripe customer records (the official SDK; STRIPE_SECRET_KEY);
 * - "local": no payment provider, balances in the local SQLite file, each new customer record gets
 *   `freeCreditCents` (VESTA_MODE=development only, e.g. `npm start`);
 * - "off": nothing is charged and the billing routes answer 404 (development only).
 * Production (the default VESTA_MODE) runs Stripe only: without its keys the relayer does not boot.
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

/** How a relayed write's gas becomes cents: gas used x effective gas price (wei), at `tokenPriceCents` per native token, plus `marginPercent`. */
export type GasPricing = { tokenPriceCents: number; marginPercent: number };

export type BillingConfig = {
  mode: BillingMode;
  /** Fixed part of the price of one relayed management write, in cents (the gas it used is added: see `gas`). */
  writeCents: number;
  /** Price of each started second of action execution, in cents. */
  secondCents: number;
  /** Credit of a new customer record in local mode, in cents (0 outside development). */
  freeCreditCents: number;
  /** Local mode: a free-credit top-up may not raise a balance above this, in cents. */
  freeCreditCapCents: number;
  gas: GasPricing;
  currency: string;
  /** How often pending debits are settled to the provider (also at shutdown). */
  settleMs: number;
  stripe?: StripeSettings;
};

/** Largest free-credit top-up of one request (development only). */
export const MAX_FREE_CREDIT_PER_REQUEST_CENTS = 10_000;

const cents = (name: string, def: number) => z.coerce.number().int(`${name} must be a whole number of cents`).min(0, `${name} must be >= 0`).default(def);

const BillingEnv = z.object({
  VESTA_BILLING: z.enum(["stripe", "local", "off"], { message: "VESTA_BILLING must be stripe, local or off" }).optional(),
  VESTA_PRICE_PER_WRITE_CENTS: cents("VESTA_PRICE_PER_WRITE_CENTS", 1),
  VESTA_PRICE_PER_SECOND_CENTS: cents("VESTA_PRICE_PER_SECOND_CENTS", 1),
  VESTA_GAS_TOKEN_PRICE_CENTS: z.coerce
    .number({ message: "VESTA_GAS_TOKEN_PRICE_CENTS must be a number of cents" })
    .min(0, "VESTA_GAS_TOKEN_PRICE_CENTS must be >= 0")
    .max(1e12, "VESTA_GAS_TOKEN_PRICE_CENTS is at most 1e12")
    .optional(),
  VESTA_GAS_MARGIN_PERCENT: z.coerce.number().int("VESTA_GAS_MARGIN_PERCENT must be a whole percentage").min(0, "VESTA_GAS_MARGIN_PERCENT must be >= 0").max(1000, "VESTA_GAS_MARGIN_PERCENT is at most 1000").default(20),
  VESTA_FREE_CREDIT_CENTS: z.coerce.number().int("VESTA_FREE_CREDIT_CENTS must be a whole number of cents").min(0, "VESTA_FREE_CREDIT_CENTS must be >= 0").optional(),
  VESTA_FREE_CREDIT_CAP_CENTS: cents("VESTA_FREE_CREDIT_CAP_CENTS", 10_000),
  VESTA_BILLING_CURRENCY: z.string().regex(/^[a-z]{3}$/, "VESTA_BILLING_CURRENCY must be a lower-case ISO currency code such as usd").default("usd"),
  VESTA_BILLING_SETTLE_MS: z.coerce.number().int().min(100, "VESTA_BILLING_SETTLE_MS must be >= 100").max(3_600_000).default(10_000),
  STRIPE_SECRET_KEY: z.string().regex(/^(sk|rk)_\w+$/, "STRIPE_SECRET_KEY must be a Stripe secret key (sk_... or rk_...)").optional(),
  STRIPE_PUBLISHABLE_KEY: z.string().regex(/^pk_\w+$/, "STRIPE_PUBLISHABLE_KEY must be a Stripe publishable key (pk_...)").optional(),
  STRIPE_WEBHOOK_SECRET: z.string().regex(/^whsec_\w+$/, "STRIPE_WEBHOOK_SECRET must be a webhook signing secret (whsec_...)").optional(),
  STRIPE_API_HOST: z.string().min(1).optional(),
  STRIPE_API_PORT: z.coerce.number().int().min(1).max(65535, "STRIPE_API_PORT must be a port").optional(),
  STRIPE_API_PROTOCOL: z.enum(["http", "https"], { message: "STRIPE_API_PROTOCOL must be http or https" }).optional(),
});

/**
 * Reads billing's part of the environment; `problems` lists every bad variable (the relayer reports
 * them with its own). In production (the default) billing is Stripe only: local billing, billing
 * off, free credit and a missing gas price are problems, so the relayer refuses to boot.
 */
export function loadBillingConfig(env: NodeJS.ProcessEnv, vestaMode: VestaMode = "production"): { config: BillingConfig; problems: string[] } {
  const parsed = BillingEnv.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  const rest = { ...env };
  for (const i of parsed.success ? [] : parsed.error.issues) delete rest[String(i.path[0])];
  const e = parsed.success ? parsed.data : BillingEnv.parse(rest);
  const production = vestaMode === "production";
  const mode = e.VESTA_BILLING ?? (env.STRIPE_SECRET_KEY || production ? "stripe" : "local");
  if (production) {
    if (mode !== "stripe") problems.push(`VESTA_BILLING=${mode}: ${mode === "local" ? "local billing (free credit, no payments)" : "billing off (nothing charged)"} exists only with VESTA_MODE=development; production bills through Stripe`);
    if (env.VESTA_FREE_CREDIT_CENTS !== undefined) problems.push("VESTA_FREE_CREDIT_CENTS: free credit exists only with VESTA_MODE=development");
    if (e.VESTA_GAS_TOKEN_PRICE_CENTS === undefined && env.VESTA_GAS_TOKEN_PRICE_CENTS === undefined) {
      problems.push("VESTA_GAS_TOKEN_PRICE_CENTS: required in production (the price of the chain's native token in cents, to charge relayed writes for their gas)");
    } else if (e.VESTA_GAS_TOKEN_PRICE_CENTS === 0) {
      problems.push("VESTA_GAS_TOKEN_PRICE_CENTS: must be above 0 in production (relayed writes would not pay for their gas)");
    }
  }
  const config: BillingConfig = {
    mode,
    writeCents: e.VESTA_PRICE_PER_WRITE_CENTS,
    secondCents: e.VESTA_PRICE_PER_SECOND_CENTS,
    freeCreditCents: production ? 0 : (e.VESTA_FREE_CREDIT_CENTS ?? 1000),
    freeCreditCapCents: e.VESTA_FREE_CREDIT_CAP_CENTS,
    // Development default: the local chain's gas is worth nothing.
    gas: { tokenPriceCents: e.VESTA_GAS_TOKEN_PRICE_CENTS ?? 0, marginPercent: e.VESTA_GAS_MARGIN_PERCENT },
    currency: e.VESTA_BILLING_CURRENCY,
    settleMs: e.VESTA_BILLING_SETTLE_MS,
  };
  if (mode === "stripe") {
    if (!env.STRIPE_SECRET_KEY) problems.push(`STRIPE_SECRET_KEY: required with ${e.VESTA_BILLING ? "VESTA_BILLING=stripe" : "VESTA_MODE=production"}`);
    if (!env.STRIPE_PUBLISHABLE_KEY) problems.push(`STRIPE_PUBLISHABLE_KEY: required with ${e.VESTA_BILLING ? "VESTA_BILLING=stripe" : "VESTA_MODE=production"} (clients need it to pay)`);
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
