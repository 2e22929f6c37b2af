// Guest module: bytes across the boundary with the sandbox process: 0x-hex text, base64 (fetch
// bodies that are not UTF-8), and tagged JSON ({$bigint: "123"}, {$bytes: "0x.."};
// ../process/tagged-json.ts is the other side). A v5 BigNumber (guest/ethers5-bignumber.js) crosses
// as the bigint it holds.
(function (lib) {
  "use strict";
  const HEX = "0123456789abcdef";
  const PAIRS = Array.from({ length: 256 }, (_, b) => HEX[b >> 4] + HEX[b & 15]);
  // In chunks, so a large array costs its text and little more (no array of a string per byte).
  function toHex(u8) {
    const chunks = [];
    for (let i = 0; i < u8.length; i += 8192) {
      let s = "";
      for (let j = i, end = Math.min(u8.length, i + 8192); j < end; j++) s += PAIRS[u8[j]];
      chunks.push(s);
    }
    return "0x" + chunks.join("");
  }
  function fromHex(h) {
    const out = new Uint8Array((h.length - 2) / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(2 + 2 * i, 2), 16);
    return out;
  }
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const B64_VALUE = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) B64_VALUE[B64.charCodeAt(i)] = i;
  // Base64 of bytes, in chunks (as toHex).
  function toBase64(u8) {
    const chunks = [];
    for (let i = 0; i < u8.length; i += 8190) {
      let s = "";
      for (let j = i, end = Math.min(u8.length, i + 8190); j < end; j += 3) {
        const n = (u8[j] << 16) | ((j + 1 < end ? u8[j + 1] : 0) << 8) | (j + 2 < end ? u8[j + 2] : 0);
        s += B64[n >> 18] + B64[(n >> 12) & 63] + (j + 1 < end ? B64[(n >> 6) & 63] : "=") + (j + 2 < end ? B64[n & 63] : "=");
      }
      chunks.push(s);
    }
    return chunks.join("");
  }
  // The bytes of base64 text the host sent (well-formed: padded to a multiple of 4).
  function fromBase64(s) {
    const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
    const out = new Uint8Array((s.length / 4) * 3 - pad);
    for (let i = 0, o = 0; i < s.length; i += 4) {
      const n = (B64_VALUE[s.charCodeAt(i)] << 18) | (B64_VALUE[s.charCodeAt(i + 1)] << 12) | ((B64_VALUE[s.charCodeAt(i + 2)] & 63) << 6) | (B64_VALUE[s.charCodeAt(i + 3)] & 63);
      out[o++] = n >> 16;
      if (o < out.length) out[o++] = (n >> 8) & 255;
      if (o < out.length) out[o++] = n & 255;
    }
    return out;
  }
  // A BufferSource (ArrayBuffer, typed array, DataView) as a Uint8Array over the same bytes.
  function view(v, what) {
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    throw new TypeError(`${what} must be an ArrayBuffer or an ArrayBufferView`);
  }
  const bigNumberHex = (v) => v !== null && typeof v === "object" && v._isBigNumber === true && typeof v._hex === "string" && /^-?0x[0-9a-fA-F]+$/.test(v._hex);
  const encode = (args) =>
    lib.stringify(args, function (k, v) {
      const original = this[k]; // before its toJSON (a BigNumber's is {type, hex})
      if (bigNumberHex(original)) return { $bigint: (original._hex[0] === "-" ? -BigInt(original._hex.slice(1)) : BigInt(original._hex)).toString() };
      if (typeof v === "bigint") return { $bigint: v.toString() };
      if (v instanceof Uint8Array) return { $bytes: toHex(v) };
      if (v instanceof ArrayBuffer) return { $bytes: toHex(new Uint8Array(v)) };
      return v;
    });
  const tagged = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  // `more` (optional) revives further tags (the v5 surface's {$bn}, {$result}).
  const decode = (json, more) =>
    lib.parse(json, (k, v) => {
      if (tagged(v) && typeof v.$bigint === "string") return BigInt(v.$bigint);
      if (tagged(v) && typeof v.$bytes === "string") return fromHex(v.$bytes);
      return more && tagged(v) ? more(v) : v;
    });
  return { toHex, fromHex, toBase64, fromBase64, view, encode, decode };
})
