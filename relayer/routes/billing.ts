import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import express, { type RequestHandler, type Router } from "express";
import { z, token } from "../schemas/common";
import { route } from "../http/route";
import { AppError, badRequest } from "../errors";
import { accountRecord, payerOf } from "../../billing/charges";
import { MAX_FREE_CREDIT_PER_REQUEST_CENTS } from "../../billing/config";
import type { BillingIdentity } from "../http/walletAuth";
import { balanceView, paymentsUnavailable } from "../../billing/errors";
import type { Billing } from "../../billing/service";
import type { Payments } from "../../billing/payments";
import type { Payer } from "../../billing/types";
import type { Ctx } from "../context";
import { usageOf } from "../../billing/usage";

export const WEBHOOK_PATH = "/billing/webhook";

/** The webhook's signature is over the exact bytes Stripe sent: this parser runs before the JSON one. */
export const webhookRawBody = (ctx: Ctx): RequestHandler => express.raw({ type: () => true, limit: ctx.config.bodyLimit });

const PaymentIntentBody = z
  .object({
    amount_cents: z
      .number({ message: "amount_cents must be an integer number of cents" })
      .int("amount_cents must be an integer number of cents")
      .min(500, "amount_cents must be at least 500 (the minimum payment)")
      .max(99_999_999, "amount_cents must be at most 99999999"),
  })
  .strict()
  .openapi("CreatePaymentIntentRequest");
const ConfirmBody = z
  .object({ payment_intent_id: token(256, "payment_intent_id").regex(/^pi_\w{1,250}$/, "payment_intent_id must be a payment intent id (pi_...)") })
  .strict()
  .openapi("ConfirmPaymentRequest");
/** Chipotle's convention (Stripe's customer balance): balance_cents < 0 while there is credit; credit_cents is that credit, positive. */
const Balance = z.object({
  balance_cents: z.number().int().openapi({ description: "Chipotle's sign (Stripe's customer balance): negative while there is credit (-credit_cents), 0 when none is left, positive when a charge went past it.", example: -987 }),
  credit_cents: z.number().int().openapi({ description: "The credit left, in cents (positive): the balance less charges not settled yet and credit held by work under way.", example: 987 }),
  balance_display: z.string().openapi({ description: '"$9.87 credit", "No credits", or "$0.05 owed".', example: "$9.87 credit" }),
});

/** Answered by every billing route but the webhook's: billing off, or card payments unavailable. */
const NOT_CONFIGURED = ["billing_not_configured", "stripe_not_configured"] as const;
/** Answered by the routes that read or fund a balance: who the credential may act for. */
const CUSTOMER = ["account_chain_secured", "owner_only", "payment_provider_unavailable"] as const;

function enabled(ctx: Ctx): Billing {
  if (!ctx.billing) throw new AppError(404, "billing_not_configured", "billing is off on this node (VESTA_BILLING=off)");
  return ctx.billing;
}

function payments(ctx: Ctx): Payments {
  const billing = enabled(ctx);
  if (!billing.payments) throw paymentsUnavailable();
  return billing.payments;
}

/**
 * The customer record a billing call acts on, and whether this credential may: the record that pays
 * for the caller's account (payerOf). Reading it takes a credential that pays from it: the account
 * key of a managed account, a usage key of the account, or the admin wallet (X-Wallet-Auth). Adding
 * credit takes the owner: the account key while managed, else the admin wallet. The account key of
 * a converted (ChainSecured) account pays for nothing any more, so it reads and adds nothing. An
 * identity session acts as its account's admin wallet.
 */
