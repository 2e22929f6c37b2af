import crypto from "node:crypto";
import { jwtVerify, SignJWT, errors as joseErrors } from "jose";
import { AppError } from "../errors";
import { paths, type KeyProvider } from "../../executor/keys/provider";
import type { IdentityMethod } from "./identity";

/** What a session token carries, once verified: the identity it is bound to and how it signed in. */
export type IdentitySession = {
  identityId: string;
  method: IdentityMethod;
  expiresAt: number;
  issuedAt: number;
  /** The identity's session epoch it was issued at (Identity.session checks it is still the identity's). */
  epoch: number;
  /** Which sign-in method it came from (methodKey; "" for sessions of before this claim existed). */
  via: string;
};

/** A short name of one sign-in method (method, issuer, subject), as a session records the one it came from. */
export const methodKey = (m: { method: string; issuer: string; subject: string }): string =>
  crypto.createHash("sha256").update(JSON.stringify(["vesta-session-method-v1", m.method, m.issuer, m.subject])).digest("base64url").slice(0, 22);

const AUDIENCE = "vesta-identity-session";
const ISSUER = "vesta";
/** A session token is a compact JWS (HS256): base64url header "eyJ...", payload and MAC. API keys are base64 with no dot. */
const SHAPE = /^eyJ[A-Za-z0-9_-]{10,200}\.[A-Za-z0-9_-]{10,1000}\.[A-Za-z0-9_-]{43}$/;

export const looksLikeSession = (presented: string): boolean => SHAPE.test(presented);

/**
 * Short-lived sessions bound to one identity, issued right after a sign-in proof held. They are
 * JWTs MACed (HS256, the only algorithm accepted) with a key the key provider derives (the TEE in
 * production): no store, the same on every replica of one deployment, unforgeable without the TEE.
 * A session is the "fresh authentication" behind admin writes: it lives `ttlSeconds`, then the
 * identity signs in again.
 */
export class Sessions {
  private key: Promise<Uint8Array> | undefined;

  constructor(
    private readonly keys: KeyProvider,
    /** Binds tokens to one deployment (chain and contract): a token of another node's is refused. */
    private readonly deployment: string,
    readonly ttlSeconds: number,
  ) {}

  private macKey(): Promise<Uint8Array> {
    this.key ??= this.keys.deriveSecret(paths.identityMac("session"));
    return this.key;
  }

  /** A session of `identityId`, signed in with `via`, at the identity's session `epoch` (read before the method's link was checked). */
  issue(identityId: string, via: { method: IdentityMethod; issuer: string; subject: string }, epoch: number): Promise<{ token: string; expiresAt: number }> {
    const now = Math.floor(Date.now() / 1000);
    return this.sign({ identityId, method: via.method, via: methodKey(via), epoch, issuedAt: now, expiresAt: now + this.ttlSeconds });
  }

  /** The same session at a new epoch: its method, issue and expiry times kept (a renewal is no fresh sign-in and lives no longer). */
  renew(s: IdentitySession, epoch: number): Promise<{ token: string; expiresAt: number }> {
    return this.sign({ ...s, epoch });
  }

  private async sign(s: IdentitySession): Promise<{ token: string; expiresAt: number }> {
    const token = await new SignJWT({ amr: s.method, dep: this.deployment, ep: s.epoch, via: s.via })
      .setProtectedHeader({ alg: "HS256", typ: "vesta-session+jwt" })
      .setSubject(s.identityId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(s.issuedAt)
      .setExpirationTime(s.expiresAt)
      .sign(await this.macKey());
    return { token, expiresAt: s.expiresAt };
  }

  /**
   * The session `token` proves, or 401 invalid_session (expired, altered, another deployment's).
   * Its epoch is not checked here: Identity.session does (a revoked session verifies here).
   */
  async verify(token: string): Promise<IdentitySession> {
    try {
      const { payload } = await jwtVerify(token, await this.macKey(), { algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE, typ: "vesta-session+jwt", requiredClaims: ["sub", "exp", "iat"] });
      const epoch = payload.ep ?? 0; // sessions issued before epochs existed: epoch 0
      if (payload.dep !== this.deployment || typeof payload.sub !== "string" || !/^[0-9a-f]{64}$/.test(payload.sub) || typeof payload.amr !== "string" || !Number.isSafeInteger(epoch) || (epoch as number) < 0) {
        throw new AppError(401, "invalid_session", "this session token is not one of this node's");
      }
      const via = typeof payload.via === "string" ? payload.via : "";
      return { identityId: payload.sub, method: payload.amr as IdentityMethod, expiresAt: payload.exp!, issuedAt: payload.iat!, epoch: epoch as number, via };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw new AppError(401, "invalid_session", "this session has expired: sign in again");
      throw new AppError(401, "invalid_session", "this session token is invalid (altered, malformed or not this node's): sign in again");
    }
  }
}
