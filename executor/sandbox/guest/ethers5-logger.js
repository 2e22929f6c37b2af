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
  // v5's Logger (ethers.logger, ethers.utils.Logger): its errors as above; debug/info/warn write to console.
  const levels = Object.freeze({ DEBUG: "DEBUG", INFO: "INFO", WARNING: "WARNING", ERROR: "ERROR", OFF: "OFF" });
  const LEVEL_RANK = { DEBUG: 1, INFO: 2, WARNING: 3, ERROR: 4, OFF: 5 };
  let logLevel = LEVEL_RANK.INFO;
  let globalLogger = null;
  class Logger {
    constructor(version) {
      Object.defineProperty(this, "version", { enumerable: true, value: version, writable: false });
    }
    _log(level, args) {
      if (logLevel <= LEVEL_RANK[level]) globalThis.console.log(...args);
    }
    debug(...args) {
      this._log(levels.DEBUG, args);
    }
    info(...args) {
      this._log(levels.INFO, args);
    }
    warn(...args) {
      this._log(levels.WARNING, args);
    }
    makeError(message, code, params) {
      return makeError(message, code, params, this.version);
    }
    throwError(message, code, params) {
      throw this.makeError(message, code, params);
    }
    throwArgumentError(message, name, value) {
      return this.throwError(message, errors.INVALID_ARGUMENT, { argument: name, value });
    }
    assert(condition, message, code, params) {
      if (!condition) this.throwError(message, code, params);
    }
    assertArgument(condition, message, name, value) {
      if (!condition) this.throwArgumentError(message, name, value);
    }
    checkNormalize(message) {
      if (typeof "".normalize !== "function") this.throwError(message || "platform missing String.prototype.normalize", errors.UNSUPPORTED_OPERATION, { operation: "String.prototype.normalize" });
    }
    checkSafeUint53(value, message) {
      checkSafeUint53(value, message, this.version);
    }
    checkArgumentCount(count, expectedCount, message) {
      message = message ? ": " + message : "";
      if (count < expectedCount) this.throwError("missing argument" + message, errors.MISSING_ARGUMENT, { count, expectedCount });
      if (count > expectedCount) this.throwError("too many arguments" + message, errors.UNEXPECTED_ARGUMENT, { count, expectedCount });
    }
    checkNew(target, kind) {
      if (target === Object || target == null) this.throwError("missing new", errors.MISSING_NEW, { name: kind.name });
    }
    checkAbstract(target, kind) {
      if (target === kind) this.throwError("cannot instantiate abstract class " + JSON.stringify(kind.name) + " directly; use a sub-class", errors.UNSUPPORTED_OPERATION, { name: target.name, operation: "new" });
      else if (target === Object || target == null) this.throwError("missing new", errors.MISSING_NEW, { name: kind.name });
    }
    static globalLogger() {
      return globalLogger || (globalLogger = new Logger("logger/5.7.0"));
    }
    static setCensorship() {
      // v5 can hide the arguments of its errors; here errors carry them always
    }
    static setLogLevel(level) {
      if (LEVEL_RANK[String(level).toUpperCase()] == null) return Logger.globalLogger().warn("invalid log level - " + level);
      logLevel = LEVEL_RANK[String(level).toUpperCase()];
    }
    static from(version) {
      return new Logger(version);
    }
  }
  Logger.errors = errors;
  Logger.levels = levels;

  // A v5 name the sandbox does not have: a function (or class) that throws v5's UNSUPPORTED_OPERATION naming what to use instead.
  function unsupported(name, instead, version) {
    const fail = () => throwError(`${name} is not supported in the sandbox: ${instead}`, errors.UNSUPPORTED_OPERATION, { operation: name }, version || "ethers/5.7.2");
    return Object.defineProperty(
      function () {
        return fail();
      },
      "name",
      { value: name.split(".").pop() },
    );
  }

  return { errors, makeError, throwError, throwArgumentError, checkSafeUint53, invoke, Logger, unsupported };
})
