import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { z } from "../schemas/common";
import { route } from "../http/route";
import { completeSignIn } from "../identity/signIn";
import { AuthenticationResponse, RegistrationResponse, WebAuthnOptions } from "../schemas/webauthn";
import { accountNames, off, SignInResponse, SIGN_IN_ERRORS } from "./identity";
import type { Ctx } from "../context";

const OptionsAnswer = z.object({ options: WebAuthnOptions });

/** Passkey sign-in (WebAuthn): registration of a new identity's passkey, and assertions of registered ones. Off unless VESTA_PASSKEY_RP_ID is set. */
export function identityPasskeyRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  const passkeys = () => {
    if (!ctx.identity.passkeys) throw off("Passkey", "VESTA_PASSKEY_RP_ID");
    return ctx.identity.passkeys;
  };

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/passkey/register_options",
    tag: "Identity",
    summary: "Options for creating a passkey of a new identity (navigator.credentials.create / startRegistration). The user handle is generated here; the challenge is valid 5 minutes, once.",
    auth: "none",
    errors: ["rate_limited", "identity_method_off"],
    response: OptionsAnswer,
    handler: async () => ({ options: await passkeys().registrationOptions() }),
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/passkey/register",
    tag: "Identity",
    summary: "Registers the passkey created with register_options and signs in: the first sign-in of a new identity, which creates its account.",
    auth: "none",
    body: z.object({ response: RegistrationResponse, ...accountNames }).strict().openapi("PasskeyRegisterRequest"),
    errors: [...SIGN_IN_ERRORS, "invalid_passkey", "identity_busy"],
    response: SignInResponse,
    handler: async ({ body, req }) =>
      completeSignIn(ctx, req, await passkeys().register(body.response as RegistrationResponseJSON), { name: body.account_name, description: body.account_description }),
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/passkey/options",
    tag: "Identity",
    summary: "Options for signing in with a passkey (navigator.credentials.get / startAuthentication; discoverable credentials). The challenge is valid 5 minutes, once.",
    auth: "none",
    errors: ["rate_limited", "identity_method_off"],
    response: OptionsAnswer,
    handler: async () => ({ options: await passkeys().authenticationOptions() }),
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/identity/passkey/sign_in",
    tag: "Identity",
    summary: "Signs in with a registered passkey's assertion (answering /identity/passkey/options). A counter that does not move forward (a cloned credential) is refused.",
    auth: "none",
    body: z.object({ response: AuthenticationResponse, ...accountNames }).strict().openapi("PasskeySignInRequest"),
    errors: [...SIGN_IN_ERRORS, "invalid_passkey", "passkey_cloned", "identity_busy"],
    response: SignInResponse,
    handler: async ({ body, req }) =>
      completeSignIn(ctx, req, await passkeys().authenticate(body.response as AuthenticationResponseJSON), { name: body.account_name, description: body.account_description }),
  });
}
