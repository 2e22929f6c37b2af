import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { solidityPackedKeccak256 } from "ethers";
import { z, address, hash256 } from "../schemas/common";
import { text } from "../../protocol/textSchema";
import { route } from "../http/route";
import { relayWrite, WRITE_ERRORS } from "../chain/relay";
import { AppError } from "../errors";
import { deriveWallet, paths, randomDerivationPath } from "../../executor/keys/provider";
import { hex32 } from "../../protocol/usageKeyShape";
import { ISSUED_AT_TOLERANCE_S, type PrimaryType } from "../../protocol/eip712";
import { MAX_SIWE_MESSAGE_BYTES } from "../../protocol/siwe";
import { verifySigned, type SignedProof } from "../signed";
import { TtlCache } from "../../protocol/ttlCache";
import { envelopeKey } from "../http/walletAuth";
import { newSecretKey } from "./accounts";
import { keyHash } from "../../protocol/usageKeySeal";
import { authorizeUsageKey } from "../usageKeyRegistration";
import type { Ctx } from "../context";

const typedDataField = z.unknown().openapi({ description: "The EIP-712 envelope of spec 2 (types, domain, primaryType, message)." });
const signatureField = text({ kind: "label" }).openapi({ description: "eth_signTypedData_v4 signature of typed_data, or personal_sign (EIP-191) signature of message (or an ERC-1271 signature of a contract account)." });
const accountField = hash256("api_key_hash")
  .optional()
  .openapi({ type: "string", description: "The account the wallet will be registered to; default: the signer's own ChainSecured account." });
/** Chipotle's signed-text form (protocol/siwe.ts), instead of typed_data. */
const messageField = text({ kind: "text" })
  .optional()
  .openapi({ description: `Instead of typed_data: the signed text "<host> wants you to <statement>\\n\\nAddress: <address>\\nChain ID: <chain id>\\nIssued At: <unix seconds>" (Chipotle's form), at most ${MAX_SIWE_MESSAGE_BYTES} bytes.` });
/** Exactly one of typed_data and message. */
const oneProof = (b: { typed_data?: unknown; message?: unknown }) => (b.typed_data === undefined) !== (b.message === undefined);
const oneProofMessage = { message: "send either typed_data (EIP-712 envelope) or message (signed text), with signature", path: ["typed_data"] };

const SignedBody = z.object({ typed_data: typedDataField, signature: signatureField, api_key_hash: accountField }).strict();
const CreateWalletBody = z
  .object({ typed_data: typedDataField.optional(), message: messageField, signature: signatureField, api_key_hash: accountField })
  .strict()
  .refine(oneProof, oneProofMessage)
  .openapi("CreateWalletWithSignatureRequest");
const ConvertBody = z
  .object({ new_admin_wallet_address: address, typed_data: typedDataField.optional(), message: messageField, signature: signatureField })
  .strict()
  .refine(oneProof, oneProofMessage)
  .openapi("ConvertRequest");

/** Verifies a signed request for `primaryType` in either form; answers 400/401 with the reason. */
export async function verified(ctx: Ctx, primaryType: PrimaryType, proof: SignedProof): Promise<string> {
  const { address: signer } = await verifySigned(proof, {
    primaryType,
    domainName: ctx.config.eip712DomainName,
    chainId: ctx.chain.chainId,
    nowSeconds: Math.floor(Date.now() / 1000),
    provider: ctx.chain.provider,
    erc1271: ctx.config.erc1271,
  });
  return signer;
}

/** The account a signer mints for: its own ChainSecured hash, or an account it administers. */
async function targetAccount(ctx: Ctx, signer: string, requested?: bigint): Promise<bigint> {
  const own = BigInt(solidityPackedKeccak256(["address"], [signer]));
  if (requested === undefined || requested === own) return own;
  const exists = await ctx.chain.accountConfig.accountExists(requested);
  if (!exists || (await ctx.chain.accountConfig.getAccount(requested)).adminWalletAddress !== signer) {
    throw new AppError(403, "not_account_admin", `${signer} is not the admin wallet of account ${hex32(requested)}`);
  }
  return requested;
}

/** A fresh wallet for `account`, from a random derivation path (never stored; the caller registers it). */
async function mint(ctx: Ctx, account: bigint) {
  const derivationPath = randomDerivationPath();
  const { address: wallet } = await deriveWallet(ctx.keys, paths.pkp(account, derivationPath));
  return { wallet_address: wallet, derivation_path: hex32(derivationPath) };
}

/**
 * A signature that makes the service write for an account is taken once, in either form
 * (remembered until it could no longer be valid): a ConvertAccount signature names a wallet, not the
 * account it accepts, so whoever holds one converts one account onto that wallet, never a second one
 * the wallet did not agree to pay for; an AddUsageApiKey envelope reserves one usage key, charged to
 * the account, so a replayed copy cannot spend the account's credit on more.
 */
