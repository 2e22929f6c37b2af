/**
 * Intl behind the guest (guest/intl.js: the `Intl` global and the toLocale* built-ins QuickJS has
 * no ICU for): the sandbox process's own Node Intl (full ICU), synchronous calls like URL's
 * (web-calls.ts routes the `intl*` names here). Nothing of the relayer's: locale data only.
 *
 * Defaults are explicit, never the process's: a constructor given no locale (or none Node supports)
 * resolves to DEFAULT_LOCALE, a DateTimeFormat given no timeZone formats in DEFAULT_TIME_ZONE, as
 * Deno does in Chipotle's container (no LANG, no /etc/localtime): en-US and UTC.
 *
 * What crosses is checked here, not trusted from the guest (the action can replace what the guest
 * module calls): a kind and a method from the tables below, at most MAX_LOCALES locale tags of at
 * most MAX_TAG_CHARS characters, options as a flat object of primitives (names each constructor
 * reads; strings of at most MAX_OPTION_CHARS), values that are numbers, bigints, strings or
 * undefined, the whole call within web-calls.ts's bounds (half the run's memory). V8 bounds the digit
 * options; every answer is bounded by what was asked (a formatted number is a few characters a
 * digit); a Segmenter call makes at most SEGMENT_COPY_BUDGET / length segments. The Intl objects a
 * run makes are cached by (kind, locales, options), at most MAX_CACHED, and dropped when the run
 * ends (clearIntlCaches, from the guest API's endRun).
 *
 * Where Node 20's V8 (11.3) answers otherwise than Deno 2.2.2's (13.4), V8 13.4's behaviour is
 * made here: hour12's hour cycle, dateStyle/timeStyle with fields, NumberFormat's resolved options
 * order, PluralRules' rounding options. Locale data (CLDR) is the ICU's (test/executor.intl.test.ts
 * lists where it differs).
 */

/** The sandbox's locale when an action names none: Deno's in a container without LANG. */
export const DEFAULT_LOCALE = "en-US";
/** The sandbox's time zone (also the process's TZ, process/main.ts): Deno's in a container without /etc/localtime. */
export const DEFAULT_TIME_ZONE = "UTC";
/** Locale tags in one list (V8 takes any number; a list is read and canonicalized whole on every call). */
export const MAX_LOCALES = 64;
/** Characters of one locale tag (a valid tag is far shorter). */
export const MAX_TAG_CHARS = 256;
/** Characters of one option's string (time zone names, units, currencies, ... are short). */
export const MAX_OPTION_CHARS = 256;
/** Characters one Segmenter call is given (guest/intl.js walks a long string in chunks); a longer segment is cut there. */
export const MAX_SEGMENT_CHARS = 1 << 20;
/**
 * Segments one call may answer times the characters it was given. V8 11.3 (Node 20) copies the
 * whole text into every segment it makes (the segment's `input`): 16 K one-letter segments of a
 * 16 K text are 512 MB of garbage. So a call makes at most SEGMENT_COPY_BUDGET / text.length
 * segments (8 MB of copies), and the guest asks for 1,024 at a time of 1,024 characters.
 */
export const SEGMENT_COPY_BUDGET = 4 << 20;
/** Digits of a bigint or a decimal string to format (V8's conversion is quadratic: 1 M digits take ~0.2 s, 30 M minutes). */
export const MAX_DIGITS = 1 << 20;
/** Characters of a string to upper- or lower-case for a locale (the answer may be 3 times as long). */
export const MAX_CASE_CHARS = 1 << 22;
/** Intl objects cached in one run; past it the oldest is dropped (and made again if asked again). */
export const MAX_CACHED = 64;

type Obj = Record<string, unknown>;
type Formatter = Record<string, (...args: unknown[]) => unknown>;

