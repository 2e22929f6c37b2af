import crypto from "node:crypto";
import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from "jose";
import { AppError } from "../errors";
import { paths, type KeyProvider } from "../../executor/keys/provider";
import { verifiedIdentity, type VerifiedIdentity } from "./identity";
import type { IdentityStore } from "./store";
import type { OidcProvider } from "./config";

/** Signature algorithms of ID tokens (asymmetric only: an HMAC "signed" with an issuer's public key is refused, as is `none`). */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
/** Longest ID token taken (Google's are ~1 KB). */
export const MAX_ID_TOKEN_CHARS = 16 * 1024;
/** How long a nonce may wait for its ID token. */
const NONCE_TTL_S = 600;

const invalid = (message: string) => new AppError(401, "invalid_id_token", message);
const badNonce = (message: string) => new AppError(401, "invalid_nonce", message);

/**
 * OpenID Connect sign-in: ID tokens from the allow-listed issuers (VESTA_OIDC_PROVIDERS), verified
 * with jose against the issuer's JWKS (signature, issuer, audience, expiry), and a nonce this node
 * issued: stateless (random, expiry, MAC under a key of the key provider) until it is used, then
 * kept as used in the identity store (every replica sees it) until it expires, so each signs in
 * once (an insert that only one of two racing uses makes).
 */
export class OidcVerifier {
  private readonly byIssuer: Map<string, OidcProvider & { jwks: ReturnType<typeof createRemoteJWKSet> }>;
  private macKey: Promise<Uint8Array> | undefined;

  constructor(
    private readonly keys: KeyProvider,
    private readonly store: IdentityStore,
    providers: OidcProvider[],
  ) {
    this.byIssuer = new Map(providers.map((p) => [p.issuer, { ...p, jwks: createRemoteJWKSet(new URL(p.jwksUri), { timeoutDuration: 5000, cooldownDuration: 30_000 }) }]));
  }

  get enabled(): boolean {
    return this.byIssuer.size > 0;
  }

  providers(): { issuer: string; name: string; audiences: string[] }[] {
    return [...this.byIssuer.values()].map((p) => ({ issuer: p.issuer, name: p.name, audiences: p.audiences }));
  }

  private async mac(body: string): Promise<string> {
    this.macKey ??= this.keys.deriveSecret(paths.identityMac("oidc-nonce"));
    return crypto.createHmac("sha256", await this.macKey).update(body).digest("base64url").slice(0, 32);
  }

  /** A fresh nonce for one authorization request: `<random>.<expiry s>.<mac>`. Nothing is stored. */
  async nonce(): Promise<{ nonce: string; expiresAt: number }> {
    const expiresAt = Math.floor(Date.now() / 1000) + NONCE_TTL_S;
    const body = `${crypto.randomBytes(18).toString("base64url")}.${expiresAt}`;
    return { nonce: `${body}.${await this.mac(body)}`, expiresAt };
  }

  /**
   * The identity an ID token proves, and its nonce taken (single use). Refusals are 401 with the
   * reason; a refused token takes nothing (its nonce stays usable by the token it was issued for).
   */
  async verify(idToken: string): Promise<VerifiedIdentity> {
    if (idToken.length > MAX_ID_TOKEN_CHARS) throw invalid(`the ID token is longer than ${MAX_ID_TOKEN_CHARS} characters`);
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(idToken);
    } catch {
      throw invalid("the ID token is not a JWT (three base64url parts)");
    }
    const provider = typeof unverified.iss === "string" ? this.byIssuer.get(unverified.iss) : undefined;
    if (!provider) throw invalid(`the issuer ${JSON.stringify(String(unverified.iss ?? "")).slice(0, 200)} is not one this node accepts`);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, provider.jwks, {
        issuer: provider.issuer,
        audience: provider.audiences,
        algorithms: ALGORITHMS,
        requiredClaims: ["sub", "exp", "iat", "nonce"],
        clockTolerance: 30,
      }));
    } catch (err) {
      throw refusal(err);
    }
    // Several audiences: the token was issued to its authorized party, which must be ours (OpenID Core 3.1.3.7).
    const auds = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if ((auds.length > 1 || payload.azp !== undefined) && !provider.audiences.includes(String(payload.azp))) {
      throw invalid("the ID token was issued to another party (azp is not an accepted audience)");
    }
    if (typeof payload.sub !== "string" || payload.sub.length === 0 || payload.sub.length > 255) throw invalid("the ID token's sub is missing or longer than 255 characters");
    await this.takeNonce(payload.nonce);
    return verifiedIdentity("oidc", provider.issuer, payload.sub);
  }

  private async takeNonce(nonce: unknown): Promise<void> {
    if (typeof nonce !== "string" || nonce.length > 200) throw badNonce("the ID token carries no nonce issued by this node (POST /core/v1/identity/oidc/nonce)");
    const parts = nonce.split(".");
    if (parts.length !== 3) throw badNonce("the ID token's nonce was not issued by this node");
    const expected = Buffer.from(await this.mac(`${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) throw badNonce("the ID token's nonce was not issued by this node");
    const expiresAt = Number(parts[1]) * 1000;
    if (!(expiresAt > Date.now())) throw badNonce("the ID token's nonce has expired: ask for a new one and sign in again");
    if (!(await this.store.once("oidc-nonce", nonce, expiresAt))) throw badNonce("the ID token's nonce has signed in already (a nonce is single use): ask for a new one");
  }
}

/** jose's refusals, in words. */
function refusal(err: unknown): AppError {
  if (err instanceof errors.JWTExpired) return invalid("the ID token has expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return invalid("the ID token is for another audience (aud is not a client id this node accepts)");
    if (err.claim === "iss") return invalid("the ID token's issuer does not match");
    return invalid(`the ID token's ${err.claim} claim does not hold (${err.reason})`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return invalid("the ID token's algorithm is not accepted (asymmetric signatures only: no none, no HMAC)");
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalid("the ID token's signature does not verify with the issuer's keys");
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) return invalid("no key of the issuer's key set (JWKS) matches the ID token");
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || (err instanceof Error && !(err instanceof errors.JOSEError))) {
    return new AppError(503, "issuer_unavailable", "the issuer's key set (JWKS) could not be fetched; nothing was done, try again");
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JOSENotSupported) return invalid("the ID token is malformed or uses an unsupported key type");
  return invalid("the ID token does not verify");
}
