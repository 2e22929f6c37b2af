// Guest module: `ethers.utils` as ethers v5 has it: each name loads the guest module that defines it
// on first read (ethers5-calls.js: hashing, strings, addresses, keys, computed in the sandbox
// process; ethers5-bytes.js: bytes helpers and signatures; ethers5-units.js; ethers5-abi.js;
// ethers5-tx.js); the property helpers are here. A run that hashes a string compiles the calls
// module only.
(function (lib) {
  "use strict";
  const { throwArgumentError } = lib.load("ethers5-logger");
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

  const utils = { defineReadOnly, resolveProperties, checkProperties, shallowCopy, deepCopy, getStatic };
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
        set(value) {
          Object.defineProperty(utils, name, { value, writable: true, configurable: true, enumerable: true });
        },
      }),
    );
  lazy("ethers5-bytes", ["isHexString", "isBytes", "isBytesLike", "arrayify", "hexlify", "concat", "stripZeros", "zeroPad", "hexDataLength", "hexDataSlice", "hexConcat", "hexStripZeros", "hexValue", "hexZeroPad", "splitSignature", "joinSignature"]);
  lazy("ethers5-units", ["formatFixed", "parseFixed", "formatUnits", "parseUnits", "formatEther", "parseEther", "commify"]);
  lazy("ethers5-calls", [
    "keccak256", "sha256", "sha512", "ripemd160", "computeHmac", "SupportedAlgorithm", "randomBytes", "shuffled", "id", "toUtf8Bytes", "toUtf8String", "toUtf8CodePoints",
    "Utf8ErrorFuncs", "Utf8ErrorReason", "UnicodeNormalizationForm", "formatBytes32String", "parseBytes32String", "messagePrefix", "hashMessage", "namehash", "dnsEncode",
    "isValidName", "getAddress", "isAddress", "getIcapAddress", "getContractAddress", "getCreate2Address", "computeAddress", "computePublicKey", "recoverPublicKey",
    "recoverAddress", "verifyMessage", "verifyTypedData", "_TypedDataEncoder", "solidityPack", "solidityKeccak256", "soliditySha256", "base64", "RLP", "SigningKey",
  ]);
  lazy("ethers5-abi", ["AbiCoder", "defaultAbiCoder", "Interface", "Fragment", "FunctionFragment", "EventFragment", "ErrorFragment", "ConstructorFragment", "ParamType", "FormatTypes", "Indexed", "LogDescription", "TransactionDescription", "ErrorDescription", "checkResultErrors"]);
  lazy("ethers5-tx", ["serializeTransaction", "parseTransaction", "accessListify", "TransactionTypes"]);
  return { utils };
})
