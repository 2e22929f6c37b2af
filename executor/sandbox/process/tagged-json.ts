/**
 * How values cross between the guest modules and the sandbox process's synchronous helpers (the
 * ethers shim, the web platform calls, crypto.subtle): JSON text with tags, {$bigint: "123"} and
 * {$bytes: "0x.."} both ways (guest/bytes.js is the other side), and two more from the ethers v5
 * helpers to the guest: {$bn: "0x.."}, a v5 BigNumber, and {$result: [...], $names: [...]}, a v5
 * Result (an array with named members; guest/ethers5-abi.js builds both). No object of this process
 * ever reaches the QuickJS heap.
 */
import { getBytes } from "ethers";

const tagged = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Hex text and bytes by Node's Buffer: ethers' getBytes and hexlify take a character or a byte at a
 * time (~0.2 us a byte here), 100 times Buffer's cost, on every byte that crosses. Text that is not
 * 0x-hex of whole bytes is left to getBytes, whose error the action sees.
 */
export const isHexBytes = (text: string): boolean => text.length % 2 === 0 && text.startsWith("0x") && !/[^0-9a-fA-F]/.test(text.slice(2));
const bytesOf = (hex: string): Uint8Array => (isHexBytes(hex) ? new Uint8Array(Buffer.from(hex.slice(2), "hex")) : getBytes(hex));
const hexOf = (bytes: Uint8Array): string => "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/**
 * Characters of the bigints one decode restores, in all: V8 reads a decimal bigint in more than
 * linear time (8 M digits took 5 s, before any bound of the helper it is for could look at it); a
 * million digits is ~0.1 s, and more than any helper needs (Intl formats at most that many digits).
 */
export const MAX_BIGINT_CHARS = 1 << 20;

/** Tagged JSON text → its value (bigint and Uint8Array restored). */
export function decodeTagged(json: string): unknown {
  let bigintChars = 0;
  return JSON.parse(json, (_k, v) => {
    if (tagged(v) && typeof v.$bigint === "string") {
      bigintChars += v.$bigint.length;
      if (bigintChars > MAX_BIGINT_CHARS) throw new RangeError(`at most ${MAX_BIGINT_CHARS} digits of bigints cross into the sandbox process in one call`);
      return BigInt(v.$bigint);
    }
    if (tagged(v) && typeof v.$bytes === "string") return bytesOf(v.$bytes);
    return v;
  });
}

/** A value → tagged JSON text (bigint and Uint8Array/ArrayBuffer tagged); "null" for undefined. */
export function encodeTagged(value: unknown): string {
  const json = JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const original = this[key];
    if (typeof original === "bigint") return { $bigint: original.toString() };
    if (original instanceof Uint8Array) return { $bytes: hexOf(original) };
    if (original instanceof ArrayBuffer) return { $bytes: hexOf(new Uint8Array(original)) };
    return v;
  });
  return json === undefined ? "null" : json;
}

/** A value as ethers v5 writes a BigNumber's hex: lowercase, even length, "-0x.." when negative, "0x00" for zero. */
export function v5Hex(value: bigint): string {
  if (value < 0n) return `-${v5Hex(-value)}`;
  const hex = value.toString(16);
  return `0x${hex.length % 2 ? "0" : ""}${hex}`;
}

/** What the guest receives as a v5 BigNumber. */
export class V5BigNumber {
  constructor(readonly value: bigint) {}
  toJSON() {
    return { $bn: v5Hex(this.value) };
  }
}

/** What the guest receives as a v5 Result: `values`, with `names[i]` (when not null) naming values[i]. */
export class V5Result {
  constructor(
    readonly values: unknown[],
    readonly names: (string | null)[],
  ) {}
  toJSON() {
    return { $result: this.values, $names: this.names };
  }
}
