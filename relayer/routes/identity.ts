import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { ipKeyGenerator } from "express-rate-limit";
import type { Request, Router } from "express";
import { z, name, description, token } from "../schemas/common";
import { route } from "../http/route";
import { AppError } from "../errors";
import { asOwner, authenticate } from "../http/auth";
import { relayWrite, WRITE_ERRORS } from "../chain/relay";
import { address } from "../schemas/common";
import { completeSignIn } from "../identity/signIn";
import { MAX_ID_TOKEN_CHARS } from "../identity/oidc";
import { hex32 } from "../../protocol/usageKeyShape";
import type { ErrorCode } from "../../protocol/errors";
import type { Ctx } from "../context";

export const accountNames = { account_name: name.optional(), account_description: description.optional() };
const OidcSignIn = z.object({ id_token: token(MAX_ID_TOKEN_CHARS, "id_token", 1), ...accountNames }).strict().openapi("OidcSignInRequest");
export const email = token(254, "email", 1).email("email must be an e-mail address");
export const emailCode = token(6, "code", 6).regex(/^\d{6}$/, "code must be the 6 digits of the e-mail");
const EmailSend = z.object({ email }).strict().openapi("EmailCodeRequest");
const EmailSignIn = z
  .object({ email, code: emailCode, ...accountNames })
  .strict()
  .openapi("EmailSignInRequest");
export const SignInResponse = z
  .object({
    session_token: z.string().openapi({ description: "The session: send it as X-Api-Key or Authorization: Bearer on the account routes until expires_at." }),
    expires_at: z.number().int().openapi({ description: "Unix seconds." }),
    api_key_hash: z.string().openapi({ description: "The identity's account (a ChainSecured account of its owner wallet)." }),
    admin_wallet_address: z.string().openapi({ description: "The identity's owner wallet, derived in the TEE: the account's on-chain admin." }),
    account_created: z.boolean().openapi({ description: "True on the first sign-in, which created the account." }),
  })
  .openapi("SignInResponse");
/** What completing a sign-in may answer beyond the method's own refusals. */
export const SIGN_IN_ERRORS: ErrorCode[] = ["rate_limited", "identity_method_off", "identity_not_owner", "method_unlinked", "already_exists", "write_rejected", "write_queue_full", "chain_unavailable", "chain_timeout"];

/** The client an e-mail code belongs to: its address as the rate limits key it (IPv6 by /56); a code is checked only for the client that asked for it. */
export const codeClient = (req: Request): string => ipKeyGenerator(req.ip ?? "unknown");

export const off = (what: string, variable: string) => new AppError(404, "identity_method_off", `${what} sign-in is not configured on this node (${variable})`);

