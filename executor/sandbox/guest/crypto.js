// Guest module: crypto (getRandomValues, randomUUID, subtle) and CryptoKey. Random bytes come from
// the sandbox process's CSPRNG; crypto.subtle runs Node's Web Crypto there
// (../process/subtle-calls.ts). A CryptoKey keeps its material (a JWK) where the action cannot
// read it: only exportKey of an extractable key shows it.
(function (lib) {
  "use strict";
  const { encode, decode, view } = lib.load("bytes");
  const DOMException = lib.load("dom").DOMException;
  const web = (name, args) => {
    try {
      return decode(lib.host.web(name, encode(args)));
    } catch (e) {
      return rethrow(e);
    }
  };
  const INTEGER_ARRAYS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

  const material = new WeakMap();
  const KEY = Symbol("vesta.key");
  class CryptoKey {
    constructor(key, d) {
      if (key !== KEY) throw new TypeError("Illegal constructor");
      material.set(this, d.jwk);
      Object.defineProperties(this, {
        type: { value: d.type, enumerable: true },
        extractable: { value: d.extractable, enumerable: true },
        algorithm: { value: Object.freeze(d.algorithm), enumerable: true },
        usages: { value: Object.freeze(d.usages.slice()), enumerable: true },
      });
    }
    get [Symbol.toStringTag]() {
      return "CryptoKey";
    }
  }
  const keyFrom = (d, extractable) => new CryptoKey(KEY, Object.assign({}, d, { extractable: d.type === "public" ? true : Boolean(extractable) }));
  function keyArg(key) {
    if (!(key instanceof CryptoKey)) throw new TypeError("the key must be a CryptoKey");
    return { jwk: material.get(key), algorithm: key.algorithm, usages: key.usages, extractable: true };
  }
  // Byte fields of an algorithm (iv, additionalData) as Uint8Array, so they cross as bytes.
  function algorithmArg(alg) {
    if (alg === null || typeof alg !== "object") return alg;
    const out = Object.assign({}, alg);
    for (const k of ["iv", "additionalData"]) if (out[k] !== undefined) out[k] = view(out[k], `algorithm.${k}`).slice();
    if (out.hash !== null && typeof out.hash === "object") out.hash = { name: out.hash.name };
    return out;
  }
  const dataArg = (v, what) => view(v, what).slice();
  // Errors named as Web Crypto names them (OperationError, ...) become DOMExceptions, as the platform's are.
  function rethrow(e) {
    throw e && typeof e.name === "string" && !["Error", "TypeError", "RangeError", "InternalError"].includes(e.name) ? new DOMException(e.message, e.name) : e;
  }
  const subtleCall = (op, args) => lib.host.subtle(op, encode(args)).then(decode, rethrow);
  // The work is a promise either way: argument errors reject too, as Web Crypto's do.
  const later = (fn) => new Promise((resolve) => resolve(fn()));

  class SubtleCrypto {
    constructor(key) {
      if (key !== KEY) throw new TypeError("Illegal constructor");
    }
    digest(algorithm, data) {
      return later(() => subtleCall("digest", { algorithm, data: dataArg(data, "data") })).then((b) => b.buffer);
    }
    importKey(format, keyData, algorithm, extractable, usages) {
      return later(() => subtleCall("importKey", { format, keyData: format === "jwk" ? keyData : dataArg(keyData, "keyData"), algorithm: algorithmArg(algorithm), usages: Array.from(usages || []) })).then((d) => keyFrom(d, extractable));
    }
    generateKey(algorithm, extractable, usages) {
      return later(() => subtleCall("generateKey", { algorithm: algorithmArg(algorithm), usages: Array.from(usages || []) })).then((d) =>
        d.privateKey ? { privateKey: keyFrom(d.privateKey, extractable), publicKey: keyFrom(d.publicKey, true) } : keyFrom(d, extractable),
      );
    }
    exportKey(format, key) {
      return later(() => {
        if (!(key instanceof CryptoKey)) throw new TypeError("the key must be a CryptoKey");
        if (!key.extractable) throw new DOMException("key is not extractable", "InvalidAccessError");
        return subtleCall("exportKey", { format, key: keyArg(key) });
      }).then((out) => {
        if (out instanceof Uint8Array) return out.buffer;
        return Object.assign(out, { key_ops: key.usages.slice(), ext: true });
      });
    }
    sign(algorithm, key, data) {
      return later(() => subtleCall("sign", { algorithm: algorithmArg(algorithm), key: keyArg(key), data: dataArg(data, "data") })).then((b) => b.buffer);
    }
    verify(algorithm, key, signature, data) {
      return later(() => subtleCall("verify", { algorithm: algorithmArg(algorithm), key: keyArg(key), signature: dataArg(signature, "signature"), data: dataArg(data, "data") }));
    }
    encrypt(algorithm, key, data) {
      return later(() => subtleCall("encrypt", { algorithm: algorithmArg(algorithm), key: keyArg(key), data: dataArg(data, "data") })).then((b) => b.buffer);
    }
    decrypt(algorithm, key, data) {
      return later(() => subtleCall("decrypt", { algorithm: algorithmArg(algorithm), key: keyArg(key), data: dataArg(data, "data") })).then((b) => b.buffer);
    }
    get [Symbol.toStringTag]() {
      return "SubtleCrypto";
    }
  }

  class Crypto {
    #subtle = new SubtleCrypto(KEY);
    constructor(key) {
      if (key !== KEY) throw new TypeError("Illegal constructor");
    }
    get subtle() {
      return this.#subtle;
    }
    getRandomValues(array) {
      if (!INTEGER_ARRAYS.some((T) => array instanceof T)) throw new DOMException("getRandomValues: the argument must be an integer-typed array", "TypeMismatchError");
      const bytes = web("random", [array.byteLength]);
      new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
      return array;
    }
    randomUUID() {
      return web("uuid", []);
    }
    get [Symbol.toStringTag]() {
      return "Crypto";
    }
  }

  return { crypto: new Crypto(KEY), Crypto, CryptoKey, SubtleCrypto };
})
