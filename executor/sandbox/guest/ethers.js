// Guest module: the `ethers` shim, compiled inside QuickJS on the first access to `ethers`.
// Every operation is a synchronous host function backed by the real ethers v6 in the worker
// (../process/ethers-calls.ts). Values cross the boundary as JSON with two tags: {$bigint: "123"} and
// {$bytes: "0x.."}. Inside the sandbox, byte results are Uint8Array; byte inputs may be 0x-hex
// strings, Uint8Array or arrays of numbers; big numbers are native bigint (v5's BigNumber is not
// emulated).
(function (lib) {
  "use strict";
  const raw = lib.host.ethers;
  const { encode, decode } = lib.load("bytes");
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