const DTF_OPTIONS = [
  "localeMatcher", "calendar", "numberingSystem", "hour12", "hourCycle", "timeZone", "weekday", "era", "year", "month", "day", "dayPeriod",
  "hour", "minute", "second", "fractionalSecondDigits", "timeZoneName", "formatMatcher", "dateStyle", "timeStyle",
];
const NF_OPTIONS = [
  "localeMatcher", "numberingSystem", "style", "currency", "currencyDisplay", "currencySign", "unit", "unitDisplay", "notation", "compactDisplay",
  "useGrouping", "signDisplay", "minimumIntegerDigits", "minimumFractionDigits", "maximumFractionDigits", "minimumSignificantDigits",
  "maximumSignificantDigits", "roundingIncrement", "roundingMode", "roundingPriority", "trailingZeroDisplay",
];
/** Per kind: the constructor, the option names it reads, the methods the guest may call. */
const KINDS: Record<string, { make: (locales: unknown, options: unknown) => object; options: string[]; methods: string[] }> = {
  DateTimeFormat: { make: (l, o) => dateTimeFormat(l, o), options: DTF_OPTIONS, methods: ["format", "formatToParts", "formatRange", "formatRangeToParts"] },
  NumberFormat: { make: (l, o) => numberFormat(l, o), options: NF_OPTIONS, methods: ["format", "formatToParts", "formatRange", "formatRangeToParts"] },
  Collator: { make: (l, o) => new Intl.Collator(l as string, o as Obj), options: ["localeMatcher", "usage", "sensitivity", "ignorePunctuation", "numeric", "caseFirst", "collation"], methods: ["compare"] },
  PluralRules: { make: (l, o) => pluralRules(l, o), options: ["localeMatcher", "type", "notation", ...NF_OPTIONS.slice(12)], methods: ["select", "selectRange"] },
  RelativeTimeFormat: { make: (l, o) => new Intl.RelativeTimeFormat(l as string, o as Obj), options: ["localeMatcher", "numberingSystem", "style", "numeric"], methods: ["format", "formatToParts"] },
  ListFormat: { make: (l, o) => new Intl.ListFormat(l as string, o as Obj), options: ["localeMatcher", "type", "style"], methods: ["format", "formatToParts"] },
  DisplayNames: { make: (l, o) => new Intl.DisplayNames(l as string, o as Intl.DisplayNamesOptions), options: ["localeMatcher", "style", "type", "fallback", "languageDisplay"], methods: ["of"] },
  Segmenter: { make: (l, o) => new Intl.Segmenter(l as string, o as Obj), options: ["localeMatcher", "granularity"], methods: ["segmentChunk"] },
  // Date.prototype.toLocaleString / toLocaleDateString / toLocaleTimeString: a DateTimeFormat of the options as those complete them.
  "Date:any": { make: (l, o) => dateTimeFormat(l, dateOptions(o, "any", "all")), options: DTF_OPTIONS, methods: ["format"] },
  "Date:date": { make: (l, o) => dateTimeFormat(l, dateOptions(o, "date", "date")), options: DTF_OPTIONS, methods: ["format"] },
  "Date:time": { make: (l, o) => dateTimeFormat(l, dateOptions(o, "time", "time")), options: DTF_OPTIONS, methods: ["format"] },
};
/** The constructors with supportedLocalesOf. */
const CONSTRUCTORS = new Set(Object.keys(KINDS).filter((k) => !k.includes(":")));
const LOCALE_OPTIONS = ["calendar", "collation", "hourCycle", "caseFirst", "numeric", "numberingSystem", "language", "script", "region"];
const SUPPORTED_VALUES = new Set(["calendar", "collation", "currency", "numberingSystem", "timeZone", "unit"]);

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

// ---- V8 13.4 (Deno 2.2.2) where Node 20's V8 11.3 differs ---------------------------------------

const FIELDS = ["weekday", "era", "year", "month", "day", "dayPeriod", "hour", "minute", "second", "fractionalSecondDigits", "timeZoneName"];

