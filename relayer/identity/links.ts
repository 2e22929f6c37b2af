import type { Request } from "express";
import { AppError } from "../errors";
import { presentedKey } from "../http/auth";
import { looksLikeSession, methodKey, type IdentitySession } from "./session";
import { identityAccountHash, identityId, identityWallet, type VerifiedIdentity } from "./identity";
import { revoked } from "./service";
import type { Ctx } from "../context";

/** How recent a sign-in must be to link or unlink a method (the "fresh authentication"). */
export const LINK_FRESH_SECONDS = 300;

/**
 * The identity session of a request: present, valid, and (`fresh`, for a link or unlink) issued at
 * most LINK_FRESH_SECONDS ago (401 stale_session otherwise: sign in again with a method the identity has).
 */
export async function freshSession(ctx: Ctx, req: Request, opts: { fresh: boolean } = { fresh: true }, now = Date.now()): Promise<IdentitySession> {
  const token = presentedKey(req);
  if (!token || !looksLikeSession(token)) throw new AppError(401, "invalid_session", "present the identity session of a fresh sign-in (X-Api-Key or Authorization: Bearer)");
  const s = await ctx.identity.session(token);
  if (opts.fresh && Math.floor(now / 1000) - s.issuedAt > LINK_FRESH_SECONDS) {
    throw new AppError(401, "stale_session", `linking or unlinking needs a sign-in of the last ${LINK_FRESH_SECONDS / 60} minutes: sign in again with a method this identity has`);
  }
  return s;
}

/**
 * Links a method just proven (`method`) to the session's identity: it then signs into that
 * identity and its wallet. Refused (409 method_taken) when the method signs into another identity
 * already: a row naming another identity, or no row and its own identity has an account.
 */
export async function linkMethod(ctx: Ctx, session: IdentitySession, method: VerifiedIdentity): Promise<"linked" | "already"> {
  const own = identityId(method);
  const ownedElsewhere = async () => {
    if (own === session.identityId) return false;
    const wallet = (await identityWallet(ctx.keys, own)).address;
    return ctx.chain.accountConfig.accountExists(identityAccountHash(wallet));
  };
  const r = await ctx.identity.store.attach(method.method, method.issuer, method.subject, session.identityId, ownedElsewhere, { epoch: session.epoch });
  if (r === "revoked") throw revoked();
  if (r === "taken") throw new AppError(409, "method_taken", `this ${method.method} sign-in already signs into another identity: it cannot be linked to this one (nothing changed)`);
  return r;
}

/**
 * Unlinks one of the session identity's methods; never its last (409 last_method). Every session of
 * the identity is revoked with it (the epoch moves); the caller's own comes back renewed unless it
 * came from the method just unlinked (then `undefined`: it signs in again with another method).
 */
export async function unlinkMethod(ctx: Ctx, session: IdentitySession, m: { method: string; issuer: string; subject: string }): Promise<{ token: string; expiresAt: number } | undefined> {
  const r = await ctx.identity.store.detach(m.method, m.issuer, m.subject, session.identityId, session.epoch);
  if (r === "revoked") throw revoked();
  if (r === "not_linked") throw new AppError(404, "method_not_linked", "this sign-in method is not linked to the session's identity");
  if (r === "last") throw new AppError(409, "last_method", "this is the identity's only sign-in method: link another before unlinking it (nothing changed)");
  if (!session.via || session.via === methodKey(m)) return undefined; // a session of before `via` existed may be the unlinked method's: not renewed
  return ctx.identity.sessions.renew(session, await ctx.identity.store.epoch(session.identityId));
}
