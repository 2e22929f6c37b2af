/**
 * A signed request in either form: spec 2's EIP-712 envelope `{typed_data, signature}` or
 * Chipotle's signed text `{message, signature}` (EIP-191 personal_sign), for one purpose.
 */
import type { PrimaryType } from "../../protocol/eip712";
import { SIWE_STATEMENTS, type SiwePurpose } from "../../protocol/siwe";
import { SignedRequestError } from "./errors";
import { verifyTypedData } from "./eip712";
import { verifyTextMessage } from "./siwe";
import type { Expectation } from "./proof";

export { SignedRequestError } from "./errors";
export { DEFAULT_ERC1271 } from "./erc1271";
export type { Expectation } from "./proof";

/** What a signed body carries: exactly one of `typed_data` and `message`, and `signature`. */
export type SignedProof = { typed_data?: unknown; message?: unknown; signature: unknown };

const hasText = (p: PrimaryType): p is SiwePurpose => Object.prototype.hasOwnProperty.call(SIWE_STATEMENTS, p);

/** Verifies `proof` for `primaryType` in whichever form it comes; the proven address and when the proof stops being accepted. */
export async function verifySigned(proof: SignedProof, expect: Expectation & { primaryType: PrimaryType }): Promise<{ address: string; validUntil: number }> {
  if (proof.message !== undefined && proof.typed_data !== undefined) throw new SignedRequestError("invalid_typed_data", "send either typed_data (EIP-712) or message (signed text), not both");
  if (proof.message === undefined && proof.typed_data === undefined) {
    throw new SignedRequestError("invalid_typed_data", hasText(expect.primaryType) ? "send typed_data (the EIP-712 envelope) or message (the signed text), with signature" : "typed_data (the EIP-712 envelope) is required");
  }
  if (proof.message === undefined) return verifyTypedData(proof.typed_data, proof.signature, expect);
  if (!hasText(expect.primaryType)) throw new SignedRequestError("invalid_signed_message", `${expect.primaryType} has no signed-text form: send typed_data (EIP-712)`);
  return verifyTextMessage(proof.message, proof.signature, { ...expect, purpose: expect.primaryType });
}
