// Guest module: ethers v5's BigNumber, in QuickJS over native bigint (no call leaves the context).
// As v5's: immutable, {_hex, _isBigNumber} (the hex as v5 normalises it, the case of a hex string
// kept), the same faults (overflow, underflow, division-by-zero, negative-power, negative-width,
// unbound-bitwise-result), toJSON {type: "BigNumber", hex}. The size of a value is QuickJS's bigint
// limit (a RangeError past it).
(function (lib) {
  "use strict";
  const { errors, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const VERSION = "bignumber/5.7.0";
  const GUARD = {};
  const MAX_SAFE = 0x1fffffffffffff;
  const HEX = /^0x[0-9A-Fa-f]*$/;

  const fault = (name, operation, value) => throwError(name, errors.NUMERIC_FAULT, value === undefined ? { fault: name, operation } : { fault: name, operation, value }, VERSION);
  // v5's toHex of a hex string: a "0x" prefix, even length, no leading "00" byte, "0x00" for zero, "-" kept (not for zero).
  function normalize(value) {
    if (value[0] === "-") {
      value = value.substring(1);
      if (value[0] === "-") throwArgumentError("invalid hex", "value", value, VERSION);
      value = normalize(value);
      return value === "0x00" ? value : "-" + value;
    }
    if (value.substring(0, 2) !== "0x") value = "0x" + value;
    if (value === "0x") return "0x00";
    if (value.length % 2) value = "0x0" + value.substring(2);
    let start = 2; // leading "00" bytes, found in one pass (a loop of substrings would be quadratic)
    while (start + 2 < value.length && value[start] === "0" && value[start + 1] === "0") start += 2;
    return start > 2 ? "0x" + value.substring(start) : value;
  }
  // A bigint's hex as normalize() writes it (toString(16) has no leading zeros and is lower case).
  function hexOf(value) {
    const digits = (value < 0n ? -value : value).toString(16);
    return (value < 0n ? "-0x" : "0x") + (digits.length % 2 ? "0" : "") + digits;
  }
  // Each BigNumber's value, so arithmetic never parses its hex again.
  const VALUES = new WeakMap();
  function make(value) {
    const bn = new BigNumber(GUARD, hexOf(value));
    VALUES.set(bn, value);
    return bn;
  }
  function big(bn) {
    let v = VALUES.get(bn);
    if (v === undefined) {
      v = bn._hex[0] === "-" ? -BigInt(bn._hex.substring(1)) : BigInt(bn._hex);
      VALUES.set(bn, v);
    }
    return v;
  }
  const value = (other) => (other instanceof BigNumber ? big(other) : typeof other === "number" && Number.isSafeInteger(other) && other < MAX_SAFE && other > -MAX_SAFE ? BigInt(other) : big(BigNumber.from(other)));
  const isBytes = (v) => lib.load("ethers5-bytes").isBytes(v);

  class BigNumber {
    constructor(guard, hex) {
      if (guard !== GUARD) throwError("cannot call constructor directly; use BigNumber.from", errors.UNSUPPORTED_OPERATION, { operation: "new (BigNumber)" }, VERSION);
      this._hex = hex;
      this._isBigNumber = true;
      Object.freeze(this);
    }
    fromTwos(width) {
      const v = big(this);
      const w = BigInt(width);
      return make((v >> (w - 1n)) & 1n ? v - (1n << w) : v);
    }
    toTwos(width) {
      const v = big(this);
      return make(v < 0n ? (1n << BigInt(width)) + v : v);
    }
    abs() {
      return this._hex[0] === "-" ? BigNumber.from(this._hex.substring(1)) : this;
    }
    add(other) {
      return make(big(this) + value(other));
    }
    sub(other) {
      return make(big(this) - value(other));
    }
    mul(other) {
      return make(big(this) * value(other));
    }
    div(other) {
      const o = value(other);
      if (o === 0n) fault("division-by-zero", "div");
      return make(big(this) / o);
    }
    mod(other) {
      const o = value(other);
      if (o <= 0n) fault("division-by-zero", "mod");
      return make(((big(this) % o) + o) % o);
    }
    pow(other) {
      const o = value(other);
      if (o < 0n) fault("negative-power", "pow");
      return make(big(this) ** o);
    }
    and(other) {
      return make(bitwise(this, other, "and", (a, b) => a & b));
    }
    or(other) {
      return make(bitwise(this, other, "or", (a, b) => a | b));
    }
    xor(other) {
      return make(bitwise(this, other, "xor", (a, b) => a ^ b));
    }
    mask(bits) {
      if (this.isNegative() || bits < 0) fault("negative-width", "mask");
      return make(big(this) & ((1n << BigInt(bits)) - 1n));
    }
    shl(bits) {
      if (this.isNegative() || bits < 0) fault("negative-width", "shl");
      return make(big(this) << BigInt(bits));
    }
    shr(bits) {
      if (this.isNegative() || bits < 0) fault("negative-width", "shr");
      return make(big(this) >> BigInt(bits));
    }
    eq(other) {
      return big(this) === value(other);
    }
    lt(other) {
      return big(this) < value(other);
    }
    lte(other) {
      return big(this) <= value(other);
    }
    gt(other) {
      return big(this) > value(other);
    }
    gte(other) {
      return big(this) >= value(other);
    }
    isNegative() {
      return this._hex[0] === "-";
    }
    isZero() {
      return big(this) === 0n;
    }
    toNumber() {
      const v = big(this);
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) fault("overflow", "toNumber", this.toString());
      return Number(v);
    }
    toBigInt() {
      return big(this);
    }
    toString() {
      if (arguments.length > 0 && arguments[0] !== 10) {
        const hint = arguments[0] === 16 ? "BigNumber.toString does not accept any parameters; use bigNumber.toHexString()" : "BigNumber.toString does not accept parameters";
        throwError(hint, errors.UNEXPECTED_ARGUMENT, {}, VERSION);
      }
      return big(this).toString(10);
    }
    toHexString() {
      return this._hex;
    }
    toJSON() {
      return { type: "BigNumber", hex: this._hex };
    }
    static from(value) {
      if (value instanceof BigNumber) return value;
      if (typeof value === "string") {
        if (/^-?0x[0-9a-f]+$/i.test(value)) return new BigNumber(GUARD, normalize(value));
        if (/^-?[0-9]+$/.test(value)) return make(BigInt(value));
        return throwArgumentError("invalid BigNumber string", "value", value, VERSION);
      }
      if (typeof value === "number") {
        if (value % 1) fault("underflow", "BigNumber.from", value);
        if (value >= MAX_SAFE || value <= -MAX_SAFE) fault("overflow", "BigNumber.from", value);
        return make(BigInt(value));
      }
      if (typeof value === "bigint") return make(value);
      if (isBytes(value)) return BigNumber.from(lib.load("ethers5-bytes").hexlify(value));
      if (value) {
        if (value.toHexString) {
          const hex = value.toHexString();
          if (typeof hex === "string") return BigNumber.from(hex);
        } else {
          let hex = value._hex;
          if (hex == null && value.type === "BigNumber") hex = value.hex;
          if (typeof hex === "string" && (HEX.test(hex) || (hex[0] === "-" && HEX.test(hex.substring(1))))) return BigNumber.from(hex);
        }
      }
      return throwArgumentError("invalid BigNumber value", "value", value, VERSION);
    }
    static isBigNumber(value) {
      return !!(value && value._isBigNumber);
    }
  }
  function bitwise(a, other, operation, op) {
    const b = value(other);
    if (a.isNegative() || b < 0n) fault("unbound-bitwise-result", operation);
    return op(big(a), b);
  }
  const isBigNumberish = (v) =>
    v != null && (BigNumber.isBigNumber(v) || (typeof v === "number" && v % 1 === 0) || (typeof v === "string" && /^-?[0-9]+$/.test(v)) || (typeof v === "string" && HEX.test(v)) || typeof v === "bigint" || isBytes(v));
  // The $bn / $result tags of the process's answers (../process/tagged-json.ts).
  function revive(v) {
    if (typeof v.$bn === "string") return new BigNumber(GUARD, v.$bn);
    if (Array.isArray(v.$result) && Array.isArray(v.$names)) {
      const result = v.$result.slice();
      v.$names.forEach((name, i) => {
        if (typeof name === "string" && result[name] == null) result[name] = result[i];
      });
      return Object.freeze(result);
    }
    return v;
  }
  return { BigNumber, isBigNumberish, revive };
})
