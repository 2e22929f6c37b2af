// Guest module: ethers v5's units (@ethersproject/units, and bignumber's formatFixed/parseFixed), in
// QuickJS over BigNumber: formatUnits, parseUnits, formatEther, parseEther, commify.
(function (lib) {
  "use strict";
  const { BigNumber } = lib.load("ethers5-bignumber");
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

  return { formatFixed, parseFixed, formatUnits, parseUnits, formatEther: (wei) => formatUnits(wei, 18), parseEther: (ether) => parseUnits(ether, 18), commify };
})
