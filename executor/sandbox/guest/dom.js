// Guest module: DOMException, Event, CustomEvent, ErrorEvent, EventTarget, AbortController/AbortSignal
// and structuredClone, in plain JavaScript inside QuickJS (as Deno has them, without the parts that
// need a browser).
(function (lib) {
  "use strict";
  const CODES = { IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5, NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14, InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25 };
  class DOMException extends Error {
    #name;
    constructor(message = "", name = "Error") {
      super(String(message));
      this.#name = String(name);
    }
    get name() {
      return this.#name;
    }
    get code() {
      return CODES[this.#name] || 0;
    }
  }

  class Event {
    #type;
    constructor(type, init = {}) {
      if (arguments.length === 0) throw new TypeError("Event: 1 argument required");
      this.#type = String(type);
      this.bubbles = Boolean(init && init.bubbles);
      this.cancelable = Boolean(init && init.cancelable);
      this.defaultPrevented = false;
      this.target = null;
      this.currentTarget = null;
      this.timeStamp = Date.now();
    }
    get type() {
      return this.#type;
    }
    preventDefault() {
      if (this.cancelable) this.defaultPrevented = true;
    }
    stopPropagation() {}
    stopImmediatePropagation() {
      this._stopped = true;
    }
  }

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = {}) {
      if (arguments.length === 0) throw new TypeError("CustomEvent: 1 argument required");
      super(type, init);
      this.#detail = init && init.detail !== undefined ? init.detail : null;
    }
    get detail() {
      return this.#detail;
    }
    get [Symbol.toStringTag]() {
      return "CustomEvent";
    }
  }

  class ErrorEvent extends Event {
    #init;
    constructor(type, init = {}) {
      if (arguments.length === 0) throw new TypeError("ErrorEvent: 1 argument required");
      super(type, init);
      const o = init || {};
      this.#init = { message: o.message === undefined ? "" : String(o.message), filename: o.filename === undefined ? "" : String(o.filename), lineno: o.lineno >>> 0, colno: o.colno >>> 0, error: o.error };
    }
    get message() {
      return this.#init.message;
    }
    get filename() {
      return this.#init.filename;
    }
    get lineno() {
      return this.#init.lineno;
    }
    get colno() {
      return this.#init.colno;
    }
    get error() {
      return this.#init.error;
    }
    get [Symbol.toStringTag]() {
      return "ErrorEvent";
    }
  }

  class EventTarget {
    #listeners = new Map();
    addEventListener(type, listener, options) {
      if (listener === null || listener === undefined) return;
      const once = Boolean(options && typeof options === "object" && options.once);
      const list = this.#listeners.get(type) || [];
      if (!list.some((l) => l.listener === listener)) list.push({ listener, once });
      this.#listeners.set(type, list);
      const signal = options && typeof options === "object" ? options.signal : undefined;
      if (signal instanceof AbortSignal) signal.addEventListener("abort", () => this.removeEventListener(type, listener), { once: true });
    }
    removeEventListener(type, listener) {
      const list = this.#listeners.get(type);
      if (list) this.#listeners.set(type, list.filter((l) => l.listener !== listener));
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError("dispatchEvent: the argument must be an Event");
      event.target = this;
      event.currentTarget = this;
      const handler = this["on" + event.type];
      if (typeof handler === "function") handler.call(this, event);
      for (const l of (this.#listeners.get(event.type) || []).slice()) {
        if (l.once) this.removeEventListener(event.type, l.listener);
        if (typeof l.listener === "function") l.listener.call(this, event);
        else if (l.listener && typeof l.listener.handleEvent === "function") l.listener.handleEvent(event);
        if (event._stopped) break;
      }
      return !event.defaultPrevented;
    }
  }

  const SIGNAL = Symbol("vesta.signal");
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    constructor(key) {
      if (key !== SIGNAL) throw new TypeError("Illegal constructor");
      super();
      this.onabort = null;
    }
    get aborted() {
      return this.#aborted;
    }
    get reason() {
      return this.#reason;
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    _abort(reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? new DOMException("The signal has been aborted", "AbortError") : reason;
      this.dispatchEvent(new Event("abort"));
    }
    static abort(reason) {
      const signal = new AbortSignal(SIGNAL);
      signal._abort(reason);
      return signal;
    }
    static timeout(ms) {
      const signal = new AbortSignal(SIGNAL);
      lib.load("timers").setTimeout(() => signal._abort(new DOMException("The signal timed out", "TimeoutError")), Number(ms));
      return signal;
    }
    static any(signals) {
      const signal = new AbortSignal(SIGNAL);
      for (const s of signals) {
        if (s.aborted) {
          signal._abort(s.reason);
          break;
        }
        s.addEventListener("abort", () => signal._abort(s.reason), { once: true });
      }
      return signal;
    }
  }
  class AbortController {
    #signal = new AbortSignal(SIGNAL);
    get signal() {
      return this.#signal;
    }
    abort(reason) {
      this.#signal._abort(reason);
    }
  }

  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const TYPED = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array];
  // The structured clone algorithm for the values JavaScript has without a browser.
  function structuredClone(value) {
    if (arguments.length === 0) throw new TypeError("structuredClone: 1 argument required");
    const seen = new Map();
    // CreateDataProperty, as the algorithm does (an own "__proto__" key stays a key).
    const put = (o, k, x) => Object.defineProperty(o, k, { value: x, writable: true, enumerable: true, configurable: true });
    const fail = (what) => {
      throw new DOMException(`${what} could not be cloned`, "DataCloneError");
    };
    const clone = (v) => {
      const type = typeof v;
      if (type === "function") return fail("a function");
      if (type === "symbol") return fail("a symbol");
      if (v === null || type !== "object") return v;
      if (seen.has(v)) return seen.get(v);
      const keep = (copy) => (seen.set(v, copy), copy);
      if (Array.isArray(v)) {
        const copy = keep(new Array(v.length));
        for (const k of Object.keys(v)) put(copy, k, clone(v[k]));
        return copy;
      }
      if (v instanceof Date) return keep(new Date(v.getTime()));
      if (v instanceof RegExp) return keep(new RegExp(v.source, v.flags));
      if (v instanceof Boolean || v instanceof Number || v instanceof String || v instanceof BigInt) return keep(Object(v.valueOf()));
      if (v instanceof ArrayBuffer) return keep(v.slice(0));
      if (v instanceof DataView) return keep(new DataView(clone(v.buffer), v.byteOffset, v.byteLength));
      for (const T of TYPED) if (v instanceof T) return keep(new T(clone(v.buffer), v.byteOffset, v.length));
      if (v instanceof Map) {
        const copy = keep(new Map());
        for (const [k, x] of v) copy.set(clone(k), clone(x));
        return copy;
      }
      if (v instanceof Set) {
        const copy = keep(new Set());
        for (const x of v) copy.add(clone(x));
        return copy;
      }
      if (v instanceof Error) {
        const E = ERRORS[v.name] || Error;
        const copy = keep(new E(v.message));
        if (v.stack !== undefined) copy.stack = String(v.stack);
        if ("cause" in v) copy.cause = clone(v.cause);
        return copy;
      }
      if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof AbortSignal) return fail(`a ${v.constructor.name}`);
      const copy = keep({});
      for (const k of Object.keys(v)) put(copy, k, clone(v[k]));
      return copy;
    };
    return clone(value);
  }

  return { DOMException, Event, CustomEvent, ErrorEvent, EventTarget, AbortController, AbortSignal, structuredClone };
})
