// Guest module: what Intl (guest/intl.js) and the locale-sensitive built-ins (guest/locale.js:
// Number/BigInt/Date/String/Array toLocale*, localeCompare) share: arguments read as ECMA-402
// reads them (locale lists, options by name and type, numbers, dates), then one synchronous call
// into the sandbox process, whose Node Intl (full ICU) answers (../process/intl-calls.ts). Only
// primitives cross; what V8 throws comes back as a RangeError or TypeError of this realm.
(function (lib) {
  "use strict";
  const stringify = lib.stringify;
  const parse = lib.parse;
  const web = lib.host.web;
  // undefined crosses as a tag (JSON has none; null is not undefined to Intl).
  const U = { $u: 1 };
  function call(name, args) {
    let text;
    try {
      text = web(name, stringify(args));
    } catch (e) {
      throw e && e.name === "RangeError" ? new RangeError(e.message) : e && e.name === "TypeError" ? new TypeError(e.message) : e;
    }
    return parse(text);
  }

  // A number as JSON can carry it: NaN, the infinities and -0 as tags.
  const num = (x) => (x === 0 ? (1 / x < 0 ? { $n: "-0" } : 0) : x - x === 0 ? x : { $n: x !== x ? "NaN" : x > 0 ? "Infinity" : "-Infinity" });

  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  // ToPrimitive(v, hint) for an object.
  function toPrimitive(v, hint) {
    const exotic = v[Symbol.toPrimitive];
    if (exotic !== undefined && exotic !== null) {
      if (typeof exotic !== "function") throw new TypeError("Symbol.toPrimitive is not a function");
      const r = exotic.call(v, hint);
      if (r !== null && (typeof r === "object" || typeof r === "function")) throw new TypeError("Cannot convert object to primitive value");
      return r;
    }
    for (const name of hint === "string" ? ["toString", "valueOf"] : ["valueOf", "toString"]) {
      const f = v[name];
      if (typeof f === "function") {
        const r = f.call(v);
        if (r === null || (typeof r !== "object" && typeof r !== "function")) return r;
      }
    }
    throw new TypeError("Cannot convert object to primitive value");
  }
  // ToNumber and ToString, with V8's messages.
  function toNumber(v) {
    const p = isObject(v) ? toPrimitive(v, "number") : v;
    if (typeof p === "symbol") throw new TypeError("Cannot convert a Symbol value to a number");
    if (typeof p === "bigint") throw new TypeError("Cannot convert a BigInt value to a number");
    return +p;
  }
  function toStr(v) {
    const p = isObject(v) ? toPrimitive(v, "string") : v;
    if (typeof p === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
    return `${p}`;
  }
  // ToIntlMathematicalValue: a bigint or a decimal string keeps its precision (Node parses the string).
  function mathValue(v) {
    const p = isObject(v) ? toPrimitive(v, "number") : v;
    if (typeof p === "bigint") return { $bigint: p.toString() };
    if (typeof p === "string") return p;
    return num(toNumber(p));
  }
  // A date argument: undefined is now, anything else ToNumber (a Date its time value).
  const dateValue = (d) => num(d === undefined ? Date.now() : toNumber(d));

  // How V8 names a receiver it refuses: a primitive as its text, an object by its class.
  function describe(v) {
    if (typeof v === "symbol") return v.toString();
    if (!isObject(v)) return String(v);
    if (typeof v === "function") return Function.prototype.toString.call(v);
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    if (Array.isArray(v)) return "[object Array]";
    if (v instanceof Date) return "[object Date]";
    if (v instanceof RegExp) return "[object RegExp]";
    const proto = Object.getPrototypeOf(v);
    const ctor = proto === null ? undefined : Object.getOwnPropertyDescriptor(proto, "constructor");
    const name = ctor && typeof ctor.value === "function" ? ctor.value.name : "";
    return name ? `#<${name}>` : "[object Object]";
  }
  const incompatible = (method, v) => new TypeError(`Method ${method} called on incompatible receiver ${describe(v)}`);

  // Intl.Locale objects registered by guest/intl.js (a locale list may hold them): object → tag.
  const localeTags = new WeakMap();
  const tagOf = (v) => (v !== null && typeof v === "object" ? localeTags.get(v) : undefined);

  // CanonicalizeLocaleList's reading: a string or Locale is a list of one; other primitives are
  // empty lists (null throws in the process, as V8); an object is read by length.
  function localeList(locales) {
    if (locales === undefined) return U;
    if (typeof locales === "string") return [locales];
    if (locales === null) return null;
    if (typeof locales !== "object" && typeof locales !== "function") return [];
    const tag = tagOf(locales);
    if (tag !== undefined) return [tag];
    const out = [];
    const length = Math.min(Math.max(Math.trunc(+locales.length) || 0, 0), Number.MAX_SAFE_INTEGER);
    for (let k = 0; k < length; k++) {
      if (!(k in locales)) continue;
      const v = locales[k];
      if (typeof v !== "string" && !isObject(v)) throw new TypeError("Language ID should be string or object.");
      const t = tagOf(v);
      out.push(t !== undefined ? t : toStr(v));
    }
    return out;
  }

  // Option types: S string (ToString), N number (ToNumber), B boolean (ToBoolean), G useGrouping.
  const S = 0;
  const N = 1;
  const B = 2;
  const G = 3;
  const DIGITS = { minimumIntegerDigits: N, minimumFractionDigits: N, maximumFractionDigits: N, minimumSignificantDigits: N, maximumSignificantDigits: N, roundingIncrement: N, roundingMode: S, roundingPriority: S, trailingZeroDisplay: S };
  const DTF = { localeMatcher: S, calendar: S, numberingSystem: S, hour12: B, hourCycle: S, timeZone: S, weekday: S, era: S, year: S, month: S, day: S, dayPeriod: S, hour: S, minute: S, second: S, fractionalSecondDigits: N, timeZoneName: S, formatMatcher: S, dateStyle: S, timeStyle: S };
  const OPTIONS = {
    DateTimeFormat: DTF,
    NumberFormat: Object.assign({ localeMatcher: S, numberingSystem: S, style: S, currency: S, currencyDisplay: S, currencySign: S, unit: S, unitDisplay: S, notation: S, compactDisplay: S, useGrouping: G, signDisplay: S }, DIGITS),
    Collator: { usage: S, localeMatcher: S, collation: S, numeric: B, caseFirst: S, sensitivity: S, ignorePunctuation: B },
    PluralRules: Object.assign({ localeMatcher: S, type: S, notation: S }, DIGITS),
    RelativeTimeFormat: { localeMatcher: S, numberingSystem: S, style: S, numeric: S },
    ListFormat: { localeMatcher: S, type: S, style: S },
    DisplayNames: { localeMatcher: S, style: S, type: S, fallback: S, languageDisplay: S },
    Segmenter: { localeMatcher: S, granularity: S },
    Locale: { calendar: S, collation: S, hourCycle: S, caseFirst: S, numeric: B, numberingSystem: S, language: S, script: S, region: S },
    supported: { localeMatcher: S },
    "Date:any": DTF,
    "Date:date": DTF,
    "Date:time": DTF,
  };
  // The options an Intl constructor reads, converted as it converts them, in a flat object of
  // primitives (non-finite numbers as their text, which converts back to them); null and other
  // primitives cross as they are (V8 decides: a TypeError, or no options).
  function optionsOf(options, kind) {
    if (options === undefined) return U;
    if (options === null || typeof options === "string" || typeof options === "number" || typeof options === "boolean") return options;
    if (typeof options !== "object" && typeof options !== "function") return "";
    const table = OPTIONS[kind];
    const out = {};
    for (const name in table) {
      const v = options[name];
      if (v === undefined) continue;
      const type = table[name];
      if (type === S) out[name] = toStr(v);
      else if (type === B) out[name] = Boolean(v);
      else if (type === N) {
        const n = toNumber(v);
        out[name] = n - n === 0 ? n : String(n);
      } else out[name] = v === true ? true : !v ? false : toStr(v);
    }
    return out;
  }
  // What the process caches a run's Intl object by: [locales, options] as JSON text.
  const DEFAULT_SPEC = stringify([U, U]);
  const specOf = (kind, locales, options) => (locales === undefined && options === undefined ? DEFAULT_SPEC : stringify([localeList(locales), optionsOf(options, kind)]));

  // ---- the built-ins QuickJS has no ICU for (installed by guest/locale.js) ---------------------

  // A built-in's call of an Intl object, its errors named after it as V8 names them ("Value x out of range for Number.prototype.toLocaleString options property style").
  function builtinCall(method, kind, locales, options, op, args) {
    if (options === null) throw new TypeError(`${method} called on null or undefined`);
    const ctor = kind.startsWith("Date:") ? "DateTimeFormat" : kind;
    try {
      return call("intlCall", [kind, specOf(kind, locales, options), op].concat(args));
    } catch (e) {
      if (e instanceof RangeError) throw new RangeError(e.message.replace(` for Intl.${ctor} options property `, ` for ${method} options property `));
      throw e;
    }
  }
  const numberValue = Number.prototype.valueOf;
  const bigintValue = BigInt.prototype.valueOf;
  const timeValue = Date.prototype.getTime;
  const toUpper = String.prototype.toUpperCase;
  const toLower = String.prototype.toLowerCase;
  function thisValue(self, valueOf, message) {
    try {
      return valueOf.call(self);
    } catch {
      throw new TypeError(message);
    }
  }
  function thisString(s, method) {
    if (s === undefined || s === null) throw new TypeError(`String.prototype.${method} called on null or undefined`);
    return toStr(s);
  }
  const dateString = (kind, method) => (self, locales, options) => {
    let t;
    try {
      t = timeValue.call(self);
    } catch {
      throw incompatible(`Date.prototype.${method}`, self);
    }
    return t !== t ? "Invalid Date" : builtinCall(`Date.prototype.${method}`, kind, locales, options, "format", [t]);
  };
  // Array.prototype.toLocaleString and %TypedArray%'s: each element's toLocaleString(locales,
  // options), joined by ","; an array being joined already is "" (V8's cycle check).
  const joining = new Set();
  function joinLocale(o, length, locales, options) {
    if (joining.has(o)) return "";
    joining.add(o);
    try {
      let s = "";
      for (let k = 0; k < length; k++) {
        if (k > 0) s += ",";
        const v = o[k];
        if (v !== undefined && v !== null) s += `${v.toLocaleString(locales, options)}`;
      }
      return s;
    } finally {
      joining.delete(o);
    }
  }
  const typedLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), "length").get;
  function typedArrayLength(v) {
    try {
      return typedLength.call(v);
    } catch {
      throw incompatible("%TypedArray%.prototype.toLocaleString", v);
    }
  }
  // ICU's root collation, which en and en-US do not tailor, of printable ASCII (U+0020-U+007E), in
  // its primary order: each character its own primary weight but a letter, whose two cases share one
  // (a before A at the tertiary level); no secondary differences; no contractions. Two strings of
  // these compare by their primary weights, then their cases, as Node's ICU answers (checked over
  // every pair of these characters and random strings: test/executor.intl.test.ts). A string with
  // any other character (control characters are ignorable, others have accents or tailorings)
  // goes to the sandbox process's ICU. A sort of 10,000 ASCII strings was 2-4 s of host calls.
  const ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789AaBbCcDdEeFfGgHhIiJjKkLlMmNnOoPpQqRrSsTtUuVvWwXxYyZz";
  const asciiPrimary = new Uint8Array(128);
  {
    let rank = 0;
    for (let i = 0; i < ASCII_ORDER.length; i++) {
      const c = ASCII_ORDER.charCodeAt(i);
      if (!(c >= 97 && c <= 122)) rank++; // a lowercase letter shares the uppercase one's weight
      asciiPrimary[c] = rank;
    }
  }
  const printable = (s) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return false;
    }
    return true;
  };
  /**
   * -1, 0 or 1 as the default collation orders two strings of printable ASCII; undefined for any
   * other strings, and for long ones (past ASCII_COMPARE_CHARS in all, ICU's native loop is faster
   * than this one in QuickJS, its call's cost spread over the characters).
   */
  const ASCII_COMPARE_CHARS = 1024;
  function asciiCompare(a, b) {
    if (a.length + b.length > ASCII_COMPARE_CHARS || !printable(a) || !printable(b)) return undefined;
    const n = a.length < b.length ? a.length : b.length;
    for (let i = 0; i < n; i++) {
      const d = asciiPrimary[a.charCodeAt(i)] - asciiPrimary[b.charCodeAt(i)];
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
    for (let i = 0; i < n; i++) {
      const x = a.charCodeAt(i);
      const y = b.charCodeAt(i);
      if (x !== y) return x < 97 ? 1 : -1; // the same letter in two cases: lowercase first
    }
    return 0;
  }

  const builtins = {
    number(self, locales, options) {
      const x = thisValue(self, numberValue, "Number.prototype.toLocaleString requires that 'this' be a Number");
      return builtinCall("Number.prototype.toLocaleString", "NumberFormat", locales, options, "format", [num(x)]);
    },
    bigint(self, locales, options) {
      const x = thisValue(self, bigintValue, "BigInt.prototype.toLocaleString requires that 'this' be a BigInt");
      return builtinCall("BigInt.prototype.toLocaleString", "NumberFormat", locales, options, "format", [{ $bigint: x.toString() }]);
    },
    date: dateString("Date:any", "toLocaleString"),
    dateDate: dateString("Date:date", "toLocaleDateString"),
    dateTime: dateString("Date:time", "toLocaleTimeString"),
    localeCompare(self, that, locales, options) {
      const a = thisString(self, "localeCompare");
      const b = toStr(that);
      if (locales === undefined && options === undefined) {
        const order = a === b ? 0 : asciiCompare(a, b);
        if (order !== undefined) return order;
      }
      return builtinCall("String.prototype.localeCompare", "Collator", locales, options, "compare", [a, b]);
    },
    upper(self, locales) {
      const s = thisString(self, "toLocaleUpperCase");
      return locales === undefined ? toUpper.call(s) : call("intlCase", ["upper", s, localeList(locales)]);
    },
    lower(self, locales) {
      const s = thisString(self, "toLocaleLowerCase");
      return locales === undefined ? toLower.call(s) : call("intlCase", ["lower", s, localeList(locales)]);
    },
    array(self, locales, options) {
      if (self === null || self === undefined) throw new TypeError("Cannot convert undefined or null to object");
      const o = Object(self);
      return joinLocale(o, Math.min(Math.max(Math.trunc(+o.length) || 0, 0), Number.MAX_SAFE_INTEGER), locales, options);
    },
    typed: (self, locales, options) => joinLocale(self, typedArrayLength(self), locales, options),
  };

  return { U, call, num, toNumber, toStr, mathValue, dateValue, describe, localeTags, tagOf, localeList, optionsOf, specOf, builtins, asciiCompare };
})
