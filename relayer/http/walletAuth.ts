import crypto from "node:crypto";
import type { Request } from "express";
import { solidityPackedKeccak256 } from "ethers";
import { AppError } from "../errors";
import { DEFAULT_MAX_JSON_DEPTH, jsonDeeperThan } from "../../protocol/json";
import { firstMalformedString } from "../../protocol/textSchema";
import { SignedRequestError, verifySigned } from "../signed";
import { authenticate } from "./auth";
import { hex32 } from "../../protocol/usageKeyShape";
import { accountRecord } from "../../billing/charges";
import { TtlCache } from "../../protocol/ttlCache";
import type { Ctx } from "../context";
import type { IdentityAuth } from "../identity/service";

/** A short identity of one signed envelope (typed data and signature), for caches of what was verified or used. */
export const envelopeKey = (typedData: unknown, signature: unknown): string => crypto.createHash("sha256").update(JSON.stringify([typedData, signature])).digest("hex");

/** Verified BillingAuth envelopes per relayer, until they expire (their issuedAt window); at most this many. */
const VERIFIED_MAX = 10_000;
const verifiedAuths = new WeakMap<Ctx, TtlCache<string>>();

export type BillingIdentity =
  | { via: "api_key"; accountHash: bigint; keyHash: bigint; isAccountKey: boolean; /** An identity session: the owner of its own account. */ identity?: IdentityAuth }
  | { via: "wallet"; accountHash: bigint; wallet: string };

/** The decoded X-Wallet-Auth header, or undefined when it is not well-formed. */
function decodeHeader(raw: string): { typed_data: unknown; signature: unknown; api_key_hash?: unknown } | undefined {
  if (raw.length > 16 * 1024 || !/^[A-Za-z0-9+/=_-]+$/.test(raw)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
  } catch {
    return undefined; // not JSON; only the parse is guarded, so a fault in the checks below surfaces instead of reading as "no header"
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || !("typed_data" in parsed) || !("signature" in parsed)) return undefined;
  if (jsonDeeperThan(parsed, DEFAULT_MAX_JSON_DEPTH)) return undefined; // measured before anything walks it
  if (firstMalformedString(parsed)) return undefined; // a lone surrogate: nothing to hash or verify
  const extra = Object.keys(parsed).filter((k) => !["typed_data", "signature", "api_key_hash"].includes(k));
  return extra.length ? undefined : (parsed as { typed_data: unknown; signature: unknown; api_key_hash?: unknown });
}

/**
 * Who pays, for the billing routes: the `X-Wallet-Auth` header (base64 of JSON
 * `{typed_data, signature, api_key_hash?}` with primaryType BillingAuth) identifies the signing
 * wallet's account; a header that is not well-formed falls back to API-key auth; a well-formed
 * header whose signature does not hold gets 401. The account is the wallet's own ChainSecured
 * account, or `api_key_hash` when the wallet is that account's admin (a converted account). An
 * account hash alone is never a credential.
 */
export async function billingIdentity(ctx: Ctx, req: Request): Promise<BillingIdentity> {
  const raw = req.get("x-wallet-auth");
  const header = raw ? decodeHeader(raw.trim()) : undefined;
  if (!header) {
    const auth = await authenticate(ctx, req, "key");
    return { via: "api_key", ...auth };
  }
  const wallet = await verifiedWallet(ctx, header.typed_data, header.signature);
  const own = BigInt(solidityPackedKeccak256(["address"], [wallet]));
  let accountHash = own;
  if (header.api_key_hash !== undefined) {
    const h = header.api_key_hash;
    // 78 decimal digits can pass 2^256 - 1: the value is checked, not only its form.
    if ((typeof h !== "string" && typeof h !== "number") || !/^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(String(h)) || BigInt(h) >> 256n !== 0n) {
      throw new AppError(401, "invalid_wallet_auth", "X-Wallet-Auth: api_key_hash must be a uint256 (decimal or 0x hex)");
    }
    accountHash = BigInt(h);
  }
  if (!(await ctx.chain.accountConfig.accountExists(accountHash)) || (await accountRecord(ctx, accountHash)).admin !== wallet) {
    throw new AppError(401, "invalid_wallet_auth", `X-Wallet-Auth: ${wallet} is not the admin wallet of account ${hex32(accountHash)}`);
  }
  return { via: "wallet", accountHash, wallet };
}

/**
 * The wallet a BillingAuth envelope proves. A verified envelope is remembered (bounded, until its
 * issuedAt window closes), so a client that sends the same header on every billing call costs one
 * signature check (and for a contract wallet one capped ERC-1271 call) per window, not one per call.
 */
async function verifiedWallet(ctx: Ctx, typedData: unknown, signature: unknown): Promise<string> {
  let cache = verifiedAuths.get(ctx);
  if (!cache) verifiedAuths.set(ctx, (cache = new TtlCache(VERIFIED_MAX)));
  const key = envelopeKey(typedData, signature);
  const hit = cache.get(key);
  if (hit) return hit;
  try {
    const { address, validUntil } = await verifySigned({ typed_data: typedData, signature }, {
      primaryType: "BillingAuth",
      domainName: ctx.config.eip712DomainName,
      chainId: ctx.chain.chainId,
      nowSeconds: Math.floor(Date.now() / 1000),
      provider: ctx.chain.provider,
      erc1271: ctx.config.erc1271,
    });
    cache.set(key, address, validUntil * 1000);
    return address;
  } catch (err) {
    if (err instanceof SignedRequestError) throw new AppError(401, "invalid_wallet_auth", `X-Wallet-Auth: ${err.message}`);
    throw err;
  }
}

/** Builds the X-Wallet-Auth header value (for clients, scripts and tests). */
export function walletAuthHeader(typedData: unknown, signature: string, apiKeyHash?: bigint): string {
  return Buffer.from(JSON.stringify({ typed_data: typedData, signature, ...(apiKeyHash === undefined ? {} : { api_key_hash: `0x${apiKeyHash.toString(16)}` }) })).toString("base64");
}
