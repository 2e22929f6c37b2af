/**
 * Verification of the signed text form (protocol/siwe.ts): the same checks as the typed-data
 * envelope (size, purpose, chain id, issuedAt window, signature by the stated address; ERC-1271 for
 * contract accounts over the EIP-191 digest), answered with `invalid_signed_message`.
 */
import { hashMessage } from "ethers";
import { ISSUED_AT_TOLERANCE_S } from "../../protocol/eip712";
import { MAX_SIWE_MESSAGE_BYTES, parseSiweMessage, SIWE_STATEMENTS, SiweFormatError, type ParsedSiwe, type SiwePurpose } from "../../protocol/siwe";
import { SignedRequestError } from "./errors";
import { requireProof, signatureHex, withinWindow, type Expectation } from "./proof";

const bad = (message: string) => new SignedRequestError("invalid_signed_message", message);

/**
 * Checks a signed text message for `expect.purpose`, in the order of the envelope's: size, form,
 * purpose (the statement), chain id, issuedAt window, signature. Returns the proven address and the
 * last second (unix) at which the same message would still be accepted.
 */
export async function verifyTextMessage(message: unknown, signature: unknown, expect: Expectation & { purpose: SiwePurpose }): Promise<{ address: string; validUntil: number }> {
  if (typeof message !== "string") throw bad("message must be a string (the signed text)");
  const size = Buffer.byteLength(message, "utf8");
  if (size > MAX_SIWE_MESSAGE_BYTES) throw bad(`message is ${size} bytes; at most ${MAX_SIWE_MESSAGE_BYTES}`);
  let parsed: ParsedSiwe;
  try {
    parsed = parseSiweMessage(message);
  } catch (err) {
    if (err instanceof SiweFormatError) throw bad(err.message);
    throw err;
  }
  if (parsed.purpose !== expect.purpose) {
    throw bad(`this message is signed to "${SIWE_STATEMENTS[parsed.purpose]}"; this endpoint takes "${SIWE_STATEMENTS[expect.purpose]}"`);
  }
  if (parsed.chainId !== expect.chainId) throw bad(`Chain ID ${parsed.chainId} is not this node's chain ${expect.chainId}`);
  if (!withinWindow(parsed.issuedAt, expect.nowSeconds, ISSUED_AT_TOLERANCE_S)) throw bad(`Issued At must be within ${ISSUED_AT_TOLERANCE_S} s of the server's time (${expect.nowSeconds})`);
  const sig = signatureHex(signature, "invalid_signed_message");
  await requireProof(hashMessage(message), parsed.address, sig, expect);
  return { address: parsed.address, validUntil: Number(parsed.issuedAt) + ISSUED_AT_TOLERANCE_S };
}
