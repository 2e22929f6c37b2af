/**
 * Typed helpers for identity sign-in (passkeys, e-mail codes, OpenID Connect), linking and
 * unlinking, over the typed client. The WebAuthn ceremony itself is the caller's (in a browser,
 * @simplewebauthn/browser's startRegistration / startAuthentication): these helpers fetch the
 * options, hand them to it, and post its answer.
 *
 *   const vesta = createVestaClient({ baseUrl });
 *   const s = await passkeySignIn(vesta, (optionsJSON) => startAuthentication({ optionsJSON }));
 *   const mine = createVestaClient({ baseUrl, apiKey: s.session_token }); // the session as X-Api-Key
 */
import { unwrap, type Schemas, type VestaClient } from "./index";

export type SignIn = Schemas["SignInResponse"];
export type Linked = Schemas["LinkResponse"];
/** Runs navigator.credentials.create with the options (startRegistration({ optionsJSON })). */
export type CreatePasskey = (options: any) => Promise<Schemas["PasskeyRegistrationResponse"]>;
/** Runs navigator.credentials.get with the options (startAuthentication({ optionsJSON })). */
export type GetPasskey = (options: any) => Promise<Schemas["PasskeyAuthenticationResponse"]>;
type Names = { account_name?: string; account_description?: string };

/** The sign-in methods the node offers. */
export const signInMethods = (vesta: VestaClient) => unwrap(vesta.GET("/core/v1/identity/methods"));

/** Sends a 6-digit code to `email` (for a sign-in, or to link the address). */
export const sendEmailCode = (vesta: VestaClient, email: string) => unwrap(vesta.POST("/core/v1/identity/email/send_code", { body: { email } }));

export const emailSignIn = (vesta: VestaClient, email: string, code: string, names: Names = {}): Promise<SignIn> =>
  unwrap(vesta.POST("/core/v1/identity/email/sign_in", { body: { email, code, ...names } }));

/** A nonce for the OpenID authorization request (its `nonce` parameter). */
export const oidcNonce = (vesta: VestaClient) => unwrap(vesta.POST("/core/v1/identity/oidc/nonce"));

export const oidcSignIn = (vesta: VestaClient, idToken: string, names: Names = {}): Promise<SignIn> =>
  unwrap(vesta.POST("/core/v1/identity/oidc/sign_in", { body: { id_token: idToken, ...names } }));

/** Creates a passkey for a new identity and signs in with it (the first sign-in creates the account). */
export async function passkeyRegister(vesta: VestaClient, create: CreatePasskey, names: Names = {}): Promise<SignIn> {
  const { options } = await unwrap(vesta.POST("/core/v1/identity/passkey/register_options"));
  return unwrap(vesta.POST("/core/v1/identity/passkey/register", { body: { response: await create(options), ...names } }));
}

/** Signs in with a registered passkey. */
export async function passkeySignIn(vesta: VestaClient, get: GetPasskey): Promise<SignIn> {
  const { options } = await unwrap(vesta.POST("/core/v1/identity/passkey/options"));
  return unwrap(vesta.POST("/core/v1/identity/passkey/sign_in", { body: { response: await get(options) } }));
}

/* Linking: `session` is a client whose apiKey is the session token of a sign-in of the last 5 minutes. */

export async function linkPasskey(session: VestaClient, create: CreatePasskey): Promise<Linked> {
  const { options } = await unwrap(session.POST("/core/v1/identity/link/passkey_options"));
  return unwrap(session.POST("/core/v1/identity/link/passkey", { body: { response: await create(options) } }));
}

export const linkEmail = (session: VestaClient, email: string, code: string): Promise<Linked> => unwrap(session.POST("/core/v1/identity/link/email", { body: { email, code } }));

export const linkIdToken = (session: VestaClient, idToken: string): Promise<Linked> => unwrap(session.POST("/core/v1/identity/link/oidc", { body: { id_token: idToken } }));

export const linkedMethods = (session: VestaClient) => unwrap(session.GET("/core/v1/identity/links"));

export const unlinkMethod = (session: VestaClient, method: Schemas["UnlinkRequest"]) => unwrap(session.POST("/core/v1/identity/unlink", { body: method }));
