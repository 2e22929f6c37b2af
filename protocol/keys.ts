import { concat, getBytes, hexlify, keccak256, toUtf8Bytes } from "ethers";

/** Pure (ethers only): the relayer, the dashboard and the tests derive keys with the same code. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** A valid secp256k1 private key from derived material (re-hashed in the negligible case it is out of range). */
export function toPrivateKey(material: Uint8Array): string {
  let k = getBytes(keccak256(concat([toUtf8Bytes("vesta/secp256k1/v1"), material])));
  while (BigInt(hexlify(k)) === 0n || BigInt(hexlify(k)) >= SECP256K1_N) k = getBytes(keccak256(k));
  return hexlify(k);
}
