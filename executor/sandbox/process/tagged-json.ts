/**
 * How values cross between the guest modules and the sandbox process's synchronous helpers (the
 * ethers shim, the web platform calls, crypto.subtle): JSON text with two tags, {$bigint: "123"} and
 * {$bytes: "0x.."} (guest/bytes.js is the other side), so no object of this process ever reaches
 * the QuickJS heap.
 */
import { getBytes, hexlify } from "ethers";

const tagged = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Tagged JSON text → its value (bigint and Uint8Array restored). */
export function decodeTagged(json: string): unknown {
  return JSON.parse(json, (_k, v) => {
    if (tagged(v) && typeof v.$bigint === "string") return BigInt(v.$bigint);
    if (tagged(v) && typeof v.$bytes === "string") return getBytes(v.$bytes);
    return v;
  });
}

/** A value → tagged JSON text (bigint and Uint8Array/ArrayBuffer tagged); "null" for undefined. */
export function encodeTagged(value: unknown): string {
  const json = JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const original = this[key];
    if (typeof original === "bigint") return { $bigint: original.toString() };
    if (original instanceof Uint8Array) return { $bytes: hexlify(original) };
    if (original instanceof ArrayBuffer) return { $bytes: hexlify(new Uint8Array(original)) };
    return v;
  });
  return json === undefined ? "null" : json;
}
