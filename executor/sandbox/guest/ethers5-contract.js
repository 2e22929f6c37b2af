// Guest module: ethers v5's Contract and ContractFactory (@ethersproject/contracts) over the v5
// Interface, Signer and JsonRpcProvider: a member per function (by unique name and by signature)
// that calls (view/pure: eth_call, the single output unwrapped) or sends (a signer's transaction,
// whose wait() adds the decoded `events`), `functions`, `callStatic`, `estimateGas`,
// `populateTransaction`, `filters` and `queryFilter`. Event listeners (on/once) are not supported.
(function (lib) {
  "use strict";
  const { utils } = lib.load("ethers5-utils");
  const { BigNumber } = lib.load("ethers5-bignumber");
  const { errors, throwError, throwArgumentError } = lib.load("ethers5-logger");
  const { Interface, Indexed } = lib.load("ethers5-abi");
  const { Signer, VoidSigner } = lib.load("ethers5-signer");
  const VERSION = "contracts/5.7.0";
  const { defineReadOnly, shallowCopy, resolveProperties } = utils;
  const isProvider = (v) => !!(v && v._isProvider);
  const OVERRIDES = ["nonce", "gasLimit", "gasPrice", "from", "value", "type", "accessList", "maxFeePerGas", "maxPriorityFeePerGas", "customData", "ccipReadEnabled"];

  function checkArgumentCount(count, expected, message) {
    if (count < expected) throwError("missing argument" + message, errors.MISSING_ARGUMENT, { count, expectedCount: expected }, VERSION);
    if (count > expected) throwError("too many arguments" + message, errors.UNEXPECTED_ARGUMENT, { count, expectedCount: expected }, VERSION);
  }
  const lastIsOverrides = (args, inputs) => args.length === inputs.length + 1 && args[args.length - 1] !== null && typeof args[args.length - 1] === "object";

  async function populate(contract, fragment, args) {
    const overrides = lastIsOverrides(args, fragment.inputs) ? shallowCopy(args.pop()) : {};
    checkArgumentCount(args.length, fragment.inputs.length, ": passed to contract");
    if (contract.signer) {
      const own = contract.signer.getAddress();
      overrides.from = overrides.from
        ? Promise.all([contract.signer.resolveName(overrides.from), own]).then(([override, signer]) => {
            if (utils.getAddress(signer) !== override) throwError("Contract with a Signer cannot override from", errors.UNSUPPORTED_OPERATION, { operation: "overrides.from" }, VERSION);
            return override;
          })
        : own;
    } else if (overrides.from) overrides.from = contract.provider.resolveName(overrides.from);
    const resolved = await resolveProperties({ args: Promise.all(args), address: contract.resolvedAddress, overrides: resolveProperties(overrides) });
    const data = contract.interface.encodeFunctionData(fragment, resolved.args);
    const tx = { data, to: resolved.address };
    const ro = resolved.overrides;
    if (ro.nonce != null) tx.nonce = BigNumber.from(ro.nonce).toNumber();
    for (const key of ["gasLimit", "gasPrice", "maxFeePerGas", "maxPriorityFeePerGas"]) if (ro[key] != null) tx[key] = BigNumber.from(ro[key]);
    if (ro.from != null) tx.from = ro.from;
    if (ro.type != null) tx.type = ro.type;
    if (ro.accessList != null) tx.accessList = utils.accessListify(ro.accessList);
    if (tx.gasLimit == null && fragment.gas != null) {
      const bytes = utils.arrayify(data);
      let intrinsic = 21000;
      for (let i = 0; i < bytes.length; i++) intrinsic += bytes[i] ? 68 : 4;
      tx.gasLimit = BigNumber.from(fragment.gas).add(intrinsic);
    }
    if (ro.value) {
      const value = BigNumber.from(ro.value);
      if (!value.isZero() && !fragment.payable) throwError("non-payable method cannot override value", errors.UNSUPPORTED_OPERATION, { operation: "overrides.value", value: overrides.value }, VERSION);
      tx.value = value;
    }
    if (ro.customData) tx.customData = shallowCopy(ro.customData);
    if (ro.ccipReadEnabled) tx.ccipReadEnabled = !!ro.ccipReadEnabled;
    const leftovers = Object.keys(overrides).filter((key) => OVERRIDES.indexOf(key) === -1 && overrides[key] != null);
    if (leftovers.length) throwError(`cannot override ${leftovers.map((l) => JSON.stringify(l)).join(",")}`, errors.UNSUPPORTED_OPERATION, { operation: "overrides", overrides: leftovers }, VERSION);
    return tx;
  }

  function buildCall(contract, fragment, collapseSimple) {
    return async function (...args) {
      const runner = contract.signer || contract.provider;
      if (!runner) throwError("a provider or signer is needed to call a contract", errors.UNSUPPORTED_OPERATION, { operation: "call" }, VERSION);
      let blockTag;
      if (lastIsOverrides(args, fragment.inputs)) {
        const overrides = shallowCopy(args.pop());
        if (overrides.blockTag != null) blockTag = await overrides.blockTag;
        delete overrides.blockTag;
        args.push(overrides);
      }
      if (contract.deployTransaction != null) await contract._deployed(blockTag);
      const tx = await populate(contract, fragment, args);
      const result = await runner.call(tx, blockTag);
      try {
        const value = contract.interface.decodeFunctionResult(fragment, result);
        return collapseSimple && fragment.outputs.length === 1 ? value[0] : value;
      } catch (error) {
        if (error.code === errors.CALL_EXCEPTION) Object.assign(error, { address: contract.address, args, transaction: tx });
        throw error;
      }
    };
  }
  // The receipt's logs, each with `event`, `args` and `decode` when this contract's ABI knows it.
  function withEvents(contract, tx) {
    const wait = tx.wait.bind(tx);
    tx.wait = (confirmations) =>
      wait(confirmations).then((receipt) => {
        receipt.events = receipt.logs.map((log) => {
          const event = Object.assign({}, log, { topics: log.topics.slice() });
          let parsed = null;
          try {
            parsed = contract.interface.parseLog(log);
          } catch {
            // a log of another contract or event
          }
          if (parsed) Object.assign(event, { args: parsed.args, decode: (d, t) => contract.interface.decodeEventLog(parsed.eventFragment, d, t), event: parsed.name, eventSignature: parsed.signature });
          event.getBlock = () => contract.provider.getBlock(receipt.blockHash);
          event.getTransaction = () => contract.provider.getTransaction(receipt.transactionHash);
          event.getTransactionReceipt = () => Promise.resolve(receipt);
          return event;
        });
        return receipt;
      });
  }
  function buildSend(contract, fragment) {
    return async function (...args) {
      if (!contract.signer) throwError("sending a transaction requires a signer", errors.UNSUPPORTED_OPERATION, { operation: "sendTransaction" }, VERSION);
      if (contract.deployTransaction != null) await contract._deployed();
      const tx = await contract.signer.sendTransaction(await populate(contract, fragment, args));
      withEvents(contract, tx);
      return tx;
    };
  }
  function buildEstimate(contract, fragment) {
    return async function (...args) {
      const runner = contract.signer || contract.provider;
      if (!runner) throwError("estimate require a provider or signer", errors.UNSUPPORTED_OPERATION, { operation: "estimateGas" }, VERSION);
      return runner.estimateGas(await populate(contract, fragment, args));
    };
  }
  const buildDefault = (contract, fragment, collapse) => (fragment.constant ? buildCall(contract, fragment, collapse) : buildSend(contract, fragment));

  class Contract {
    constructor(addressOrName, contractInterface, signerOrProvider) {
      defineReadOnly(this, "interface", new.target.getInterface(contractInterface));
      if (signerOrProvider == null) (defineReadOnly(this, "provider", null), defineReadOnly(this, "signer", null));
      else if (Signer.isSigner(signerOrProvider)) (defineReadOnly(this, "provider", signerOrProvider.provider || null), defineReadOnly(this, "signer", signerOrProvider));
      else if (isProvider(signerOrProvider)) (defineReadOnly(this, "provider", signerOrProvider), defineReadOnly(this, "signer", null));
      else throwArgumentError("invalid signer or provider", "signerOrProvider", signerOrProvider, VERSION);
      for (const name of ["callStatic", "estimateGas", "functions", "populateTransaction", "filters"]) defineReadOnly(this, name, {});
      if (addressOrName == null) throwArgumentError("invalid contract address or ENS name", "addressOrName", addressOrName, VERSION);
      defineReadOnly(this, "address", addressOrName);
      const resolved = this.provider ? this.provider.resolveName(addressOrName) : Promise.resolve().then(() => utils.getAddress(addressOrName));
      resolved.catch(() => {});
      defineReadOnly(this, "resolvedAddress", resolved);
      const byName = {};
      for (const signature of Object.keys(this.interface.events)) {
        const event = this.interface.events[signature];
        defineReadOnly(this.filters, signature, (...args) => ({ address: this.address, topics: this.interface.encodeFilterTopics(event, args) }));
        (byName[`%${event.name}`] = byName[`%${event.name}`] || []).push(signature);
      }
      for (const key of Object.keys(byName)) if (byName[key].length === 1) defineReadOnly(this.filters, key.substring(1), this.filters[byName[key][0]]);
      const functionsByName = {};
      for (const signature of Object.keys(this.interface.functions)) {
        const fragment = this.interface.functions[signature];
        (functionsByName[`%${fragment.name}`] = functionsByName[`%${fragment.name}`] || []).push(signature);
        if (this[signature] == null) defineReadOnly(this, signature, buildDefault(this, fragment, true));
        if (this.functions[signature] == null) defineReadOnly(this.functions, signature, buildDefault(this, fragment, false));
        if (this.callStatic[signature] == null) defineReadOnly(this.callStatic, signature, buildCall(this, fragment, true));
        if (this.populateTransaction[signature] == null) defineReadOnly(this.populateTransaction, signature, (...args) => populate(this, fragment, args));
        if (this.estimateGas[signature] == null) defineReadOnly(this.estimateGas, signature, buildEstimate(this, fragment));
      }
      for (const key of Object.keys(functionsByName)) {
        if (functionsByName[key].length > 1) continue;
        const name = key.substring(1);
        const signature = functionsByName[key][0];
        for (const bucket of [this, this.functions, this.callStatic, this.populateTransaction, this.estimateGas]) if (bucket[name] == null) defineReadOnly(bucket, name, bucket[signature]);
      }
    }
    static getContractAddress(transaction) {
      return utils.getContractAddress(transaction);
    }
    static getInterface(contractInterface) {
      return Interface.isInterface(contractInterface) ? contractInterface : new Interface(contractInterface);
    }
    static isIndexed(value) {
      return Indexed.isIndexed(value);
    }
    deployed() {
      return this._deployed();
    }
    _deployed(blockTag) {
      if (!this._deployedPromise) {
        const check = () =>
          this.provider.getCode(this.address, blockTag).then((code) => {
            if (code === "0x") throwError("contract not deployed", errors.UNSUPPORTED_OPERATION, { contractAddress: this.address, operation: "getDeployed" }, VERSION);
            return this;
          });
        Object.defineProperty(this, "_deployedPromise", { value: this.deployTransaction ? this.deployTransaction.wait().then(() => this) : check(), enumerable: false });
      }
      return this._deployedPromise;
    }
    connect(signerOrProvider) {
      if (typeof signerOrProvider === "string") signerOrProvider = new VoidSigner(signerOrProvider, this.provider);
      const contract = new this.constructor(this.address, this.interface, signerOrProvider);
      if (this.deployTransaction) defineReadOnly(contract, "deployTransaction", this.deployTransaction);
      return contract;
    }
    attach(addressOrName) {
      return new this.constructor(addressOrName, this.interface, this.signer || this.provider);
    }
    _runningFilter(event) {
      if (typeof event === "string") {
        if (event === "*") return { filter: { address: this.address }, fragment: null };
        const fragment = this.interface.getEvent(event);
        return { filter: { address: this.address, topics: [this.interface.getEventTopic(fragment)] }, fragment };
      }
      if (event && event.topics && event.topics.length > 0 && typeof event.topics[0] === "string") {
        let fragment = null;
        try {
          fragment = this.interface.getEvent(event.topics[0]);
        } catch {
          // topics of no event of this ABI: logs answered undecoded
        }
        return { filter: { address: this.address, topics: event.topics }, fragment };
      }
      return { filter: { address: this.address }, fragment: null };
    }
    async queryFilter(event, fromBlockOrBlockhash, toBlock) {
      const { filter, fragment } = this._runningFilter(event);
      const query = shallowCopy(filter);
      if (typeof fromBlockOrBlockhash === "string" && utils.isHexString(fromBlockOrBlockhash, 32)) {
        if (toBlock != null) throwArgumentError("cannot specify toBlock with blockhash", "toBlock", toBlock, VERSION);
        query.blockHash = fromBlockOrBlockhash;
      } else {
        query.fromBlock = fromBlockOrBlockhash != null ? fromBlockOrBlockhash : 0;
        query.toBlock = toBlock != null ? toBlock : "latest";
      }
      const logs = await this.provider.getLogs(query);
      return logs.map((log) => {
        const event = Object.assign({}, log, { topics: log.topics.slice() });
        event.getBlock = () => this.provider.getBlock(log.blockHash);
        event.getTransaction = () => this.provider.getTransaction(log.transactionHash);
        event.getTransactionReceipt = () => this.provider.getTransactionReceipt(log.transactionHash);
        try {
          const parsed = fragment ? { eventFragment: fragment, name: fragment.name, signature: fragment.format() } : this.interface.parseLog(event);
          Object.assign(event, { event: parsed.name, eventSignature: parsed.signature, decode: (d, t) => this.interface.decodeEventLog(parsed.eventFragment, d, t) });
          event.args = parsed.args || event.decode(event.data, event.topics);
        } catch (error) {
          if (fragment) (event.args = null), (event.decodeError = error);
        }
        return event;
      });
    }
    on(event) {
      return throwError(`contract event listeners (${typeof event === "string" ? event.slice(0, 64) : "filter"}) are not supported in the sandbox; use queryFilter`, errors.UNSUPPORTED_OPERATION, { operation: "on" }, VERSION);
    }
    once(event) {
      return this.on(event);
    }
  }

  class ContractFactory {
    constructor(contractInterface, bytecode, signer) {
      let code = null;
      if (typeof bytecode === "string") code = bytecode.substring(0, 2) === "0x" ? bytecode : "0x" + bytecode;
      else if (utils.isBytes(bytecode)) code = utils.hexlify(bytecode);
      else if (bytecode && typeof bytecode.object === "string") code = bytecode.object.substring(0, 2) === "0x" ? bytecode.object : "0x" + bytecode.object;
      if (!utils.isHexString(code) || code.length % 2) throwArgumentError("invalid bytecode", "bytecode", bytecode, VERSION);
      if (signer && !Signer.isSigner(signer)) throwArgumentError("invalid signer", "signer", signer, VERSION);
      defineReadOnly(this, "bytecode", code);
      defineReadOnly(this, "interface", new.target.getInterface(contractInterface));
      defineReadOnly(this, "signer", signer || null);
    }
    getDeployTransaction(...args) {
      const deploy = this.interface.deploy;
      const tx = lastIsOverrides(args, deploy.inputs) ? shallowCopy(args.pop()) : {};
      for (const key of ["data", "from", "to"]) if (tx[key] != null) throwError("cannot override " + key, errors.UNSUPPORTED_OPERATION, { operation: key }, VERSION);
      if (tx.value && !BigNumber.from(tx.value).isZero() && !deploy.payable) throwError("non-payable constructor cannot override value", errors.UNSUPPORTED_OPERATION, { operation: "overrides.value", value: tx.value }, VERSION);
      checkArgumentCount(args.length, deploy.inputs.length, " in Contract constructor");
      tx.data = utils.hexlify(utils.concat([this.bytecode, this.interface.encodeDeploy(args)]));
      return tx;
    }
    async deploy(...args) {
      if (!this.signer) throwError("deploying a contract requires a signer", errors.UNSUPPORTED_OPERATION, { operation: "deploy" }, VERSION);
      const tx = await this.signer.sendTransaction(this.getDeployTransaction(...(await Promise.all(args))));
      const contract = new Contract(utils.getContractAddress(tx), this.interface, this.signer);
      withEvents(contract, tx);
      defineReadOnly(contract, "deployTransaction", tx);
      return contract;
    }
    attach(address) {
      return new Contract(address, this.interface, this.signer);
    }
    connect(signer) {
      return new this.constructor(this.interface, this.bytecode, signer);
    }
    static fromSolidity(output, signer) {
      if (typeof output === "string") output = JSON.parse(output);
      const bytecode = output.bytecode != null ? output.bytecode : output.evm && output.evm.bytecode;
      return new this(output.abi, bytecode, signer);
    }
    static getInterface(contractInterface) {
      return Contract.getInterface(contractInterface);
    }
    static getContractAddress(tx) {
      return utils.getContractAddress(tx);
    }
  }
  return { Contract, BaseContract: Contract, ContractFactory };
})