/**
 * A DateTimeFormat as V8 13.4 makes it: in the sandbox's time zone when the options name none (a
 * primitive is no options, as ToObject makes it); dateStyle or timeStyle with a field is V8 13.4's
 * TypeError; hour12 is the locale's 12- or 24-hour cycle as V8 13.4 picks it (11.3 kept the old
 * rule: hour12 false was h24 in en-US, "24:00").
 */
function dateTimeFormat(locales: unknown, options: unknown): Intl.DateTimeFormat {
  if (options === null) throw new TypeError("Intl.DateTimeFormat called on null or undefined");
  const o: Obj = isObj(options) ? { ...options } : {};
  if (o.timeZone === undefined) o.timeZone = DEFAULT_TIME_ZONE;
  if ((o.dateStyle !== undefined || o.timeStyle !== undefined) && FIELDS.some((k) => o[k] !== undefined)) throw new TypeError("Invalid option : option");
  if (o.hour12 !== undefined) {
    const twelve = Boolean(o.hour12);
    delete o.hour12;
    delete o.hourCycle;
    const probe = new Intl.DateTimeFormat(locales as string, { ...o, hour: "numeric", dateStyle: undefined, timeStyle: undefined });
    const { hourCycle, locale } = probe.resolvedOptions();
    const language = new Intl.Locale(locale).language;
    if (twelve) o.hourCycle = hourCycle === "h11" || hourCycle === "h12" ? hourCycle : language === "ja" ? "h11" : "h12";
    else o.hourCycle = hourCycle === "h23" || hourCycle === "h24" ? hourCycle : "h23";
  }
  return new Intl.DateTimeFormat(locales as string, o);
}

/** NumberFormat's resolved options in V8 13.4's order (11.3 put the rounding options and the significant digits elsewhere). */
const NF_ORDER = [
  "locale", "numberingSystem", "style", "currency", "currencyDisplay", "currencySign", "unit", "unitDisplay", "minimumIntegerDigits", "minimumFractionDigits",
  "maximumFractionDigits", "minimumSignificantDigits", "maximumSignificantDigits", "useGrouping", "notation", "compactDisplay", "signDisplay",
  "roundingIncrement", "roundingMode", "roundingPriority", "trailingZeroDisplay",
];
const ordered = (o: Obj, order: readonly string[]): Obj => {
  const out: Obj = {};
  for (const k of order) if (has(o, k)) out[k] = o[k];
  for (const k of Object.keys(o)) if (!has(out, k)) out[k] = o[k];
  return out;
};
function numberFormat(locales: unknown, options: unknown): Intl.NumberFormat {
  const nf = new Intl.NumberFormat(locales as string, options as Obj);
  const resolved = nf.resolvedOptions.bind(nf);
  return Object.assign(nf, { resolvedOptions: () => ordered(resolved() as unknown as Obj, NF_ORDER) });
}

/**
 * PluralRules as V8 13.4 resolves them: the number options (roundingIncrement, roundingMode,
 * roundingPriority, trailingZeroDisplay) checked and answered as NumberFormat's (11.3 ignored
 * them), the categories in CLDR's order.
 */
const CATEGORIES = ["zero", "one", "two", "few", "many", "other"];
function pluralRules(locales: unknown, options: unknown): Intl.PluralRules {
  const pr = new Intl.PluralRules(locales as string, options as Intl.PluralRulesOptions);
  const digits: Obj = {};
  if (isObj(options)) for (const k of NF_OPTIONS.slice(12)) if (options[k] !== undefined) digits[k] = options[k];
  let number: Obj;
  try {
    number = new Intl.NumberFormat(locales as string, digits).resolvedOptions() as unknown as Obj;
  } catch (e) {
    if (e instanceof RangeError) throw new RangeError(e.message.replace("Intl.NumberFormat", "Intl.PluralRules"));
    throw e;
  }
  const resolved = pr.resolvedOptions.bind(pr);
  return Object.assign(pr, {
    resolvedOptions: () => {
      const r = resolved() as unknown as Obj;
      const categories = (r.pluralCategories as string[]).slice().sort((a, b) => CATEGORIES.indexOf(a) - CATEGORIES.indexOf(b));
      const out: Obj = {};
      for (const k of Object.keys(r)) out[k] = k === "pluralCategories" ? categories : r[k];
      for (const k of ["roundingIncrement", "roundingMode", "roundingPriority", "trailingZeroDisplay"]) out[k] = number[k];
      return out;
    },
  });
}

