/**
 * secp256k1 for the services' hot paths (Node only; the dashboard uses ethers): libsecp256k1 through
 * the `secp256k1` package's native binding, about 20x faster than JavaScript for a recovery
 * (bench/signatures.ts). Where the binding cannot load (no prebuilt for the platform), the same
 * answers come from ethers, and `NATIVE_SECP256K1` is false so the service can say so at boot.
 */
import { computeAddress, getBytes, keccak256, recoverAddress, Signature, SigningKey, getAddress, dataSlice, hexlify } from "ethers";

type Native = {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
  publicKeyCreate(privateKey: Uint8Array, compressed: boolean): Uint8Array;
};

function loadNative(): Native | undefined {
  try {
    return require("secp256k1/bindings") as Native; // the binding itself: the package's index would fall back to JavaScript silently
  } catch {
    return undefined;
  }
}

const native = loadNative();

/** Whether recoveries and public keys use libsecp256k1 (else ethers' JavaScript). */
export const NATIVE_SECP256K1 = native !== undefined;

/**
 * The address that signed `digest` (32 bytes, 0x hex) with the 65-byte `signature`, with ethers'
 * rules (Signature.from: canonical low s, v 27/28 or 0/1); throws as ethers does on a malformed one.
 */
export function recoverSigner(digest: string, signature: string): string {
  if (!native) return recoverAddress(digest, signature);
  const sig = Signature.from(signature);
  const pub = native.ecdsaRecover(getBytes(sig.r + sig.s.slice(2)), sig.yParity, getBytes(digest), false);
  return getAddress(dataSlice(keccak256(pub.subarray(1)), 12));
}

/** The uncompressed public key (0x04...) and address of a private key. */
export function publicKeyOf(privateKey: string): { publicKey: string; address: string } {
  const publicKey = native ? hexlify(native.publicKeyCreate(getBytes(privateKey), false)) : new SigningKey(privateKey).publicKey;
  return { publicKey, address: computeAddress(publicKey) };
}
