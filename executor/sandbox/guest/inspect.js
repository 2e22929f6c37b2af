// Guest module: Deno 2.2.2's inspect (ext/console/01_console.js, after Node's util.inspect) with
// colors off, for guest/console.js: what console.* print for a value that is not a string. Format
// specifiers aside, the algorithm is Deno's: quoting, 80 columns, "compact 3", grouped arrays,
// depth 4, 100 items, 10,000 characters of a nested string, circular references, the sandbox's
// own classes as Deno prints its equivalents. Written for QuickJS, which cannot see a Promise's
// state, preview an iterator or look through a Proxy (executor/sandbox/README.md, "console", lists
// what differs). Bounded work against hostile values: no getter is called (Deno calls none),
// prototype walks, cause chains, nested errors and custom inspectors are bounded, and a hostile
// Proxy's trap throws to the action as in Deno.
(function (lib) {
  "use strict";
  const { getOwnPropertyDescriptor: describe, getOwnPropertySymbols: symbolsOf, getPrototypeOf: protoOf, keys: keysOf, hasOwn } = Object;
  const { apply, has: hasProperty } = Reflect;
  const isArray = Array.isArray;
  const ObjectPrototype = Object.prototype;
  const isEnumerable = ObjectPrototype.propertyIsEnumerable;
  const getter = (proto, key) => describe(proto, key).get;
  const TypedArrayPrototype = protoOf(Uint8Array.prototype);
  const typedArrayName = getter(TypedArrayPrototype, Symbol.toStringTag);
  const typedArrayLength = getter(TypedArrayPrototype, "length");
  const mapSize = getter(Map.prototype, "size");
  const setSize = getter(Set.prototype, "size");
  const mapEntries = Map.prototype.entries;
  const setValues = Set.prototype.values;
  const MapIteratorPrototype = protoOf(new Map().entries());
  const SetIteratorPrototype = protoOf(new Set().values());
  const mapNext = MapIteratorPrototype.next;
  const setNext = SetIteratorPrototype.next;
  const bufferLength = getter(ArrayBuffer.prototype, "byteLength");
  const sharedLength = typeof SharedArrayBuffer === "function" ? getter(SharedArrayBuffer.prototype, "byteLength") : undefined;
  const regExpSource = getter(RegExp.prototype, "source");
  const regExpToString = RegExp.prototype.toString;
  const dateTime = Date.prototype.getTime;
  const dateIso = Date.prototype.toISOString;
  const symbolToString = Symbol.prototype.toString;
  const symbolDescription = getter(Symbol.prototype, "description");
  const errorToString = Error.prototype.toString;
  const isError = typeof Error.isError === "function" ? Error.isError : (v) => ObjectPrototype.isPrototypeOf.call(Error.prototype, v);
  const functionSource = Function.prototype.toString;
  const AsyncFunctionPrototype = protoOf(async function () {});
  const GeneratorFunctionPrototype = protoOf(function* () {});
  const AsyncGeneratorFunctionPrototype = protoOf(async function* () {});
  // Boxed primitives: the prototype whose valueOf reads the primitive (throws on anything else).
  const BOXED = [
    ["Number", Number.prototype],
    ["String", String.prototype],
    ["Boolean", Boolean.prototype],
    ["BigInt", BigInt.prototype],
    ["Symbol", Symbol.prototype],
  ].map(([type, proto]) => ({ type, proto, valueOf: proto.valueOf }));
  const CUSTOM = Symbol.for("Deno.customInspect");
  const PRIVATE_CUSTOM = Symbol.for("Deno.privateCustomInspect");
  const NODE_CUSTOM = Symbol.for("nodejs.util.inspect.custom");

  const OBJECT = 0; // kObjectType: properties of an object
  const ITEM = 1; // kArrayType: items of an array (no key shown)
  const EXTRA = 2; // kArrayExtrasType: keys beside an array's items
  const MIN_LINE = 16; // a string shorter than this is never split into lines
  const MAX_DEPTH = 32; // the deepest console.dir's depth option may reach (null and Infinity included)
  const MAX_NESTING = 16; // errors inside causes and AggregateErrors, custom inspectors inside each other
  const MAX_PROTOS = 256; // a prototype chain longer than this (a lying Proxy) ends there
  const MAX_CAUSES = 1000; // an error's cause chain printed at most this long
  const MAX_KEY_SCAN = 65536; // an array or typed array longer than this: its extra keys are not looked up
  const BUDGET = 2 ** 20; // characters at one indentation level past which nested objects print as [Object] (Deno: 2 ** 27)
  const IDENTIFIER = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
  const PLAIN_SYMBOL = /^[a-zA-Z_][a-zA-Z_.0-9]*$/;
  const INDEX = /^(0|[1-9][0-9]*)$/;
  const PRINTABLE = /^[\x20-\x7e]*$/;
  const PLAIN_STRING = /^[^"\\\x00-\x1f\x7f-\x9f]*$/; // quoted with " and nothing escaped
  const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
  const KEY_CONTROL = /[\x00-\x1f\x27\x5c\x7f-\x9f]/g;
  const NAMED_ESCAPES = { 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" };
  const QUOTED = { '"': /["\\]/g, "'": /['\\]/g, "`": /[`\\]/g };
  const hex2 = (code) => (code < 16 ? "0" : "") + code.toString(16);
  let nesting = 0; // how deep the current call is in nested errors and custom inspectors (module-wide: they start fresh contexts)

  // A context: one inspection's state, over Deno's default options (its prototype: a context is made for every console call).
  const DEFAULTS = { depth: 4, breakLength: 80, compact: 3, sorted: false, getters: false, trailingComma: false, escapeSequences: true, customInspect: true, maxArrayLength: 100, maxStringLength: 10000, iterableLimit: 100 };
  const newContext = () => ({ __proto__: DEFAULTS, seen: [], circular: undefined, budget: undefined, indentationLvl: 0, currentDepth: 0 });
  /** A copy of ctx (Deno's inspect(value, ctx) in its own inspectors): the same seen list, budget and circular marks. */
  const copyContext = (ctx, extra) => Object.assign(Object.create(DEFAULTS), ctx, extra);
  /** ctx as a plain object, for a custom inspector (Deno hands its context over). */
  const userContext = (ctx) => Object.assign({}, DEFAULTS, ctx);
  const isNumber = (v) => typeof v === "number" && v === v;
  const limit = (v) => (v === null || v === Infinity ? Infinity : isNumber(v) ? Math.max(0, v) : undefined);
  /** A context from inspect options (console.dir's, or a custom inspector's): known fields of the right type only, depth within MAX_DEPTH. */
  function contextWith(options) {
    const ctx = newContext();
    if (options === null || typeof options !== "object") return ctx;
    const o = { ...options };
    if (o.depth === null || o.depth === Infinity) ctx.depth = MAX_DEPTH;
    else if (isNumber(o.depth)) ctx.depth = Math.min(o.depth, MAX_DEPTH);
    if (isNumber(o.breakLength) || o.breakLength === Infinity) ctx.breakLength = o.breakLength;
    if (typeof o.compact === "boolean" || isNumber(o.compact)) ctx.compact = o.compact;
    if (typeof o.sorted === "boolean" || typeof o.sorted === "function") ctx.sorted = o.sorted;
    if (typeof o.getters === "boolean" || o.getters === "get" || o.getters === "set") ctx.getters = o.getters;
    for (const flag of ["trailingComma", "escapeSequences", "customInspect"]) if (typeof o[flag] === "boolean") ctx[flag] = o[flag];
    for (const [key, into] of [["maxArrayLength", "maxArrayLength"], ["maxStringLength", "maxStringLength"], ["iterableLimit", "iterableLimit"], ["iterableLimit", "maxArrayLength"], ["strAbbreviateSize", "maxStringLength"]]) {
      if (o[key] !== undefined && limit(o[key]) !== undefined) ctx[into] = limit(o[key]);
    }
    // What Deno's own inspectors pass on to a nested inspect (a custom inspector may hand them back).
    if (isNumber(o.indentationLvl)) ctx.indentationLvl = Math.min(Math.max(0, o.indentationLvl), 1000);
    if (isNumber(o.currentDepth)) ctx.currentDepth = o.currentDepth;
    if (isArray(o.seen) && o.seen.length <= MAX_DEPTH * 4) ctx.seen = o.seen;
    if (o.circular instanceof Map) ctx.circular = o.circular;
    return ctx;
  }

  // ---- primitives

  const formatNumber = (value) => (value === 0 && 1 / value < 0 ? "-0" : `${value}`);
  const formatBigInt = (value) => `${value}n`;

  function escapeControl(c) {
    const code = c.charCodeAt(0);
    return NAMED_ESCAPES[code] || "\\x" + hex2(code);
  }
  /** The string in the first of " ' ` it does not contain (else "), with that quote, backslashes and control characters escaped. */
  function quoteString(string, ctx) {
    if (PLAIN_STRING.test(string)) return `"${string}"`;
    const quote = !string.includes('"') ? '"' : !string.includes("'") ? "'" : !string.includes("`") ? "`" : '"';
    string = string.replace(QUOTED[quote], "\\$&");
    if (ctx.escapeSequences) string = string.replace(CONTROL, escapeControl);
    return quote + string + quote;
  }
  function escapeKey(c) {
    const code = c.charCodeAt(0);
    if (code === 0x27) return "\\'";
    if (code === 0x5c) return "\\\\";
    return code >= 8 && code <= 13 && code !== 11 ? NAMED_ESCAPES[code] : "\\x" + code.toString(16).toUpperCase().padStart(2, "0");
  }
  function maybeQuoteSymbol(symbol, ctx) {
    const description = apply(symbolDescription, symbol, []);
    if (description === undefined || PLAIN_SYMBOL.test(description)) return apply(symbolToString, symbol, []);
    return `Symbol(${quoteString(description, ctx)})`;
  }
  /** Splits after each line feed (the last piece keeps what follows the last one, if anything). */
  function splitLines(value) {
    const lines = [];
    let start = 0;
    for (let i = value.indexOf("\n"); i !== -1 && i < value.length - 1; i = value.indexOf("\n", start)) {
      lines.push(value.slice(start, i + 1));
      start = i + 1;
    }
    lines.push(value.slice(start));
    return lines;
  }
  function formatPrimitive(value, ctx) {
    switch (typeof value) {
      case "string": {
        let trailer = "";
        if (value.length > ctx.maxStringLength) {
          const remaining = value.length - ctx.maxStringLength;
          value = value.slice(0, ctx.maxStringLength);
          trailer = `... ${remaining} more character${remaining > 1 ? "s" : ""}`;
        }
        if (ctx.compact !== true && value.length > MIN_LINE && value.length > ctx.breakLength - ctx.indentationLvl - 4) {
          return splitLines(value).map((line) => quoteString(line, ctx)).join(` +\n${" ".repeat(ctx.indentationLvl + 2)}`) + trailer;
        }
        return quoteString(value, ctx) + trailer;
      }
      case "number":
        return formatNumber(value);
      case "bigint":
        return formatBigInt(value);
      case "boolean":
        return `${value}`;
      case "undefined":
        return "undefined";
      default:
        return maybeQuoteSymbol(value, ctx);
    }
  }

  // ---- what a value is (brand checks guarded by the prototype chain: a failed check would throw, which costs)

  /** The prototypes above `value`, nearest first (bounded: a Proxy may invent an endless chain). */
  function protoChain(value) {
    const chain = [];
    for (let p = protoOf(value); p !== null && chain.length < MAX_PROTOS; p = protoOf(p)) chain.push(p);
    return chain;
  }
  /** fn applied to value, or `fail` when value is not of fn's kind (fn throws). */
  function attempt(fn, value, fail) {
    try {
      return apply(fn, value, []);
    } catch {
      return fail;
    }
  }
  const NOT = {};
  const brand = (chain, proto, fn, value) => chain.includes(proto) && attempt(fn, value, NOT) !== NOT;
  const internalName = (value) => (typeof value === "function" ? "Function" : isArray(value) ? "Array" : "Object");

  /** Deno's getConstructorName: the name of the first constructor up the chain whose prototype is in value's chain; null for a null prototype. */
  function constructorName(ctx, value, chain, recurseTimes) {
    for (let i = 0, obj = value; ; obj = chain[i++]) {
      let descriptor;
      try {
        descriptor = obj !== value || hasOwn(value, "constructor") ? describe(obj, "constructor") : undefined;
      } catch {
        /* a Proxy's trap may throw */
      }
      if (descriptor !== undefined && typeof descriptor.value === "function" && descriptor.value.name !== "" && chain.includes(descriptor.value.prototype)) {
        return String(descriptor.value.name);
      }
      if (i >= chain.length) break;
    }
    if (chain.length === 0) return null;
    const res = internalName(value);
    if (recurseTimes > ctx.depth) return `${res} <Complex prototype>`;
    const protoConstructor = constructorName(ctx, chain[0], chain.slice(1), recurseTimes + 1);
    if (protoConstructor === null) {
      const inner = copyContext(ctx, { customInspect: false, depth: -1 });
      return `${res} <${formatValue(inner, chain[0], 0)}>`;
    }
    return `${res} <${protoConstructor}>`;
  }

  function getPrefix(constructor, tag, fallback, size = "") {
    if (constructor === null) {
      if (tag !== "" && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== "" && constructor !== tag) return `${constructor}${size} [${tag}] `;
    return `${constructor}${size} `;
  }
  function getCtxStyle(value, constructor, tag) {
    let fallback = "";
    if (constructor === null) {
      fallback = internalName(value);
      if (fallback === tag) fallback = "Object";
    }
    return getPrefix(constructor, tag, fallback);
  }

  // ---- keys

  const isIndex = (key) => INDEX.test(key) && +key < 4294967295;
  function enumerableSymbols(value) {
    const symbols = symbolsOf(value);
    return symbols.length === 0 ? symbols : symbols.filter((key) => apply(isEnumerable, value, [key]));
  }
  /** Own enumerable keys of an object (strings then symbols), an error's "cause" left out (printed after the stack). */
  function getKeys(value, error) {
    let keys;
    try {
      keys = keysOf(value);
    } catch (e) {
      if (!(e instanceof ReferenceError)) throw e;
      keys = Object.getOwnPropertyNames(value); // a module namespace with a binding not yet initialized
    }
    const symbols = enumerableSymbols(value);
    if (symbols.length !== 0) keys.push(...symbols);
    return error ? keys.filter((key) => key !== "cause") : keys;
  }
  /** An array's (or typed array's) own enumerable keys that are not indices: they follow the indices in key order. */
  function nonIndexKeys(value, length) {
    let keys = [];
    if (length <= MAX_KEY_SCAN) {
      const all = keysOf(value);
      let i = all.length;
      while (i > 0 && !isIndex(all[i - 1])) i--;
      keys = i === all.length ? keys : all.slice(i);
    }
    const symbols = enumerableSymbols(value);
    if (symbols.length !== 0) keys.push(...symbols);
    return keys;
  }

  // ---- the sandbox's own classes, printed as Deno prints its equivalents (Deno.privateCustomInspect)

  const EVENT_KEYS = ["bubbles", "cancelable", "composed", "currentTarget", "defaultPrevented", "eventPhase", "srcElement", "target", "returnValue", "timeStamp", "type"];
  // Each class: its guest module, and the keys Deno shows (undefined: printed its own way). A key
  // the sandbox's class does not have is left out.
  const SANDBOX = {
    Headers: ["http"],
    Request: ["http", ["bodyUsed", "headers", "method", "redirect", "url"]],
    Response: ["http", ["body", "bodyUsed", "headers", "ok", "redirected", "status", "statusText", "url"]],
    URL: ["url", ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "hash", "search"]],
    URLSearchParams: ["url"],
    DOMException: ["dom", ["message", "name", "code"]],
    Event: ["dom", EVENT_KEYS],
    CustomEvent: ["dom", [...EVENT_KEYS, "detail"]],
    ErrorEvent: ["dom", [...EVENT_KEYS, "message", "filename", "lineno", "colno", "error"]],
    AbortSignal: ["dom", ["aborted", "reason", "onabort"]],
    AbortController: ["dom", ["signal"]],
    TextEncoder: ["encoding", ["encoding"]],
    TextDecoder: ["encoding", ["encoding", "fatal", "ignoreBOM"]],
    Crypto: ["crypto", ["subtle"]],
  };
  const PARAMS_LIST = Symbol("list");
  const PARAMS_URL = Symbol("url object");
  const BRAND = Symbol("[[webidl.brand]]");
  /** The name of the sandbox class `value` is an instance of, if any (its module is loaded already: it made the instance). */
  function sandboxClass(value) {
    let proto = value;
    for (let i = 0; i < 4; i++) {
      proto = protoOf(proto);
      if (proto === null || proto === ObjectPrototype || proto === Array.prototype || proto === Function.prototype) return undefined;
      const constructor = describe(proto, "constructor");
      const fn = constructor && constructor.value;
      const name = typeof fn === "function" ? describe(fn, "name") : undefined;
      if (name && typeof name.value === "string" && hasOwn(SANDBOX, name.value) && lib.load(SANDBOX[name.value][0])[name.value] === fn) return name.value;
    }
    return undefined;
  }
  /** Deno's inspect of a sandbox object: a fresh depth, in a copy of the context (as Deno's inspect(value, ctx)). */
  function inspectSandbox(ctx, value, name) {
    const inner = copyContext(ctx);
    const shownName = value.constructor?.name;
    if (name === "Headers") return `${shownName} ${formatValue(inner, Object.fromEntries(value), 0)}`;
    if (name === "DOMException" && hasOwn(value, "stack")) {
      const stack = stackOf(value);
      if (typeof stack === "string") return stack;
    }
    const entries = [];
    for (const key of SANDBOX[name][1]) if (hasProperty(value, key)) entries.push([key, value[key]]);
    return formatEntries(inner, `${shownName}`, entries, 0, {});
  }
  /** An object of `name` with these [key, value] entries (the filtered view Deno prints its classes through). */
  function formatEntries(ctx, name, entries, recurseTimes, identity) {
    if (entries.length === 0) return `${name} {}`;
    if (recurseTimes > ctx.depth) return `[${name}]`;
    const braces = [`${name} {`, "}"];
    const formatter = (c, v, r) => entries.map(([key, value]) => formatProperty(c, null, r, key, OBJECT, { value, enumerable: true }));
    return finish(ctx, identity, recurseTimes + 1, braces, "", OBJECT, formatter, NO_KEYS);
  }

  // ---- values

  function formatValue(ctx, value, recurseTimes, typedArray) {
    if (typeof value !== "object" && typeof value !== "function") return formatPrimitive(value, ctx);
    if (value === null) return "null";
    let sandbox;
    if (ctx.customInspect) {
      if (hasProperty(value, CUSTOM) && typeof value[CUSTOM] === "function") return nested(() => String(value[CUSTOM](inspect, userContext(ctx))), value, ctx, recurseTimes);
      if (hasProperty(value, PRIVATE_CUSTOM) && typeof value[PRIVATE_CUSTOM] === "function") return nested(() => String(value[PRIVATE_CUSTOM](inspect, userContext(ctx))), value, ctx, recurseTimes);
      sandbox = sandboxClass(value);
      if (sandbox !== undefined && sandbox !== "URLSearchParams") return nested(() => inspectSandbox(ctx, value, sandbox), value, ctx, recurseTimes);
      if (hasProperty(value, NODE_CUSTOM)) {
        const custom = value[NODE_CUSTOM];
        if (typeof custom === "function" && custom !== inspect && !(value.constructor && value.constructor.prototype === value)) {
          const depth = ctx.depth - recurseTimes;
          const options = { stylize: (s) => s, showHidden: false, depth: ctx.depth, colors: false, customInspect: ctx.customInspect, showProxy: false, maxArrayLength: ctx.maxArrayLength, maxStringLength: ctx.maxStringLength, breakLength: ctx.breakLength, compact: ctx.compact, sorted: ctx.sorted, getters: ctx.getters, numericSeparator: undefined };
          const shown = nested(() => {
            const ret = apply(custom, value, [depth, options, inspect]);
            if (ret === value) return undefined;
            if (typeof ret !== "string") return formatValue(ctx, ret, recurseTimes);
            return ret.replaceAll("\n", `\n${" ".repeat(ctx.indentationLvl)}`);
          }, value, ctx, recurseTimes);
          if (shown !== undefined) return shown;
        }
      }
    }
    if (ctx.seen.includes(value)) return circular(ctx, value);
    return formatRaw(ctx, value, recurseTimes, typedArray, sandbox);
  }
  /** Runs a custom inspector, within MAX_NESTING of each other (past it the value prints as a plain object). */
  function nested(run, value, ctx, recurseTimes) {
    if (nesting >= MAX_NESTING) return formatRaw(ctx, value, recurseTimes);
    nesting++;
    try {
      return run();
    } finally {
      nesting--;
    }
  }
  function circular(ctx, value) {
    let index = 1;
    if (ctx.circular === undefined) {
      ctx.circular = new Map();
      ctx.circular.set(value, index);
    } else {
      index = ctx.circular.get(value);
      if (index === undefined) {
        index = ctx.circular.size + 1;
        ctx.circular.set(value, index);
      }
    }
    return `[Circular *${index}]`;
  }

  function formatRaw(ctx, value, recurseTimes, typedArray, sandbox) {
    const chain = protoChain(value);
    const constructor = constructorName(ctx, value, chain, recurseTimes);
    let tag = value[Symbol.toStringTag];
    if (typeof tag !== "string") tag = "";
    let base = "";
    let formatter = noEntries;
    let braces;
    let keys;
    let extrasType = OBJECT;
    let noIterator = true;
    if (hasProperty(value, Symbol.iterator) || constructor === null) {
      noIterator = false;
      let size;
      if (isArray(value)) {
        const prefix = constructor !== "Array" || tag !== "" ? getPrefix(constructor, tag, "Array", `(${value.length})`) : "";
        keys = nonIndexKeys(value, value.length);
        braces = [`${prefix}[`, "]"];
        if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
        extrasType = EXTRA;
        formatter = formatArray;
      } else if (chain.includes(Set.prototype) && (size = attempt(setSize, value, NOT)) !== NOT) {
        const prefix = getPrefix(constructor, tag, "Set", `(${size})`);
        keys = getKeys(value, false);
        formatter = (c, v, r) => formatEntriesOf(c, v, r, size, setValues, setNext, false);
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, "}"];
      } else if (chain.includes(Map.prototype) && (size = attempt(mapSize, value, NOT)) !== NOT) {
        const prefix = getPrefix(constructor, tag, "Map", `(${size})`);
        keys = getKeys(value, false);
        formatter = (c, v, r) => formatEntriesOf(c, v, r, size, mapEntries, mapNext, true);
        if (size === 0 && keys.length === 0) return `${prefix}{}`;
        braces = [`${prefix}{`, "}"];
      } else if (apply(typedArrayName, value, []) !== undefined) {
        size = apply(typedArrayLength, value, []);
        keys = nonIndexKeys(value, size);
        const prefix = getPrefix(constructor, tag, "", `(${size})`);
        braces = [`${prefix}[`, "]"];
        if (value.length === 0 && keys.length === 0) return `${braces[0]}]`;
        formatter = (c, v) => formatTypedArray(c, v, size);
        extrasType = EXTRA;
      } else if (chain[0] === MapIteratorPrototype || chain[0] === SetIteratorPrototype) {
        // QuickJS cannot look at an iterator's entries without taking them.
        keys = getKeys(value, false);
        const type = chain[0] === MapIteratorPrototype ? "Map" : "Set";
        braces = [`[${tag !== `${type} Iterator` ? (tag !== "" ? `${tag}] [` : "") + `${type} Iterator` : tag}] {`, "}"];
        formatter = itemsUnknown;
      } else {
        noIterator = true;
      }
    }
    if (noIterator) {
      const error = chain.includes(Error.prototype);
      braces = ["{", "}"];
      if (sandbox === "URLSearchParams") {
        keys = getKeys(value, false);
        formatter = formatSearchParams;
        braces[0] = `${getCtxStyle(value, constructor, tag)}{`;
      } else if (constructor === "Object") {
        keys = getKeys(value, error);
        if (isArguments(value, chain)) braces[0] = "[Arguments] {";
        else if (tag !== "") braces[0] = `${getPrefix(constructor, tag, "Object")}{`;
        if (keys.length === 0) return `${braces[0]}}`;
      } else if (typeof value === "function") {
        keys = getKeys(value, error);
        base = functionBase(value, constructor, tag, chain);
        if (keys.length === 0) return base;
      } else if (brand(chain, RegExp.prototype, regExpSource, value)) {
        keys = getKeys(value, error);
        base = apply(regExpToString, constructor !== null ? value : new RegExp(value), []);
        const prefix = getPrefix(constructor, tag, "RegExp");
        if (prefix !== "RegExp ") base = `${prefix}${base}`;
        if (keys.length === 0 || recurseTimes > ctx.depth) return base;
      } else if (chain.includes(Date.prototype) && attempt(dateTime, value, NOT) !== NOT) {
        keys = getKeys(value, error);
        const time = apply(dateTime, value, []);
        if (time !== time) return "Invalid Date";
        base = apply(dateIso, value, []);
        if (keys.length === 0) return base;
      } else if (tag === "Intl.Locale" && isLocale(chain)) {
        keys = [...LOCALE_KEYS, ...getKeys(value, error)];
        braces[0] = `${getPrefix(constructor, tag, "Intl.Locale")}{`;
      } else if (error || isError(value)) {
        keys = getKeys(value, true);
        base = inspectError(value, ctx);
        if (keys.length === 0) return base;
      } else if (isArrayBuffer(chain, value)) {
        keys = getKeys(value, false);
        const prefix = getPrefix(constructor, tag, isArrayBuffer(chain, value) === 1 ? "ArrayBuffer" : "SharedArrayBuffer");
        if (typedArray === undefined) formatter = formatArrayBuffer;
        else if (keys.length === 0) return `${prefix}{ byteLength: ${formatNumber(value.byteLength)} }`;
        braces[0] = `${prefix}{`;
        keys.unshift("byteLength");
      } else if (ArrayBuffer.isView(value)) {
        keys = getKeys(value, false);
        braces[0] = `${getPrefix(constructor, tag, "DataView")}{`;
        keys.unshift("byteLength", "byteOffset", "buffer");
      } else if (chain.includes(Promise.prototype)) {
        // QuickJS does not let JavaScript see a promise's state (nor its value) without waiting for it.
        keys = getKeys(value, false);
        braces[0] = `${getPrefix(constructor, tag, "Promise")}{`;
        formatter = stateUnknown;
      } else if (brand(chain, WeakSet.prototype, WeakSet.prototype.has, value)) {
        keys = getKeys(value, false);
        braces[0] = `${getPrefix(constructor, tag, "WeakSet")}{`;
        formatter = itemsUnknown;
      } else if (brand(chain, WeakMap.prototype, WeakMap.prototype.has, value)) {
        keys = getKeys(value, false);
        braces[0] = `${getPrefix(constructor, tag, "WeakMap")}{`;
        formatter = itemsUnknown;
      } else if (constructor === null && tag === "Module" && isNamespace(value)) {
        keys = getKeys(value, false);
        braces[0] = `${getPrefix(constructor, tag, "Module")}{`;
        const names = keys;
        formatter = (c, v, r) => formatNamespace(names, c, v, r);
      } else {
        keys = getKeys(value, error);
        const boxed = boxedOf(chain, value);
        if (boxed !== undefined) {
          base = boxedBase(boxed, ctx, keys, constructor, tag, value);
          if (keys.length === 0) return base;
        } else {
          if (keys.length === 0) return `${getCtxStyle(value, constructor, tag)}{}`;
          braces[0] = `${getCtxStyle(value, constructor, tag)}{`;
        }
      }
    }

    if (recurseTimes > ctx.depth) {
      const name = getCtxStyle(value, constructor, tag).slice(0, -1);
      return constructor !== null ? `[${name}]` : name;
    }
    recurseTimes += 1;
    return finish(ctx, value, recurseTimes, braces, base, extrasType, formatter, keys);
  }
  const NO_KEYS = [];
  const noEntries = () => [];
  const itemsUnknown = () => ["<items unknown>"];
  const stateUnknown = () => ["<unknown>"];
  /** The part of formatRaw after the entries' kind is known: entries, circular marker, lines, budget. */
  function finish(ctx, value, recurseTimes, braces, base, extrasType, formatter, keys) {
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    let output;
    try {
      output = formatter(ctx, value, recurseTimes);
      for (let i = 0; i < keys.length; i++) output.push(formatProperty(ctx, value, recurseTimes, keys[i], extrasType));
    } catch (error) {
      return `[Internal Formatting Error] ${stackProperty(error)}`; // as Deno: value stays in ctx.seen
    }
    if (ctx.circular !== undefined) {
      const index = ctx.circular.get(value);
      if (index !== undefined) {
        const reference = `<ref *${index}>`;
        if (ctx.compact !== true) base = base === "" ? reference : `${reference} ${base}`;
        else braces[0] = `${reference} ${braces[0]}`;
      }
    }
    ctx.seen.pop();
    if (ctx.sorted) {
      const comparator = ctx.sorted === true ? undefined : ctx.sorted;
      const keyCount = keys.length;
      if (extrasType === OBJECT) output = output.sort(comparator);
      else if (keyCount > 1) output.splice(output.length - keyCount, keyCount, ...output.slice(output.length - keyCount).sort(comparator));
    }
    const res = reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value);
    const budget = ctx.budget || (ctx.budget = {});
    const newLength = (budget[ctx.indentationLvl] || 0) + res.length;
    budget[ctx.indentationLvl] = newLength;
    if (newLength > BUDGET) ctx.depth = -1;
    return res;
  }

  const LOCALE_KEYS = ["baseName", "calendar", "caseFirst", "collation", "hourCycle", "language", "numberingSystem", "numeric", "region", "script"];
  /** An Intl.Locale of the sandbox's Intl (read only for a value tagged so: Intl is loaded already). */
  function isLocale(chain) {
    const intl = typeof Intl === "object" && Intl !== null ? Intl : undefined;
    return intl !== undefined && typeof intl.Locale === "function" && chain.includes(intl.Locale.prototype);
  }
  function isArguments(value, chain) {
    return chain.length === 1 && hasOwn(value, "callee") && hasOwn(value, Symbol.iterator) && apply(ObjectPrototype.toString, value, []) === "[object Arguments]";
  }
  function isNamespace(value) {
    const d = describe(value, Symbol.toStringTag);
    return d !== undefined && d.value === "Module" && !d.writable && !d.enumerable && !d.configurable;
  }
  /** 1 for an ArrayBuffer, 2 for a SharedArrayBuffer, 0 otherwise. */
  function isArrayBuffer(chain, value) {
    if (chain.includes(ArrayBuffer.prototype) && attempt(bufferLength, value, NOT) !== NOT) return 1;
    if (sharedLength !== undefined && chain.includes(SharedArrayBuffer.prototype) && attempt(sharedLength, value, NOT) !== NOT) return 2;
    return 0;
  }
  function boxedOf(chain, value) {
    for (const boxed of BOXED) {
      if (!chain.includes(boxed.proto)) continue;
      const primitive = attempt(boxed.valueOf, value, NOT);
      if (primitive !== NOT) return { type: boxed.type, primitive };
    }
    return undefined;
  }
  function boxedBase({ type, primitive }, ctx, keys, constructor, tag, value) {
    if (type === "String") keys.splice(0, value.length);
    let base = `[${type}`;
    if (type !== constructor) base += constructor === null ? " (null prototype)" : ` (${constructor})`;
    base += `: ${formatPrimitive(primitive, ctx)}]`;
    if (tag !== "" && tag !== constructor) base += ` [${tag}]`;
    return base;
  }

  const STRIP_COMMENTS = /(\/\/.*?\n)|(\/\*(.|\n)*?\*\/)/g;
  const CLASS_HEAD = /^(\s+[^(]*?)\s*{/;
  function functionBase(value, constructor, tag, chain) {
    const source = attempt(functionSource, value, "");
    if (source.startsWith("class") && source.endsWith("}")) {
      const slice = source.slice(5, -1);
      const bracketIndex = slice.indexOf("{");
      if (bracketIndex !== -1 && (!slice.slice(0, bracketIndex).includes("(") || CLASS_HEAD.exec(slice.replace(STRIP_COMMENTS, "")) !== null)) {
        return classBase(value, constructor, tag);
      }
    }
    let type = "Function";
    // Deno's fetch is a plain function; the sandbox's is an async one.
    if (constructor === "AsyncFunction" && value.name === "fetch" && lib.load("fetch").fetch === value) {
      constructor = "Function";
      tag = "";
    } else if (!source.endsWith("[native code]\n}")) {
      if (chain[0] === GeneratorFunctionPrototype || chain[0] === AsyncGeneratorFunctionPrototype) type = `Generator${type}`;
      if (chain[0] === AsyncFunctionPrototype || chain[0] === AsyncGeneratorFunctionPrototype) type = `Async${type}`;
    }
    let base = `[${type}`;
    if (constructor === null) base += " (null prototype)";
    base += value.name === "" ? " (anonymous)" : `: ${value.name}`;
    base += "]";
    if (constructor !== type && constructor !== null) base += ` ${constructor}`;
    if (tag !== "" && constructor !== tag) base += ` [${tag}]`;
    return base;
  }
  function classBase(value, constructor, tag) {
    const name = (hasOwn(value, "name") && value.name) || "(anonymous)";
    let base = `class ${name}`;
    if (constructor !== "Function" && constructor !== null) base += ` [${constructor}]`;
    if (tag !== "" && constructor !== tag) base += ` [${tag}]`;
    if (constructor !== null) {
      const superName = protoOf(value).name;
      if (superName) base += ` extends ${superName}`;
    } else {
      base += " extends [null prototype]";
    }
    return `[${base}]`;
  }

  // ---- errors

  /** An error's stack as V8 writes it ("Name: message" then the frames): QuickJS keeps only the frames. The sandbox's own frames are left out. */
  function stackOf(error) {
    const stack = error.stack;
    if (typeof stack !== "string" || !(stack === "" || stack.startsWith("    at ")) || !isError(error)) return stack;
    const frames = stack.split("\n").filter((line) => line !== "" && !line.includes("(vesta:"));
    const head = apply(errorToString, error, []);
    return frames.length === 0 ? head : `${head}\n${frames.join("\n")}`;
  }
  /** `error.stack` as Deno would read it, whatever was thrown. */
  const stackProperty = (error) => (error !== null && typeof error === "object" ? stackOf(error) : error.stack);
  const causeStack = (cause) => (cause === null || cause === undefined ? undefined : typeof cause === "object" ? stackOf(cause) : cause.stack);

  function inspectError(value, ctx) {
    const causes = [value];
    const seen = new Set(causes);
    for (let err = value; err.cause && causes.length <= MAX_CAUSES; ) {
      const cause = err.cause;
      if (seen.has(cause)) {
        causes.push(circular(ctx, cause));
        break;
      }
      causes.push(cause);
      seen.add(cause);
      err = cause;
    }
    const refs = new Map();
    if (ctx.circular !== undefined) {
      for (const cause of causes) {
        const index = ctx.circular.get(cause);
        if (index !== undefined) refs.set(cause, `<ref *${index}> `);
      }
    }
    causes.shift();
    let message = refs.get(value) ?? "";
    nesting++;
    try {
      if (isError(value) && value.name === "AggregateError" && isArray(value.errors)) {
        const lines = String(stackOf(value)).split("\n");
        let i = 0;
        while (i < lines.length && !/\s+at/.test(lines[i])) message += lines[i++] + "\n";
        const errors = value.errors;
        const shown = [];
        for (let j = 0; j < errors.length && j < MAX_CAUSES; j++) {
          const error = errors[j];
          shown.push((typeof error === "string" ? error : nesting > MAX_NESTING ? String(error) : formatValue(newContext(), error, 0)).replace(/^(?!\s*$)/gm, "    "));
        }
        message += shown.join("\n") + "\n" + lines.slice(i).join("\n");
      } else {
        const stack = stackOf(value);
        if (stack?.includes("\n    at")) message += stack;
        else message += `[${stack || apply(errorToString, value, [])}]`;
      }
      for (const cause of causes) {
        const shown = causeStack(cause) ?? formatValue(nesting > MAX_NESTING ? copyContext(newContext(), { depth: -1 }) : newContext(), cause, 0).replace(/"/g, "");
        message += "\nCaused by " + (refs.get(cause) ?? "") + shown;
      }
    } finally {
      nesting--;
    }
    return message;
  }

  // ---- entries of arrays, typed arrays, collections, buffers

  const more = (remaining, what) => `... ${remaining} more ${what}${remaining > 1 ? "s" : ""}`;
  function formatArray(ctx, value, recurseTimes) {
    const valLen = value.length;
    const len = Math.min(Math.max(0, ctx.maxArrayLength), valLen);
    const output = [];
    for (let i = 0; i < len; i++) {
      const desc = describe(value, i);
      if (desc === undefined) return formatSparseArray(ctx, value, recurseTimes, len, output, i);
      const item = desc.value;
      output.push(typeof item === "number" ? formatNumber(item) : formatProperty(ctx, value, recurseTimes, i, ITEM, desc));
    }
    if (valLen - len > 0) output.push(more(valLen - len, "item"));
    return output;
  }
  /** An array with holes: each run of holes as "<n empty items>". */
  function formatSparseArray(ctx, value, recurseTimes, maxLength, output, i) {
    const keys = keysOf(value);
    let index = i;
    for (; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i];
      const tmp = +key;
      if (tmp > 2 ** 32 - 2) break;
      if (`${index}` !== key) {
        if (!INDEX.test(key)) break;
        const emptyItems = tmp - index;
        output.push(`<${emptyItems} empty item${emptyItems > 1 ? "s" : ""}>`);
        index = tmp;
        if (output.length === maxLength) break;
      }
      output.push(formatProperty(ctx, value, recurseTimes, key, ITEM));
      index++;
    }
    const remaining = value.length - index;
    if (output.length !== maxLength) {
      if (remaining > 0) output.push(`<${remaining} empty item${remaining > 1 ? "s" : ""}>`);
    } else if (remaining > 0) {
      output.push(more(remaining, "item"));
    }
    return output;
  }
  function formatTypedArray(ctx, value, length) {
    const maxLength = Math.min(Math.max(0, ctx.maxArrayLength), length);
    const remaining = value.length - maxLength;
    const output = [];
    const element = value.length > 0 && typeof value[0] === "number" ? formatNumber : formatBigInt;
    for (let i = 0; i < maxLength; ++i) output[i] = element(value[i]);
    if (remaining > 0) output[maxLength] = more(remaining, "item");
    return output;
  }
  /** A Set's values or a Map's "key => value" entries, up to iterableLimit (read with the intrinsic iterators). */
  function formatEntriesOf(ctx, value, recurseTimes, size, entries, next, pairs) {
    ctx.indentationLvl += 2;
    const len = Math.min(Math.max(0, ctx.iterableLimit), size);
    const output = [];
    const iterator = apply(entries, value, []);
    for (let i = 0; i < len; i++) {
      const step = apply(next, iterator, []);
      if (step.done) break;
      output.push(pairs ? `${formatValue(ctx, step.value[0], recurseTimes)} => ${formatValue(ctx, step.value[1], recurseTimes)}` : formatValue(ctx, step.value, recurseTimes));
    }
    if (size - len > 0) output.push(more(size - len, "item"));
    ctx.indentationLvl -= 2;
    return output;
  }
  function formatArrayBuffer(ctx, value) {
    const valLen = attempt(bufferLength, value, NOT) !== NOT ? apply(bufferLength, value, []) : apply(sharedLength, value, []);
    const len = Math.min(Math.max(0, ctx.maxArrayLength), valLen);
    let bytes;
    try {
      bytes = new Uint8Array(value, 0, len);
    } catch {
      return ["(detached)"];
    }
    const hex = [];
    for (let i = 0; i < len; i++) hex.push(hex2(bytes[i]));
    let str = hex.join(" ");
    if (valLen - len > 0) str += ` ${more(valLen - len, "byte")}`;
    return [`[Uint8Contents]: <${str}>`];
  }
  function formatNamespace(keys, ctx, value, recurseTimes) {
    const output = [];
    for (let i = 0; i < keys.length; i++) {
      try {
        output[i] = formatProperty(ctx, value, recurseTimes, keys[i], OBJECT);
      } catch {
        const shown = formatProperty(ctx, { [keys[i]]: "" }, recurseTimes, keys[i], OBJECT);
        output[i] = shown.slice(0, shown.lastIndexOf(" ") + 1) + "<uninitialized>";
      }
    }
    keys.length = 0;
    return output;
  }
  /** URLSearchParams as Deno prints its own: the internal list, the URL it belongs to, the WebIDL brand. */
  function formatSearchParams(ctx, value, recurseTimes) {
    const list = [];
    for (const pair of value) list.push([pair[0], pair[1]]);
    return [
      [PARAMS_LIST, list],
      [PARAMS_URL, null],
      [BRAND, BRAND],
    ].map(([key, v]) => formatProperty(ctx, null, recurseTimes, key, OBJECT, { value: v, enumerable: true }));
  }

  // Whether a key prints unquoted, remembered for the keys met lately (objects of one shape repeat them).
  let identifiers = new Map();
  function isIdentifier(key) {
    let known = identifiers.get(key);
    if (known === undefined) {
      if (identifiers.size >= 1024) identifiers = new Map();
      identifiers.set(key, (known = IDENTIFIER.test(key)));
    }
    return known;
  }
  function formatProperty(ctx, value, recurseTimes, key, type, desc, original = value) {
    let name;
    let str;
    let extra = " ";
    desc = desc || describe(value, key) || { value: value[key], enumerable: true };
    if (desc.value !== undefined) {
      const diff = ctx.compact !== true || type !== OBJECT ? 2 : 3;
      ctx.indentationLvl += diff;
      str = formatValue(ctx, desc.value, recurseTimes);
      if (diff === 3 && ctx.breakLength < stringWidth(str)) extra = `\n${" ".repeat(ctx.indentationLvl)}`;
      ctx.indentationLvl -= diff;
    } else if (desc.get !== undefined) {
      const label = desc.set !== undefined ? "Getter/Setter" : "Getter";
      if (ctx.getters && (ctx.getters === true || (ctx.getters === "get" && desc.set === undefined) || (ctx.getters === "set" && desc.set !== undefined))) {
        try {
          const tmp = apply(desc.get, original, []);
          ctx.indentationLvl += 2;
          if (tmp === null) str = `[${label}: null]`;
          else if (typeof tmp === "object") str = `[${label}] ${formatValue(ctx, tmp, recurseTimes)}`;
          else str = `[${label}: ${formatPrimitive(tmp, ctx)}]`;
          ctx.indentationLvl -= 2;
        } catch (err) {
          str = `[${label}: <Inspection threw (${err.message})>]`;
        }
      } else {
        str = `[${label}]`;
      }
    } else if (desc.set !== undefined) {
      str = "[Setter]";
    } else {
      str = "undefined";
    }
    if (type === ITEM) return str;
    if (typeof key === "symbol") name = `[${maybeQuoteSymbol(key, ctx)}]`;
    else if (key === "__proto__") name = "['__proto__']";
    else if (desc.enumerable === false) name = `[${key.replace(KEY_CONTROL, escapeKey)}]`;
    else if (isIdentifier(key)) name = key;
    else name = quoteString(key, ctx);
    return `${name}:${extra}${str}`;
  }

  // ---- lines

  const isFullWidth = (code) =>
    code >= 0x1100 &&
    (code <= 0x115f ||
      code === 0x2329 ||
      code === 0x232a ||
      (code >= 0x2e80 && code <= 0x3247 && code !== 0x303f) ||
      (code >= 0x3250 && code <= 0x4dbf) ||
      (code >= 0x4e00 && code <= 0xa4c6) ||
      (code >= 0xa960 && code <= 0xa97c) ||
      (code >= 0xac00 && code <= 0xd7a3) ||
      (code >= 0xf900 && code <= 0xfaff) ||
      (code >= 0xfe10 && code <= 0xfe19) ||
      (code >= 0xfe30 && code <= 0xfe6b) ||
      (code >= 0xff01 && code <= 0xff60) ||
      (code >= 0xffe0 && code <= 0xffe6) ||
      (code >= 0x1b000 && code <= 0x1b001) ||
      (code >= 0x1f200 && code <= 0x1f251) ||
      (code >= 0x1f300 && code <= 0x1f64f) ||
      (code >= 0x20000 && code <= 0x3fffd));
  const isZeroWidth = (code) =>
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x20d0 && code <= 0x20ff) ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xfe20 && code <= 0xfe2f) ||
    (code >= 0xe0100 && code <= 0xe01ef);
  // ANSI escape sequences (the ansi-regex pattern), left out of a table cell's width.
  // (compiled on first use: the pattern costs more to compile than the rest of the module)
  let ansi;
  const ANSI = () => ansi || (ansi = new RegExp("[\\u001B\\u009B][[\\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\\d\\/#&.:=?%@~_]+)*|[a-zA-Z\\d]+(?:;[-a-zA-Z\\d\\/#&.:=?%@~_]*)*)?\\u0007)|(?:(?:\\d{1,4}(?:;\\d{0,4})*)?[\\dA-PR-TZcf-ntqry=><~]))", "g"));
  /** Columns the string takes on a terminal (wide characters 2, combining and control characters 0). */
  function stringWidth(str, removeControlChars = false) {
    if (PRINTABLE.test(str)) return str.length;
    if (removeControlChars) str = str.replace(ANSI(), "");
    let width = 0;
    for (const char of str.normalize("NFC")) {
      const code = char.codePointAt(0);
      if (isFullWidth(code)) width += 2;
      else if (!isZeroWidth(code)) width++;
    }
    return width;
  }

  function isBelowBreakLength(ctx, output, start, base) {
    let totalLength = output.length + start;
    if (totalLength + output.length > ctx.breakLength) return false;
    for (let i = 0; i < output.length; i++) {
      totalLength += output[i].length;
      if (totalLength > ctx.breakLength) return false;
    }
    return base === "" || !base.includes("\n");
  }
  function reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value) {
    if (ctx.compact !== true) {
      if (typeof ctx.compact === "number" && ctx.compact >= 1) {
        const entries = output.length;
        if (extrasType === EXTRA && entries > 6) output = groupArrayElements(ctx, output, value);
        if (ctx.currentDepth - recurseTimes < ctx.compact && entries === output.length) {
          const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
          if (isBelowBreakLength(ctx, output, start, base)) {
            const joined = output.join(", ");
            if (!joined.includes("\n")) return `${base ? `${base} ` : ""}${braces[0]} ${joined} ${braces[1]}`;
          }
        }
      }
      const indentation = `\n${" ".repeat(ctx.indentationLvl)}`;
      return `${base ? `${base} ` : ""}${braces[0]}${indentation}  ${output.join(`,${indentation}  `)}${ctx.trailingComma ? "," : ""}${indentation}${braces[1]}`;
    }
    if (isBelowBreakLength(ctx, output, 0, base)) return `${braces[0]}${base ? ` ${base}` : ""} ${output.join(", ")} ${braces[1]}`;
    const indentation = " ".repeat(ctx.indentationLvl);
    const ln = base === "" && braces[0].length === 1 ? " " : `${base ? ` ${base}` : ""}\n${indentation}  `;
    return `${braces[0]}${ln}${output.join(`,\n${indentation}  `)} ${braces[1]}`;
  }
  /** More than 6 short items of an array: in aligned columns (numbers right-aligned), about as many rows as columns. */
  function groupArrayElements(ctx, output, value) {
    let totalLength = 0;
    let maxLength = 0;
    let outputLength = output.length;
    if (ctx.maxArrayLength < output.length) outputLength--; // the "... more items" entry
    const separatorSpace = 2;
    const dataLen = [];
    // Numbers (and bigints) right-aligned; anything else left-aligned.
    let padStart = true;
    if (value !== undefined) {
      for (let i = 0; i < output.length; i++) {
        if (typeof value[i] !== "number" && typeof value[i] !== "bigint") {
          padStart = false;
          break;
        }
      }
    }
    for (let i = 0; i < outputLength; i++) {
      const len = padStart && value !== undefined ? output[i].length : stringWidth(output[i]);
      dataLen[i] = len;
      totalLength += len + separatorSpace;
      if (maxLength < len) maxLength = len;
    }
    const actualMax = maxLength + separatorSpace;
    if (actualMax * 3 + ctx.indentationLvl < ctx.breakLength && (totalLength / actualMax > 5 || maxLength <= 6)) {
      const averageBias = Math.sqrt(actualMax - totalLength / output.length);
      const biasedMax = Math.max(actualMax - 3 - averageBias, 1);
      const columns = Math.min(Math.round(Math.sqrt(2.5 * biasedMax * outputLength) / biasedMax), Math.floor((ctx.breakLength - ctx.indentationLvl) / actualMax), ctx.compact * 4, 15);
      if (columns <= 1) return output;
      const tmp = [];
      const maxLineLength = [];
      for (let i = 0; i < columns; i++) {
        let lineMaxLength = 0;
        for (let j = i; j < output.length; j += columns) if (dataLen[j] > lineMaxLength) lineMaxLength = dataLen[j];
        maxLineLength[i] = lineMaxLength + separatorSpace;
      }
      for (let i = 0; i < outputLength; i += columns) {
        const max = Math.min(i + columns, outputLength);
        let str = "";
        let j = i;
        for (; j < max - 1; j++) {
          const padding = maxLineLength[j - i] + output[j].length - dataLen[j];
          str += padStart ? `${output[j]}, `.padStart(padding, " ") : `${output[j]}, `.padEnd(padding, " ");
        }
        if (padStart) str += output[j].padStart(maxLineLength[j - i] + output[j].length - dataLen[j] - separatorSpace, " ");
        else str += output[j];
        tmp.push(str);
      }
      if (ctx.maxArrayLength < output.length) tmp.push(output[outputLength]);
      output = tmp;
    }
    return output;
  }

  /** Deno.inspect(value, options), as handed to custom inspectors. */
  function inspect(value, options) {
    return formatValue(contextWith(options), value, 0);
  }

  // console.table: Deno's (after Node's cli_table).
  const TABLE = { middleMiddle: "─", rowMiddle: "┼", topRight: "┐", topLeft: "┌", leftMiddle: "├", topMiddle: "┬", bottomRight: "┘", bottomLeft: "└", bottomMiddle: "┴", rightMiddle: "┤", left: "│ ", right: " │", middle: " │ " };
  function renderRow(row, widths, rightAlign) {
    let out = TABLE.left;
    for (let i = 0; i < row.length; i++) {
      const cell = row[i];
      const padding = " ".repeat(widths[i] - stringWidth(cell, true));
      out += rightAlign && rightAlign[i] ? `${padding}${cell}` : `${cell}${padding}`;
      if (i !== row.length - 1) out += TABLE.middle;
    }
    return out + TABLE.right;
  }
  function cliTable(head, columns) {
    const rows = [];
    const widths = head.map((h) => stringWidth(h, true));
    const longest = columns.reduce((n, a) => Math.max(n, a.length), 0);
    const rightAlign = new Array(widths.length).fill(true);
    for (let i = 0; i < head.length; i++) {
      const column = columns[i];
      for (let j = 0; j < longest; j++) {
        if (rows[j] === undefined) rows[j] = [];
        const value = (rows[j][i] = column != null && hasOwn(column, j) ? column[j] : "");
        widths[i] = Math.max(widths[i] || 0, stringWidth(value, true));
        rightAlign[i] &= Number.isInteger(+value);
      }
    }
    const divider = widths.map((w) => TABLE.middleMiddle.repeat(w + 2));
    let result = `${TABLE.topLeft}${divider.join(TABLE.topMiddle)}${TABLE.topRight}\n${renderRow(head, widths)}\n${TABLE.leftMiddle}${divider.join(TABLE.rowMiddle)}${TABLE.rightMiddle}\n`;
    for (const row of rows) result += `${renderRow(row, widths, rightAlign)}\n`;
    return result + `${TABLE.bottomLeft}${divider.join(TABLE.bottomMiddle)}${TABLE.bottomRight}`;
  }
  function tableText(data, properties) {
    const cell = (value) => {
      const ctx = Object.assign(newContext(), { depth: 1, compact: true });
      return typeof value === "string" ? quoteString(value.length > 10000 ? value.slice(0, 10000) + "..." : value, ctx) : formatValue(ctx, value, 0);
    };
    const chain = protoChain(data);
    const isSet = brand(chain, Set.prototype, setSize, data);
    const isMap = !isSet && brand(chain, Map.prototype, mapSize, data);
    let rows = data;
    if (isSet) {
      rows = [];
      for (let it = apply(setValues, data, []), step = apply(setNext, it, []); !step.done; step = apply(setNext, it, [])) rows.push(step.value);
    } else if (isMap) {
      rows = { __proto__: null };
      let idx = 0;
      for (let it = apply(mapEntries, data, []), step = apply(mapNext, it, []); !step.done; step = apply(mapNext, it, [])) rows[idx++] = { Key: step.value[0], Values: step.value[1] };
    }
    const keys = keysOf(rows);
    const columns = { __proto__: null };
    const column = (name) => (hasOwn(columns, name) ? columns[name] : (columns[name] = new Array(keys.length).fill("")));
    if (properties) for (const name of properties) column(name);
    const indexKeys = [];
    const values = [];
    let hasPrimitives = false;
    keys.forEach((k, idx) => {
      const value = rows[k];
      const primitive = value === null || (typeof value !== "function" && typeof value !== "object");
      if (properties === undefined && primitive) {
        hasPrimitives = true;
        values.push(cell(value));
      } else {
        const valueObj = value || {};
        for (const name of properties || keysOf(valueObj)) {
          // Deno's columns object inherits from Object.prototype: a column named like one of its members is never shown.
          if (!primitive && hasProperty(valueObj, name) && (hasOwn(columns, name) || !(name in ObjectPrototype))) column(name)[idx] = cell(valueObj[name]);
        }
        values.push("");
      }
      indexKeys.push(k);
    });
    const names = keysOf(columns);
    const header = [isSet || isMap ? "(iter idx)" : "(idx)", ...(properties || [...names, !isMap && hasPrimitives && "Values"])].filter(Boolean);
    return cliTable(header, [indexKeys, ...names.map((name) => columns[name]), values]);
  }

  return { newContext, contextWith, formatValue, inspect, stackOf, tableText };
})
