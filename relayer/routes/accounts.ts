import crypto from "node:crypto";
import { ipKeyGenerator } from "express-rate-limit";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, requiredName, description, token } from "../schemas/common";
import { route } from "../http/route";
import { hashKey, MAX_KEY_LENGTH, presentedKey, resolveKey } from "../http/auth";
import { relayWrite } from "../chain/relay";
import { usageKeySeal } from "../../protocol/usageKeySeal";
import { deriveWallet, paths } from "../../executor/keys/provider";
import { unauthorized } from "../errors";
import type { Ctx } from "../context";

const NewAccountBody = z
  .object({
    account_name: requiredName("account_name"),
    account_description: description.default(""),
    email: token(254, "email").email("email must be an e-mail address").optional(),
  })
  .strict()
  .openapi("NewAccountRequest");

/** A fresh account key: 32 random bytes, base64. Its UTF-8 bytes hash to the account's apiKeyHash. */
export const newSecretKey = () => crypto.randomBytes(32).toString("base64");

export function accountRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/new_account",
    tag: "Accounts",
    summary: "Creates a managed account. Returns its account key once, and its admin wallet address.",
    auth: "none",
    body: NewAccountBody,
    errors: ["rate_limited", "already_exists", "write_rejected", "write_too_large", "write_queue_full", "chain_unavailable", "payer_not_authorized", "chain_timeout"],
    response: z.object({ api_key: z.string(), wallet_address: z.string() }).openapi("NewAccountResponse"),
    handler: async ({ body, req }) => {
      const apiKey = newSecretKey();
      const apiKeyHash = hashKey(apiKey);
      const admin = await deriveWallet(ctx.keys, paths.accountAdmin(apiKeyHash));
      // The account does not exist yet: its writes take the fair share of the client asking for it.
      const client = `client:${ipKeyGenerator(req.ip ?? "unknown")}`;
      const owner = { account: client, payer: client, key: "-" };
      // The key's hash is reserved under its seal first, so nobody who sees the creation pending can take it as a usage key.
      await relayWrite(ctx, "authorizeUsageApiKey", [apiKeyHash, usageKeySeal(apiKeyHash)], { stepOf: "newAccount", owner });
      await relayWrite(ctx, "newAccount", [apiKeyHash, true, body.account_name, body.account_description, admin.address], { owner });
      (req.log ?? ctx.logger).info({ account: `0x${apiKeyHash.toString(16)}`, admin: admin.address }, "account created");
      return { api_key: apiKey, wallet_address: admin.address };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/account_exists",
    tag: "Accounts",
    summary: "Whether the presented key is a valid account or usage key (bare true or false).",
    auth: "none",
    errors: ["invalid_api_key", "rate_limited", "chain_unavailable"],
    response: z.boolean(),
    handler: async ({ req }) => {
      const key = presentedKey(req);
      if (!key) throw unauthorized();
      if (key.length > MAX_KEY_LENGTH) return false;
      const { accountHash, active } = await resolveKey(ctx, req, key);
      return accountHash !== 0n && active;
    },
  });
}
