// Guest module: ethers v5's units (@ethersproject/units, and bignumber's formatFixed/parseFixed,
// FixedFormat and FixedNumber), in QuickJS over BigNumber: formatUnits, parseUnits, formatEther,
// parseEther, commify; FixedNumber's decimal arithmetic as v5's (its "Unsafe" operations: no overflow
// check against the format's width, as v5).
(function (lib) {
  "use strict";
  const { BigNumber, isBigNumberish } = lib.load("ethers5-bignumber");
  const { errors, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const UNIT_NAMES = ["wei", "kwei", "mwei", "gwei", "szabo", "finney", "ether"];
  function multiplier(decimals) {
    if (typeof decimals !== "number") {
      try {
        decimals = BigNumber.from(decimals).toNumber();
      } catch {
        // refused below
      }
    }
    if (typeof decimals === "number" && decimals >= 0 && decimals <= 256 && !(decimals % 1)) return "1" + "0".repeat(decimals);
    return throwArgumentError("invalid decimal size", "decimals", decimals, "bignumber/5.7.0");
  }
  function formatFixed(value, decimals) {
    const m = multiplier(decimals == null ? 0 : decimals);
    let v = BigNumber.from(value);
    const negative = v.isNegative();
    if (negative) v = v.mul(-1);
    let fraction = v.mod(m).toString();
    while (fraction.length < m.length - 1) fraction = "0" + fraction;
    fraction = fraction.match(/^([0-9]*[1-9]|0)(0*)/)[1];
    const whole = v.div(m).toString();
    return (negative ? "-" : "") + (m.length === 1 ? whole : whole + "." + fraction);
  }
  function parseFixed(value, decimals) {
    const m = multiplier(decimals == null ? 0 : decimals);
    if (typeof value !== "string" || !/^-?[0-9.]+$/.test(value)) throwArgumentError("invalid decimal value", "value", value, "bignumber/5.7.0");
    const negative = value.substring(0, 1) === "-";
    if (negative) value = value.substring(1);
    if (value === ".") throwArgumentError("missing value", "value", value, "bignumber/5.7.0");
    const parts = value.split(".");
    if (parts.length > 2) throwArgumentError("too many decimal points", "value", value, "bignumber/5.7.0");
    const whole = parts[0] || "0";
    let fraction = parts[1] || "0";
    let end = fraction.length; // trailing zeros, in one pass (/0+$/ backtracks quadratically on "000…1")
    while (end > 0 && fraction[end - 1] === "0") end--;
    fraction = fraction.substring(0, end);
    if (fraction.length > m.length - 1) throwError("fractional component exceeds decimals", errors.NUMERIC_FAULT, { fault: "underflow", operation: "parseFixed" }, "bignumber/5.7.0");
    fraction = (fraction || "0").padEnd(m.length - 1, "0");
    const wei = BigNumber.from(whole).mul(m).add(BigNumber.from(m.length === 1 ? "0" : fraction));
    return negative ? wei.mul(-1) : wei;
  }
  const unit = (name) => (typeof name === "string" && UNIT_NAMES.indexOf(name) !== -1 ? 3 * UNIT_NAMES.indexOf(name) : name);
  const formatUnits = (value, unitName) => formatFixed(value, unitName != null ? unit(unitName) : 18);
  function parseUnits(value, unitName) {
    if (typeof value !== "string") throwArgumentError("value must be a string", "value", value, "units/5.7.0");
    return parseFixed(value, unitName != null ? unit(unitName) : 18);
  }
  function commify(value) {
    const parts = String(value).split(".");
    if (parts.length > 2 || !/^-?[0-9]*$/.test(parts[0]) || (parts[1] && !/^[0-9]*$/.test(parts[1])) || value === "." || value === "-.") throwArgumentError("invalid value", "value", value, "units/5.7.0");
    let whole = parts[0];
    const negative = whole.substring(0, 1) === "-" ? "-" : "";
    if (negative) whole = whole.substring(1);
    whole = whole.replace(/^0+/, "") || "0";
    let suffix = parts.length === 2 ? "." + (parts[1] || "0") : "";
    while (suffix.length > 2 && suffix[suffix.length - 1] === "0") suffix = suffix.substring(0, suffix.length - 1);
    const groups = [];
    while (whole.length > 3) {
      groups.unshift(whole.substring(whole.length - 3));
      whole = whole.substring(0, whole.length - 3);
    }
    groups.unshift(whole);
    return negative + groups.join(",") + suffix;
  }

  // ---- FixedFormat, FixedNumber (@ethersproject/bignumber/fixednumber) ----
  const FIXED = "bignumber/5.7.0";
  const GUARD = {};
  const bytes = () => lib.load("ethers5-bytes");
  const fault = (message, name, operation, value) => throwError(message, errors.NUMERIC_FAULT, value === undefined ? { fault: name, operation } : { fault: name, operation, value }, FIXED);
  class FixedFormat {
    constructor(guard, signed, width, decimals) {
      if (guard !== GUARD) throwError("cannot use FixedFormat constructor; use FixedFormat.from", errors.UNSUPPORTED_OPERATION, { operation: "new FixedFormat" }, FIXED);
      this.signed = signed;
      this.width = width;
      this.decimals = decimals;
      this.name = (signed ? "" : "u") + "fixed" + String(width) + "x" + String(decimals);
      this._multiplier = multiplier(decimals);
      Object.freeze(this);
    }
    static from(value) {
      if (value instanceof FixedFormat) return value;
      if (typeof value === "number") value = "fixed128x" + value;
      let signed = true;
      let width = 128;
      let decimals = 18;
      if (typeof value === "string") {
        if (value === "ufixed") signed = false;
        else if (value !== "fixed") {
          const match = value.match(/^(u?)fixed([0-9]+)x([0-9]+)$/);
          if (!match) throwArgumentError("invalid fixed format", "format", value, FIXED);
          signed = match[1] !== "u";
          width = parseInt(match[2]);
          decimals = parseInt(match[3]);
        }
      } else if (value) {
        const check = (key, type, fallback) => {
          if (value[key] == null) return fallback;
          if (typeof value[key] !== type) throwArgumentError("invalid fixed format (" + key + " not " + type + ")", "format." + key, value[key], FIXED);
          return value[key];
        };
        signed = check("signed", "boolean", signed);
        width = check("width", "number", width);
        decimals = check("decimals", "number", decimals);
      }
      if (width % 8) throwArgumentError("invalid fixed format width (not byte aligned)", "format.width", width, FIXED);
      if (decimals > 80) throwArgumentError("invalid fixed format (decimals too large)", "format.decimals", decimals, FIXED);
      return new FixedFormat(GUARD, signed, width, decimals);
    }
  }
  class FixedNumber {
    constructor(guard, hex, value, format) {
      if (guard !== GUARD) throwError("cannot use FixedNumber constructor; use FixedNumber.from", errors.UNSUPPORTED_OPERATION, { operation: "new FixedFormat" }, FIXED);
      this.format = format;
      this._hex = hex;
      this._value = value;
      this._isFixedNumber = true;
      Object.freeze(this);
    }
    _checkFormat(other) {
      if (this.format.name !== other.format.name) throwArgumentError("incompatible format; use fixedNumber.toFormat", "other", other, FIXED);
    }
    _operands(other) {
      this._checkFormat(other);
      return [parseFixed(this._value, this.format.decimals), parseFixed(other._value, other.format.decimals)];
    }
    addUnsafe(other) {
      const [a, b] = this._operands(other);
      return FixedNumber.fromValue(a.add(b), this.format.decimals, this.format);
    }
    subUnsafe(other) {
      const [a, b] = this._operands(other);
      return FixedNumber.fromValue(a.sub(b), this.format.decimals, this.format);
    }
    mulUnsafe(other) {
      const [a, b] = this._operands(other);
      return FixedNumber.fromValue(a.mul(b).div(this.format._multiplier), this.format.decimals, this.format);
    }
    divUnsafe(other) {
      const [a, b] = this._operands(other);
      return FixedNumber.fromValue(a.mul(this.format._multiplier).div(b), this.format.decimals, this.format);
    }
    floor() {
      const comps = this.toString().split(".");
      if (comps.length === 1) comps.push("0");
      let result = FixedNumber.from(comps[0], this.format);
      if (this.isNegative() && !/^(0*)$/.test(comps[1])) result = result.subUnsafe(ONE().toFormat(result.format));
      return result;
    }
    ceiling() {
      const comps = this.toString().split(".");
      if (comps.length === 1) comps.push("0");
      let result = FixedNumber.from(comps[0], this.format);
      if (!this.isNegative() && !/^(0*)$/.test(comps[1])) result = result.addUnsafe(ONE().toFormat(result.format));
      return result;
    }
    round(decimals) {
      if (decimals == null) decimals = 0;
      const comps = this.toString().split(".");
      if (comps.length === 1) comps.push("0");
      if (decimals < 0 || decimals > 80 || decimals % 1) throwArgumentError("invalid decimal count", "decimals", decimals, FIXED);
      if (comps[1].length <= decimals) return this;
      const factor = FixedNumber.from("1" + "0".repeat(decimals), this.format);
      return this.mulUnsafe(factor).addUnsafe(BUMP().toFormat(this.format)).floor().divUnsafe(factor);
    }
    isZero() {
      return this._value === "0.0" || this._value === "0";
    }
    isNegative() {
      return this._value[0] === "-";
    }
    toString() {
      return this._value;
    }
    toHexString(width) {
      if (width == null) return this._hex;
      if (width % 8) throwArgumentError("invalid byte width", "width", width, FIXED);
      return bytes().hexZeroPad(BigNumber.from(this._hex).fromTwos(this.format.width).toTwos(width).toHexString(), width / 8);
    }
    toUnsafeFloat() {
      return parseFloat(this.toString());
    }
    toFormat(format) {
      return FixedNumber.fromString(this._value, format);
    }
    static fromValue(value, decimals, format) {
      if (format == null && decimals != null && !isBigNumberish(decimals)) (format = decimals), (decimals = null);
      return FixedNumber.fromString(formatFixed(value, decimals == null ? 0 : decimals), FixedFormat.from(format == null ? "fixed" : format));
    }
    static fromString(value, format) {
      const fixedFormat = FixedFormat.from(format == null ? "fixed" : format);
      const numeric = parseFixed(value, fixedFormat.decimals);
      if (!fixedFormat.signed && numeric.lt(0)) fault("unsigned value cannot be negative", "overflow", "value", value);
      const hex = fixedFormat.signed ? numeric.toTwos(fixedFormat.width).toHexString() : bytes().hexZeroPad(numeric.toHexString(), fixedFormat.width / 8);
      return new FixedNumber(GUARD, hex, formatFixed(numeric, fixedFormat.decimals), fixedFormat);
    }
    static fromBytes(value, format) {
      const fixedFormat = FixedFormat.from(format == null ? "fixed" : format);
      if (bytes().arrayify(value).length > fixedFormat.width / 8) throw new Error("overflow");
      let numeric = BigNumber.from(value);
      if (fixedFormat.signed) numeric = numeric.fromTwos(fixedFormat.width);
      const hex = numeric.toTwos((fixedFormat.signed ? 0 : 1) + fixedFormat.width).toHexString();
      return new FixedNumber(GUARD, hex, formatFixed(numeric, fixedFormat.decimals), fixedFormat);
    }
    static from(value, format) {
      if (typeof value === "string") return FixedNumber.fromString(value, format);
      if (bytes().isBytes(value)) return FixedNumber.fromBytes(value, format);
      try {
        return FixedNumber.fromValue(value, 0, format);
      } catch (error) {
        if (error.code !== errors.INVALID_ARGUMENT) throw error; // a NUMERIC_FAULT bubbles up
      }
      return throwArgumentError("invalid FixedNumber value", "value", value, FIXED);
    }
    static isFixedNumber(value) {
      return !!(value && value._isFixedNumber);
    }
  }
  let one, bump;
  const ONE = () => one || (one = FixedNumber.from(1));
  const BUMP = () => bump || (bump = FixedNumber.from("0.5"));

  return { formatFixed, parseFixed, formatUnits, parseUnits, formatEther: (wei) => formatUnits(wei, 18), parseEther: (ether) => parseUnits(ether, 18), commify, FixedFormat, FixedNumber };
})