/** ECMA-402 ToDateTimeOptions: what Date's toLocale*String add when the options ask for no field. */
function dateOptions(options: unknown, required: "any" | "date" | "time", defaults: "all" | "date" | "time"): unknown {
  const o: Obj = isObj(options) ? { ...options } : {};
  let needDefaults = o.dateStyle === undefined && o.timeStyle === undefined;
  if (required !== "time" && ["weekday", "year", "month", "day"].some((k) => o[k] !== undefined)) needDefaults = false;
  if (required !== "date" && ["dayPeriod", "hour", "minute", "second", "fractionalSecondDigits"].some((k) => o[k] !== undefined)) needDefaults = false;
  if ((required === "date" && o.timeStyle !== undefined) || (required === "time" && o.dateStyle !== undefined)) {
    throw new TypeError(`Invalid option : ${required === "date" ? "timeStyle" : "dateStyle"}`);
  }
  if (needDefaults && defaults !== "time") Object.assign(o, { year: "numeric", month: "numeric", day: "numeric" });
  if (needDefaults && defaults !== "date") Object.assign(o, { hour: "numeric", minute: "numeric", second: "numeric" });
  return o;
}

/** A locale list as the guest sent it: undefined, a primitive (V8 canonicalizes it), or at most MAX_LOCALES tags. */
function locales(value: unknown): unknown {
  if (value === undefined || value === null || typeof value === "number" || typeof value === "boolean") return value;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list)) throw new TypeError("locales must be a string or a list of strings");
  if (list.length > MAX_LOCALES) throw new RangeError(`Intl: at most ${MAX_LOCALES} locales in a list (a limit of the sandbox)`);
  for (const tag of list) {
    if (typeof tag !== "string") throw new TypeError("Language ID should be string or object.");
    if (tag.length > MAX_TAG_CHARS) throw new RangeError("Incorrect locale information provided");
  }
  return list;
}

/**
 * Locales with the sandbox's default last, so that none (undefined, a number or a boolean: an empty
 * list to V8) or none Node supports resolves to it, not to the process's ICU default.
 */
const withDefault = (list: unknown): unknown =>
  list === undefined || typeof list === "number" || typeof list === "boolean" ? DEFAULT_LOCALE : Array.isArray(list) ? [...list, DEFAULT_LOCALE] : list;

/** Options as the guest sent them: a primitive or null as they are (V8 decides), an object reduced to the names `names` of primitive values. */
function options(value: unknown, names: readonly string[]): unknown {
  if (!isObj(value)) return value;
  const out: Obj = {};
  for (const name of names) {
    if (!has(value, name)) continue;
    const v = value[name];
    if (typeof v === "string" && v.length > MAX_OPTION_CHARS) throw new RangeError(`Intl: the option ${name} is longer than ${MAX_OPTION_CHARS} characters`);
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[name] = v;
    else if (v !== undefined && v !== null) throw new TypeError(`Intl: the option ${name} must be a primitive`);
  }
  return out;
}

/** An argument from the guest with its tags undone: {$u: 1} is undefined, {$n: "NaN" | "Infinity" | "-Infinity" | "-0"} that number (bigints are already). */
function arg(v: unknown): unknown {
  if (isObj(v) && v.$u === 1) return undefined;
  if (isObj(v) && typeof v.$n === "string") return v.$n === "-0" ? -0 : Number(v.$n);
  return v;
}

