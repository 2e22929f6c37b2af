// Guest module: ethers v5's transactions (@ethersproject/transactions): serializeTransaction and
// parseTransaction for legacy (EIP-155), EIP-2930 and EIP-1559 transactions, with v5's checks and
// shapes (BigNumber amounts, `type: null` for legacy, `from` recovered from the signature); RLP,
// hashing and recovery are the process's (ethers5-utils.js).
(function (lib) {
  "use strict";
  const { utils } = lib.load("ethers5-utils");
  const { BigNumber } = lib.load("ethers5-bignumber");
  const { errors, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const VERSION = "transactions/5.7.0";
  const bad = (reason, name, value) => throwArgumentError(reason, name, value, VERSION);
  const LEGACY_KEYS = { chainId: true, data: true, gasLimit: true, gasPrice: true, nonce: true, to: true, type: true, value: true };
  const LEGACY_FIELDS = [
    { name: "nonce", maxLength: 32, numeric: true },
    { name: "gasPrice", maxLength: 32, numeric: true },
    { name: "gasLimit", maxLength: 32, numeric: true },
    { name: "to", length: 20 },
    { name: "value", maxLength: 32, numeric: true },
    { name: "data" },
  ];

  function accessSet(address, storageKeys) {
    return {
      address: utils.getAddress(address),
      storageKeys: (storageKeys || []).map((key, i) => {
        if (utils.hexDataLength(key) !== 32) bad("invalid access list storageKey", `accessList[${address}:${i}]`, key);
        return key.toLowerCase();
      }),
    };
  }
  function accessListify(value) {
    if (Array.isArray(value)) {
      return value.map((set, i) => {
        if (!Array.isArray(set)) return accessSet(set.address, set.storageKeys);
        if (set.length > 2) bad("access list expected to be [ address, storageKeys[] ]", `value[${i}]`, set);
        return accessSet(set[0], set[1]);
      });
    }
    const sets = Object.keys(value).map((address) => accessSet(address, Object.keys(value[address].reduce((keys, k) => ((keys[k] = true), keys), {})).sort()));
    return sets.sort((a, b) => a.address.localeCompare(b.address));
  }
  const accessListFields = (value) => accessListify(value).map((set) => [set.address, set.storageKeys]);
  function number(value, name) {
    const out = utils.stripZeros(BigNumber.from(value).toHexString());
    if (out.length > 32) bad("invalid length for " + name, "transaction:" + name, value);
    return out;
  }

  function serializeLegacy(tx, signature) {
    utils.checkProperties(tx, LEGACY_KEYS);
    const raw = LEGACY_FIELDS.map((field) => {
      let value = utils.arrayify(utils.hexlify(tx[field.name] || [], field.numeric ? { hexPad: "left" } : {}));
      if (field.length && value.length !== field.length && value.length > 0) bad("invalid length for " + field.name, "transaction:" + field.name, value);
      if (field.maxLength) {
        value = utils.stripZeros(value);
        if (value.length > field.maxLength) bad("invalid length for " + field.name, "transaction:" + field.name, value);
      }
      return utils.hexlify(value);
    });
    let chainId = 0;
    if (tx.chainId != null) {
      chainId = tx.chainId;
      if (typeof chainId !== "number") bad("invalid transaction.chainId", "transaction", tx);
    } else if (signature && !utils.isBytesLike(signature) && signature.v > 28) chainId = Math.floor((signature.v - 35) / 2);
    if (chainId !== 0) raw.push(utils.hexlify(chainId), "0x", "0x");
    if (!signature) return utils.RLP.encode(raw);
    const sig = utils.splitSignature(signature);
    let v = 27 + sig.recoveryParam;
    if (chainId !== 0) {
      raw.splice(-3, 3);
      v += chainId * 2 + 8;
      if (sig.v > 28 && sig.v !== v) bad("transaction.chainId/signature.v mismatch", "signature", signature);
    } else if (sig.v !== v) bad("transaction.chainId/signature.v mismatch", "signature", signature);
    raw.push(utils.hexlify(v), utils.stripZeros(utils.arrayify(sig.r)), utils.stripZeros(utils.arrayify(sig.s)));
    return utils.RLP.encode(raw);
  }

  function serializeTyped(type, tx, signature) {
    const fee = type === 2 ? [number(tx.maxPriorityFeePerGas || 0, "maxPriorityFeePerGas"), number(tx.maxFeePerGas || 0, "maxFeePerGas")] : [number(tx.gasPrice || 0, "gasPrice")];
    if (type === 2 && tx.gasPrice != null) {
      const gasPrice = BigNumber.from(tx.gasPrice);
      const maxFeePerGas = BigNumber.from(tx.maxFeePerGas || 0);
      if (!gasPrice.eq(maxFeePerGas)) bad("mismatch EIP-1559 gasPrice != maxFeePerGas", "tx", { gasPrice, maxFeePerGas });
    }
    const fields = [number(tx.chainId || 0, "chainId"), number(tx.nonce || 0, "nonce"), ...fee, number(tx.gasLimit || 0, "gasLimit"), tx.to != null ? utils.getAddress(tx.to) : "0x", number(tx.value || 0, "value"), tx.data || "0x", accessListFields(tx.accessList || [])];
    if (signature) {
      const sig = utils.splitSignature(signature);
      fields.push(number(sig.recoveryParam, "recoveryParam"), utils.stripZeros(sig.r), utils.stripZeros(sig.s));
    }
    return utils.hexConcat([type === 2 ? "0x02" : "0x01", utils.RLP.encode(fields)]);
  }

  function serializeTransaction(tx, signature) {
    if (tx.type == null || tx.type === 0) {
      if (tx.accessList != null) bad("untyped transactions do not support accessList; include type: 1", "transaction", tx);
      return serializeLegacy(tx, signature);
    }
    if (tx.type === 1 || tx.type === 2) return serializeTyped(tx.type, tx, signature);
    return throwError("unsupported transaction type: " + tx.type, errors.UNSUPPORTED_OPERATION, { operation: "serializeTransaction", transactionType: tx.type }, VERSION);
  }

  const handleNumber = (v) => (v === "0x" ? BigNumber.from(0) : BigNumber.from(v));
  const handleAddress = (v) => (v === "0x" ? null : utils.getAddress(v));

  function parseLegacy(payload) {
    const f = utils.RLP.decode(payload);
    if (f.length !== 9 && f.length !== 6) bad("invalid raw transaction", "rawTransaction", payload);
    const tx = { nonce: handleNumber(f[0]).toNumber(), gasPrice: handleNumber(f[1]), gasLimit: handleNumber(f[2]), to: handleAddress(f[3]), value: handleNumber(f[4]), data: f[5], chainId: 0 };
    if (f.length === 6) return tx;
    try {
      tx.v = BigNumber.from(f[6]).toNumber();
    } catch {
      return tx;
    }
    tx.r = utils.hexZeroPad(f[7], 32);
    tx.s = utils.hexZeroPad(f[8], 32);
    if (BigNumber.from(tx.r).isZero() && BigNumber.from(tx.s).isZero()) {
      tx.chainId = tx.v;
      tx.v = 0;
    } else {
      tx.chainId = Math.max(0, Math.floor((tx.v - 35) / 2));
      let recoveryParam = tx.v - 27;
      const raw = f.slice(0, 6);
      if (tx.chainId !== 0) {
        raw.push(utils.hexlify(tx.chainId), "0x", "0x");
        recoveryParam -= tx.chainId * 2 + 8;
      }
      try {
        tx.from = utils.recoverAddress(utils.keccak256(utils.RLP.encode(raw)), { r: tx.r, s: tx.s, recoveryParam });
      } catch {
        // v5 leaves `from` out when the signature does not recover
      }
      tx.hash = utils.keccak256(payload);
    }
    tx.type = null;
    return tx;
  }

  function parseTyped(type, payload) {
    const f = utils.RLP.decode(payload.slice(1));
    const unsigned = type === 2 ? 9 : 8;
    if (f.length !== unsigned && f.length !== unsigned + 3) bad(`invalid component count for transaction type: ${type}`, "payload", utils.hexlify(payload));
    const tx = { type, chainId: handleNumber(f[0]).toNumber(), nonce: handleNumber(f[1]).toNumber() };
    let i = 2;
    if (type === 2) Object.assign(tx, { maxPriorityFeePerGas: handleNumber(f[i++]), maxFeePerGas: handleNumber(f[i++]), gasPrice: null });
    else tx.gasPrice = handleNumber(f[i++]);
    Object.assign(tx, { gasLimit: handleNumber(f[i++]), to: handleAddress(f[i++]), value: handleNumber(f[i++]), data: f[i++], accessList: accessListify(f[i++]) });
    if (f.length === unsigned) return tx;
    tx.hash = utils.keccak256(payload);
    let recid;
    try {
      recid = handleNumber(f[unsigned]).toNumber();
    } catch {
      recid = -1;
    }
    if (recid !== 0 && recid !== 1) bad("invalid v for transaction type: 1", "v", f[unsigned]);
    tx.v = recid;
    tx.r = utils.hexZeroPad(f[unsigned + 1], 32);
    tx.s = utils.hexZeroPad(f[unsigned + 2], 32);
    try {
      tx.from = utils.recoverAddress(utils.keccak256(serializeTyped(type, tx)), { r: tx.r, s: tx.s, recoveryParam: tx.v });
    } catch {
      // as v5: no `from` when the signature does not recover
    }
    return tx;
  }

  function parseTransaction(rawTransaction) {
    const payload = utils.arrayify(rawTransaction);
    if (payload[0] > 0x7f) return parseLegacy(payload);
    if (payload[0] === 1 || payload[0] === 2) return parseTyped(payload[0], payload);
    return throwError("unsupported transaction type: " + payload[0], errors.UNSUPPORTED_OPERATION, { operation: "parseTransaction", transactionType: payload[0] }, VERSION);
  }

  return { serializeTransaction, parseTransaction, accessListify, TransactionTypes: Object.freeze({ legacy: 0, eip2930: 1, eip1559: 2 }) };
})