/** Identity sign-in: OpenID Connect ID tokens and e-mail codes, each off unless configured; the session they give. */
export function identityRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  const id = ctx.identity;
  route(router, registry, ctx, {
    method: "get",
    path: "/identity/methods",
    tag: "Identity",
    summary: "The sign-in methods this node offers: the OpenID issuers (and their client ids), e-mail codes, passkeys.",
    auth: "none",
    response: z.object({ oidc: z.array(z.object({ issuer: z.string(), name: z.string(), audiences: z.array(z.string()) })), email: z.boolean(), passkey: z.boolean() }),
    handler: async () => ({ oidc: id.oidc.providers(), email: id.email !== undefined, passkey: id.passkeys !== undefined }),
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/oidc/nonce",
    tag: "Identity",
    summary: "A fresh nonce for one OpenID authorization request (valid 10 minutes, signs in once); put it in the request's nonce parameter.",
    auth: "none",
    errors: ["rate_limited", "identity_method_off"],
    response: z.object({ nonce: z.string(), expires_at: z.number().int() }),
    handler: async () => {
      if (!id.oidc.enabled) throw off("OpenID Connect", "VESTA_OIDC_PROVIDERS");
      const n = await id.oidc.nonce();
      return { nonce: n.nonce, expires_at: n.expiresAt };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/oidc/sign_in",
    tag: "Identity",
    summary: "Signs in with an OpenID Connect ID token of an accepted issuer and audience, carrying a nonce from /identity/oidc/nonce. The first sign-in creates the identity's account.",
    auth: "none",
    body: OidcSignIn,
    errors: [...SIGN_IN_ERRORS, "invalid_id_token", "invalid_nonce", "identity_busy", "issuer_unavailable"],
    response: SignInResponse,
    handler: async ({ body, req }) => {
      if (!id.oidc.enabled) throw off("OpenID Connect", "VESTA_OIDC_PROVIDERS");
      return completeSignIn(ctx, req, await id.oidc.verify(body.id_token), { name: body.account_name, description: body.account_description });
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/email/send_code",
    tag: "Identity",
    summary: "Sends a 6-digit sign-in code to the address (valid 10 minutes, 5 tries, a few an hour per address); it signs in only from the network address that asked for it.",
    auth: "none",
    body: EmailSend,
    errors: ["rate_limited", "identity_method_off", "identity_busy", "mail_unavailable"],
    response: z.object({ success: z.literal(true), expires_at: z.number().int() }),
    handler: async ({ body, req }) => {
      if (!id.email) throw off("E-mail code", "VESTA_EMAIL_CODES");
      const expiresAt = await id.email.send(body.email, codeClient(req), Date.now(), req.log);
      return { success: true as const, expires_at: Math.floor(expiresAt / 1000) };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/email/sign_in",
    tag: "Identity",
    summary: "Signs in with the code sent to the address, from the network address that asked for it. The first sign-in creates the identity's account.",
    auth: "none",
    body: EmailSignIn,
    errors: [...SIGN_IN_ERRORS, "invalid_email_code", "too_many_attempts"],
    response: SignInResponse,
    handler: async ({ body, req }) => {
      if (!id.email) throw off("E-mail code", "VESTA_EMAIL_CODES");
      return completeSignIn(ctx, req, await id.email.verify(body.email, body.code, codeClient(req)), { name: body.account_name, description: body.account_description });
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/transfer_account",
    tag: "Identity",
    summary:
      "Leaving (self-custody exit): proposes new_admin_wallet_address (an EOA or a Safe) as the owner of the session's account (transferAccountOwnership, sent by the identity wallet). It completes when that wallet calls acceptAccountOwnership(api_key_hash); from then on the identity signs nothing for the account.",
    auth: "account",
    body: z.object({ new_admin_wallet_address: address }).strict().openapi("TransferAccountRequest"),
    errors: [...WRITE_ERRORS, "invalid_session", "identity_not_owner"],
    response: z.object({ success: z.literal(true), api_key_hash: z.string(), pending_admin_wallet_address: z.string() }),
    handler: async ({ auth, body }) => {
      if (!auth.identity) throw new AppError(401, "invalid_session", "present an identity session (from a sign-in): an account key's account is handed over with its own wallet");
      if (body.new_admin_wallet_address === auth.identity.wallet) throw new AppError(400, "invalid_request", "new_admin_wallet_address is the identity's own wallet already");
      await relayWrite(ctx, "transferAccountOwnership", [auth.accountHash, body.new_admin_wallet_address], await asOwner(ctx, auth));
      return { success: true as const, api_key_hash: hex32(auth.accountHash), pending_admin_wallet_address: body.new_admin_wallet_address };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/identity/session",
    tag: "Identity",
    summary: "The account and owner wallet of the presented session (an identity session only).",
    auth: "none",
    errors: ["invalid_api_key", "invalid_session", "identity_not_owner", "chain_unavailable"],
    response: z.object({ api_key_hash: z.string(), admin_wallet_address: z.string(), method: z.string() }),
    handler: async ({ req }) => {
      const auth = await authenticate(ctx, req, "account");
      if (!auth.identity) throw new AppError(401, "invalid_session", "present an identity session (from a sign-in), not an API key");
      return { api_key_hash: hex32(auth.accountHash), admin_wallet_address: auth.identity.wallet, method: auth.identity.method };
    },
  });
}
