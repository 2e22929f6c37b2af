import type { Request } from "express";
import { keccak256, toUtf8Bytes } from "ethers";
import { AppError, unauthorized } from "../errors";
import type { Ctx } from "../context";

export type Auth = {
  /** keccak256 of the presented key's UTF-8 bytes. */
  keyHash: bigint;
  /** The account the key belongs to. */
  accountHash: bigint;
  /** True for the account (master) key, false for a usage key. */
  isAccountKey: boolean;
};

const MAX_KEY_LENGTH = 512;

/** The key from `X-Api-Key` or `Authorization: Bearer`, or undefined. */
export function presentedKey(req: Request): string | undefined {
  const header = req.get("x-api-key");
  if (header) return header.trim();
  const authz = req.get("authorization");
  const m = authz?.match(/^Bearer\s+(.+)$/i);
  return m ? m[1].trim() : undefined;
}

export const hashKey = (key: string): bigint => BigInt(keccak256(toUtf8Bytes(key)));

/**
 * Resolves the presented key on chain. A key that is unknown, revoked, expired, or the bare hash of
 * a wallet-owned account (which has no account key) gets 401; `need: "account"` also demands the
 * account key (403 for a usage key).
 */
export async function authenticate(ctx: Ctx, req: Request, need: "key" | "account"): Promise<Auth> {
  const key = presentedKey(req);
  if (!key) throw unauthorized();
  if (key.length > MAX_KEY_LENGTH) throw unauthorized("the API key is malformed (too long)");
  const keyHash = hashKey(key);
  const { accountHash, isAccountKey, active } = await ctx.executor.permissions.resolve(keyHash);
  if (accountHash === 0n || !active) throw unauthorized("this API key is unknown, revoked or expired");
  if (need === "account" && !isAccountKey) throw new AppError(403, "owner_only", "only the account key can do this; a usage key cannot");
  return { keyHash, accountHash, isAccountKey };
}
