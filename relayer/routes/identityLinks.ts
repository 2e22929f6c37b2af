import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { z, token } from "../schemas/common";
import { route } from "../http/route";
import { freshSession, linkMethod, unlinkMethod, LINK_FRESH_SECONDS } from "../identity/links";
import { MAX_ID_TOKEN_CHARS } from "../identity/oidc";
import { IDENTITY_METHODS, type VerifiedIdentity } from "../identity/identity";
import { hex32 } from "../../protocol/usageKeyShape";
import { RegistrationResponse, WebAuthnOptions } from "../schemas/webauthn";
import { codeClient, email, emailCode, off } from "./identity";
import type { ErrorCode } from "../../protocol/errors";
import type { Ctx } from "../context";

const Method = z.object({ method: z.enum(IDENTITY_METHODS), issuer: z.string(), subject: z.string() }).openapi("SignInMethod");
const Linked = z
  .object({
    success: z.literal(true),
    linked: Method,
    /** "already": it was linked to this identity before. */
    outcome: z.enum(["linked", "already"]),
    api_key_hash: z.string(),
    admin_wallet_address: z.string(),
    methods: z.array(Method),
  })
  .openapi("LinkResponse");
const SESSION_ERRORS: ErrorCode[] = ["rate_limited", "invalid_session", "stale_session"];
const LINK_ERRORS: ErrorCode[] = [...SESSION_ERRORS, "identity_method_off", "method_taken", "chain_unavailable"];
const fresh = `Needs the identity session of a sign-in of the last ${LINK_FRESH_SECONDS / 60} minutes (X-Api-Key or Authorization: Bearer).`;

/**
 * Linking and unlinking sign-in methods: after a fresh sign-in with a method the identity has, a
 * further method (a passkey, an OpenID subject, another e-mail address) proven in the same request
 * is linked and then signs into the same identity and wallet. A method that signs into another
 * identity is refused; the last method is never unlinked.
 */
export function identityLinkRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  const id = ctx.identity;
  const methods = async (identityId: string) =>
    (await id.store.links(identityId)).filter((l) => !l.unlinked).map((l) => ({ method: l.method as VerifiedIdentity["method"], issuer: l.issuer, subject: l.subject }));
  const answer = async (identityId: string, m: VerifiedIdentity, outcome: "linked" | "already") => {
    const me = await id.ofId(identityId);
    return { success: true as const, linked: { method: m.method, issuer: m.issuer, subject: m.subject }, outcome, api_key_hash: hex32(me.accountHash), admin_wallet_address: me.wallet, methods: await methods(identityId) };
  };

  route(router, registry, ctx, {
    method: "get",
    path: "/identity/links",
    tag: "Identity",
    summary: "The sign-in methods linked to the session's identity (any valid session).",
    auth: "none",
    errors: ["invalid_session"],
    response: z.object({ methods: z.array(Method) }),
    handler: async ({ req }) => ({ methods: await methods((await freshSession(ctx, req, { fresh: false })).identityId) }),
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/link/email",
    tag: "Identity",
    summary: `Links another e-mail address, proven by the code sent to it (/identity/email/send_code, asked from the same network address). ${fresh}`,
    auth: "none",
    body: z.object({ email, code: emailCode }).strict().openapi("LinkEmailRequest"),
    errors: [...LINK_ERRORS, "invalid_email_code", "too_many_attempts"],
    response: Linked,
    handler: async ({ req, body }) => {
      if (!id.email) throw off("E-mail code", "VESTA_EMAIL_CODES");
      const s = await freshSession(ctx, req);
      const m = await id.email.verify(body.email, body.code, codeClient(req));
      return answer(s.identityId, m, await linkMethod(ctx, s, m));
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/link/oidc",
    tag: "Identity",
    summary: `Links an OpenID Connect subject, proven by its ID token (with a nonce from /identity/oidc/nonce). ${fresh}`,
    auth: "none",
    body: z.object({ id_token: token(MAX_ID_TOKEN_CHARS, "id_token", 1) }).strict().openapi("LinkOidcRequest"),
    errors: [...LINK_ERRORS, "invalid_id_token", "invalid_nonce", "identity_busy", "issuer_unavailable"],
    response: Linked,
    handler: async ({ req, body }) => {
      if (!id.oidc.enabled) throw off("OpenID Connect", "VESTA_OIDC_PROVIDERS");
      const s = await freshSession(ctx, req);
      const m = await id.oidc.verify(body.id_token);
      return answer(s.identityId, m, await linkMethod(ctx, s, m));
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/link/passkey_options",
    tag: "Identity",
    summary: `Options for creating a passkey to link to the session's identity (the challenge is bound to it). ${fresh}`,
    auth: "none",
    errors: [...SESSION_ERRORS, "identity_method_off"],
    response: z.object({ options: WebAuthnOptions }),
    handler: async ({ req }) => {
      if (!id.passkeys) throw off("Passkey", "VESTA_PASSKEY_RP_ID");
      const s = await freshSession(ctx, req);
      return { options: await id.passkeys.registrationOptions(s.identityId) };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/link/passkey",
    tag: "Identity",
    summary: `Registers the passkey created with /identity/link/passkey_options and links it to the session's identity. ${fresh}`,
    auth: "none",
    body: z.object({ response: RegistrationResponse }).strict().openapi("LinkPasskeyRequest"),
    errors: [...LINK_ERRORS, "invalid_passkey", "already_exists", "identity_busy"],
    response: Linked,
    handler: async ({ req, body }) => {
      if (!id.passkeys) throw off("Passkey", "VESTA_PASSKEY_RP_ID");
      const s = await freshSession(ctx, req);
      const m = await id.passkeys.register(body.response as RegistrationResponseJSON, s.identityId);
      return answer(s.identityId, m, await linkMethod(ctx, s, m));
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/unlink",
    tag: "Identity",
    summary: `Unlinks one of the session identity's sign-in methods (as /identity/links lists it); never the last one. Every session of the identity is revoked with it; session_token is the caller's session renewed, absent when it came from the method unlinked. ${fresh}`,
    auth: "none",
    body: z.object({ method: z.enum(IDENTITY_METHODS), issuer: token(512, "issuer", 1), subject: token(512, "subject", 1) }).strict().openapi("UnlinkRequest"),
    errors: [...SESSION_ERRORS, "last_method", "method_not_linked"],
    response: z.object({
      success: z.literal(true),
      methods: z.array(Method),
      session_token: z.string().optional().openapi({ description: "The caller's session, renewed (same expiry): the one presented is revoked. Absent when it came from the unlinked method." }),
      expires_at: z.number().int().optional(),
    }),
    handler: async ({ req, body }) => {
      const s = await freshSession(ctx, req);
      const renewed = await unlinkMethod(ctx, s, body);
      return { success: true as const, methods: await methods(s.identityId), ...(renewed && { session_token: renewed.token, expires_at: renewed.expiresAt }) };
    },
  });
}