/** A value to format, compare or name: a primitive. */
function value(v: unknown): unknown {
  const x = arg(v);
  if (x === undefined || x === null || typeof x === "number" || typeof x === "string" || typeof x === "bigint" || typeof x === "boolean") return x;
  throw new TypeError("Intl: unexpected argument");
}

/** A number to format: a bigint or a decimal string of at most MAX_DIGITS digits. */
function formattable(v: unknown): unknown {
  const x = value(v);
  const digits = typeof x === "bigint" ? (x < 0n ? -x : x).toString(16).length * 1.21 : typeof x === "string" ? x.length : 0; // 1.21 decimal digits a hex digit
  if (digits > MAX_DIGITS) throw new RangeError(`Intl: numbers of more than ${MAX_DIGITS} digits are not formatted in the sandbox`);
  return x;
}

/** ListFormat's list: strings only, as V8 requires of what the iterable yields. */
function strings(v: unknown): string[] {
  if (!Array.isArray(v)) throw new TypeError("Intl.ListFormat: the list must be an iterable of strings");
  for (const s of v) if (typeof s !== "string") throw new TypeError(`Iterable yielded ${String(s).slice(0, 64)} which is not a string`);
  return v;
}

// ---- the run's Intl objects ----------------------------------------------------------------

const cache = new Map<string, object>();

/** Forgets the run's Intl objects (the guest API's endRun, after every run). */
export function clearIntlCaches(): void {
  cache.clear();
}

/**
 * Loads ICU's data for the common cases once, when the process starts (before any run): the first
 * NumberFormat of a process costs ~20 ms, which would otherwise fall on the first run that formats.
 */
export function warmIntl(): void {
  new Intl.NumberFormat(DEFAULT_LOCALE).format(1.5);
  new Intl.DateTimeFormat(DEFAULT_LOCALE, { timeZone: "America/New_York", timeZoneName: "short" }).format(0);
  new Intl.Collator(DEFAULT_LOCALE).compare("a", "b");
}

/** How many Intl objects the run holds (for tests). */
export const intlCacheSize = (): number => cache.size;

