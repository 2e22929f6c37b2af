// Guest module: `ethers.utils` as ethers v5 has it. The bytes helpers, units and properties run in
// QuickJS (ethers5-bytes.js, here); hashing, addresses, signatures, strings, RLP and base64 are
// computed by ethers v6 in the sandbox process (../process/ethers-calls.ts), with v5's inputs
// normalised here first (numbers, BigNumbers, arrays of bytes; v5's signature objects). The ABI
// (Interface, AbiCoder, fragments) and transactions (serialize/parse) load on first use.
(function (lib) {
  "use strict";
  const logger = lib.load("ethers5-logger");
  const bytes = lib.load("ethers5-bytes");
  const { BigNumber, revive } = lib.load("ethers5-bignumber");
  const { errors, throwArgumentError } = logger;
  const call = (name, args) => logger.invoke(name, args, revive);
  // Bytes for the process: even-length hex as is (validated there), anything else as v5's arrayify reads it.
  const data = (v) => (typeof v === "string" && /^0x(?:[0-9a-fA-F]{2})*$/.test(v) ? v : bytes.arrayify(v));
  const signature = (sig) => bytes.joinSignature(sig);

  // ---- units (@ethersproject/units, bignumber's formatFixed/parseFixed) ----
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
    if (fraction.length > m.length - 1) logger.throwError("fractional component exceeds decimals", errors.NUMERIC_FAULT, { fault: "underflow", operation: "parseFixed" }, "bignumber/5.7.0");
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

  // ---- properties (@ethersproject/properties) ----
  const defineReadOnly = (object, name, value) => Object.defineProperty(object, name, { enumerable: true, value, writable: false });
  async function resolveProperties(object) {
    const keys = Object.keys(object);
    const values = await Promise.all(keys.map((k) => Promise.resolve(object[k])));
    return keys.reduce((out, k, i) => ((out[k] = values[i]), out), {});
  }
  function checkProperties(object, properties) {
    if (!object || typeof object !== "object") throwArgumentError("invalid object", "object", object, "properties/5.7.0");
    for (const key of Object.keys(object)) if (!properties[key]) throwArgumentError("invalid object key - " + key, "transaction:" + key, object, "properties/5.7.0");
  }
  const shallowCopy = (object) => Object.assign({}, object);
  // v5's deepCopy: what is frozen all the way down is kept, the rest copied (arrays frozen, named members of arrays lost).
  const OPAQUE = { bigint: true, boolean: true, function: true, number: true, string: true };
  function isFrozen(object) {
    if (object == null || OPAQUE[typeof object]) return true;
    if (typeof object !== "object") return throwArgumentError(`Cannot deepCopy ${typeof object}`, "object", object, "properties/5.7.0");
    if (!Object.isFrozen(object)) return false;
    for (const key of Object.keys(object)) {
      let value;
      try {
        value = object[key];
      } catch {
        continue;
      }
      if (!isFrozen(value)) return false;
    }
    return true;
  }
  function deepCopy(object) {
    if (isFrozen(object)) return object;
    if (Array.isArray(object)) return Object.freeze(object.map(deepCopy));
    const out = {};
    for (const key in object) if (object[key] !== undefined) defineReadOnly(out, key, deepCopy(object[key]));
    return out;
  }
  function getStatic(ctor, key) {
    for (let i = 0; i < 32; i++) {
      if (ctor[key]) return ctor[key];
      if (!ctor.prototype || typeof ctor.prototype !== "object") break;
      ctor = Object.getPrototypeOf(ctor.prototype).constructor;
    }
    return null;
  }

  // ---- keys ----
  class SigningKey {
    constructor(privateKey) {
      const info = call("walletInfo", [typeof privateKey === "string" ? privateKey : bytes.hexlify(privateKey)]);
      defineReadOnly(this, "curve", "secp256k1");
      // Not enumerable (v5's is): JSON.stringify of a key object never writes the key into a response or a log.
      Object.defineProperty(this, "privateKey", { value: info.privateKey, enumerable: false });
      defineReadOnly(this, "publicKey", info.publicKey);
      defineReadOnly(this, "compressedPublicKey", info.compressedPublicKey);
      defineReadOnly(this, "_isSigningKey", true);
    }
    signDigest(digest) {
      return bytes.splitSignature(call("signDigest", [this.privateKey, data(digest)]));
    }
    computeSharedSecret(otherKey) {
      return call("computeSharedSecret", [this.privateKey, data(otherKey)]);
    }
    static isSigningKey(value) {
      return !!(value && value._isSigningKey);
    }
  }

  const hashMessage = (message) => call("hashMessage", [typeof message === "string" ? message : bytes.arrayify(message)]);
  const recoverAddress = (digest, sig) => call("recoverAddress", [data(digest), signature(sig)]);
  const rlpLeaves = (v) => (Array.isArray(v) ? v.map(rlpLeaves) : bytes.isBytesLike(v) ? bytes.arrayify(v) : throwArgumentError("RLP object must be BytesLike", "object", v, "rlp/5.7.0"));
  const marker = (name) => Object.freeze(Object.defineProperty(() => throwArgumentError(`Utf8ErrorFuncs.${name} runs inside toUtf8String only`, "onError", name), "name", { value: name }));
  const Utf8ErrorFuncs = Object.freeze({ error: marker("error"), ignore: marker("ignore"), replace: marker("replace") });
  const typedTypes = (types) => {
    const { EIP712Domain: _unused, ...rest } = types || {};
    return rest;
  };

  const utils = {
    ...bytes,
    formatFixed, parseFixed, formatUnits, parseUnits, formatEther: (wei) => formatUnits(wei, 18), parseEther: (ether) => parseUnits(ether, 18), commify,
    defineReadOnly, resolveProperties, checkProperties, shallowCopy, deepCopy, getStatic,
    keccak256: (d) => call("keccak256", [data(d)]),
    sha256: (d) => call("sha256", [data(d)]),
    sha512: (d) => call("sha512", [data(d)]),
    ripemd160: (d) => call("ripemd160", [data(d)]),
    computeHmac: (algorithm, key, d) => call("computeHmac", [algorithm, data(key), data(d)]),
    SupportedAlgorithm: Object.freeze({ sha256: "sha256", sha512: "sha512" }),
    randomBytes: (length) => call("randomBytes", [length]),
    shuffled(array) {
      const out = array.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
    id: (text) => call("id", [text]),
    toUtf8Bytes: (str, form) => call("toUtf8Bytes", form ? [str, form] : [str]),
    toUtf8String(b, onError) {
      if (onError == null || onError === Utf8ErrorFuncs.error) return call("toUtf8String", [data(b)]);
      const name = Object.keys(Utf8ErrorFuncs).find((k) => Utf8ErrorFuncs[k] === onError);
      if (!name) throwArgumentError("only ethers.utils.Utf8ErrorFuncs may handle errors of toUtf8String in the sandbox", "onError", String(onError));
      return call("toUtf8StringWith", [data(b), name]);
    },
    toUtf8CodePoints: (str, form) => call("toUtf8CodePoints", form ? [str, form] : [str]),
    Utf8ErrorFuncs,
    Utf8ErrorReason: Object.freeze({ UNEXPECTED_CONTINUE: "unexpected continuation byte", BAD_PREFIX: "bad codepoint prefix", OVERRUN: "string overrun", MISSING_CONTINUE: "missing continuation byte", OUT_OF_RANGE: "out of UTF-8 range", UTF16_SURROGATE: "UTF-16 surrogate", OVERLONG: "overlong representation" }),
    UnicodeNormalizationForm: Object.freeze({ current: "", NFC: "NFC", NFD: "NFD", NFKC: "NFKC", NFKD: "NFKD" }),
    formatBytes32String: (text) => call("encodeBytes32String", [text]),
    parseBytes32String: (b) => call("decodeBytes32String", [data(b)]),
    messagePrefix: "\x19Ethereum Signed Message:\n",
    hashMessage,
    namehash: (name) => call("namehash", [name]),
    dnsEncode: (name) => call("dnsEncode", [name]),
    isValidName: (name) => call("isValidName", [name]),
    getAddress: (address) => call("getAddress", [address]),
    isAddress: (address) => call("isAddress", [address]),
    getIcapAddress: (address) => call("getIcapAddress", [address]),
    getContractAddress: (tx) => call("getCreateAddress", [{ from: tx.from, nonce: BigNumber.from(tx.nonce) }]),
    getCreate2Address: (from, salt, initCodeHash) => call("getCreate2Address", [from, data(salt), data(initCodeHash)]),
    computeAddress: (key) => call("computeAddress", [data(key)]),
    computePublicKey: (key, compressed) => call("computePublicKey", [data(key), !!compressed]),
    recoverPublicKey: (digest, sig) => call("recoverPublicKey", [data(digest), signature(sig)]),
    recoverAddress,
    verifyMessage: (message, sig) => recoverAddress(hashMessage(message), sig),
    verifyTypedData: (domain, types, value, sig) => call("verifyTypedData", [domain, types, value, signature(sig)]),
    _TypedDataEncoder: Object.freeze({
      hash: (domain, types, value) => call("typedDataHash", [domain, types, value]),
      hashDomain: (domain) => call("typedDataHashDomain", [domain]),
      hashStruct: (name, types, value) => call("typedDataHashStruct", [name, typedTypes(types), value]),
      getPrimaryType: (types) => call("typedDataPrimaryType", [typedTypes(types)]),
    }),
    solidityPack: (types, values) => call("solidityPacked", [types, values]),
    solidityKeccak256: (types, values) => call("solidityPackedKeccak256", [types, values]),
    soliditySha256: (types, values) => call("solidityPackedSha256", [types, values]),
    base64: Object.freeze({ encode: (d) => call("encodeBase64", [data(d)]), decode: (text) => call("decodeBase64", [text]) }),
    RLP: Object.freeze({ encode: (object) => call("encodeRlp", [rlpLeaves(object)]), decode: (d) => call("decodeRlp", [data(d)]) }),
    SigningKey,
  };
  // The ABI and transactions load on first use, as the globals do.
  const lazy = (module, names) =>
    names.forEach((name) =>
      Object.defineProperty(utils, name, {
        configurable: true,
        enumerable: true,
        get() {
          const value = lib.load(module)[name];
          Object.defineProperty(utils, name, { value, writable: true, configurable: true, enumerable: true });
          return value;
        },
      }),
    );
  lazy("ethers5-abi", ["AbiCoder", "defaultAbiCoder", "Interface", "Fragment", "FunctionFragment", "EventFragment", "ErrorFragment", "ConstructorFragment", "ParamType", "FormatTypes", "Indexed", "LogDescription", "TransactionDescription", "ErrorDescription", "checkResultErrors"]);
  lazy("ethers5-tx", ["serializeTransaction", "parseTransaction", "accessListify", "TransactionTypes"]);
  return { utils, BigNumber, data, call };
})
