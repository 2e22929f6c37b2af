// Guest module: what the ethers v5 surface (ethers5-*.js) shares: v5's errors (the message with its
// details, `code`, `reason` and the details as properties, as v5's Logger makes them), and the call
// into the sandbox process's ethers helpers (../process/ethers-calls.ts), whose answers may hold v5
// BigNumbers ({$bn}) and Results ({$result}).
(function (lib) {
  "use strict";
  const bytes = lib.load("bytes");
  const raw = lib.host.ethers;
  const errors = {};
  for (const code of [
    "UNKNOWN_ERROR", "NOT_IMPLEMENTED", "UNSUPPORTED_OPERATION", "NETWORK_ERROR", "SERVER_ERROR", "TIMEOUT", "BUFFER_OVERRUN", "NUMERIC_FAULT",
    "MISSING_NEW", "INVALID_ARGUMENT", "MISSING_ARGUMENT", "UNEXPECTED_ARGUMENT", "CALL_EXCEPTION", "INSUFFICIENT_FUNDS", "NONCE_EXPIRED",
    "REPLACEMENT_UNDERPRICED", "UNPREDICTABLE_GAS_LIMIT", "TRANSACTION_REPLACED", "ACTION_REJECTED",
  ]) errors[code] = code;
  Object.freeze(errors);
  const LINKED = new Set(["CALL_EXCEPTION", "INSUFFICIENT_FUNDS", "MISSING_NEW", "NONCE_EXPIRED", "REPLACEMENT_UNDERPRICED", "TRANSACTION_REPLACED", "UNPREDICTABLE_GAS_LIMIT"]);
  const FAULT_LINKS = { overflow: "-overflow", underflow: "-underflow", "division-by-zero": "-division-by-zero", "negative-power": "-unsupported", "negative-width": "-unsupported", "unbound-bitwise-result": "-unbound-result" };

  function detail(key, value) {
    try {
      if (value instanceof Uint8Array) return `${key}=Uint8Array(${bytes.toHex(value)})`;
      return `${key}=${JSON.stringify(value)}`;
    } catch {
      return `${key}=${JSON.stringify(String(value))}`;
    }
  }
  // v5's Logger.makeError: "reason [ See: link ] (key=value, ..., code=CODE, version=pkg/5.7.0)".
  function makeError(reason, code, params, version) {
    code = code || errors.UNKNOWN_ERROR;
    params = params || {};
    const details = Object.keys(params).map((k) => detail(k, params[k]));
    details.push(`code=${code}`, `version=${version || "ethers/5.7.2"}`);
    let link = "";
    if (code === errors.NUMERIC_FAULT) link = "NUMERIC_FAULT" + (FAULT_LINKS[reason] || "");
    else if (LINKED.has(code)) link = code;
    const error = new Error(`${reason}${link ? ` [ See: https:/\/links.ethers.org/v5-errors-${link} ]` : ""} (${details.join(", ")})`);
    error.reason = reason;
    error.code = code;
    for (const k of Object.keys(params)) error[k] = params[k];
    return error;
  }
  const throwError = (reason, code, params, version) => {
    throw makeError(reason, code, params, version);
  };
  const throwArgumentError = (reason, name, value, version) => throwError(reason, errors.INVALID_ARGUMENT, { argument: name, value }, version);
  function checkSafeUint53(value, message, version) {
    if (typeof value !== "number") return;
    if (value < 0 || value >= 0x1fffffffffffff) throwError(message, errors.NUMERIC_FAULT, { operation: "checkSafeInteger", fault: "out-of-safe-range", value }, version);
    if (value % 1) throwError(message, errors.NUMERIC_FAULT, { operation: "checkSafeInteger", fault: "non-integer", value }, version);
  }

  // One call of the process's ethers helpers; ethers' error code (the message's "(code=...)") becomes the error's `code`.
  function invoke(name, args, revive) {
    let json;
    try {
      json = raw(name, bytes.encode(args));
    } catch (e) {
      const code = e instanceof Error && / \(code=([A-Z_]+)\)$/.exec(e.message);
      if (code) e.code = code[1];
      throw e;
    }
    return bytes.decode(json, revive);
  }
  return { errors, makeError, throwError, throwArgumentError, checkSafeUint53, invoke };
})
