// Guest module: `ethers.utils` as ethers v5 has it: each name loads the guest module that defines it
// on first read (ethers5-calls.js: hashing, strings, addresses, keys, computed in the sandbox
// process; ethers5-bytes.js: bytes helpers and signatures; ethers5-units.js; ethers5-abi.js;
// ethers5-tx.js); the property helpers are here, and v5's names the sandbox does not have
// (mnemonics, HD and JSON wallets, fetchJson, poll, nameprep), each throwing v5's
// UNSUPPORTED_OPERATION naming what to use instead. A run that hashes a string compiles the calls
// module only.
(function (lib) {
  "use strict";
  const { throwArgumentError, unsupported } = lib.load("ethers5-logger");
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

  // v5's names the sandbox does not have (mnemonics, HD and JSON wallets, its web helpers): each throws
  // v5's UNSUPPORTED_OPERATION naming what to use instead.
  const KEYS = "keys come from Lit.Actions.getPrivateKey({ pkpId }) or Lit.Actions.getLitActionPrivateKey(); use new ethers.Wallet(privateKey)";
  const MNEMONIC = "there are no mnemonics or HD wallets here; " + KEYS;
  const HDNode = unsupported("ethers.utils.HDNode", MNEMONIC, "hdnode/5.7.0");
  for (const name of ["fromMnemonic", "fromSeed", "fromExtendedKey", "_fromSeed"]) HDNode[name] = unsupported(`ethers.utils.HDNode.${name}`, MNEMONIC, "hdnode/5.7.0");
  HDNode.isHDNode = (value) => !!(value && value._isHDNode);
  function getAccountPath(index) {
    if (typeof index !== "number" || index < 0 || index >= 0x80000000 || index % 1) throwArgumentError("invalid account index", "index", index, "hdnode/5.7.0");
    return `m/44'/60'/${index}'/0/0`;
  }
  const unsupportedNames = {
    HDNode,
    entropyToMnemonic: unsupported("ethers.utils.entropyToMnemonic", MNEMONIC, "hdnode/5.7.0"),
    mnemonicToEntropy: unsupported("ethers.utils.mnemonicToEntropy", MNEMONIC, "hdnode/5.7.0"),
    mnemonicToSeed: unsupported("ethers.utils.mnemonicToSeed", MNEMONIC, "hdnode/5.7.0"),
    isValidMnemonic: unsupported("ethers.utils.isValidMnemonic", MNEMONIC, "hdnode/5.7.0"),
    getJsonWalletAddress: unsupported("ethers.utils.getJsonWalletAddress", "there are no JSON (keystore) wallets here; " + KEYS, "json-wallets/5.7.0"),
    fetchJson: unsupported("ethers.utils.fetchJson", "use fetch(url, { method, headers, body }) and await response.json()", "web/5.7.1"),
    _fetchData: unsupported("ethers.utils._fetchData", "use fetch(url, { method, headers, body })", "web/5.7.1"),
    poll: unsupported("ethers.utils.poll", "use a loop with await new Promise((resolve) => setTimeout(resolve, ms))", "web/5.7.1"),
    nameprep: unsupported("ethers.utils.nameprep", "use ethers.utils.namehash or ethers.utils.dnsEncode, which normalize ENS names", "strings/5.7.0"),
    _toEscapedUtf8String: unsupported("ethers.utils._toEscapedUtf8String", "use ethers.utils.toUtf8String(bytes, ethers.utils.Utf8ErrorFuncs.replace)", "strings/5.7.0"),
  };

  const utils = { defineReadOnly, resolveProperties, checkProperties, shallowCopy, deepCopy, getStatic, defaultPath: "m/44'/60'/0'/0/0", getAccountPath, ...unsupportedNames };
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
  lazy("ethers5-bytes", ["isHexString", "isBytes", "isBytesLike", "arrayify", "hexlify", "concat", "stripZeros", "zeroPad", "hexDataLength", "hexDataSlice", "hexConcat", "hexStripZeros", "hexValue", "hexZeroPad", "splitSignature", "joinSignature", "base58"]);
  lazy("ethers5-logger", ["Logger"]);
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
