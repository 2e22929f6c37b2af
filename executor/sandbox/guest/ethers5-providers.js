// Guest module: ethers v5's JsonRpcProvider (and StaticJsonRpcProvider, JsonRpcBatchProvider), for a
// JSON-RPC URL the action names (Lit.Actions.getRpcUrl({chain}) answers the deployment's). Each
// JSON-RPC request is one `fetch` host call (the host's egress policy, the run's maxFetches and
// maxFetchBytes apply to it); nothing is batched. v5's other providers (WebSocket, Etherscan,
// Infura, Fallback, ...) throw v5's UNSUPPORTED_OPERATION naming JsonRpcProvider. As v5's: answers formatted as its Formatter does (BigNumber amounts, checksummed
// addresses, receipts with confirmations), its errors (SERVER_ERROR, CALL_EXCEPTION with the revert
// data, UNPREDICTABLE_GAS_LIMIT, INSUFFICIENT_FUNDS, NONCE_EXPIRED, TIMEOUT), tx.wait() polling every
// `pollingInterval` (4 s; a receipt already there is answered at once). The network is detected once
// per provider (StaticJsonRpcProvider's behaviour, one request less per call); event listeners
// (on/once) and ENS names are not supported.
(function (lib) {
  "use strict";
  const { utils } = lib.load("ethers5-utils");
  const { BigNumber } = lib.load("ethers5-bignumber");
  const { errors, makeError, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const VERSION = "providers/5.7.2";
  const WEB = "web/5.7.1";
  const ENS = "0x00000000000C2E074eC69A0dFb2997BA6C7d2e1e";
  const NETWORKS = {
    1: ["homestead", ENS], 3: ["ropsten", ENS], 4: ["rinkeby", ENS], 5: ["goerli", ENS], 11155111: ["sepolia", ENS], 17000: ["holesky"], 42: ["kovan"], 2: ["morden"],
    61: ["classic"], 62: ["classicMorden"], 63: ["classicMordor"], 6: ["classicKotti"], 100: ["xdai"], 137: ["matic"], 80001: ["maticmum"], 10: ["optimism"],
    69: ["optimism-kovan"], 420: ["optimism-goerli"], 11155420: ["optimism-sepolia"], 42161: ["arbitrum"], 421611: ["arbitrum-rinkeby"], 421613: ["arbitrum-goerli"],
    421614: ["arbitrum-sepolia"], 56: ["bnb"], 97: ["bnbt"], 1337702: ["kintsugi"], 0: ["unspecified"],
  };
  function getNetwork(network) {
    if (network == null) return null;
    const chainId = typeof network === "number" ? network : network.chainId;
    const known = NETWORKS[chainId];
    if (typeof network === "number") return known ? { name: known[0], chainId, ensAddress: known[1] || null, _defaultProvider: null } : { chainId, name: "unknown" };
    if (typeof network === "string") {
      const id = Object.keys(NETWORKS).find((k) => NETWORKS[k][0] === network);
      return id == null ? null : { name: network, chainId: Number(id), ensAddress: NETWORKS[id][1], _defaultProvider: null };
    }
    if (typeof chainId !== "number") throwArgumentError("invalid network chainId", "network", network, "networks/5.7.1");
    return network;
  }

  // ---- formatting (v5's Formatter) ----
  const number = (v) => BigNumber.from(v).toNumber();
  const big = (v) => BigNumber.from(v);
  const address = (v) => utils.getAddress(v);
  const hex = (v) => utils.hexlify(v);
  function hash(v) {
    const out = utils.hexlify(v);
    if (utils.hexDataLength(out) !== 32) throwArgumentError("invalid hash", "value", v, VERSION);
    return out;
  }
  const opt = (fn, fallback) => (v) => (v == null ? fallback : fn(v));
  const type = (v) => (v === "0x" || v == null ? 0 : number(v));
  // Formatter.check: the format's keys in order, undefined ones left out.
  function check(format, value) {
    const out = {};
    for (const key of Object.keys(format)) {
      const v = format[key](value[key]);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
  const LOG = { transactionIndex: number, blockNumber: number, transactionHash: hash, address, topics: (t) => t.map(hash), data: hex, logIndex: number, blockHash: hash };
  const FILTER_LOG = { blockNumber: opt(number), blockHash: opt(hash), transactionIndex: number, removed: opt((v) => !!v), address, data: (v) => (v ? hex(v) : "0x"), topics: (t) => t.map(hash), transactionHash: hash, logIndex: number };
  const RECEIPT = {
    to: opt(address, null), from: opt(address, null), contractAddress: opt(address, null), transactionIndex: number, root: opt(hex), gasUsed: big, logsBloom: opt(hex), blockHash: hash, transactionHash: hash,
    logs: (logs) => logs.map((l) => check(LOG, l)), blockNumber: number, confirmations: opt(number, null), cumulativeGasUsed: big, effectiveGasPrice: opt(big), status: opt(number), type,
  };
  const TX = {
    hash, type, accessList: opt((v) => lib.load("ethers5-tx").accessListify(v), null), blockHash: opt(hash, null), blockNumber: opt(number, null), transactionIndex: opt(number, null), confirmations: opt(number, null),
    from: address, gasPrice: opt(big), maxPriorityFeePerGas: opt(big), maxFeePerGas: opt(big), gasLimit: big, to: opt(address, null), value: big, nonce: number, data: hex,
    r: opt((v) => utils.hexZeroPad(hex(v), 32)), s: opt((v) => utils.hexZeroPad(hex(v), 32)), v: opt(number), creates: opt(address, null), raw: opt(hex),
  };
  function formatReceipt(value) {
    const receipt = check(RECEIPT, value);
    if (receipt.root != null && receipt.root.length <= 4) {
      receipt.status = number(receipt.root);
      delete receipt.root;
    }
    if (receipt.status != null) receipt.byzantium = true;
    return receipt;
  }
  function formatTransaction(value) {
    const tx = Object.assign({}, value);
    if (tx.gas != null && tx.gasLimit == null) tx.gasLimit = tx.gas;
    if (tx.input != null && tx.data == null) tx.data = tx.input;
    if (tx.to == null && tx.creates == null && tx.from != null) tx.creates = utils.getContractAddress({ from: tx.from, nonce: tx.nonce });
    if ((tx.type === 1 || tx.type === 2 || tx.type === "0x1" || tx.type === "0x2") && tx.accessList == null) tx.accessList = [];
    const out = check(TX, tx);
    if (tx.chainId != null) out.chainId = utils.isHexString(tx.chainId) ? number(tx.chainId) : tx.chainId;
    if (out.blockHash && out.blockHash.replace(/0/g, "") === "x") out.blockHash = null;
    return out;
  }
  function formatBlock(value, withTransactions, provider) {
    const difficulty = value._difficulty != null ? value._difficulty : value.difficulty;
    const tx = withTransactions ? (t) => provider._wrapTransaction(formatTransaction(t)) : hash;
    const block = check(
      { hash: opt(hash), parentHash: hash, number, timestamp: number, nonce: opt(hex), difficulty: (v) => { try { return big(v).toNumber(); } catch { return null; } },
        gasLimit: big, gasUsed: big, miner: opt(address), extraData: hex, transactions: opt((list) => list.map(tx)), baseFeePerGas: opt(big) },
      Object.assign({}, value, { miner: value.miner == null ? value.author : value.miner }),
    );
    block._difficulty = difficulty == null ? null : big(difficulty);
    return block;
  }
  function blockTag(tag) {
    if (tag == null) return "latest";
    if (tag === "earliest") return "0x0";
    if (tag === "latest" || tag === "pending" || tag === "safe" || tag === "finalized") return tag;
    if (typeof tag === "number" || utils.isHexString(tag)) return utils.hexValue(tag);
    throw new Error("invalid blockTag");
  }
  // v5's hexlifyTransaction: what eth_call / eth_estimateGas receive.
  function requestOf(tx) {
    const out = {};
    for (const key of ["gasLimit", "gasPrice", "type", "maxFeePerGas", "maxPriorityFeePerGas", "nonce", "value"]) {
      if (tx[key] != null) out[key === "gasLimit" ? "gas" : key] = utils.hexValue(BigNumber.from(tx[key]));
    }
    for (const key of ["from", "to", "data"]) if (tx[key] != null) out[key] = utils.hexlify(tx[key]);
    if (tx.accessList) out.accessList = lib.load("ethers5-tx").accessListify(tx.accessList);
    return out;
  }

  // ---- errors (v5 JsonRpcProvider's checkError) ----
  function spelunk(value, requireData) {
    if (value == null) return null;
    if (typeof value.message === "string" && /reverted/.test(value.message)) {
      const data = utils.isHexString(value.data) ? value.data : null;
      if (!requireData || data) return { message: value.message, data };
    }
    if (typeof value === "object") {
      for (const key of Object.keys(value)) {
        const found = spelunk(value[key], requireData);
        if (found) return found;
      }
      return null;
    }
    if (typeof value === "string") {
      try {
        return spelunk(JSON.parse(value), requireData);
      } catch {
        return null;
      }
    }
    return null;
  }
  function checkError(method, error, transaction) {
    if (method === "call") {
      const found = spelunk(error, true);
      if (found) return found.data;
      throwError("missing revert data in call exception; Transaction reverted without a reason string", errors.CALL_EXCEPTION, { data: "0x", transaction, error }, VERSION);
    }
    if (method === "estimateGas") {
      const found = spelunk(error.body, false) || spelunk(error, false);
      if (found) throwError("cannot estimate gas; transaction may fail or may require manual gas limit", errors.UNPREDICTABLE_GAS_LIMIT, { reason: found.message, method, transaction, error }, VERSION);
    }
    let message = error.message;
    if (error.code === errors.SERVER_ERROR && error.error && typeof error.error.message === "string") message = error.error.message;
    else if (typeof error.body === "string") message = error.body;
    message = (message || "").toLowerCase();
    const fail = (reason, code) => throwError(reason, code, { error, method, transaction }, VERSION);
    if (/insufficient funds|base fee exceeds gas limit|insufficientfunds/i.test(message)) fail("insufficient funds for intrinsic transaction cost", errors.INSUFFICIENT_FUNDS);
    if (/nonce (is )?too low/i.test(message)) fail("nonce has already been used", errors.NONCE_EXPIRED);
    if (/replacement transaction underpriced|transaction gas price.*too low/i.test(message)) fail("replacement fee too low", errors.REPLACEMENT_UNDERPRICED);
    if (/only replay-protected/i.test(message)) fail("legacy pre-eip-155 transactions not supported", errors.UNSUPPORTED_OPERATION);
    if ((method === "call" || method === "estimateGas") && /gas required exceeds allowance|always failing transaction|execution reverted|revert/.test(message)) {
      fail("cannot estimate gas; transaction may fail or may require manual gas limit", errors.UNPREDICTABLE_GAS_LIMIT);
    }
    throw error;
  }

  const sleep = (ms) => new Promise((resolve) => lib.load("timers").setTimeout(resolve, ms));
  const unsupported = (operation, why) => throwError(why || `${operation} is not supported in the sandbox`, errors.UNSUPPORTED_OPERATION, { operation }, VERSION);

  class JsonRpcProvider {
    constructor(url, network) {
      let connection = url == null ? { url: "http://localhost:8545" } : typeof url === "string" ? { url } : Object.assign({}, url);
      if (typeof connection.url !== "string") throwArgumentError("missing URL", "url", url, VERSION);
      const headers = Object.assign({}, connection.headers);
      if (connection.user != null && connection.password != null) headers.authorization = "Basic " + lib.load("encoding").btoa(`${connection.user}:${connection.password}`);
      connection = Object.freeze(Object.assign(connection, { headers }));
      utils.defineReadOnly(this, "connection", connection);
      utils.defineReadOnly(this, "_isProvider", true);
      utils.defineReadOnly(this, "anyNetwork", network === "any");
      this._network = network == null || network === "any" ? null : getNetwork(network);
      this._networkPromise = null;
      this._nextId = 42;
      this._blockCache = null;
      this.pollingInterval = 4000;
    }
    get network() {
      return this._network;
    }
    get ready() {
      return this.getNetwork();
    }
    async detectNetwork() {
      let chainId;
      try {
        chainId = await this.send("eth_chainId", []);
      } catch {
        chainId = await this.send("net_version", []);
      }
      if (chainId == null) throwError("could not detect network", errors.NETWORK_ERROR, { event: "noNetwork" }, VERSION);
      return getNetwork(number(chainId));
    }
    async getNetwork() {
      if (this._network) return this._network;
      this._networkPromise = this._networkPromise || this.detectNetwork();
      try {
        this._network = await this._networkPromise;
      } catch (error) {
        this._networkPromise = null;
        throw error;
      }
      return this._network;
    }
    // One JSON-RPC request: one fetch through the host.
    async send(method, params) {
      const { url, headers } = this.connection;
      const requestBody = JSON.stringify({ method, params, id: this._nextId++, jsonrpc: "2.0" });
      const details = { requestBody, requestMethod: "POST", url };
      let answer;
      try {
        answer = await lib.call("fetch", { url, method: "POST", headers: Object.assign({ "content-type": "application/json" }, headers), body: requestBody });
      } catch (e) {
        const message = e && e.message ? String(e.message) : String(e);
        if (/timed out/.test(message)) throwError("timeout", errors.TIMEOUT, Object.assign({ timeout: null }, details, { serverError: message }), WEB);
        throwError("missing response", errors.SERVER_ERROR, Object.assign({}, details, { serverError: message }), WEB);
      }
      const body = answer.body;
      if (answer.status < 200 || answer.status >= 300) throwError("bad response", errors.SERVER_ERROR, Object.assign({ status: answer.status, headers: answer.headers, body }, details), WEB);
      let payload;
      try {
        payload = JSON.parse(body);
      } catch (error) {
        throwError("processing response error", errors.SERVER_ERROR, Object.assign({ body, error: error.message }, details), WEB);
      }
      if (payload && payload.error) {
        const error = new Error(payload.error.message);
        error.code = payload.error.code;
        error.data = payload.error.data;
        throwError("processing response error", errors.SERVER_ERROR, Object.assign({ body, error }, details), WEB);
      }
      return payload ? payload.result : undefined;
    }
    async _rpc(method, params, transaction) {
      await this.getNetwork();
      try {
        return await this.send(method, params);
      } catch (error) {
        return checkError(method === "eth_call" ? "call" : method === "eth_estimateGas" ? "estimateGas" : method === "eth_sendRawTransaction" ? "sendTransaction" : method, error, transaction);
      }
    }
    async getBlockNumber() {
      const blockNumber = number(await this._rpc("eth_blockNumber", []));
      this._blockCache = { blockNumber, at: Date.now() };
      return blockNumber;
    }
    // v5's _getInternalBlockNumber: a block number younger than 100 ms + two polling intervals is reused.
    async _internalBlockNumber() {
      const cached = this._blockCache;
      if (cached && Date.now() - cached.at < 100 + 2 * this.pollingInterval) return cached.blockNumber;
      return this.getBlockNumber();
    }
    async getGasPrice() {
      return big(await this._rpc("eth_gasPrice", []));
    }
    async getFeeData() {
      const [block, gasPrice] = await Promise.all([this.getBlock("latest"), this.getGasPrice().catch(() => null)]);
      let lastBaseFeePerGas = null;
      let maxFeePerGas = null;
      let maxPriorityFeePerGas = null;
      if (block && block.baseFeePerGas) {
        lastBaseFeePerGas = block.baseFeePerGas;
        maxPriorityFeePerGas = BigNumber.from("1500000000");
        maxFeePerGas = block.baseFeePerGas.mul(2).add(maxPriorityFeePerGas);
      }
      return { lastBaseFeePerGas, maxFeePerGas, maxPriorityFeePerGas, gasPrice };
    }
    async getBalance(addressOrName, tag) {
      return big(await this._rpc("eth_getBalance", [await this.resolveName(await addressOrName), blockTag(await tag)]));
    }
    async getTransactionCount(addressOrName, tag) {
      return number(await this._rpc("eth_getTransactionCount", [await this.resolveName(await addressOrName), blockTag(await tag)]));
    }
    async getCode(addressOrName, tag) {
      return hex(await this._rpc("eth_getCode", [await this.resolveName(await addressOrName), blockTag(await tag)]));
    }
    async getStorageAt(addressOrName, position, tag) {
      return hex(await this._rpc("eth_getStorageAt", [await this.resolveName(await addressOrName), utils.hexValue(await position), blockTag(await tag)]));
    }
    async _request(transaction) {
      const tx = await utils.resolveProperties(transaction);
      if (tx.to != null) tx.to = await this.resolveName(tx.to);
      if (tx.from != null) tx.from = await this.resolveName(tx.from);
      return tx;
    }
    async call(transaction, tag) {
      const tx = await this._request(transaction);
      return hex(await this._rpc("eth_call", [requestOf(tx), blockTag(await tag)], tx));
    }
    async estimateGas(transaction) {
      const tx = await this._request(transaction);
      return big(await this._rpc("eth_estimateGas", [requestOf(tx)], tx));
    }
    async sendTransaction(signedTransaction) {
      const signed = utils.hexlify(await signedTransaction);
      const tx = lib.load("ethers5-tx").parseTransaction(signed);
      if (tx.confirmations == null) tx.confirmations = 0;
      try {
        return this._wrapTransaction(tx, await this._rpc("eth_sendRawTransaction", [signed], tx));
      } catch (error) {
        error.transaction = tx;
        error.transactionHash = tx.hash;
        throw error;
      }
    }
    _wrapTransaction(tx, hashReturned) {
      if (hashReturned != null && tx.hash !== hashReturned) throwError("Transaction hash mismatch from Provider.sendTransaction.", errors.UNKNOWN_ERROR, { expectedHash: tx.hash, returnedHash: hashReturned }, VERSION);
      tx.wait = async (confirms, timeout) => {
        confirms = confirms == null ? 1 : confirms;
        const receipt = await this._waitForTransaction(tx.hash, confirms, timeout || 0);
        if (receipt == null && confirms === 0) return null;
        if (receipt.status === 0) throwError("transaction failed", errors.CALL_EXCEPTION, { transactionHash: tx.hash, transaction: tx, receipt }, VERSION);
        return receipt;
      };
      return tx;
    }
    // Polls the receipt every pollingInterval; bounded by `timeout` (ms, 0: none), the run's deadline and its fetches.
    async _waitForTransaction(transactionHash, confirms, timeout) {
      const started = Date.now();
      for (;;) {
        const receipt = await this.getTransactionReceipt(transactionHash);
        if ((receipt ? receipt.confirmations : 0) >= confirms) return receipt;
        if (confirms === 0) return null;
        const left = timeout ? timeout - (Date.now() - started) : Infinity;
        if (left <= 0) throwError("timeout exceeded", errors.TIMEOUT, { timeout }, VERSION);
        await sleep(Math.min(this.pollingInterval, left));
      }
    }
    async waitForTransaction(transactionHash, confirmations, timeout) {
      return this._waitForTransaction(transactionHash, confirmations == null ? 1 : confirmations, timeout || 0);
    }
    async getTransaction(transactionHash) {
      const found = await this._rpc("eth_getTransactionByHash", [hash(await transactionHash)]);
      if (found == null) return null;
      const tx = formatTransaction(found);
      if (tx.blockNumber == null) tx.confirmations = 0;
      else if (tx.confirmations == null) tx.confirmations = Math.max(1, (await this._internalBlockNumber()) - tx.blockNumber + 1);
      return this._wrapTransaction(tx);
    }
    async getTransactionReceipt(transactionHash) {
      const found = await this._rpc("eth_getTransactionReceipt", [hash(await transactionHash)]);
      if (found == null) return null;
      const receipt = formatReceipt(found);
      if (receipt.blockNumber == null) receipt.confirmations = 0;
      else if (receipt.confirmations == null) receipt.confirmations = Math.max(1, (await this._internalBlockNumber()) - receipt.blockNumber + 1);
      return receipt;
    }
    async _getBlock(blockHashOrBlockTag, withTransactions) {
      const tag = await blockHashOrBlockTag;
      const found = utils.isHexString(tag, 32) ? await this._rpc("eth_getBlockByHash", [tag, !!withTransactions]) : await this._rpc("eth_getBlockByNumber", [blockTag(tag), !!withTransactions]);
      return found == null ? null : formatBlock(found, withTransactions, this);
    }
    getBlock(blockHashOrBlockTag) {
      return this._getBlock(blockHashOrBlockTag, false);
    }
    getBlockWithTransactions(blockHashOrBlockTag) {
      return this._getBlock(blockHashOrBlockTag, true);
    }
    async getLogs(filter) {
      const f = await utils.resolveProperties(filter || {});
      const params = {};
      if (f.address != null) params.address = Array.isArray(f.address) ? await Promise.all(f.address.map((a) => this.resolveName(a))) : await this.resolveName(f.address);
      if (f.topics != null) params.topics = f.topics;
      if (f.blockHash != null) params.blockHash = hash(f.blockHash);
      else {
        if (f.fromBlock != null) params.fromBlock = blockTag(f.fromBlock);
        if (f.toBlock != null) params.toBlock = blockTag(f.toBlock);
      }
      const logs = await this._rpc("eth_getLogs", [params]);
      return logs.map((log) => {
        if (log.removed == null) log.removed = false;
        return check(FILTER_LOG, log);
      });
    }
    async resolveName(name) {
      name = await name;
      try {
        return address(name);
      } catch (error) {
        if (utils.isHexString(name)) throw error;
      }
      return unsupported("resolveName", `ENS names are not supported in the sandbox (got ${JSON.stringify(String(name).slice(0, 100))}); use an address`);
    }
    async lookupAddress() {
      return null;
    }
    getSigner() {
      return unsupported("getSigner", "the node's own accounts are not reachable from an action; use new ethers.Wallet(privateKey, provider)");
    }
    listAccounts() {
      return this.getSigner();
    }
    on(eventName) {
      return unsupported("on", `event listeners (${String(eventName).slice(0, 64)}) are not supported in the sandbox; poll with getLogs or contract.queryFilter`);
    }
    once(eventName) {
      return this.on(eventName);
    }
    static isProvider(value) {
      return !!(value && value._isProvider);
    }
  }
  class StaticJsonRpcProvider extends JsonRpcProvider {}
  // v5's batching provider: the same requests, sent one at a time (a deployment RPC URL takes no batches).
  class JsonRpcBatchProvider extends JsonRpcProvider {}
  class Provider {
    static isProvider(value) {
      return JsonRpcProvider.isProvider(value);
    }
  }
  // v5's other providers: each a class that throws v5's UNSUPPORTED_OPERATION naming what to use instead.
  const { unsupported: unsupportedName } = lib.load("ethers5-logger");
  const RPC = "use new ethers.providers.JsonRpcProvider(url) with the service's JSON-RPC URL, or await Lit.Actions.getRpcUrl({ chain })";
  const other = (name, why) => {
    const Class = unsupportedName(`ethers.providers.${name}`, why, VERSION);
    for (const method of ["getApiKey", "getUrl", "getNetwork", "defaultUrl"]) Class[method] = unsupportedName(`ethers.providers.${name}.${method}`, why, VERSION);
    return Class;
  };
  const UNSUPPORTED = {
    WebSocketProvider: other("WebSocketProvider", "there are no WebSockets (nor event subscriptions) here; " + RPC),
    AlchemyWebSocketProvider: other("AlchemyWebSocketProvider", "there are no WebSockets here; " + RPC),
    InfuraWebSocketProvider: other("InfuraWebSocketProvider", "there are no WebSockets here; " + RPC),
    IpcProvider: other("IpcProvider", "there is no IPC here; " + RPC),
    FallbackProvider: other("FallbackProvider", "one provider at a time here; " + RPC),
    Web3Provider: other("Web3Provider", "there is no EIP-1193 provider (window.ethereum) here; " + RPC),
    JsonRpcSigner: other("JsonRpcSigner", "the node's own accounts are not reachable from an action; use new ethers.Wallet(privateKey, provider)"),
    Formatter: other("Formatter", "use new ethers.providers.JsonRpcProvider(url), which formats its answers as v5's Formatter does"),
    Resolver: other("Resolver", "there are no ENS names here; use an address"),
  };
  for (const name of ["UrlJsonRpcProvider", "AlchemyProvider", "AnkrProvider", "CloudflareProvider", "EtherscanProvider", "InfuraProvider", "NodesmithProvider", "PocketProvider", "QuickNodeProvider"]) {
    UNSUPPORTED[name] = other(name, `there are no API-key providers here; ${RPC} (the provider's https://... URL with its key works)`);
  }
  const providers = Object.freeze({
    JsonRpcProvider,
    StaticJsonRpcProvider,
    JsonRpcBatchProvider,
    Provider,
    BaseProvider: JsonRpcProvider,
    getNetwork,
    getDefaultProvider: () => unsupported("getDefaultProvider", "there is no default provider in the sandbox; use new ethers.providers.JsonRpcProvider(await Lit.Actions.getRpcUrl({ chain }))"),
    isCommunityResource: (value) => !!(value && typeof value.isCommunityResource === "function" && value.isCommunityResource()),
    isCommunityResourcable: (value) => !!(value && typeof value.isCommunityResource === "function"),
    showThrottleMessage: () => {},
    ...UNSUPPORTED,
  });
  return { providers, makeError };
})
