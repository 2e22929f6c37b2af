// Guest module: ethers v5's bytes helpers (@ethersproject/bytes), in QuickJS: what each accepts
// (numbers, BigNumbers and anything with toHexString, hex strings, arrays of bytes), the errors it
// throws and the shapes it answers (Uint8Array, lowercase hex; v5's signature object).
(function (lib) {
  "use strict";
  const { errors, throwError, throwArgumentError, checkSafeUint53, invoke } = lib.load("ethers5-logger");
  // A padding past 64 KB is asked of the sandbox process's bounds first: past the run's memory, the memory limit (marking the run).
  const reserve = (name, length) => length > 65536 && invoke(name, [null, Number(length)]);
  const { toHex, fromHex } = lib.load("bytes");
  const VERSION = "bytes/5.7.0";
  const HEX_DIGITS = "0123456789abcdef";
  const isInteger = (v) => typeof v === "number" && v === v && v % 1 === 0;
  const isHexable = (v) => !!v.toHexString;

  function isHexString(value, length) {
    if (typeof value !== "string" || !/^0x[0-9A-Fa-f]*$/.test(value)) return false;
    return !(length && value.length !== 2 + 2 * length);
  }
  function isBytes(value) {
    if (value == null) return false;
    if (value.constructor === Uint8Array) return true;
    if (typeof value === "string" || !isInteger(value.length) || value.length < 0) return false;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (!isInteger(v) || v < 0 || v >= 256) return false;
    }
    return true;
  }
  const isBytesLike = (value) => (isHexString(value) && !(value.length % 2)) || isBytes(value);

  function arrayify(value, options) {
    options = options || {};
    if (typeof value === "number") {
      checkSafeUint53(value, "invalid arrayify value", VERSION);
      const out = [];
      while (value) {
        out.unshift(value & 0xff);
        value = parseInt(String(value / 256));
      }
      return new Uint8Array(out.length ? out : [0]);
    }
    if (options.allowMissingPrefix && typeof value === "string" && value.substring(0, 2) !== "0x") value = "0x" + value;
    if (value != null && typeof value === "object" && isHexable(value)) value = value.toHexString();
    if (isHexString(value)) {
      let hex = value;
      if (hex.length % 2) {
        if (options.hexPad === "left") hex = "0x0" + hex.substring(2);
        else if (options.hexPad === "right") hex += "0";
        else throwArgumentError("hex data is odd-length", "value", value, VERSION);
      }
      return fromHex(hex);
    }
    if (isBytes(value)) return new Uint8Array(value);
    return throwArgumentError("invalid arrayify value", "value", value, VERSION);
  }

  function hexlify(value, options) {
    options = options || {};
    if (typeof value === "number") {
      checkSafeUint53(value, "invalid hexlify value", VERSION);
      let hex = "";
      while (value) {
        hex = HEX_DIGITS[value & 0xf] + hex;
        value = Math.floor(value / 16);
      }
      return hex.length ? "0x" + (hex.length % 2 ? "0" : "") + hex : "0x00";
    }
    if (typeof value === "bigint") {
      const hex = value.toString(16);
      return (hex.length % 2 ? "0x0" : "0x") + hex;
    }
    if (options.allowMissingPrefix && typeof value === "string" && value.substring(0, 2) !== "0x") value = "0x" + value;
    if (value != null && typeof value === "object" && isHexable(value)) return value.toHexString();
    if (isHexString(value)) {
      if (value.length % 2) {
        if (options.hexPad === "left") value = "0x0" + value.substring(2);
        else if (options.hexPad === "right") value += "0";
        else throwArgumentError("hex data is odd-length", "value", value, VERSION);
      }
      return value.toLowerCase();
    }
    if (isBytes(value)) return toHex(value instanceof Uint8Array ? value : Uint8Array.from(value));
    return throwArgumentError("invalid hexlify value", "value", value, VERSION);
  }

  function concat(items) {
    const parts = items.map((item) => arrayify(item));
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((offset, p) => (out.set(p, offset), offset + p.length), 0);
    return out;
  }
  function stripZeros(value) {
    const bytes = arrayify(value);
    let start = 0;
    while (start < bytes.length && bytes[start] === 0) start++;
    return start ? bytes.slice(start) : bytes;
  }
  function zeroPad(value, length) {
    reserve("zeroPad", length);
    const bytes = arrayify(value);
    if (bytes.length > length) throwArgumentError("value out of range", "value", value, VERSION);
    const out = new Uint8Array(length);
    out.set(bytes, length - bytes.length);
    return out;
  }
  function hexDataLength(data) {
    if (typeof data !== "string") data = hexlify(data);
    else if (!isHexString(data) || data.length % 2) return null;
    return (data.length - 2) / 2;
  }
  function hexDataSlice(data, offset, endOffset) {
    if (typeof data !== "string") data = hexlify(data);
    else if (!isHexString(data) || data.length % 2) throwArgumentError("invalid hexData", "value", data, VERSION);
    offset = 2 + 2 * offset;
    return "0x" + (endOffset != null ? data.substring(offset, 2 + 2 * endOffset) : data.substring(offset));
  }
  const hexConcat = (items) => "0x" + items.map((item) => hexlify(item).substring(2)).join("");
  function hexStripZeros(value) {
    if (typeof value !== "string") value = hexlify(value);
    if (!isHexString(value)) throwArgumentError("invalid hex string", "value", value, VERSION);
    let offset = 2;
    while (offset < value.length && value[offset] === "0") offset++;
    return "0x" + value.substring(offset);
  }
  function hexValue(value) {
    const trimmed = hexStripZeros(hexlify(value, { hexPad: "left" }));
    return trimmed === "0x" ? "0x0" : trimmed;
  }
  function hexZeroPad(value, length) {
    reserve("hexZeroPad", length);
    if (typeof value !== "string") value = hexlify(value);
    else if (!isHexString(value)) throwArgumentError("invalid hex string", "value", value, VERSION);
    if (value.length > 2 * length + 2) throwArgumentError("value out of range", "value", length, VERSION);
    if (value.length < 2 * length + 2) value = "0x" + "0".repeat(2 * length + 2 - value.length) + value.substring(2);
    return value;
  }

  // v5's splitSignature: {r, s, _vs, recoveryParam, v, yParityAndS, compact}, from 64 or 65 bytes or from parts that must agree.
  function splitSignature(signature) {
    const sig = { r: "0x", s: "0x", _vs: "0x", recoveryParam: 0, v: 0, yParityAndS: "0x", compact: "0x" };
    const bad = (reason) => throwArgumentError(reason, "signature", signature, VERSION);
    if (isBytesLike(signature)) {
      const b = arrayify(signature);
      if (b.length === 64) {
        sig.v = 27 + (b[32] >> 7);
        b[32] &= 0x7f;
      } else if (b.length === 65) sig.v = b[64];
      else bad("invalid signature string");
      sig.r = hexlify(b.slice(0, 32));
      sig.s = hexlify(b.slice(32, 64));
      if (sig.v < 27) {
        if (sig.v === 0 || sig.v === 1) sig.v += 27;
        else bad("signature invalid v byte");
      }
      sig.recoveryParam = 1 - (sig.v % 2);
      if (sig.recoveryParam) b[32] |= 0x80;
      sig._vs = hexlify(b.slice(32, 64));
    } else {
      if (signature == null || typeof signature !== "object") bad("invalid signature string");
      Object.assign(sig, { r: signature.r, s: signature.s, v: signature.v, recoveryParam: signature.recoveryParam, _vs: signature._vs });
      if (sig._vs != null) {
        const vs = zeroPad(arrayify(sig._vs), 32);
        sig._vs = hexlify(vs);
        const recoveryParam = vs[0] >= 128 ? 1 : 0;
        if (sig.recoveryParam == null) sig.recoveryParam = recoveryParam;
        else if (sig.recoveryParam !== recoveryParam) bad("signature recoveryParam mismatch _vs");
        vs[0] &= 0x7f;
        const s = hexlify(vs);
        if (sig.s == null) sig.s = s;
        else if (sig.s !== s) bad("signature v mismatch _vs");
      }
      if (sig.recoveryParam == null) {
        if (sig.v == null) bad("signature missing v and recoveryParam");
        else sig.recoveryParam = sig.v === 0 || sig.v === 1 ? sig.v : 1 - (sig.v % 2);
      } else if (sig.v == null) sig.v = 27 + sig.recoveryParam;
      else if (sig.recoveryParam !== (sig.v === 0 || sig.v === 1 ? sig.v : 1 - (sig.v % 2))) bad("signature recoveryParam mismatch v");
      if (sig.r == null || !isHexString(sig.r)) bad("signature missing or invalid r");
      sig.r = hexZeroPad(sig.r, 32);
      if (sig.s == null || !isHexString(sig.s)) bad("signature missing or invalid s");
      sig.s = hexZeroPad(sig.s, 32);
      const vs = arrayify(sig.s);
      if (vs[0] >= 128) bad("signature s out of range");
      if (sig.recoveryParam) vs[0] |= 0x80;
      const _vs = hexlify(vs);
      if (sig._vs) {
        if (!isHexString(sig._vs)) bad("signature invalid _vs");
        sig._vs = hexZeroPad(sig._vs, 32);
      }
      if (sig._vs == null) sig._vs = _vs;
      else if (sig._vs !== _vs) bad("signature _vs mismatch v and s");
    }
    sig.yParityAndS = sig._vs;
    sig.compact = sig.r + sig.yParityAndS.substring(2);
    return sig;
  }
  function joinSignature(signature) {
    const sig = splitSignature(signature);
    return hexlify(concat([sig.r, sig.s, sig.recoveryParam ? "0x1c" : "0x1b"]));
  }

  // v5's base58 (@ethersproject/basex, Bitcoin's alphabet): the base-x algorithm, in QuickJS (quadratic
  // in the length, so bounded by the run's deadline and memory like any code of the action).
  const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
  const B58_VALUE = {};
  for (let i = 0; i < B58.length; i++) B58_VALUE[B58[i]] = i;
  const base58 = Object.freeze({
    encode(value) {
      const source = arrayify(value);
      if (source.length === 0) return "";
      const digits = [0];
      for (let i = 0; i < source.length; ++i) {
        let carry = source[i];
        for (let j = 0; j < digits.length; ++j) {
          carry += digits[j] << 8;
          digits[j] = carry % 58;
          carry = (carry / 58) | 0;
        }
        while (carry > 0) {
          digits.push(carry % 58);
          carry = (carry / 58) | 0;
        }
      }
      let out = "";
      for (let k = 0; source[k] === 0 && k < source.length - 1; ++k) out += B58[0];
      for (let q = digits.length - 1; q >= 0; --q) out += B58[digits[q]];
      return out;
    },
    decode(value) {
      if (typeof value !== "string") throw new TypeError("Expected String");
      const out = [];
      if (value.length === 0) return new Uint8Array(out);
      out.push(0);
      for (let i = 0; i < value.length; i++) {
        const digit = B58_VALUE[value[i]];
        if (digit === undefined) throw new Error("Non-base58 character");
        let carry = digit;
        for (let j = 0; j < out.length; ++j) {
          carry += out[j] * 58;
          out[j] = carry & 0xff;
          carry >>= 8;
        }
        while (carry > 0) {
          out.push(carry & 0xff);
          carry >>= 8;
        }
      }
      for (let k = 0; value[k] === B58[0] && k < value.length - 1; ++k) out.push(0);
      return new Uint8Array(out.reverse());
    },
  });

  return { isHexString, isBytes, isBytesLike, arrayify, hexlify, concat, stripZeros, zeroPad, hexDataLength, hexDataSlice, hexConcat, hexStripZeros, hexValue, hexZeroPad, splitSignature, joinSignature, base58 };
})
