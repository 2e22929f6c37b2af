import type { Request, RequestHandler } from "express";
import { keccak256, toUtf8Bytes } from "ethers";
import { AppError, unauthorized } from "../errors";
import { usageKeyHash } from "../../protocol/usageKeyProof";
import type { Ctx } from "../context";

export type Auth = {
  /** The key's on-chain hash: keccak256 of its UTF-8 bytes for an account key; for a usage key, of its public key (usageKeyProof.ts). */
  keyHash: bigint;
  /** The account the key belongs to. */
  accountHash: bigint;
  /** True for the account (master) key, false for a usage key. */
  isAccountKey: boolean;
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

/** The hash of an account key (keccak256 of its UTF-8 bytes): the account's apiKeyHash. */
export const hashKey = (key: string): bigint => BigInt(keccak256(toUtf8Bytes(key)));

/**
 * Presented keys known to be usage keys: account-key hash -> usage-key hash. Both are functions of
 * the key alone, so this only spares the elliptic-curve derivation and the account lookup that
 * would miss; what the usage key may do is still read through the permission cache. Bounded.
 */
const usageKeys = new Map<bigint, bigint>();
const USAGE_KEY_MEMO = 10_000;

/**
 * Resolves a presented key: the account key whose hash names an account with a key, else the
 * usage key whose keypair's hash is registered. `active` false (or account 0) means 401.
 */
export async function resolveKey(ctx: Ctx, key: string): Promise<Auth & { active: boolean }> {
  const asAccount = hashKey(key);
  const known = usageKeys.get(asAccount);
  if (known !== undefined) {
    const r = await ctx.executor.permissions.resolve(known);
    if (r.accountHash !== 0n && r.active && !r.isAccountKey) return { keyHash: known, ...r };
    usageKeys.delete(asAccount);
  }
  const account = await ctx.executor.permissions.resolve(asAccount);
  if (account.accountHash !== 0n && account.active && account.isAccountKey) return { keyHash: asAccount, ...account };
  const asUsage = known ?? usageKeyHash(key);
  const usage = await ctx.executor.permissions.resolve(asUsage);
  if (usage.accountHash === 0n || usage.isAccountKey) return { keyHash: asUsage, accountHash: 0n, isAccountKey: false, active: false };
  if (usageKeys.size >= USAGE_KEY_MEMO) usageKeys.delete(usageKeys.keys().next().value!);
  usageKeys.set(asAccount, asUsage);
  return { keyHash: asUsage, ...usage };
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
  const { keyHash, accountHash, isAccountKey, active } = await resolveKey(ctx, key);
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
