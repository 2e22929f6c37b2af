// Guest module: the `ethers` shim, compiled inside QuickJS on the first access to `ethers`.
// Every operation is a synchronous host function backed by the real ethers v6 in the worker
// (../process/ethers-calls.ts). Values cross the boundary as JSON with two tags: {$bigint: "123"} and
// {$bytes: "0x.."}. Inside the sandbox, byte results are Uint8Array; byte inputs may be 0x-hex
// strings, Uint8Array or arrays of numbers; big numbers are native bigint (v5's BigNumber is not
// emulated).
(function (lib) {
  "use strict";
  const raw = lib.host.ethers;
  const HEX = "0123456789abcdef";
  const toHex = (u8) => {
    let s = "0x";
    for (let i = 0; i < u8.length; i++) s += HEX[u8[i] >> 4] + HEX[u8[i] & 15];
    return s;
  };
  const fromHex = (h) => {
    const out = new Uint8Array((h.length - 2) / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(h.substr(2 + 2 * i, 2), 16);
    return out;
  };
  const encode = (args) =>
    JSON.stringify(args, (k, v) => {
      if (typeof v === "bigint") return { $bigint: v.toString() };
      if (v instanceof Uint8Array) return { $bytes: toHex(v) };
      if (v instanceof ArrayBuffer) return { $bytes: toHex(new Uint8Array(v)) };
      return v;
    });
  const tagged = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const decode = (json) =>
    JSON.parse(json, (k, v) => {
      if (tagged(v) && typeof v.$bigint === "string") return BigInt(v.$bigint);
      if (tagged(v) && typeof v.$bytes === "string") return fromHex(v.$bytes);
      return v;
    });
  const invoke = (name, args) => decode(raw(name, encode(args)));
  const bytes = (v) => (Array.isArray(v) && v.every((x) => typeof x === "number") ? Uint8Array.from(v) : v);

  const u = {};
  // Functions whose first argument is bytes-like (arrays of numbers become Uint8Array).
  for (const name of ["keccak256", "sha256", "hexlify", "getBytes", "toUtf8String", "hashMessage", "verifyMessage", "computeAddress", "zeroPadValue", "dataLength"]) {
    u[name] = (first, ...rest) => invoke(name, [bytes(first), ...rest]);
  }
  for (const name of ["id", "toUtf8Bytes", "getAddress", "isAddress", "isHexString", "parseEther", "formatEther", "parseUnits", "formatUnits", "solidityPacked", "solidityPackedKeccak256", "recoverAddress", "randomBytes", "toBeHex", "verifyTypedData"]) {
    u[name] = (...args) => invoke(name, args);
  }
  u.concat = (list) => invoke("concat", [Array.from(list, bytes)]);
  u.toBigInt = (v) => (typeof v === "bigint" ? v : BigInt(v));
  u.getBigInt = u.toBigInt;
  u.toNumber = (v) => Number(u.toBigInt(v));

  class AbiCoder {
    encode(types, values) {
      return invoke("abiEncode", [types, values]);
    }
    decode(types, data) {
      return invoke("abiDecode", [types, bytes(data)]);
    }
    static defaultAbiCoder() {
      return coder;
    }
  }
  const coder = new AbiCoder();

  const keyOf = (pk) => (typeof pk === "string" && /^[0-9a-fA-F]{64}$/.test(pk) ? "0x" + pk : pk);
  class Wallet {
    constructor(privateKey) {
      const info = invoke("walletInfo", [keyOf(privateKey)]);
      // Not enumerable, so JSON.stringify(wallet) never puts the key into a response or a log.
      Object.defineProperty(this, "privateKey", { value: info.privateKey, enumerable: false });
      this.address = info.address;
      this.publicKey = info.publicKey;
      this.signingKey = { publicKey: info.publicKey, compressedPublicKey: info.compressedPublicKey };
    }
    async getAddress() {
      return this.address;
    }
    signMessageSync(message) {
      return invoke("signMessage", [this.privateKey, bytes(message)]);
    }
    async signMessage(message) {
      return this.signMessageSync(message);
    }
    async signTransaction(tx) {
      return invoke("signTransaction", [this.privateKey, tx]);
    }
    async signTypedData(domain, types, value) {
      return invoke("signTypedData", [this.privateKey, domain, types, value]);
    }
    async _signTypedData(domain, types, value) {
      return this.signTypedData(domain, types, value);
    }
    connect() {
      throw new Error("ethers shim: providers are not available in the sandbox; use fetch() for JSON-RPC");
    }
    static createRandom() {
      return new Wallet(invoke("randomPrivateKey", []));
    }
  }

  const constants = {
    ZeroAddress: "0x0000000000000000000000000000000000000000",
    ZeroHash: "0x0000000000000000000000000000000000000000000000000000000000000000",
    MaxUint256: (1n << 256n) - 1n,
    WeiPerEther: 10n ** 18n,
  };
  const v5 = {
    arrayify: u.getBytes,
    solidityKeccak256: u.solidityPackedKeccak256,
    solidityPack: u.solidityPacked,
    hexZeroPad: u.zeroPadValue,
    defaultAbiCoder: coder,
    AbiCoder,
  };
  const ethers = Object.assign({ version: "6-vesta-shim", Wallet, AbiCoder, utils: Object.assign({}, u, v5) }, u, constants);
  return { ethers };
})
