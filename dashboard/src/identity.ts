/**
 * Identity sign-in for the dashboard: a session (from a passkey, an e-mail code or an OpenID ID
 * token) used as the account's key. The session is an ApiBackend whose key is the session token
 * (sent as X-Api-Key); its account is the identity's (api_key_hash), not a hash of the token.
 */
import { createVestaClient, unwrap } from "@client";
import { ApiBackend, serviceBase } from "./backend";

/** What a sign-in answers (SignInResponse). */
export type SignedIn = { session_token: string; api_key_hash: string; admin_wallet_address: string; account_created: boolean };

/** A session token: a compact JWS; API keys have no dot. */
export const isSession = (key: string) => /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/.test(key.trim());

export class IdentityBackend extends ApiBackend {
  override readonly accountHash: string;
  constructor(
    token: string,
    accountHash: string,
    readonly method: string,
  ) {
    super(token, `${method} sign-in`);
    this.accountHash = accountHash;
  }

  /** The backend of a session token (restoring a tab): its account and method, from /identity/session. */
  static async fromSession(token: string): Promise<IdentityBackend> {
    const s = await unwrap(createVestaClient({ baseUrl: serviceBase(), apiKey: token }).GET("/core/v1/identity/session"));
    return new IdentityBackend(token, s.api_key_hash, s.method);
  }
}

/** Signs in with a key or restores a session, whichever `key` is. */
export const loginWithKeyOrSession = (key: string): Promise<ApiBackend> => (isSession(key) ? IdentityBackend.fromSession(key) : ApiBackend.login(key));