/** The Intl object of `kind` for `spec` (the JSON text [locales, options] the guest keeps), made once per run. */
function formatter(kind: string, spec: unknown): Formatter {
  const entry = has(KINDS, kind) ? KINDS[kind] : undefined;
  if (!entry) throw new TypeError("Intl: unknown kind");
  if (typeof spec !== "string") throw new TypeError("Intl: bad spec");
  const key = `${kind}\u0000${spec}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // most recently used last
    cache.set(key, hit);
    return hit as Formatter;
  }
  const parsed: unknown = JSON.parse(spec);
  if (!Array.isArray(parsed) || parsed.length > 2) throw new TypeError("Intl: bad spec");
  const made = entry.make(withDefault(locales(arg(parsed[0]))), options(arg(parsed[1]), entry.options));
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, made);
  return made as Formatter;
}

/**
 * The first segments of `text` (at most `max`, and SEGMENT_COPY_BUDGET / text.length): their
 * lengths and, for words, "1" or "0" for each one's isWordLike.
 */
function segmentChunk(segmenter: Intl.Segmenter, text: unknown, max: unknown): { lengths: number[]; words?: string } {
  if (typeof text !== "string") throw new TypeError("Intl.Segmenter: text must be a string");
  if (text.length > MAX_SEGMENT_CHARS) throw new RangeError(`Intl.Segmenter: at most ${MAX_SEGMENT_CHARS} characters a call`);
  const most = Math.min(typeof max === "number" && max >= 1 ? Math.floor(max) : 1, Math.max(1, Math.floor(SEGMENT_COPY_BUDGET / Math.max(1, text.length))));
  const lengths: number[] = [];
  let words = "";
  const wordy = segmenter.resolvedOptions().granularity === "word";
  for (const s of segmenter.segment(text)) {
    lengths.push(s.segment.length);
    if (wordy) words += s.isWordLike ? "1" : "0";
    if (lengths.length >= most) break;
  }
  return wordy ? { lengths, words } : { lengths };
}

/** What an Intl.Locale answers, read once (the guest keeps it). */
function localeInfo(l: Intl.Locale): Obj {
  const x = l as unknown as Obj;
  return {
    tag: l.toString(), baseName: l.baseName, calendar: l.calendar, caseFirst: l.caseFirst, collation: l.collation, hourCycle: l.hourCycle,
    language: l.language, numberingSystem: l.numberingSystem, numeric: l.numeric, region: l.region, script: l.script,
    calendars: x.calendars, collations: x.collations, hourCycles: x.hourCycles, numberingSystems: x.numberingSystems, textInfo: x.textInfo,
    timeZones: x.timeZones, weekInfo: x.weekInfo,
  };
}

const OPS: Record<string, (...args: unknown[]) => unknown> = {
  /** (kind, spec) → resolvedOptions(): makes (and caches) the object, throwing V8's errors for bad locales or options. */
  intlNew: (kind, spec) => (formatter(String(kind), spec) as unknown as { resolvedOptions(): unknown }).resolvedOptions(),
  /** (kind, spec, method, ...values) → what the method answers. */
  intlCall: (kind, spec, method, ...args) => {
    const k = String(kind);
    const f = formatter(k, spec);
    if (typeof method !== "string" || !KINDS[k].methods.includes(method)) throw new TypeError("Intl: unknown method");
    if (method === "segmentChunk") return segmentChunk(f as unknown as Intl.Segmenter, args[0], args[1]);
    if (k === "ListFormat") return f[method](strings(args[0]));
    return f[method](...args.map(k === "NumberFormat" || k === "PluralRules" ? formattable : value));
  },
  /** (tag, options, how) → the Locale's fields; how: "new", "maximize" or "minimize". */
  intlLocale: (tag, opts, how) => {
    if (typeof tag !== "string") throw new TypeError("First argument to Intl.Locale constructor can't be empty or missing");
    locales([tag]);
    const l = new Intl.Locale(tag, options(arg(opts), LOCALE_OPTIONS) as Intl.LocaleOptions);
    return localeInfo(how === "maximize" ? l.maximize() : how === "minimize" ? l.minimize() : l);
  },
  /** (locales) → Intl.getCanonicalLocales. */
  intlCanonical: (list) => Intl.getCanonicalLocales(locales(arg(list)) as string[]),
  /** (kind, locales, options) → <kind>.supportedLocalesOf. */
  intlSupported: (kind, list, opts) => {
    const k = String(kind);
    if (!CONSTRUCTORS.has(k)) throw new TypeError("Intl: unknown kind");
    const ctor = (Intl as unknown as Record<string, { supportedLocalesOf(l: unknown, o: unknown): string[] }>)[k];
    return ctor.supportedLocalesOf(locales(arg(list)), options(arg(opts), ["localeMatcher"]));
  },
  /** (key) → Intl.supportedValuesOf: RangeError for a key it does not know, as V8. */
  intlValues: (key) => {
    const k = String(value(key));
    if (!SUPPORTED_VALUES.has(k)) throw new RangeError(`Invalid key : ${k.slice(0, 64)}`);
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf(k);
  },
  /** (which, text, locales) → String.prototype.toLocaleUpperCase / toLocaleLowerCase. */
  intlCase: (which, text, list) => {
    if (typeof text !== "string") throw new TypeError("Intl: text must be a string");
    if (text.length > MAX_CASE_CHARS) throw new RangeError(`Intl: at most ${MAX_CASE_CHARS} characters are case-mapped for a locale in the sandbox`);
    const l = withDefault(locales(arg(list))) as string[];
    return which === "upper" ? text.toLocaleUpperCase(l) : text.toLocaleLowerCase(l);
  },
};

/** The Intl helpers by name (web-calls.ts dispatches to them). */
export const INTL_OPS: Readonly<Record<string, (...args: unknown[]) => unknown>> = OPS;
