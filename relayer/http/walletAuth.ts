import type { Request } from "express";
import { solidityPackedKeccak256 } from "ethers";
import { AppError } from "../errors";
import { DEFAULT_MAX_JSON_DEPTH, jsonDeeperThan } from "../../protocol/json";
import { SignedRequestError, verifySignedRequest } from "../eip712";
import { authenticate } from "./auth";
import { hex32 } from "../../executor/keys/provider";
import type { Ctx } from "../context";

export type BillingIdentity =
  | { via: "api_key"; accountHash: bigint; keyHash: bigint; isAccountKey: boolean }
  | { via: "wallet"; accountHash: bigint; wallet: string };

/** The decoded X-Wallet-Auth header, or undefined when it is not well-formed. */
function decodeHeader(raw: string): { typed_data: unknown; signature: unknown; api_key_hash?: unknown } | undefined {
  if (raw.length > 16 * 1024 || !/^[A-Za-z0-9+/=_-]+$/.test(raw)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(raw, "base64").toString("utf8"));
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed) || !("typed_data" in parsed) || !("signature" in parsed)) return undefined;
    if (jsonDeeperThan(parsed, DEFAULT_MAX_JSON_DEPTH)) return undefined; // measured before anything walks it
    const extra = Object.keys(parsed).filter((k) => !["typed_data", "signature", "api_key_hash"].includes(k));
    return extra.length ? undefined : parsed;
  } catch {
    return undefined;
  }
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
  let wallet: string;
  try {
    ({ address: wallet } = await verifySignedRequest(header.typed_data, header.signature, {
      primaryType: "BillingAuth",
      domainName: ctx.config.eip712DomainName,
      chainId: ctx.chain.chainId,
      nowSeconds: Math.floor(Date.now() / 1000),
      provider: ctx.chain.provider,
    }));
  } catch (err) {
    if (err instanceof SignedRequestError) throw new AppError(401, "invalid_wallet_auth", `X-Wallet-Auth: ${err.message}`);
    throw err;
  }
  const own = BigInt(solidityPackedKeccak256(["address"], [wallet]));
  let accountHash = own;
  if (header.api_key_hash !== undefined) {
    const h = header.api_key_hash;
    if ((typeof h !== "string" && typeof h !== "number") || !/^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/.test(String(h))) {
      throw new AppError(401, "invalid_wallet_auth", "X-Wallet-Auth: api_key_hash must be a uint256 (decimal or 0x hex)");
    }
    accountHash = BigInt(h);
  }
  const c = ctx.chain.accountConfig;
  if (!(await c.accountExists(accountHash)) || (await c.getAccount(accountHash)).adminWalletAddress !== wallet) {
    throw new AppError(401, "invalid_wallet_auth", `X-Wallet-Auth: ${wallet} is not the admin wallet of account ${hex32(accountHash)}`);
  }
  return { via: "wallet", accountHash, wallet };
}

/** Builds the X-Wallet-Auth header value (for clients, scripts and tests). */
export function walletAuthHeader(typedData: unknown, signature: string, apiKeyHash?: bigint): string {
  return Buffer.from(JSON.stringify({ typed_data: typedData, signature, ...(apiKeyHash === undefined ? {} : { api_key_hash: `0x${apiKeyHash.toString(16)}` }) })).toString("base64");
}
