import crypto from "node:crypto";
import type { Request, RequestHandler } from "express";
import { AppError, unauthorized } from "../errors";
import { keyHash } from "../../protocol/usageKeySeal";
import type { Ctx } from "../context";
import { normalAddress } from "./authFailures";
import { Lru } from "../../protocol/lru";
import { looksLikeSession } from "../identity/session";
import { notOwner, type IdentityAuth } from "../identity/service";
import { accountRecord } from "../../billing/charges";

export type Auth = {
  /** The key's on-chain hash: keccak256 of its UTF-8 bytes (account keys and usage keys alike). */
  keyHash: bigint;
  /** The account the key belongs to. */
  accountHash: bigint;
  /** True for the account (master) key, false for a usage key. */
  isAccountKey: boolean;
  /**
   * Set for an identity session (relayer/identity): the account is the identity's own, and its
   * admin writes are signed by the identity wallet (relayWrite's `signer`, see asOwner).
   */
  identity?: IdentityAuth;
};

/** Longest key value accepted (keys the service mints are 44 characters). */
export const MAX_KEY_LENGTH = 512;

/** The key from `X-Api-Key` or `Authorization: Bearer`, or undefined. */
export function presentedKey(req: Request): string | undefined {
  const header = req.get("x-api-key");
  if (header) return header.trim();
  const authz = req.get("authorization");
  const m = authz?.match(/^Bearer\s+(.+)$/i);
  return m ? m[1].trim() : undefined;
}

/** The client's address as the per-client limits see it (`trust proxy` applied), in one form. */
export const clientAddress = (req: Request): string => normalAddress(req.ip ?? "");

/** Keys' hashes computed lately, by the SHA-256 of the key (native and ~20x cheaper than keccak in JavaScript; no key is kept). */
const hashes = new Lru<string, bigint>(10_000);

/** The hash of a key (keccak256 of its UTF-8 bytes): an account's apiKeyHash, or a usage key's hash. */
export function hashKey(key: string): bigint {
  const id = crypto.createHash("sha256").update(key).digest("base64");
  let hash = hashes.get(id);
  if (hash === undefined) {
    hash = keyHash(key);
    hashes.set(id, hash);
  }
  return hash;
}

/**
 * Resolves a presented key by its hash: an account key (of an account that has one) or a usage key
 * registered on chain. `active` false (or account 0) means 401. A key the service does not remember
 * costs a chain read, counted against the client's budget of failed authentications (429 past it,
 * before the read; see AuthFailureLimit); a key that proves good is not counted.
 */
export async function resolveKey(ctx: Ctx, req: Request, key: string): Promise<Auth & { active: boolean }> {
  const h = hashKey(key);
  const client = clientAddress(req);
  let counted = false;
  const r = await ctx.executor.permissions.resolve(h, () => {
    counted = ctx.authFailures.startLookup(client, h);
  });
  if (r.accountHash !== 0n && r.active) ctx.authFailures.succeeded(client, h, counted);
  else ctx.authFailures.failed(h);
  return { keyHash: h, ...r };
}

/**
 * Resolves the presented key on chain. A key that is unknown, revoked, expired, or the bare hash of
 * a wallet-owned account (which has no account key) gets 401; `need: "account"` also demands the
 * account key (403 for a usage key).
 */
export async function authenticate(ctx: Ctx, req: Request, need: "key" | "account"): Promise<Auth> {
  const key = presentedKey(req);
  if (!key) throw unauthorized();
  if (key.length > MAX_KEY_LENGTH) throw unauthorized("the API key is malformed (too long)");
  if (looksLikeSession(key)) return sessionAuth(ctx, key);
  const { keyHash, accountHash, isAccountKey, active } = await resolveKey(ctx, req, key);
  if (accountHash === 0n || !active) throw unauthorized("this API key is unknown, revoked or expired");
  if (need === "account" && !isAccountKey) throw new AppError(403, "owner_only", "only the account key can do this; a usage key cannot");
  return { keyHash, accountHash, isAccountKey };
}

/**
 * Authenticates the key ("key" routes) before the body is read, on routes whose bodies may be
 * large (action code): a request with no valid key is answered 401 without parsing megabytes of
 * JSON for it. The route takes the result from `res.locals.auth` (route.ts).
 */
export function authenticateBeforeBody(ctx: Ctx): RequestHandler {
  return (req, res, next) => {
    if (req.method !== "POST") return next();
    authenticate(ctx, req, "key").then((auth) => {
      res.locals.auth = auth;
      next();
    }, next);
  };
}

/**
 * An identity session as the owner's credential: the identity's own account, whose admin must
 * still be the identity's wallet (403 identity_not_owner once it was handed over); 401 when the
 * session does not hold or the identity has no account.
 */
async function sessionAuth(ctx: Ctx, token: string): Promise<Auth> {
  const s = await ctx.identity.fromSession(token);
  const exists = await ctx.executor.permissions.read(s.accountHash, "identity:exists", () => ctx.chain.accountConfig.accountExists(s.accountHash));
  if (!exists) throw new AppError(401, "invalid_session", "this identity has no account on this node: sign in again");
  if ((await accountRecord(ctx, s.accountHash)).admin !== s.wallet) throw notOwner(s.accountHash);
  return { keyHash: s.accountHash, accountHash: s.accountHash, isAccountKey: true, identity: { identityId: s.identityId, wallet: s.wallet, method: s.method } };
}

/** relayWrite's options for a write of `auth`: an identity session's writes are signed by its owner wallet. */
export const asOwner = async (ctx: Ctx, auth: Auth): Promise<{ signer?: Awaited<ReturnType<Ctx["identity"]["signer"]>> }> =>
  auth.identity ? { signer: await ctx.identity.signer(auth.identity.identityId) } : {};
