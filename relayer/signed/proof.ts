import { isHexString, type Provider } from "ethers";
import { recoverSigner } from "../../protocol/ecdsa";
import { MAX_SIGNATURE_BYTES } from "../../protocol/eip712";
import { SignedRequestError } from "./errors";
import { DEFAULT_ERC1271, isValidContractSignature, type Erc1271Bounds } from "./erc1271";

/** What both signed forms are checked against. */
export type Expectation = {
  domainName: string;
  chainId: bigint;
  nowSeconds: number;
  /** Where ERC-1271 signatures are checked; without it only ECDSA (EOA) signatures hold. */
  provider?: Provider;
  /** Gas cap and timeout of the isValidSignature call (DEFAULT_ERC1271 when absent). */
  erc1271?: Erc1271Bounds;
};

/** The signature as 0x hex of whole bytes (at least one, at most MAX_SIGNATURE_BYTES), or a 400 with `code`. */
export function signatureHex(signature: unknown, code: "invalid_typed_data" | "invalid_signed_message"): string {
  if (typeof signature !== "string" || !isHexString(signature, true) || signature.length < 4) throw new SignedRequestError(code, "signature must be a 0x-prefixed hex string of whole bytes");
  if ((signature.length - 2) / 2 > MAX_SIGNATURE_BYTES) throw new SignedRequestError(code, `signature is ${(signature.length - 2) / 2} bytes; at most ${MAX_SIGNATURE_BYTES}`);
  return signature;
}

/**
 * Whether `signature` over `digest` proves `address`: an ECDSA signature that recovers to it
 * (libsecp256k1 when available), else the contract at `address` accepting it through ERC-1271
 * (bounded). Throws 401 invalid_signature when neither holds.
 */
export async function requireProof(digest: string, address: string, signature: string, expect: Expectation): Promise<void> {
  if (isHexString(signature, 65)) {
    try {
      if (recoverSigner(digest, signature) === address) return;
    } catch {
      /* not a valid ECDSA signature: maybe a contract signature */
    }
  }
  if (expect.provider && (await isValidContractSignature(expect.provider, address, digest, signature, expect.erc1271 ?? DEFAULT_ERC1271))) return;
  throw new SignedRequestError("invalid_signature", `the signature does not prove ${address}`);
}

/** The issuedAt window of both forms: within ISSUED_AT_TOLERANCE_S of the server's clock. */
export function withinWindow(issuedAt: bigint, nowSeconds: number, tolerance: number): boolean {
  const now = BigInt(nowSeconds);
  return (issuedAt > now ? issuedAt - now : now - issuedAt) <= BigInt(tolerance);
}
