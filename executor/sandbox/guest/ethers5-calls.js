// Guest module: the part of ethers v5's utils computed by ethers v6 in the sandbox process
// (../process/ethers-calls.ts): hashing, strings, addresses, keys and signatures, RLP, base64, typed
// data. v5's inputs are read here first (bytes as v5's arrayify reads them, v5's signature objects);
// a hex string or a Uint8Array crosses as is, so a run that hashes text never compiles the bytes
// helpers (ethers5-bytes.js) nor BigNumber.
(function (lib) {
  "use strict";
  const { invoke, throwArgumentError, unsupported } = lib.load("ethers5-logger");
  const bytes = () => lib.load("ethers5-bytes");
  const call = (name, args) => invoke(name, args);
  const readOnly = (object, name, value) => Object.defineProperty(object, name, { enumerable: true, value, writable: false });
  // Bytes for the process: even-length hex and Uint8Array as they are (validated there), anything else as v5's arrayify reads it.
  const data = (v) => ((typeof v === "string" && /^0x(?:[0-9a-fA-F]{2})*$/.test(v)) || v instanceof Uint8Array ? v : bytes().arrayify(v));
  // A 65-byte signature whose v is 27 or 28 is what joinSignature would answer (lower case); anything else is read by splitSignature.
  const signature = (sig) => (typeof sig === "string" && /^0x[0-9a-fA-F]{128}1[bcBC]$/.test(sig) ? sig.toLowerCase() : bytes().joinSignature(sig));

  class SigningKey {
    constructor(privateKey) {
      const info = call("walletInfo", [typeof privateKey === "string" ? privateKey : bytes().hexlify(privateKey)]);
      readOnly(this, "curve", "secp256k1");
      // Not enumerable (v5's is): JSON.stringify of a key object never writes the key into a response or a log.
      Object.defineProperty(this, "privateKey", { value: info.privateKey, enumerable: false });
      readOnly(this, "publicKey", info.publicKey);
      readOnly(this, "compressedPublicKey", info.compressedPublicKey);
      readOnly(this, "_isSigningKey", true);
    }
    signDigest(digest) {
      return bytes().splitSignature(call("signDigest", [this.privateKey, data(digest)]));
    }
    computeSharedSecret(otherKey) {
      return call("computeSharedSecret", [this.privateKey, data(otherKey)]);
    }
    static isSigningKey(value) {
      return !!(value && value._isSigningKey);
    }
  }

  const hashMessage = (message) => call("hashMessage", [typeof message === "string" ? message : bytes().arrayify(message)]);
  const recoverAddress = (digest, sig) => call("recoverAddress", [data(digest), signature(sig)]);
  const rlpLeaves = (v) => (Array.isArray(v) ? v.map(rlpLeaves) : bytes().isBytesLike(v) ? bytes().arrayify(v) : throwArgumentError("RLP object must be BytesLike", "object", v, "rlp/5.7.0"));
  const marker = (name) => Object.freeze(Object.defineProperty(() => throwArgumentError(`Utf8ErrorFuncs.${name} runs inside toUtf8String only`, "onError", name), "name", { value: name }));
  const Utf8ErrorFuncs = Object.freeze({ error: marker("error"), ignore: marker("ignore"), replace: marker("replace") });
  const typedTypes = (types) => {
    const { EIP712Domain: _unused, ...rest } = types || {};
    return rest;
  };

  return {
    call,
    data,
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
    getContractAddress: (tx) => call("getCreateAddress", [{ from: tx.from, nonce: lib.load("ethers5-bignumber").BigNumber.from(tx.nonce) }]),
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
      encode: (domain, types, value) => call("typedDataEncode", [domain, types, value]),
      getPayload(domain, types, value) {
        const payload = call("typedDataPayload", [domain, types, value]);
        if (payload.domain.chainId != null) payload.domain.chainId = BigInt(payload.domain.chainId).toString(); // v5 writes it in decimal
        return payload;
      },
      from: unsupported("ethers.utils._TypedDataEncoder.from", "use _TypedDataEncoder.hash, hashStruct, encode or getPayload, which take the types each time", "hash/5.7.0"),
      resolveNames: async (...args) => unsupported("ethers.utils._TypedDataEncoder.resolveNames", "there are no ENS names here; put addresses in the typed data", "hash/5.7.0")(...args),
    }),
    solidityPack: (types, values) => call("solidityPacked", [types, values]),
    solidityKeccak256: (types, values) => call("solidityPackedKeccak256", [types, values]),
    soliditySha256: (types, values) => call("solidityPackedSha256", [types, values]),
    base64: Object.freeze({ encode: (d) => call("encodeBase64", [data(d)]), decode: (text) => call("decodeBase64", [text]) }),
    RLP: Object.freeze({ encode: (object) => call("encodeRlp", [rlpLeaves(object)]), decode: (d) => call("decodeRlp", [data(d)]) }),
    SigningKey,
  };
})