async function customerFor(ctx: Ctx, identity: BillingIdentity, act: "read" | "add credit"): Promise<Payer> {
  if (identity.via === "api_key") {
    // An identity session is its account's owner (its wallet is the admin), like X-Wallet-Auth.
    if (identity.isAccountKey && !identity.identity && !(await accountRecord(ctx, identity.accountHash)).managed) {
      throw new AppError(403, "account_chain_secured", "this account is ChainSecured: its old account key pays for nothing, so it neither reads nor funds a balance; the admin wallet signs X-Wallet-Auth");
    }
    if (act === "add credit" && !identity.isAccountKey) {
      throw new AppError(403, "owner_only", "only the account's owner adds credit (its account key, or its admin wallet through X-Wallet-Auth); a usage key cannot");
    }
  }
  return payerOf(ctx, identity.accountHash);
}

async function balanceOf(billing: Billing, p: Payer) {
  return balanceView(await billing.balance(p), billing.config.currency);
}

/**
 * Billing (spec 1) with the X-Wallet-Auth header of spec 2: every route but stripe_config and the
 * webhook takes an API key (account or usage key) or an admin wallet's BillingAuth signature, and
 * acts on the customer record of whoever pays for that account (see payerOf).
 */
export function billingRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/billing/stripe_config",
    tag: "Billing",
    summary: "The payment provider's publishable key, for Stripe's client library (404 stripe_not_configured in local mode).",
    auth: "none",
    errors: ["billing_not_configured", "stripe_not_configured"],
    response: z.object({ publishable_key: z.string() }),
    handler: async () => ({ publishable_key: payments(ctx).remote.publishableKey }),
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/billing/balance",
    tag: "Billing",
    summary: "The credit balance that pays for the authenticated account (its admin wallet's, once ChainSecured), in cents, less charges not settled yet and credit held by work under way. Account key, usage key or admin wallet.",
    auth: "billing",
    query: z.object({}).strict(),
    errors: ["billing_not_configured", ...CUSTOMER],
    response: Balance.openapi("BalanceResponse"),
    handler: async ({ identity }) => balanceOf(enabled(ctx), await customerFor(ctx, identity, "read")),
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/billing/usage",
    tag: "Billing",
    summary:
      "What the account's payer was charged day by day (action runs, relayed writes: cents and count), its top-ups (card payments credited, free credit on a local node), and its credit at the end of each day (walked back from the credit now), for the last `days` days (UTC, today included). Read-only; the same credentials as balance.",
    auth: "billing",
    query: z
      .object({
        days: z.coerce
          .number({ message: "days must be a whole number of days" })
          .int("days must be a whole number of days")
          .min(1, "days must be from 1 to 366")
          .max(366, "days must be from 1 to 366")
          .default(30),
      })
      .strict(),
    errors: ["billing_not_configured", ...CUSTOMER],
    response: z
      .object({
        currency: z.string(),
        credit_cents: z.number().int().openapi({ description: "The credit now (as balance's credit_cents)." }),
        days: z.array(
          z.object({
            date: z.string().openapi({ example: "2026-11-24" }),
            run_cents: z.number().int(),
            run_count: z.number().int(),
            write_cents: z.number().int(),
            write_count: z.number().int(),
            topup_cents: z.number().int(),
            credit_cents: z.number().int().openapi({ description: "The credit at the end of the day (now, for today)." }),
          }),
        ),
        topups: z.array(z.object({ at: z.string(), cents: z.number().int(), kind: z.enum(["card", "free_credit"]) })),
      })
      .openapi("UsageResponse"),
    handler: async ({ identity, query }) => {
      const billing = enabled(ctx);
      const payer = await customerFor(ctx, identity, "read");
      const credit = await billing.balance(payer);
      return { currency: billing.config.currency, credit_cents: credit, ...(await usageOf(billing.ledger, await billing.customerId(payer), query.days, credit)) };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/billing/create_payment_intent",
    tag: "Billing",
    summary: "Creates a Stripe payment intent of amount_cents (at least 500) for the account; pay it with client_secret, then confirm_payment. The owner only (account key or admin wallet).",
    auth: "billing",
    body: PaymentIntentBody,
    errors: [...NOT_CONFIGURED, ...CUSTOMER],
    response: z.object({ client_secret: z.string(), payment_intent_id: z.string() }).openapi("CreatePaymentIntentResponse"),
    handler: async ({ identity, body }) => {
      const pay = payments(ctx);
      const intent = await pay.createIntent(await customerFor(ctx, identity, "add credit"), body.amount_cents);
      return { client_secret: intent.clientSecret, payment_intent_id: intent.id };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/billing/confirm_payment",
    tag: "Billing",
    summary: "Verifies with Stripe that the payment intent succeeded and is this account's, and credits it (once: confirming again credits nothing). The owner only.",
    auth: "billing",
    body: ConfirmBody,
    errors: [...NOT_CONFIGURED, ...CUSTOMER, "payment_intent_not_yours", "payment_intent_not_found", "payment_not_succeeded", "payment_currency_mismatch"],
    response: Balance.extend({ success: z.literal(true), payment_intent_id: z.string(), amount_cents: z.number().int(), credited: z.boolean() }).openapi("ConfirmPaymentResponse"),
    handler: async ({ identity, body }) => {
      const pay = payments(ctx);
      const p = await customerFor(ctx, identity, "add credit");
      const { credited, amountCents } = await pay.confirm(p, body.payment_intent_id);
      return { success: true, payment_intent_id: body.payment_intent_id, amount_cents: amountCents, credited, ...(await balanceOf(enabled(ctx), p)) };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/billing/free_credit",
    tag: "Billing",
    summary: `Development only (VESTA_MODE=development with local billing, e.g. npm start): the owner adds amount_cents (at most ${MAX_FREE_CREDIT_PER_REQUEST_CENTS}) of free credit, up to the balance cap VESTA_FREE_CREDIT_CAP_CENTS. 404 free_credit_unavailable elsewhere.`,
    auth: "billing",
    body: z
      .object({
        amount_cents: z
          .number({ message: "amount_cents must be an integer number of cents" })
          .int("amount_cents must be an integer number of cents")
          .min(1, "amount_cents must be at least 1")
          .max(MAX_FREE_CREDIT_PER_REQUEST_CENTS, `amount_cents must be at most ${MAX_FREE_CREDIT_PER_REQUEST_CENTS} per request`),
      })
      .strict()
      .openapi("FreeCreditRequest"),
    errors: ["billing_not_configured", "free_credit_unavailable", "free_credit_capped", ...CUSTOMER],
    response: Balance.extend({ amount_cents: z.number().int() }).openapi("FreeCreditResponse"),
    handler: async ({ identity, body }) => {
      const billing = enabled(ctx);
      if (ctx.config.mode !== "development" || billing.config.mode !== "local") {
        throw new AppError(404, "free_credit_unavailable", billing.payments ? "this node takes card payments: top up with create_payment_intent and confirm_payment" : "free credit exists only on a development node (VESTA_MODE=development) with local billing");
      }
      const p = await customerFor(ctx, identity, "add credit");
      await billing.addFreeCredit(p, body.amount_cents);
      return { amount_cents: body.amount_cents, ...(await balanceOf(billing, p)) };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: WEBHOOK_PATH,
    tag: "Billing",
    summary: "Stripe webhook endpoint (Stripe-Signature checked with STRIPE_WEBHOOK_SECRET): payment_intent.succeeded credits the account once.",
    auth: "none",
    errors: [...NOT_CONFIGURED, "invalid_webhook_signature", "payment_provider_unavailable"],
    response: z.object({ received: z.literal(true) }),
    handler: async ({ req }) => {
      const pay = payments(ctx);
      if (!ctx.config.billing.stripe?.webhookSecret) throw new AppError(404, "stripe_not_configured", "no STRIPE_WEBHOOK_SECRET on this node: the webhook endpoint is off");
      const signature = req.get("stripe-signature");
      if (!signature) throw new AppError(400, "invalid_webhook_signature", "the Stripe-Signature header is missing");
      if (!Buffer.isBuffer(req.body)) throw badRequest("the webhook body is missing");
      await pay.webhook(req.body, signature);
      return { received: true };
    },
  });
}
