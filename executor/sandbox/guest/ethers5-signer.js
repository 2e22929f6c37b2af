// Guest module: ethers v5's Signer (@ethersproject/abstract-signer) over a provider: what
// `new ethers.Wallet(privateKey, provider)` does besides signing (getBalance, populateTransaction,
// sendTransaction, ...). populateTransaction follows v5: a type-2 transaction when the chain has a
// base fee (maxFeePerGas = 2 × base fee + 1.5 gwei), the pending nonce, estimateGas, the chain id.
(function (lib) {
  "use strict";
  const { utils } = lib.load("ethers5-utils");
  const { BigNumber } = lib.load("ethers5-bignumber");
  const { errors, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const VERSION = "abstract-signer/5.7.0";
  const ALLOWED = ["accessList", "ccipReadEnabled", "chainId", "customData", "data", "from", "gasLimit", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas", "nonce", "to", "type", "value"];
  const FORWARDED = [errors.INSUFFICIENT_FUNDS, errors.NONCE_EXPIRED, errors.REPLACEMENT_UNDERPRICED];

  function checkProvider(signer, operation) {
    if (!signer.provider) throwError("missing provider", errors.UNSUPPORTED_OPERATION, { operation: operation || "_checkProvider" }, VERSION);
  }
  function checkTransaction(signer, transaction) {
    for (const key in transaction) if (ALLOWED.indexOf(key) === -1) throwArgumentError("invalid transaction key: " + key, "transaction", transaction, VERSION);
    const tx = utils.shallowCopy(transaction);
    if (tx.from == null) tx.from = signer.getAddress();
    else {
      tx.from = Promise.all([Promise.resolve(tx.from), signer.getAddress()]).then(([from, own]) => {
        if (String(from).toLowerCase() !== own.toLowerCase()) throwArgumentError("from address mismatch", "transaction", transaction, VERSION);
        return from;
      });
    }
    return tx;
  }
  // Nothing left unhandled while resolveProperties waits for the others.
  const settled = (promise) => (promise.catch(() => {}), promise);

  async function populateTransaction(signer, transaction) {
    const tx = await utils.resolveProperties(checkTransaction(signer, transaction));
    if (tx.to != null) tx.to = settled(Promise.resolve(tx.to).then((to) => (to == null ? null : signer.resolveName(to))));
    const eip1559 = tx.maxFeePerGas != null || tx.maxPriorityFeePerGas != null;
    if (tx.gasPrice != null && (tx.type === 2 || eip1559)) throwArgumentError("eip-1559 transaction do not support gasPrice", "transaction", transaction, VERSION);
    if ((tx.type === 0 || tx.type === 1) && eip1559) throwArgumentError("pre-eip-1559 transaction do not support maxFeePerGas/maxPriorityFeePerGas", "transaction", transaction, VERSION);
    if ((tx.type === 2 || tx.type == null) && tx.maxFeePerGas != null && tx.maxPriorityFeePerGas != null) tx.type = 2;
    else if (tx.type === 0 || tx.type === 1) {
      if (tx.gasPrice == null) tx.gasPrice = settled(signer.getGasPrice());
    } else {
      const fees = await signer.getFeeData();
      if (tx.type == null) {
        if (fees.maxFeePerGas != null && fees.maxPriorityFeePerGas != null) {
          tx.type = 2;
          if (tx.gasPrice != null) {
            tx.maxFeePerGas = tx.maxPriorityFeePerGas = tx.gasPrice;
            delete tx.gasPrice;
          } else {
            if (tx.maxFeePerGas == null) tx.maxFeePerGas = fees.maxFeePerGas;
            if (tx.maxPriorityFeePerGas == null) tx.maxPriorityFeePerGas = fees.maxPriorityFeePerGas;
          }
        } else if (fees.gasPrice != null) {
          if (eip1559) throwError("network does not support EIP-1559", errors.UNSUPPORTED_OPERATION, { operation: "populateTransaction" }, VERSION);
          if (tx.gasPrice == null) tx.gasPrice = fees.gasPrice;
          tx.type = 0;
        } else throwError("failed to get consistent fee data", errors.UNSUPPORTED_OPERATION, { operation: "signer.getFeeData" }, VERSION);
      } else if (tx.type === 2) {
        if (tx.maxFeePerGas == null) tx.maxFeePerGas = fees.maxFeePerGas;
        if (tx.maxPriorityFeePerGas == null) tx.maxPriorityFeePerGas = fees.maxPriorityFeePerGas;
      }
    }
    if (tx.nonce == null) tx.nonce = settled(signer.getTransactionCount("pending"));
    if (tx.gasLimit == null) {
      tx.gasLimit = settled(
        estimateGas(signer, tx).catch((error) => {
          if (FORWARDED.indexOf(error.code) >= 0) throw error;
          return throwError("cannot estimate gas; transaction may fail or may require manual gas limit", errors.UNPREDICTABLE_GAS_LIMIT, { error, tx }, VERSION);
        }),
      );
    }
    if (tx.chainId == null) tx.chainId = settled(signer.getChainId());
    else {
      tx.chainId = settled(
        Promise.all([Promise.resolve(tx.chainId), signer.getChainId()]).then(([mine, chain]) => {
          if (chain !== 0 && mine !== chain) throwArgumentError("chainId address mismatch", "transaction", transaction, VERSION);
          return mine;
        }),
      );
    }
    return utils.resolveProperties(tx);
  }
  async function estimateGas(signer, transaction) {
    checkProvider(signer, "estimateGas");
    return signer.provider.estimateGas(await utils.resolveProperties(checkTransaction(signer, transaction)));
  }
  async function sendTransaction(signer, transaction) {
    checkProvider(signer, "sendTransaction");
    const tx = await populateTransaction(signer, transaction);
    return signer.provider.sendTransaction(await signer.signTransaction(tx));
  }

  // The Signer methods (besides the signing ones each signer has), as v5's abstract Signer defines them.
  const methods = {
    async getBalance(tag) {
      checkProvider(this, "getBalance");
      return this.provider.getBalance(await this.getAddress(), tag);
    },
    async getTransactionCount(tag) {
      checkProvider(this, "getTransactionCount");
      return this.provider.getTransactionCount(await this.getAddress(), tag);
    },
    estimateGas(transaction) {
      return estimateGas(this, transaction);
    },
    async call(transaction, tag) {
      checkProvider(this, "call");
      return this.provider.call(await utils.resolveProperties(checkTransaction(this, transaction)), tag);
    },
    sendTransaction(transaction) {
      return sendTransaction(this, transaction);
    },
    async getChainId() {
      checkProvider(this, "getChainId");
      return (await this.provider.getNetwork()).chainId;
    },
    async getGasPrice() {
      checkProvider(this, "getGasPrice");
      return this.provider.getGasPrice();
    },
    async getFeeData() {
      checkProvider(this, "getFeeData");
      return this.provider.getFeeData();
    },
    async resolveName(name) {
      checkProvider(this, "resolveName");
      return this.provider.resolveName(name);
    },
    checkTransaction(transaction) {
      return checkTransaction(this, transaction);
    },
    populateTransaction(transaction) {
      return populateTransaction(this, transaction);
    },
    _checkProvider(operation) {
      checkProvider(this, operation);
    },
  };

  class Signer {
    constructor() {
      utils.defineReadOnly(this, "_isSigner", true);
    }
    static isSigner(value) {
      return !!(value && value._isSigner);
    }
    // A Wallet is a Signer (ethers.Wallet is defined before this module loads).
    static [Symbol.hasInstance](value) {
      return this === Signer ? Signer.isSigner(value) : Function.prototype[Symbol.hasInstance].call(this, value);
    }
  }
  Object.assign(Signer.prototype, methods);
  class VoidSigner extends Signer {
    constructor(address, provider) {
      super();
      utils.defineReadOnly(this, "address", address);
      utils.defineReadOnly(this, "provider", provider || null);
    }
    getAddress() {
      return Promise.resolve(this.address);
    }
    _fail(message, operation) {
      return Promise.resolve().then(() => throwError(message, errors.UNSUPPORTED_OPERATION, { operation }, VERSION));
    }
    signMessage() {
      return this._fail("VoidSigner cannot sign messages", "signMessage");
    }
    signTransaction() {
      return this._fail("VoidSigner cannot sign transactions", "signTransaction");
    }
    connect(provider) {
      return new VoidSigner(this.address, provider);
    }
  }
  return { Signer, VoidSigner, methods, BigNumber };
})