function onePerSignature(usedMessage: string) {
  const used = new TtlCache<true>(100_000);
  return async <T>(proof: SignedProof, write: () => Promise<T>): Promise<T> => {
    const key = envelopeKey(proof.typed_data ?? { message: proof.message }, proof.signature);
    if (used.get(key)) throw new AppError(409, "signature_used", usedMessage);
    used.set(key, true, Date.now() + 2 * ISSUED_AT_TOLERANCE_S * 1000);
    try {
      return await write();
    } catch (err) {
      used.delete(key); // nothing written: the signature may be tried again
      throw err;
    }
  };
}

export function chainSecuredRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  const once = onePerSignature("this ConvertAccount signature has converted an account already; the new admin wallet signs a new one for each account");
  const oncePerKey = onePerSignature("this AddUsageApiKey signature has reserved a usage key already; the wallet signs a new one for each key");
  route(router, registry, ctx, {
    method: "post",
    path: "/create_wallet_with_signature",
    tag: "ChainSecured",
    summary:
      "Mints a wallet (PKP) for a wallet-owned account after verifying a CreateWallet signature (EIP-712 typed_data, or Chipotle's signed-text message); register it with registerWalletDerivation.",
    auth: "none",
    body: CreateWalletBody,
    errors: ["rate_limited", "invalid_typed_data", "invalid_signed_message", "invalid_signature", "not_account_admin", "chain_unavailable"],
    response: z.object({ wallet_address: z.string(), derivation_path: z.string() }),
    handler: async ({ body }) => {
      const signer = await verified(ctx, "CreateWallet", body);
      return mint(ctx, await targetAccount(ctx, signer, body.api_key_hash));
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/add_usage_api_key_with_signature",
    tag: "ChainSecured",
    summary:
      "Mints a usage key and its wallet after verifying an AddUsageApiKey signature, and reserves the key for the account on chain (one relayed write, charged to the account: 402 without credit). The admin wallet then calls setUsageApiKey(api_key_hash, usage_api_key_hash, ...) (and may registerWalletDerivation(wallet_address, derivation_path)).",
    auth: "none",
    body: SignedBody.openapi("AddUsageApiKeyWithSignatureRequest"),
    errors: [...WRITE_ERRORS, "rate_limited", "invalid_typed_data", "invalid_signature", "not_account_admin", "account_not_found", "signature_used"],
    response: z.object({
      usage_api_key: z.string(),
      usage_api_key_hash: z.string().openapi({ description: "keccak256 of usage_api_key's UTF-8 bytes: pass it to setUsageApiKey." }),
      wallet_address: z.string(),
      derivation_path: z.string(),
    }),
    handler: async ({ body }) => {
      const signer = await verified(ctx, "AddUsageApiKey", body);
      const account = await targetAccount(ctx, signer, body.api_key_hash);
      if (!(await ctx.chain.accountConfig.accountExists(account))) {
        throw new AppError(404, "account_not_found", `no account ${hex32(account)}: the wallet creates its account first (newChainSecuredAccount), then its usage keys`);
      }
      const minted = await mint(ctx, account);
      const usageApiKey = newSecretKey();
      await oncePerKey(body, () => authorizeUsageKey(ctx, account, usageApiKey));
      return { usage_api_key: usageApiKey, usage_api_key_hash: hex32(keyHash(usageApiKey)), ...minted };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/convert_to_chain_secured_account",
    tag: "ChainSecured",
    summary:
      "Proposes the conversion of a managed account to ChainSecured (master key + ConvertAccount signature of the new admin: EIP-712 typed_data, or Chipotle's signed-text message). It completes when the new admin wallet calls acceptAccountOwnership(api_key_hash) on the contract; then there is no way back.",
    auth: "account",
    body: ConvertBody,
    errors: [...WRITE_ERRORS, "rate_limited", "invalid_typed_data", "invalid_signed_message", "invalid_signature", "already_chain_secured", "signature_used"],
    response: z.object({
      success: z.literal(true),
      admin_wallet_address: z.string().openapi({ description: "The admin wallet once it accepts." }),
      api_key_hash: z.string(),
      pending_acceptance: z.literal(true).openapi({ description: "The account stays managed until admin_wallet_address calls acceptAccountOwnership(api_key_hash)." }),
    }),
    handler: async ({ auth, body }) => {
      const signer = await verified(ctx, "ConvertAccount", body);
      if (signer !== body.new_admin_wallet_address) {
        throw body.message === undefined
          ? new AppError(400, "invalid_typed_data", `message.address ${signer} is not new_admin_wallet_address ${body.new_admin_wallet_address}`)
          : new AppError(400, "invalid_signed_message", `the message's Address ${signer} is not new_admin_wallet_address ${body.new_admin_wallet_address}`);
      }
      if (!(await ctx.chain.accountConfig.getAccount(auth.accountHash)).managed) {
        throw new AppError(409, "already_chain_secured", "this account is already ChainSecured; conversion happens once");
      }
      await once(body, () => relayWrite(ctx, "convertToChainSecuredAccount", [auth.accountHash, signer]));
      return { success: true as const, admin_wallet_address: signer, api_key_hash: hex32(auth.accountHash), pending_acceptance: true as const };
    },
  });
}
