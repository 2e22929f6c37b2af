// Guest module: the Intl global (DateTimeFormat, NumberFormat, Collator, PluralRules,
// RelativeTimeFormat, ListFormat, DisplayNames, Segmenter, Locale, getCanonicalLocales,
// supportedValuesOf) over the sandbox process's Node Intl (guest/intl-core.js, then
// ../process/intl-calls.ts). An Intl object here holds its [locales, options] as JSON text and its
// resolved options; the process makes the ICU object once per run for that text and answers each
// call. Constructors, prototypes, getters and errors are shaped as V8's.
(function (lib) {
  "use strict";
  const core = lib.load("intl-core");
  const { U, call, num, toNumber, toStr, mathValue, dateValue, describe, localeTags, localeList, optionsOf } = core;
  const stringify = lib.stringify;
  const parse = lib.parse;
  const define = Object.defineProperty;

  // Each Intl object's internal slots: kind, spec (JSON text), resolved options (JSON text), its bound format/compare.
  const slots = new WeakMap();
  function init(self, kind, locales, options) {
    const spec = stringify([localeList(locales), optionsOf(options, kind)]);
    slots.set(self, { kind, spec, resolved: stringify(call("intlNew", [kind, spec])), bound: undefined });
    return self;
  }
  // The receiver's slots, or V8's TypeError (NumberFormat and DateTimeFormat objects are "unwrapped" for resolvedOptions and format).
  function slot(self, kind, method, getter) {
    const object = self !== null && (typeof self === "object" || typeof self === "function");
    const s = object ? slots.get(self) : undefined;
    if (s !== undefined && s.kind === kind) return s;
    if (object && (kind === "NumberFormat" || kind === "DateTimeFormat") && (getter || method === "resolvedOptions")) {
      throw new TypeError(`Method Unwrap${kind} called on incompatible receiver ${kind === "NumberFormat" ? "undefined" : describe(self)}`);
    }
    throw new TypeError(`Method ${getter ? "get " : ""}Intl.${kind}.prototype.${method} called on incompatible receiver ${describe(self)}`);
  }
  const run = (s, method, ...args) => call("intlCall", [s.kind, s.spec, method, ...args]);
  const orU = (v, f) => (v === undefined ? U : f(v));

  // Prototype members as V8 defines them: methods non-enumerable, getters configurable, a toStringTag.
  function shape(C, name, members, getters) {
    const proto = C.prototype;
    for (const key of Object.keys(members)) define(proto, key, { value: members[key], writable: true, enumerable: false, configurable: true });
    for (const key of Object.keys(getters || {})) define(proto, key, { get: getters[key], enumerable: false, configurable: true });
    define(proto, Symbol.toStringTag, { value: `Intl.${name}`, writable: false, enumerable: false, configurable: true });
    define(C, "supportedLocalesOf", {
      value: function supportedLocalesOf(locales, options = undefined) {
        return call("intlSupported", [name, localeList(locales), optionsOf(options, "supported")]);
      },
      writable: true,
      enumerable: false,
      configurable: true,
    });
    define(C, "prototype", { writable: false, enumerable: false, configurable: false });
    return C;
  }
  const resolvedOptions = (kind) =>
    function resolvedOptions() {
      return parse(slot(this, kind, "resolvedOptions").resolved);
    };
  const requireNew = (name) => {
    throw new TypeError(`Constructor Intl.${name} requires 'new'`);
  };

  // DateTimeFormat, NumberFormat and Collator may be called without new, as V8 allows.
  function DateTimeFormat(locales = undefined, options = undefined) {
    if (!new.target) return new DateTimeFormat(locales, options);
    if (options === null) throw new TypeError("Intl.DateTimeFormat called on null or undefined");
    return init(this, "DateTimeFormat", locales, options);
  }
  shape(
    DateTimeFormat,
    "DateTimeFormat",
    {
      formatToParts(date) {
        return run(slot(this, "DateTimeFormat", "formatToParts"), "formatToParts", dateValue(date));
      },
      formatRange(startDate, endDate) {
        const s = slot(this, "DateTimeFormat", "formatRange");
        return run(s, "formatRange", orU(startDate, dateValue), orU(endDate, dateValue));
      },
      formatRangeToParts(startDate, endDate) {
        const s = slot(this, "DateTimeFormat", "formatRangeToParts");
        return run(s, "formatRangeToParts", orU(startDate, dateValue), orU(endDate, dateValue));
      },
      resolvedOptions: resolvedOptions("DateTimeFormat"),
    },
    {
      format() {
        const s = slot(this, "DateTimeFormat", "format", true);
        return s.bound || (s.bound = (date) => run(s, "format", dateValue(date)));
      },
    },
  );

  function NumberFormat(locales = undefined, options = undefined) {
    if (!new.target) return new NumberFormat(locales, options);
    return init(this, "NumberFormat", locales, options);
  }
  shape(
    NumberFormat,
    "NumberFormat",
    {
      formatToParts(value) {
        return run(slot(this, "NumberFormat", "formatToParts"), "formatToParts", mathValue(value));
      },
      formatRange(start, end) {
        const s = slot(this, "NumberFormat", "formatRange");
        return run(s, "formatRange", orU(start, mathValue), orU(end, mathValue));
      },
      formatRangeToParts(start, end) {
        const s = slot(this, "NumberFormat", "formatRangeToParts");
        return run(s, "formatRangeToParts", orU(start, mathValue), orU(end, mathValue));
      },
      resolvedOptions: resolvedOptions("NumberFormat"),
    },
    {
      format() {
        const s = slot(this, "NumberFormat", "format", true);
        return s.bound || (s.bound = (value) => run(s, "format", mathValue(value)));
      },
    },
  );

  function Collator(locales = undefined, options = undefined) {
    if (!new.target) return new Collator(locales, options);
    return init(this, "Collator", locales, options);
  }
  shape(
    Collator,
    "Collator",
    { resolvedOptions: resolvedOptions("Collator") },
    {
      compare() {
        const s = slot(this, "Collator", "compare", true);
        if (s.bound) return s.bound;
        // en's default collation (ICU's root): printable ASCII is ordered here (intl-core.js asciiCompare), the rest by ICU.
        const r = parse(s.resolved);
        const root = (r.locale === "en-US" || r.locale === "en") && r.usage === "sort" && r.sensitivity === "variant" && r.ignorePunctuation === false && r.collation === "default" && r.numeric === false && r.caseFirst === "false";
        return (s.bound = (x, y) => {
          const a = toStr(x);
          const b = toStr(y);
          if (a === b) return 0;
          const order = root ? core.asciiCompare(a, b) : undefined;
          return order !== undefined ? order : run(s, "compare", a, b);
        });
      },
    },
  );

  function PluralRules(locales = undefined, options = undefined) {
    if (!new.target) requireNew("PluralRules");
    return init(this, "PluralRules", locales, options);
  }
  shape(PluralRules, "PluralRules", {
    select(number) {
      return run(slot(this, "PluralRules", "select"), "select", num(toNumber(number)));
    },
    selectRange(start, end) {
      const s = slot(this, "PluralRules", "selectRange");
      return run(s, "selectRange", orU(start, (v) => num(toNumber(v))), orU(end, (v) => num(toNumber(v))));
    },
    resolvedOptions: resolvedOptions("PluralRules"),
  });

  function RelativeTimeFormat(locales = undefined, options = undefined) {
    if (!new.target) requireNew("RelativeTimeFormat");
    return init(this, "RelativeTimeFormat", locales, options);
  }
  shape(RelativeTimeFormat, "RelativeTimeFormat", {
    format(value, unit) {
      const s = slot(this, "RelativeTimeFormat", "format");
      return run(s, "format", num(toNumber(value)), toStr(unit));
    },
    formatToParts(value, unit) {
      const s = slot(this, "RelativeTimeFormat", "formatToParts");
      return run(s, "formatToParts", num(toNumber(value)), toStr(unit));
    },
    resolvedOptions: resolvedOptions("RelativeTimeFormat"),
  });

  // StringListFromIterable: undefined is an empty list; anything the iterable yields must be a string.
  function stringList(list) {
    if (list === undefined) return [];
    const out = [];
    for (const v of list) {
      if (typeof v !== "string") throw new TypeError(`Iterable yielded ${describe(v)} which is not a string`);
      out.push(v);
    }
    return out;
  }
  function ListFormat(locales = undefined, options = undefined) {
    if (!new.target) requireNew("ListFormat");
    return init(this, "ListFormat", locales, options);
  }
  shape(ListFormat, "ListFormat", {
    format(list) {
      return run(slot(this, "ListFormat", "format"), "format", stringList(list));
    },
    formatToParts(list) {
      return run(slot(this, "ListFormat", "formatToParts"), "formatToParts", stringList(list));
    },
    resolvedOptions: resolvedOptions("ListFormat"),
  });

  function DisplayNames(locales, options) {
    if (!new.target) requireNew("DisplayNames");
    return init(this, "DisplayNames", locales, options);
  }
  shape(DisplayNames, "DisplayNames", {
    of(code) {
      const name = run(slot(this, "DisplayNames", "of"), "of", toStr(code));
      return name === null ? undefined : name;
    },
    resolvedOptions: resolvedOptions("DisplayNames"),
  });

  // Segmenter: the process answers the lengths of a text's segments a chunk at a time: at most
  // 1,024 of its first 1,024 characters (V8 copies the text into each segment it makes: small
  // chunks keep that linear). Boundaries within 64 characters of a chunk's cut may depend on what
  // follows it (UAX #29 looks ahead): they are asked again with the next chunk. A segment too long
  // for its chunk is asked again with twice the text (its end only), up to 1 M characters (a
  // longer one is cut there).
  const CHUNK = 1024;
  const MARGIN = 64;
  const MAX_CHUNK = 1 << 20;
  function Segmenter(locales = undefined, options = undefined) {
    if (!new.target) requireNew("Segmenter");
    return init(this, "Segmenter", locales, options);
  }
  shape(Segmenter, "Segmenter", {
    segment(string) {
      const s = slot(this, "Segmenter", "segment");
      return new Segments(s, toStr(string), parse(s.resolved).granularity === "word");
    },
    resolvedOptions: resolvedOptions("Segmenter"),
  });
  const SEGMENTS = Symbol("vesta.segments");
  class Segments {
    #s;
    #text;
    #words;
    #ends = [];
    #wordLike = "";
    #done = false;
    constructor(s, text, words) {
      this.#s = s;
      this.#text = text;
      this.#words = words;
    }
    // Segments up to at least `index` (or all): the ends found so far.
    [SEGMENTS](index) {
      const ends = this.#ends;
      const text = this.#text;
      while (!this.#done && (ends.length === 0 || ends[ends.length - 1] <= index)) {
        const from = ends.length === 0 ? 0 : ends[ends.length - 1];
        let size = CHUNK;
        for (;;) {
          const slice = text.slice(from, from + size);
          const last = from + size >= text.length;
          const r = run(this.#s, "segmentChunk", slice, size === CHUNK ? CHUNK : 2);
          if (r.lengths.length === 0) {
            this.#done = true;
            break;
          }
          const keepTo = last ? slice.length : slice.length - MARGIN;
          let n = 0;
          let end = 0;
          while (n < r.lengths.length && end + r.lengths[n] <= keepTo) end += r.lengths[n++];
          if (n === 0 && !last && size < MAX_CHUNK) {
            size *= 2;
            continue;
          }
          if (n === 0) end = r.lengths[n++];
          for (let i = 0, at = from; i < n; i++) ends.push((at += r.lengths[i]));
          if (this.#words) this.#wordLike += r.words.slice(0, n);
          if (from + end >= text.length) this.#done = true;
          break;
        }
      }
      return ends;
    }
    #segment(i) {
      const ends = this.#ends;
      const start = i === 0 ? 0 : ends[i - 1];
      const data = { segment: this.#text.slice(start, ends[i]), index: start, input: this.#text };
      if (this.#words) data.isWordLike = this.#wordLike[i] === "1";
      return data;
    }
    containing(index = undefined) {
      const n = Math.trunc(toNumber(index)) || 0;
      if (n < 0 || n >= this.#text.length) return undefined;
      const ends = this[SEGMENTS](n);
      let lo = 0;
      let hi = ends.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ends[mid] <= n) lo = mid + 1;
        else hi = mid;
      }
      return this.#segment(lo);
    }
    [Symbol.iterator]() {
      let i = 0;
      const next = () => {
        const ends = this.#ends;
        if (i >= ends.length) this[SEGMENTS](i === 0 ? 0 : ends[i - 1]);
        return i < this.#ends.length ? { value: this.#segment(i++), done: false } : { value: undefined, done: true };
      };
      return { next, [Symbol.iterator]() { return this; }, [Symbol.toStringTag]: "Segmenter String Iterator" };
    }
  }

  // Locale: its fields read once from the process; maximize/minimize make new ones there.
  const LOCALE_FIELDS = ["baseName", "calendar", "caseFirst", "collation", "hourCycle", "language", "numberingSystem", "numeric", "region", "script"];
  const LOCALE_LISTS = ["calendars", "collations", "hourCycles", "numberingSystems", "textInfo", "timeZones", "weekInfo"];
  const localeInfo = new WeakMap();
  function info(self, method) {
    const d = self !== null && typeof self === "object" ? localeInfo.get(self) : undefined;
    if (d === undefined) throw new TypeError(`Method Intl.Locale.prototype.${method} called on incompatible receiver ${describe(self)}`);
    return d;
  }
  const KEY = Symbol("vesta.locale");
  function Locale(tag, options = undefined) {
    if (!new.target) requireNew("Locale");
    let d;
    if (tag === KEY) d = options;
    else {
      if (typeof tag !== "string" && (tag === null || typeof tag !== "object")) throw new TypeError("First argument to Intl.Locale constructor can't be empty or missing");
      const t = core.tagOf(tag);
      d = call("intlLocale", [t !== undefined ? t : toStr(tag), optionsOf(options, "Locale"), "new"]);
    }
    localeInfo.set(this, d);
    localeTags.set(this, d.tag);
  }
  const copy = (v) => (v === null || v === undefined ? undefined : parse(stringify(v)));
  const localeMembers = {
    toString() {
      return info(this, "toString").tag;
    },
    maximize() {
      return new Locale(KEY, call("intlLocale", [info(this, "maximize").tag, U, "maximize"]));
    },
    minimize() {
      return new Locale(KEY, call("intlLocale", [info(this, "minimize").tag, U, "minimize"]));
    },
  };
  const localeGetters = {};
  for (const field of LOCALE_FIELDS) {
    localeGetters[field] = function () {
      const v = info(this, field)[field];
      return v === null ? undefined : v;
    };
  }
  for (const field of LOCALE_LISTS) {
    localeGetters[field] = function () {
      return copy(info(this, field)[field]);
    };
    const method = `get${field[0].toUpperCase()}${field.slice(1)}`;
    localeMembers[method] = function () {
      return copy(info(this, method)[field]);
    };
  }
  shape(Locale, "Locale", localeMembers, localeGetters);
  delete Locale.supportedLocalesOf;

  const Intl = {};
  const members = { DateTimeFormat, NumberFormat, Collator, PluralRules, RelativeTimeFormat, ListFormat, DisplayNames, Segmenter, Locale };
  for (const name of Object.keys(members)) define(Intl, name, { value: members[name], writable: true, enumerable: false, configurable: true });
  define(Intl, "getCanonicalLocales", {
    value: function getCanonicalLocales(locales) {
      return call("intlCanonical", [localeList(locales)]);
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
  define(Intl, "supportedValuesOf", {
    value: function supportedValuesOf(key) {
      return call("intlValues", [toStr(key)]);
    },
    writable: true,
    enumerable: false,
    configurable: true,
  });
  define(Intl, Symbol.toStringTag, { value: "Intl", writable: false, enumerable: false, configurable: true });
  return { Intl };
})
