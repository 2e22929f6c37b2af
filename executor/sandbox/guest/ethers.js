// Guest module: the `ethers` global, compiled inside QuickJS on the first access to `ethers`.
// Two surfaces on one object:
//   - ethers v6's functions at the top level (ethers.keccak256, ethers.parseEther -> bigint, ...),
//     each a synchronous call into the real ethers v6 in the sandbox process
//     (../process/ethers-calls.ts); values cross as JSON with tags ({$bigint}, {$bytes}); byte
//     results are Uint8Array, byte inputs 0x-hex strings, Uint8Array or arrays of numbers, big
//     numbers native bigint;
//   - ethers v5's, as Chipotle's actions use it: ethers.utils (ethers5-utils.js), BigNumber,
//     FixedNumber, constants, providers, Contract, ContractFactory, Signer, errors, logger: each
//     loaded on its first read (a run that only signs never compiles them); what the sandbox does
//     not have (mnemonics, wordlists, JSON wallets) throws v5's UNSUPPORTED_OPERATION naming what to
//     use instead.
// `Wallet` serves both: v6's names (signTypedData, signingKey) and v5's (_signTypedData,
// connect(provider), sendTransaction, getBalance, ...: ethers5-signer.js).
(function (lib) {
  "use strict";
  const raw = lib.host.ethers;
  const { encode, decode } = lib.load("bytes");
  function invoke(name, args) {
    try {
      return decode(raw(name, encode(args)));
    } catch (e) {
      const code = e instanceof Error && / \(code=([A-Z_]+)\)$/.exec(e.message);
      if (code) e.code = code[1];
      throw e;
    }
  }
  const bytes = (v) => (Array.isArray(v) && v.every((x) => typeof x === "number") ? Uint8Array.from(v) : v);

  const u = {};
  // Functions whose first argument is bytes-like (arrays of numbers become Uint8Array).
  for (const name of ["keccak256", "sha256", "sha512", "ripemd160", "hexlify", "getBytes", "toUtf8String", "hashMessage", "verifyMessage", "computeAddress", "zeroPadValue", "dataLength", "encodeBase64", "decodeRlp"]) {
    u[name] = (first, ...rest) => invoke(name, [bytes(first), ...rest]);
  }
  for (const name of [
    "id", "toUtf8Bytes", "toUtf8CodePoints", "getAddress", "isAddress", "getIcapAddress", "isHexString", "parseEther", "formatEther", "parseUnits", "formatUnits",
    "solidityPacked", "solidityPackedKeccak256", "solidityPackedSha256", "recoverAddress", "randomBytes", "toBeHex", "verifyTypedData", "namehash", "dnsEncode",
    "isValidName", "encodeBytes32String", "decodeBytes32String", "encodeRlp", "decodeBase64", "getCreateAddress", "getCreate2Address", "computeHmac",
  ]) {
    u[name] = (...args) => invoke(name, args);
  }
  u.concat = (list) => invoke("concat", [Array.from(list, bytes)]);
  u.toBigInt = (v) => (typeof v === "bigint" ? v : v !== null && typeof v === "object" && v._isBigNumber ? v.toBigInt() : BigInt(v));
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
  const hidden = (object, name, value) => Object.defineProperty(object, name, { value, enumerable: false });
  class Wallet {
    constructor(privateKey, provider) {
      const info = invoke("walletInfo", [keyOf(privateKey)]);
      if (provider != null && !provider._isProvider) throw new TypeError("invalid provider: a Wallet's second argument must be a provider (ethers.providers.JsonRpcProvider)");
      // Not enumerable, so JSON.stringify(wallet) never puts the key into a response or a log.
      hidden(this, "privateKey", info.privateKey);
      hidden(this, "provider", provider == null ? null : provider);
      hidden(this, "_isSigner", true);
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
      const keys = Object.keys(tx);
      const values = await Promise.all(keys.map((k) => tx[k])); // v5 fields may be promises
      return invoke("signTransaction", [this.privateKey, keys.reduce((out, k, i) => ((out[k] = values[i]), out), {})]);
    }
    async signTypedData(domain, types, value) {
      return invoke("signTypedData", [this.privateKey, domain, types, value]);
    }
    async _signTypedData(domain, types, value) {
      return this.signTypedData(domain, types, value);
    }
    _signingKey() {
      return new (lib.load("ethers5-utils").utils.SigningKey)(this.privateKey);
    }
    connect(provider) {
      return new Wallet(this.privateKey, provider);
    }
    static createRandom() {
      return new Wallet(invoke("randomPrivateKey", []));
    }
    static isSigner(value) {
      return !!(value && value._isSigner);
    }
    // v5: a wallet made from a key has no mnemonic
    get mnemonic() {
      return null;
    }
    _mnemonic() {
      return null;
    }
  }
  // v5's names the sandbox does not have: each throws v5's UNSUPPORTED_OPERATION naming what to use instead.
  const KEYS = "keys come from Lit.Actions.getPrivateKey({ pkpId }) or Lit.Actions.getLitActionPrivateKey(); use new ethers.Wallet(privateKey)";
  const NO_MNEMONICS = "there are no mnemonics or HD wallets here; " + KEYS;
  const NO_JSON_WALLETS = "there are no JSON (keystore) wallets here; " + KEYS;
  const unsupported = (name, instead, version) =>
    function () {
      return lib.load("ethers5-logger").unsupported(name, instead, version)();
    };
  Wallet.fromMnemonic = unsupported("ethers.Wallet.fromMnemonic", NO_MNEMONICS, "wallet/5.7.0");
  Wallet.fromEncryptedJson = async (...args) => unsupported("ethers.Wallet.fromEncryptedJson", NO_JSON_WALLETS, "wallet/5.7.0")(...args);
  Wallet.fromEncryptedJsonSync = unsupported("ethers.Wallet.fromEncryptedJsonSync", NO_JSON_WALLETS, "wallet/5.7.0");
  Wallet.fromPhrase = unsupported("ethers.Wallet.fromPhrase", NO_MNEMONICS, "wallet/5.7.0");
  Wallet.prototype.encrypt = async function () {
    return unsupported("wallet.encrypt", "there are no JSON (keystore) wallets here; use Lit.Actions.Encrypt({ pkpId, message }) to keep a key encrypted", "wallet/5.7.0")();
  };
  Wallet.prototype.encryptSync = unsupported("wallet.encryptSync", "there are no JSON (keystore) wallets here; use Lit.Actions.Encrypt({ pkpId, message }) to keep a key encrypted", "wallet/5.7.0");
  // v5's Signer methods over the wallet's provider, compiled on first use.
  for (const name of ["getBalance", "getTransactionCount", "estimateGas", "call", "sendTransaction", "getChainId", "getGasPrice", "getFeeData", "resolveName", "checkTransaction", "populateTransaction", "_checkProvider"]) {
    Wallet.prototype[name] = function (...args) {
      return lib.load("ethers5-signer").methods[name].apply(this, args);
    };
  }

  const ethers = Object.assign({ version: "6-vesta-shim", Wallet, AbiCoder }, u, {
    ZeroAddress: "0x0000000000000000000000000000000000000000",
    ZeroHash: "0x0000000000000000000000000000000000000000000000000000000000000000",
    MaxUint256: (1n << 256n) - 1n,
    WeiPerEther: 10n ** 18n,
  });
  // v5's names, each loaded on its first read.
  const constants = () => {
    const { BigNumber } = lib.load("ethers5-bignumber");
    const max = (1n << 256n) - 1n;
    return Object.freeze({
      AddressZero: ethers.ZeroAddress, HashZero: ethers.ZeroHash, EtherSymbol: "\u039e",
      NegativeOne: BigNumber.from(-1), Zero: BigNumber.from(0), One: BigNumber.from(1), Two: BigNumber.from(2), WeiPerEther: BigNumber.from(10n ** 18n),
      MaxUint256: BigNumber.from(max), MinInt256: BigNumber.from(-(1n << 255n)), MaxInt256: BigNumber.from((1n << 255n) - 1n),
    });
  };
  const MNEMONIC = "there are no mnemonics or wordlists here; " + KEYS;
  function wordlists() {
    const out = {};
    for (const locale of ["cz", "en", "es", "fr", "it", "ja", "ko", "zh", "zh_cn", "zh_tw"]) {
      Object.defineProperty(out, locale, { get: unsupported(`ethers.wordlists.${locale}`, MNEMONIC, "wordlists/5.7.0") });
    }
    return Object.freeze(out);
  }
  function Wordlist() {
    return unsupported("ethers.Wordlist", MNEMONIC, "wordlists/5.7.0")();
  }
  Wordlist.check = unsupported("ethers.Wordlist.check", MNEMONIC, "wordlists/5.7.0");
  Wordlist.register = unsupported("ethers.Wordlist.register", MNEMONIC, "wordlists/5.7.0");
  const V5 = {
    utils: () => lib.load("ethers5-utils").utils,
    BigNumber: () => lib.load("ethers5-bignumber").BigNumber,
    FixedNumber: () => lib.load("ethers5-units").FixedNumber,
    logger: () => new (lib.load("ethers5-logger").Logger)("ethers/5.7.2"),
    wordlists,
    Wordlist: () => Wordlist,
    constants,
    errors: () => lib.load("ethers5-logger").errors,
    providers: () => lib.load("ethers5-providers").providers,
    getDefaultProvider: () => lib.load("ethers5-providers").providers.getDefaultProvider,
    Contract: () => lib.load("ethers5-contract").Contract,
    BaseContract: () => lib.load("ethers5-contract").BaseContract,
    ContractFactory: () => lib.load("ethers5-contract").ContractFactory,
    Signer: () => lib.load("ethers5-signer").Signer,
    VoidSigner: () => lib.load("ethers5-signer").VoidSigner,
  };
  for (const name of Object.keys(V5)) {
    Object.defineProperty(ethers, name, {
      configurable: true,
      enumerable: true,
      get() {
        const value = V5[name]();
        Object.defineProperty(ethers, name, { value, writable: true, configurable: true, enumerable: true });
        return value;
      },
      set(value) {
        Object.defineProperty(ethers, name, { value, writable: true, configurable: true, enumerable: true });
      },
    });
  }
  return { ethers };
})
