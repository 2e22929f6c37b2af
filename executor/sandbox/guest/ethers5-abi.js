// Guest module: ethers v5's ABI (@ethersproject/abi): AbiCoder/defaultAbiCoder, Interface, the
// fragments and ParamType. Parsing, encoding and decoding are ethers v6's in the sandbox process
// (../process/ethers5-abi.ts), which answers v5's shapes (fragments as v5 describes them, Results,
// BigNumber for integers wider than 48 bits); the lookups (by name, signature, selector, topic) and
// v5's errors are here. A fragment keeps its v6 JSON (`_json`): each call sends only the fragment it uses.
(function (lib) {
  "use strict";
  const { utils } = lib.load("ethers5-utils");
  const { BigNumber, revive } = lib.load("ethers5-bignumber");
  const { errors, throwError, throwArgumentError, invoke } = lib.load("ethers5-logger");
  const { data } = lib.load("ethers5-calls");
  const call = (name, args) => invoke(name, args, revive); // answers may hold BigNumbers ({$bn}) and Results ({$result})
  const VERSION = "abi/5.7.0";
  const GUARD = {};
  const { defineReadOnly } = utils;
  const hidden = (object, name, value) => Object.defineProperty(object, name, { value, enumerable: false });
  const FormatTypes = Object.freeze({ sighash: "sighash", minimal: "minimal", full: "full", json: "json" });

  class ParamType {
    constructor(guard, d) {
      if (guard !== GUARD) throwError("use fromString", errors.UNSUPPORTED_OPERATION, { operation: "new ParamType()" }, VERSION);
      this.name = d.name;
      this.type = d.type;
      this.baseType = d.baseType;
      this.indexed = d.indexed;
      this.components = d.components ? d.components.map((c) => new ParamType(GUARD, c)) : null;
      this.arrayLength = d.arrayLength;
      this.arrayChildren = d.arrayChildren ? new ParamType(GUARD, d.arrayChildren) : null;
      this._isParamType = true;
      Object.freeze(this);
    }
    format(format) {
      return call("paramFormat5", [this, format || FormatTypes.sighash]);
    }
    static from(value) {
      return ParamType.isParamType(value) ? value : new ParamType(GUARD, call("paramParse5", [value]));
    }
    static fromObject(value) {
      return ParamType.from(value);
    }
    static fromString(value) {
      return ParamType.from(value);
    }
    static isParamType(value) {
      return !!(value != null && value._isParamType);
    }
  }

  class Fragment {
    constructor(guard, d) {
      if (guard !== GUARD) throwError("use a static from method", errors.UNSUPPORTED_OPERATION, { operation: "new Fragment()" }, VERSION);
      defineReadOnly(this, "type", d.type);
      defineReadOnly(this, "name", d.name);
      defineReadOnly(this, "inputs", d.inputs.map((p) => new ParamType(GUARD, p)));
      hidden(this, "_json", d.json);
      hidden(this, "_key", d.selector); // a function's or error's selector, an event's topic
      hidden(this, "_signature", d.signature);
      defineReadOnly(this, "_isFragment", true);
    }
    format(format) {
      format = format || FormatTypes.sighash;
      if (format === FormatTypes.sighash && this._signature) return this._signature;
      return call("fragmentsFormat5", [[this._json], format])[0];
    }
    static from(value) {
      if (Fragment.isFragment(value)) return value;
      return fragmentOf(call("abiParse5", [[value]])[0]);
    }
    static fromObject(value) {
      return Fragment.from(value);
    }
    static fromString(value) {
      return Fragment.from(value);
    }
    static isFragment(value) {
      return !!(value && value._isFragment);
    }
  }
  class FunctionFragment extends Fragment {
    constructor(guard, d) {
      super(guard, d);
      defineReadOnly(this, "constant", d.constant);
      defineReadOnly(this, "outputs", d.outputs.map((p) => new ParamType(GUARD, p)));
      defineReadOnly(this, "payable", d.payable);
      defineReadOnly(this, "stateMutability", d.stateMutability);
      defineReadOnly(this, "gas", d.gas);
    }
    static isFunctionFragment(value) {
      return !!(value && value._isFragment && value.type === "function");
    }
  }
  class EventFragment extends Fragment {
    constructor(guard, d) {
      super(guard, d);
      defineReadOnly(this, "anonymous", d.anonymous);
    }
    static isEventFragment(value) {
      return !!(value && value._isFragment && value.type === "event");
    }
  }
  class ErrorFragment extends Fragment {
    static isErrorFragment(value) {
      return !!(value && value._isFragment && value.type === "error");
    }
  }
  class ConstructorFragment extends Fragment {
    constructor(guard, d) {
      super(guard, d);
      defineReadOnly(this, "payable", d.payable);
      defineReadOnly(this, "stateMutability", d.stateMutability);
      defineReadOnly(this, "gas", d.gas);
    }
    static isConstructorFragment(value) {
      return !!(value && value._isFragment && value.type === "constructor");
    }
  }
  const KINDS = { function: FunctionFragment, event: EventFragment, error: ErrorFragment, constructor: ConstructorFragment };
  const fragmentOf = (d) => new KINDS[d.type](GUARD, d);
  const DEFAULT_CONSTRUCTOR = { type: "constructor", name: null, inputs: [], payable: false, stateMutability: "nonpayable", gas: null, signature: null, selector: null, json: '{"type":"constructor","stateMutability":"nonpayable","payable":false,"inputs":[]}' };

  // Parameter types for the process: a ParamType as its data, a string as it is.
  const typesArg = (types) => Array.from(types, (t) => (ParamType.isParamType(t) ? JSON.parse(JSON.stringify(t)) : t));

  class AbiCoder {
    constructor(coerceFunc) {
      if (coerceFunc) throwError("a coerce function is not supported in the sandbox (decode answers v5's default coercion)", errors.UNSUPPORTED_OPERATION, { operation: "new AbiCoder(coerceFunc)" }, VERSION);
      defineReadOnly(this, "coerceFunc", null);
    }
    encode(types, values) {
      if (types.length !== values.length) throwError("types/values length mismatch", errors.INVALID_ARGUMENT, { count: { types: types.length, values: values.length }, value: { types, values } }, VERSION);
      return call("abiEncode", [typesArg(types), values]);
    }
    decode(types, bytes, loose) {
      return call("abiDecode5", [typesArg(types), data(bytes), !!loose]);
    }
  }
  const defaultAbiCoder = new AbiCoder();

  class Description {
    constructor(info) {
      for (const key in info) this[key] = utils.deepCopy(info[key]);
    }
  }
  class LogDescription extends Description {}
  class TransactionDescription extends Description {}
  class ErrorDescription extends Description {}
  class Indexed extends Description {
    static isIndexed(value) {
      return !!(value && value._isIndexed);
    }
  }

  const BUCKETS = { function: "functions", event: "events", error: "errors" };

  class Interface {
    constructor(fragments) {
      const abi = typeof fragments === "string" ? fragments : Array.from(fragments, (f) => (Fragment.isFragment(f) ? f._json : f));
      defineReadOnly(this, "fragments", call("abiParse5", [abi]).map(fragmentOf));
      defineReadOnly(this, "_abiCoder", new.target.getAbiCoder());
      for (const name of ["functions", "errors", "events", "structs"]) defineReadOnly(this, name, {});
      hidden(this, "_byKey", new Map());
      for (const fragment of this.fragments) {
        if (fragment.type === "constructor") {
          if (!this.deploy) defineReadOnly(this, "deploy", fragment);
          continue;
        }
        const bucket = this[BUCKETS[fragment.type]];
        const signature = fragment.format();
        if (!bucket || bucket[signature]) continue; // v5 warns of a duplicate and keeps the first
        bucket[signature] = fragment;
        if (!this._byKey.has(fragment._key)) this._byKey.set(fragment._key, fragment);
      }
      if (!this.deploy) defineReadOnly(this, "deploy", fragmentOf(DEFAULT_CONSTRUCTOR));
      defineReadOnly(this, "_isInterface", true);
    }
    format(format) {
      format = format || FormatTypes.full;
      if (format === FormatTypes.sighash) throwArgumentError("interface does not support formatting sighash", "format", format, VERSION);
      const out = call("fragmentsFormat5", [this.fragments.map((f) => f._json), format]);
      return format === FormatTypes.json ? JSON.stringify(out.map((j) => JSON.parse(j))) : out;
    }
    _find(kind, key) {
      const bucket = this[BUCKETS[kind]];
      if (utils.isHexString(key)) {
        const found = this._byKey.get(key.toLowerCase());
        if (found && found.type === kind) return found;
        return throwArgumentError(`no matching ${kind}`, kind === "event" ? "topichash" : "sighash", key, VERSION);
      }
      if (key.indexOf("(") === -1) {
        const name = key.trim();
        const matching = Object.keys(bucket).filter((s) => s.split("(")[0] === name);
        if (matching.length === 0) throwArgumentError(`no matching ${kind}`, "name", name, VERSION);
        if (matching.length > 1) throwArgumentError(`multiple matching ${kind}s`, "name", name, VERSION);
        return bucket[matching[0]];
      }
      const found = bucket[key] || bucket[call("signature5", [kind, key])];
      return found || throwArgumentError(`no matching ${kind}`, "signature", key, VERSION);
    }
    getFunction(key) {
      return this._find("function", key);
    }
    getEvent(key) {
      return this._find("event", key);
    }
    getError(key) {
      return this._find("error", key);
    }
    getSighash(fragment) {
      if (typeof fragment === "string") {
        try {
          fragment = this.getFunction(fragment);
        } catch (error) {
          try {
            fragment = this.getError(fragment);
          } catch {
            throw error;
          }
        }
      }
      return Fragment.from(fragment)._key;
    }
    getEventTopic(event) {
      return (typeof event === "string" ? this.getEvent(event) : Fragment.from(event))._key;
    }
    _fragment(kind, value) {
      return typeof value === "string" ? this._find(kind, value) : Fragment.from(value);
    }
    encodeFunctionData(fragment, values) {
      return call("encodeFunctionData5", [this._fragment("function", fragment)._json, values || []]);
    }
    decodeFunctionData(fragment, bytes) {
      return call("decodeFunctionData5", [this._fragment("function", fragment)._json, data(bytes)]);
    }
    encodeFunctionResult(fragment, values) {
      return call("encodeFunctionResult5", [this._fragment("function", fragment)._json, values || []]);
    }
    decodeFunctionResult(fragment, bytes) {
      const raw = utils.arrayify(bytes);
      const error = raw.length % 32 === 4 ? this._byKey.get(utils.hexlify(raw.slice(0, 4))) : undefined;
      const out = call("decodeFunctionResult5", [this._fragment("function", fragment)._json, raw, error && error.type === "error" ? error._json : null]);
      if (out.result) return out.result;
      const { message, ...params } = out.revert;
      return throwError(message, errors.CALL_EXCEPTION, params, VERSION);
    }
    encodeDeploy(values) {
      return call("encodeDeploy5", [this.deploy._json, values || []]);
    }
    encodeErrorResult(fragment, values) {
      return call("encodeErrorResult5", [this._fragment("error", fragment)._json, values || []]);
    }
    decodeErrorResult(fragment, bytes) {
      return call("decodeErrorResult5", [this._fragment("error", fragment)._json, data(bytes)]);
    }
    encodeFilterTopics(event, values) {
      event = this._fragment("event", event);
      if (values.length > event.inputs.length) throwError("too many arguments for " + event.format(), errors.UNEXPECTED_ARGUMENT, { argument: "values", value: values }, VERSION);
      return call("encodeFilterTopics5", [event._json, values]);
    }
    encodeEventLog(event, values) {
      return call("encodeEventLog5", [this._fragment("event", event)._json, values]);
    }
    decodeEventLog(event, bytes, topics) {
      event = this._fragment("event", event);
      if (topics != null && !event.anonymous) {
        const topic = event._key;
        if (!utils.isHexString(topics[0], 32) || topics[0].toLowerCase() !== topic) throwError("fragment/topic mismatch", errors.INVALID_ARGUMENT, { argument: "topics[0]", expected: topic, value: topics[0] }, VERSION);
      }
      return call("decodeEventLog5", [event._json, data(bytes), topics == null ? undefined : Array.from(topics)]);
    }
    parseTransaction(tx) {
      const fragment = this.getFunction(tx.data.substring(0, 10).toLowerCase());
      return new TransactionDescription({ args: this.decodeFunctionData(fragment, tx.data), functionFragment: fragment, name: fragment.name, signature: fragment.format(), sighash: fragment._key, value: BigNumber.from(tx.value || "0") });
    }
    parseLog(log) {
      const fragment = this.getEvent(log.topics[0]);
      if (!fragment || fragment.anonymous) return null;
      return new LogDescription({ eventFragment: fragment, name: fragment.name, signature: fragment.format(), topic: fragment._key, args: this.decodeEventLog(fragment, log.data, log.topics) });
    }
    parseError(bytes) {
      const hex = utils.hexlify(bytes);
      const fragment = this.getError(hex.substring(0, 10).toLowerCase());
      if (!fragment) return null;
      return new ErrorDescription({ args: this.decodeErrorResult(fragment, hex), errorFragment: fragment, name: fragment.name, signature: fragment.format(), sighash: fragment._key });
    }
    static getAbiCoder() {
      return defaultAbiCoder;
    }
    static getAddress(address) {
      return utils.getAddress(address);
    }
    static getSighash(fragment) {
      return Fragment.from(fragment)._key;
    }
    static getEventTopic(event) {
      return Fragment.from(event)._key;
    }
    static isInterface(value) {
      return !!(value && value._isInterface);
    }
  }

  const checkResultErrors = () => []; // a value that does not decode fails the whole decode here
  return { AbiCoder, defaultAbiCoder, Interface, Fragment, FunctionFragment, EventFragment, ErrorFragment, ConstructorFragment, ParamType, FormatTypes, Indexed, LogDescription, TransactionDescription, ErrorDescription, checkResultErrors };
})
