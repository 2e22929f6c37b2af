// The expressions of the Intl differential corpus (test/fixtures/intl-corpus.json): each is
// evaluated as `() => (expression)` in Deno 2.2.2 (generate.js) and in a sandbox run
// (test/executor.intl.test.ts), and the results compared exactly. Plain JavaScript, no imports:
// Deno runs it; the test reads only the JSON it produced.
const q = JSON.stringify;
const LOCALES = ["en-US", "en-GB", "en-IN", "de-DE", "de-CH", "fr-FR", "fr-CA", "es-ES", "es-MX", "it-IT", "pt-BR", "nl-NL", "sv-SE", "pl-PL", "ru-RU", "tr-TR", "ja-JP", "zh-CN", "zh-TW", "ko-KR", "ar-EG", "he-IL", "hi-IN", "th-TH", "fa-IR"];
const ZONES = ["UTC", "America/New_York", "America/Los_Angeles", "America/Chicago", "America/Sao_Paulo", "Europe/London", "Europe/Berlin", "Asia/Tokyo", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Sydney", "Pacific/Auckland", "Etc/GMT+5", "US/Eastern", "Asia/Calcutta"];
// Instants: US DST start and end, the epoch, Y2K eve, mid-2025, a leap day, far past and future.
const TIMES = ["Date.UTC(2024, 2, 10, 6, 59, 59, 123)", "Date.UTC(2024, 10, 3, 5, 30)", "0", "Date.UTC(1999, 11, 31, 23, 59, 59)", "Date.UTC(2025, 5, 15, 12, 0, 0)", "Date.UTC(2024, 1, 29, 18, 45, 7, 9)", "Date.UTC(-50, 0, 1)", "Date.UTC(275000, 0, 1)"];
const cases = [];
const add = (group, expr) => cases.push({ group, expr });

// ---- Date.prototype.toLocale*String: defaults, locales, options ----
for (const t of TIMES) {
  add("date", `new Date(${t}).toLocaleString()`);
  add("date", `new Date(${t}).toLocaleDateString()`);
  add("date", `new Date(${t}).toLocaleTimeString()`);
  add("date", `String(new Date(${t}))`);
  add("date", `new Date(${t}).toTimeString()`);
}
for (const l of LOCALES) {
  add("date", `new Date(Date.UTC(2024, 2, 10, 6, 59, 59, 123)).toLocaleString(${q(l)})`);
  add("date", `new Date(Date.UTC(2024, 10, 3, 17, 5)).toLocaleDateString(${q(l)}, { weekday: "long", year: "numeric", month: "long", day: "numeric" })`);
  add("date", `new Date(Date.UTC(2024, 10, 3, 17, 5)).toLocaleTimeString(${q(l)}, { timeZone: "Asia/Tokyo" })`);
}
add("date", `new Date(NaN).toLocaleString()`);
add("date", `new Date(NaN).toLocaleString("xx-invalid-", { timeZone: "Nowhere" })`);
add("date", `String(new Date(NaN))`);
add("date", `new Date(0).toLocaleString("en-US", { timeZone: "America/New_York", timeZoneName: "short" })`);
add("date", `new Date(0).toLocaleString("en-US", { hour12: false })`);
add("date", `new Date(0).toLocaleString("en-US", { hourCycle: "h23" })`);
add("date", `new Date(0).toLocaleDateString("en-US", { timeStyle: "short" })`);
add("date", `new Date(0).toLocaleTimeString("en-US", { dateStyle: "short" })`);
add("date", `new Date(0).toLocaleString("en-US", { dateStyle: "full", timeStyle: "full" })`);
add("date", `new Date(0).toLocaleString("en-US", { month: "long" })`);
add("date", `new Date(0).toLocaleTimeString("en-US", { month: "long" })`);
add("date", `new Date(0).toLocaleDateString("en-US", { hour: "numeric" })`);
add("date", `new Date(0).toLocaleString(undefined, { timeZone: "Asia/Kolkata" })`);
add("date", `new Date(0).toLocaleString([], { timeZone: "Asia/Kolkata" })`);
add("date", `new Date(0).toLocaleString("en-US", { timeZone: "Invalid/Zone" })`);
add("date", `new Date(0).toLocaleString("not a locale")`);
add("date", `new Date(0).toLocaleString("en-US", null)`);
add("date", `Date.prototype.toLocaleString.call({})`);
add("date", `Date.prototype.toLocaleString.length`);

// ---- Intl.DateTimeFormat ----
for (const z of ZONES) {
  add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: ${q(z)}, timeZoneName: "short", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(Date.UTC(2024, 2, 10, 7, 30))`);
  add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: ${q(z)} }).resolvedOptions().timeZone`);
  for (const name of ["long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"]) {
    add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: ${q(z)}, timeZoneName: ${q(name)} }).formatToParts(Date.UTC(2024, 6, 1)).find((p) => p.type === "timeZoneName")`);
  }
  // what date-fns-tz 2.x asks: its tokenizer and its zone names
  add("dtf", `new Intl.DateTimeFormat("en-US", { hourCycle: "h23", timeZone: ${q(z)}, year: "numeric", month: "numeric", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).formatToParts(new Date(Date.UTC(2024, 2, 10, 6, 59, 59)))`);
  add("dtf", `new Intl.DateTimeFormat("en-US", { hour12: false, timeZone: ${q(z)}, year: "numeric", month: "numeric", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(new Date("2014-06-25T04:00:00.123Z"))`);
}
for (const l of LOCALES) {
  for (const [ds, ts] of [["full", "long"], ["long", "medium"], ["medium", "short"], ["short", undefined]]) {
    add("dtf", `new Intl.DateTimeFormat(${q(l)}, { dateStyle: ${q(ds)}${ts ? `, timeStyle: ${q(ts)}` : ""}, timeZone: "Europe/Berlin" }).format(Date.UTC(2024, 11, 24, 18, 30, 5))`);
  }
  add("dtf", `new Intl.DateTimeFormat(${q(l)}, { era: "short", year: "numeric", month: "short", day: "numeric", weekday: "short", hour: "numeric", minute: "2-digit", dayPeriod: "short" }).formatToParts(Date.UTC(2024, 6, 4, 21, 9))`);
  add("dtf", `new Intl.DateTimeFormat(${q(l)}).resolvedOptions()`);
  add("dtf", `new Intl.DateTimeFormat(${q(l)}, { timeStyle: "short" }).resolvedOptions()`);
  add("dtf", `new Intl.DateTimeFormat(${q(l)}, { month: "long", day: "numeric" }).formatRange(Date.UTC(2024, 0, 5), Date.UTC(2024, 1, 20))`);
}
add("dtf", `new Intl.DateTimeFormat().format(0)`);
add("dtf", `Intl.DateTimeFormat().resolvedOptions().timeZone`);
add("dtf", `Intl.DateTimeFormat().resolvedOptions()`);
add("dtf", `new Intl.DateTimeFormat("en-US", { fractionalSecondDigits: 3, second: "numeric" }).format(Date.UTC(2024, 0, 1, 0, 0, 7, 89))`);
add("dtf", `new Intl.DateTimeFormat("en-US", { fractionalSecondDigits: 4 })`);
add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Tokyo", calendar: "japanese", era: "long", year: "numeric" }).format(Date.UTC(2024, 0, 1))`);
add("dtf", `new Intl.DateTimeFormat("en-u-ca-islamic", { dateStyle: "long" }).format(Date.UTC(2024, 0, 1))`);
add("dtf", `new Intl.DateTimeFormat("th-TH-u-nu-thai", { dateStyle: "long" }).format(Date.UTC(2024, 0, 1))`);
add("dtf", `new Intl.DateTimeFormat("ar-EG", { dateStyle: "long" }).resolvedOptions().numberingSystem`);
add("dtf", `new Intl.DateTimeFormat("en-US", { hour: "numeric", hourCycle: "h11" }).format(Date.UTC(2024, 0, 1, 12))`);
add("dtf", `new Intl.DateTimeFormat("en-US", { hour: "numeric", hour12: true, hourCycle: "h23" }).resolvedOptions()`);
add("dtf", `new Intl.DateTimeFormat("en-US", { dateStyle: "short", year: "numeric" })`);
add("dtf", `new Intl.DateTimeFormat("en-US", { dateStyle: "bogus" })`);
add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: "Mars/Olympus" })`);
add("dtf", `new Intl.DateTimeFormat("en-US", null)`);
add("dtf", `new Intl.DateTimeFormat("en-US", "abc").resolvedOptions()`);
add("dtf", `new Intl.DateTimeFormat("en-US").format(NaN)`);
add("dtf", `new Intl.DateTimeFormat("en-US").format(8.64e15 + 1)`);
add("dtf", `new Intl.DateTimeFormat("en-US").format(new Date(Date.UTC(2020, 1, 2)))`);
add("dtf", `new Intl.DateTimeFormat("en-US").format("2020-01-02")`);
add("dtf", `new Intl.DateTimeFormat("en-US").formatRange(0, undefined)`);
add("dtf", `new Intl.DateTimeFormat("en-US", { hour: "numeric", minute: "numeric" }).formatRangeToParts(Date.UTC(2024, 0, 1, 10), Date.UTC(2024, 0, 1, 11, 30))`);
add("dtf", `new Intl.DateTimeFormat("en-US").formatRange(Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 1))`);
add("dtf", `new Intl.DateTimeFormat("en-US").format(1n)`);
add("dtf", `[0, 86400000, 172800000].map(new Intl.DateTimeFormat("en-GB", { weekday: "long" }).format)`);
add("dtf", `Intl.DateTimeFormat.supportedLocalesOf(["en-US", "xx", "de", "zz-ZZ", "ja"])`);
add("dtf", `Intl.DateTimeFormat.supportedLocalesOf("fr-CA", { localeMatcher: "lookup" })`);
add("dtf", `Intl.DateTimeFormat.supportedLocalesOf(["en-US"], { localeMatcher: "nope" })`);
add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: "america/new_york" }).resolvedOptions().timeZone`);
add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: "Etc/UTC" }).resolvedOptions().timeZone`);
add("dtf", `new Intl.DateTimeFormat("en-US", { timeZone: "GMT" }).resolvedOptions().timeZone`);

// ---- Number.prototype.toLocaleString / BigInt.prototype.toLocaleString ----
const NUMBERS = ["1234.5", "-1234.5678", "0", "-0", "1e21", "123456789.987654321", "0.000001234", "NaN", "Infinity", "-Infinity", "42", "1e-7", "999.9999"];
for (const n of NUMBERS) add("number", `(${n}).toLocaleString()`);
for (const l of LOCALES) {
  add("number", `(1234567.891).toLocaleString(${q(l)})`);
  add("number", `(1234567.891).toLocaleString(${q(l)}, { style: "currency", currency: "EUR" })`);
  add("number", `(-0.256).toLocaleString(${q(l)}, { style: "percent", minimumFractionDigits: 1 })`);
  add("number", `(12345678901234567890n).toLocaleString(${q(l)})`);
}
add("number", `(1234.5).toLocaleString("en-US", { maximumFractionDigits: 101 })`);
add("number", `(1234.5).toLocaleString("en-US", { minimumIntegerDigits: 22 })`);
add("number", `(1234.5).toLocaleString("en-US", { style: "currency" })`);
add("number", `(1234.5).toLocaleString("en-US", { style: "currency", currency: "EURO" })`);
add("number", `(1234.5).toLocaleString("en-US", { style: "bogus" })`);
add("number", `(1234.5).toLocaleString("en_US")`);
add("number", `(1234.5).toLocaleString(["xx-YY", "de"])`);
add("number", `(1234.5).toLocaleString(null)`);
add("number", `(1234.5).toLocaleString(5)`);
add("number", `(1234.5).toLocaleString(["en-US", 5])`);
add("number", `Number.prototype.toLocaleString.call("5")`);
add("number", `(12n).toLocaleString("en-US", { style: "currency", currency: "USD" })`);
add("number", `(-(10n ** 30n)).toLocaleString("en-IN")`);
add("number", `BigInt.prototype.toLocaleString.call(5)`);

// ---- Intl.NumberFormat ----
const NF = [
  { style: "currency", currency: "USD" }, { style: "currency", currency: "JPY" }, { style: "currency", currency: "EUR", currencyDisplay: "name" },
  { style: "currency", currency: "GBP", currencyDisplay: "code" }, { style: "currency", currency: "USD", currencySign: "accounting" },
  { style: "currency", currency: "CHF", currencyDisplay: "narrowSymbol" }, { style: "percent" }, { style: "percent", signDisplay: "exceptZero" },
  { notation: "compact" }, { notation: "compact", compactDisplay: "long" }, { notation: "scientific" }, { notation: "engineering", maximumSignificantDigits: 3 },
  { style: "unit", unit: "kilometer-per-hour" }, { style: "unit", unit: "liter", unitDisplay: "long" }, { style: "unit", unit: "megabyte", unitDisplay: "narrow" },
  { style: "unit", unit: "celsius" }, { minimumFractionDigits: 2, maximumFractionDigits: 2 }, { maximumSignificantDigits: 2 },
  { useGrouping: false }, { useGrouping: "min2" }, { signDisplay: "always" }, { signDisplay: "never" }, { signDisplay: "negative" },
  { roundingMode: "floor", maximumFractionDigits: 0 }, { roundingIncrement: 5, maximumFractionDigits: 2, minimumFractionDigits: 2 },
  { roundingPriority: "lessPrecision", maximumSignificantDigits: 3, maximumFractionDigits: 1 }, { trailingZeroDisplay: "stripIfInteger", minimumFractionDigits: 2 },
  { numberingSystem: "arab" }, { notation: "compact", maximumFractionDigits: 1 },
];
const VALUES = ["1234.5", "-987654.321", "0.5", "1e9", "-0", "123456789012345678901234567890n", `"1234567.891234567891234567"`];
for (const [i, o] of NF.entries()) {
  for (const l of i % 3 === 0 ? ["en-US", "de-DE", "ja-JP", "ar-EG", "hi-IN"] : i % 3 === 1 ? ["en-GB", "fr-FR", "zh-CN"] : ["en-US", "es-ES"]) {
    add("nf", `[${VALUES.join(", ")}].map(new Intl.NumberFormat(${q(l)}, ${q(o)}).format)`);
  }
  add("nf", `new Intl.NumberFormat("en-US", ${q(o)}).resolvedOptions()`);
  add("nf", `new Intl.NumberFormat("de-DE", ${q(o)}).formatToParts(-1234567.891)`);
}
add("nf", `new Intl.NumberFormat().resolvedOptions()`);
add("nf", `new Intl.NumberFormat("en-US").format()`);
add("nf", `new Intl.NumberFormat("en-US").format("abc")`);
add("nf", `new Intl.NumberFormat("en-US").format("  0x1F ")`);
add("nf", `new Intl.NumberFormat("en-US").format("1e400")`);
add("nf", `new Intl.NumberFormat("en-US").format(Symbol())`);
add("nf", `new Intl.NumberFormat("en-US").format({ valueOf: () => 42 })`);
add("nf", `new Intl.NumberFormat("en-US").format(true)`);
add("nf", `new Intl.NumberFormat("en-US").formatRange(3, 5)`);
add("nf", `new Intl.NumberFormat("en-US", { style: "currency", currency: "EUR" }).formatRange(3, 500)`);
add("nf", `new Intl.NumberFormat("en-US").formatRangeToParts(3, 5)`);
add("nf", `new Intl.NumberFormat("en-US").formatRange(3, undefined)`);
add("nf", `new Intl.NumberFormat("en-US").formatRange(NaN, 5)`);
add("nf", `new Intl.NumberFormat("en-US").formatRange(5, 3)`);
add("nf", `new Intl.NumberFormat("en-US", { maximumFractionDigits: 100 }).format(1 / 3)`);
add("nf", `new Intl.NumberFormat("en-US", { maximumFractionDigits: 101 })`);
add("nf", `new Intl.NumberFormat("en-US", { maximumSignificantDigits: 0 })`);
add("nf", `new Intl.NumberFormat("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 1 })`);
add("nf", `new Intl.NumberFormat("en-US", { maximumFractionDigits: NaN })`);
add("nf", `new Intl.NumberFormat("en-US", { maximumFractionDigits: "2" }).format(1.23456)`);
add("nf", `new Intl.NumberFormat("en-US", { maximumFractionDigits: { valueOf: () => 1 } }).format(1.23456)`);
add("nf", `new Intl.NumberFormat("en-US", { useGrouping: "true" }).resolvedOptions().useGrouping`);
add("nf", `new Intl.NumberFormat("en-US", { useGrouping: "bogus" })`);
add("nf", `new Intl.NumberFormat("en-US", { style: "unit" })`);
add("nf", `new Intl.NumberFormat("en-US", { style: "unit", unit: "furlong" })`);
add("nf", `new Intl.NumberFormat("en-US", { style: "currency", currency: "usd" }).resolvedOptions().currency`);
add("nf", `new Intl.NumberFormat("en-US", null)`);
add("nf", `new Intl.NumberFormat(null)`);
add("nf", `new Intl.NumberFormat("")`);
add("nf", `new Intl.NumberFormat("en-US-u-nu-thai").format(1234)`);
add("nf", `new Intl.NumberFormat(["zz", "de-AT"]).resolvedOptions().locale`);
add("nf", `new Intl.NumberFormat("de-DE-u-nu-latn-cu-eur").resolvedOptions().locale`);
add("nf", `Intl.NumberFormat.supportedLocalesOf(["en", "de-DE", "xx-XX"])`);

// ---- Collator and localeCompare ----
const WORDS = ["résumé", "resume", "Resume", "résume", "a", "B", "c", "Ä", "z", "ä", "10", "9", "item10", "item9", "Item2", "ß", "ss", "æ", "ae", "", " a", "-a", "_a", "Ö", "o", "Ω", "ω", "日本", "中文", "😀", "é"];
add("collator", `${q(WORDS)}.slice().sort((a, b) => a.localeCompare(b))`);
for (const l of ["en", "de", "de-u-co-phonebk", "sv", "tr", "es", "fr", "ja", "zh", "da"]) add("collator", `${q(WORDS)}.slice().sort(new Intl.Collator(${q(l)}).compare)`);
for (const o of [{ sensitivity: "base" }, { sensitivity: "accent" }, { sensitivity: "case" }, { sensitivity: "variant" }, { numeric: true }, { caseFirst: "upper" }, { caseFirst: "lower" }, { ignorePunctuation: true }, { usage: "search", sensitivity: "base" }]) {
  add("collator", `${q(WORDS)}.slice().sort(new Intl.Collator("en", ${q(o)}).compare)`);
  add("collator", `new Intl.Collator("en", ${q(o)}).resolvedOptions()`);
  add("collator", `[["a", "A"], ["a", "á"], ["item9", "item10"], ["a b", "ab"]].map(([x, y]) => x.localeCompare(y, "en", ${q(o)}))`);
}
add("collator", `"a".localeCompare("B")`);
add("collator", `"a".localeCompare("a")`);
add("collator", `"ä".localeCompare("z", "de")`);
add("collator", `"ä".localeCompare("z", "sv")`);
add("collator", `"a".localeCompare()`);
add("collator", `"undefined".localeCompare()`);
add("collator", `String.prototype.localeCompare.call(null, "a")`);
add("collator", `"a".localeCompare("b", "en", { sensitivity: "nope" })`);
add("collator", `new Intl.Collator().resolvedOptions()`);
add("collator", `Intl.Collator("de").compare("ä", "b")`);
add("collator", `new Intl.Collator("en", { collation: "emoji" }).resolvedOptions().collation`);
add("collator", `new Intl.Collator("en-u-kn-true").resolvedOptions()`);
add("collator", `Intl.Collator.supportedLocalesOf(["sv", "xx"])`);

// ---- String case and Array/TypedArray toLocaleString ----
add("string", `"istanbul".toLocaleUpperCase("tr")`);
add("string", `"İSTANBUL".toLocaleLowerCase("tr")`);
add("string", `"I".toLocaleLowerCase("az")`);
add("string", `"i".toLocaleUpperCase(["tr", "en"])`);
add("string", `"i".toLocaleUpperCase([])`);
add("string", `"ß".toLocaleUpperCase("de")`);
add("string", `"i".toLocaleUpperCase("xx-invalid-")`);
add("string", `"Ǆ".toLocaleLowerCase()`);
add("string", `"I".toLocaleLowerCase("lt")`);
add("array", `[1234.5, -0.5, 1e6].toLocaleString()`);
add("array", `[1234.5, [5678, null], undefined, 3, 4n].toLocaleString("de-DE")`);
add("array", `[new Date(0), 1234.5].toLocaleString("en-GB", { timeZone: "Asia/Tokyo" })`);
add("array", `[1, 2, 3].toLocaleString("en-US", { style: "currency", currency: "USD" })`);
add("array", `(() => { const a = [1]; a.push(a, 2000); return a.toLocaleString(); })()`);
add("array", `Array.prototype.toLocaleString.call({ length: 2, 0: 1000, 1: "x" })`);
add("array", `[{ toLocaleString: (l, o) => String(l) + "/" + JSON.stringify(o) }].toLocaleString("fr", { a: 1 })`);
add("array", `new Float64Array([1234.5, -0]).toLocaleString("de")`);
add("array", `new BigInt64Array([12345n]).toLocaleString("en-IN")`);
add("array", `new Uint8Array([200, 100]).toLocaleString()`);

// ---- PluralRules ----
for (const l of ["en", "fr", "ru", "ar", "ja", "pl", "cy"]) {
  add("plural", `[0, 1, 2, 3, 5, 11, 21, 22, 101, 1.5, -1].map((n) => new Intl.PluralRules(${q(l)}).select(n))`);
  add("plural", `[1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101].map((n) => new Intl.PluralRules(${q(l)}, { type: "ordinal" }).select(n))`);
  add("plural", `new Intl.PluralRules(${q(l)}).resolvedOptions()`);
}
add("plural", `new Intl.PluralRules("en", { minimumFractionDigits: 1 }).select(1)`);
add("plural", `new Intl.PluralRules("en").selectRange(1, 5)`);
add("plural", `new Intl.PluralRules("en").selectRange(1, undefined)`);
add("plural", `new Intl.PluralRules("en").select(1n)`);
add("plural", `Intl.PluralRules("en")`);
add("plural", `new Intl.PluralRules("en", { type: "cardinal-ish" })`);

// ---- RelativeTimeFormat ----
for (const l of ["en", "de", "es", "ja", "ar"]) {
  for (const o of [{}, { numeric: "auto" }, { style: "short" }, { style: "narrow", numeric: "auto" }]) {
    add("rtf", `[[-1, "day"], [1, "day"], [0, "year"], [-3, "hours"], [2.5, "weeks"], [1, "quarter"], [-0, "second"]].map(([v, u]) => new Intl.RelativeTimeFormat(${q(l)}, ${q(o)}).format(v, u))`);
  }
  add("rtf", `new Intl.RelativeTimeFormat(${q(l)}).formatToParts(-1234.5, "minute")`);
  add("rtf", `new Intl.RelativeTimeFormat(${q(l)}, { numeric: "auto" }).resolvedOptions()`);
}
add("rtf", `new Intl.RelativeTimeFormat("en").format(1, "fortnight")`);
add("rtf", `new Intl.RelativeTimeFormat("en").format(NaN, "day")`);
add("rtf", `new Intl.RelativeTimeFormat("en").format(Infinity, "day")`);
add("rtf", `new Intl.RelativeTimeFormat("en", { numeric: true }).resolvedOptions().numeric`);

// ---- ListFormat ----
for (const l of ["en", "en-GB", "de", "es", "ja", "zh", "ar"]) {
  for (const o of [{}, { type: "disjunction" }, { type: "unit", style: "narrow" }, { style: "short" }]) add("list", `new Intl.ListFormat(${q(l)}, ${q(o)}).format(["Motorcycle", "Bus", "Car"])`);
}
add("list", `new Intl.ListFormat("en").formatToParts(["a", "b"])`);
add("list", `new Intl.ListFormat("en").format([])`);
add("list", `new Intl.ListFormat("en").format()`);
add("list", `new Intl.ListFormat("en").format(new Set(["x", "y", "z"]))`);
add("list", `new Intl.ListFormat("en").format(["a", 1])`);
add("list", `new Intl.ListFormat("en").format("abc")`);
add("list", `new Intl.ListFormat("en", "abc")`);
add("list", `new Intl.ListFormat("en").resolvedOptions()`);

// ---- DisplayNames ----
for (const l of ["en", "de", "ja", "fr"]) {
  add("names", `["US", "DE", "419", "JP", "ZZ"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "region" }).of(c))`);
  add("names", `["en-US", "zh-Hant", "de", "sr-Latn-RS", "xyz"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "language" }).of(c))`);
  add("names", `["USD", "EUR", "JPY", "XXX"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "currency" }).of(c))`);
  add("names", `["Latn", "Cyrl", "Arab"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "script" }).of(c))`);
  add("names", `["gregory", "japanese"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "calendar" }).of(c))`);
  add("names", `["year", "month", "dayPeriod", "timeZoneName"].map((c) => new Intl.DisplayNames(${q(l)}, { type: "dateTimeField" }).of(c))`);
}
add("names", `new Intl.DisplayNames("en", { type: "region", fallback: "none" }).of("ZZ")`);
add("names", `new Intl.DisplayNames("en", { type: "language", languageDisplay: "standard" }).of("en-GB")`);
add("names", `new Intl.DisplayNames("en", { type: "region", style: "short" }).of("GB")`);
add("names", `new Intl.DisplayNames("en")`);
add("names", `new Intl.DisplayNames("en", {})`);
add("names", `new Intl.DisplayNames("en", { type: "region" }).of("12345")`);
add("names", `new Intl.DisplayNames("en", { type: "region" }).resolvedOptions()`);
add("names", `Intl.DisplayNames.length`);

// ---- Segmenter ----
const TEXTS = ["Hello, world! How are you?", "👨‍👩‍👧‍👦🇫🇷e\u0301 ok", "日本語のテキストです。次の文。", "Mr. Smith went to Washington. He arrived at 3 p.m. today!", "", "don't stop-believing 3.14"];
for (const t of TEXTS) {
  for (const g of ["grapheme", "word", "sentence"]) add("segmenter", `[...new Intl.Segmenter("en", { granularity: ${q(g)} }).segment(${q(t)})]`);
}
add("segmenter", `[...new Intl.Segmenter("ja", { granularity: "word" }).segment("日本語のテキストです")].map((s) => s.segment)`);
add("segmenter", `new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world").containing(8)`);
add("segmenter", `new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world").containing(99)`);
add("segmenter", `new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world").containing(-1)`);
add("segmenter", `new Intl.Segmenter().resolvedOptions()`);
add("segmenter", `new Intl.Segmenter("en", { granularity: "line" })`);
add("segmenter", `[...new Intl.Segmenter().segment("ab".repeat(20000))].length`);
add("segmenter", `[...new Intl.Segmenter("en", { granularity: "word" }).segment("word ".repeat(9000))].filter((s) => s.isWordLike).length`);
add("segmenter", `[...new Intl.Segmenter("en", { granularity: "sentence" }).segment("One. Two! Three? ".repeat(2000))].length`);

// ---- Locale, canonical locales, supported values ----
for (const t of ["en-US", "en-latn-us", "zh-Hant-TW", "sr-Cyrl", "de-DE-u-co-phonebk-ca-gregory", "ar", "und", "en-GB-oxendict", "ja-JP-u-ca-japanese-hc-h12"]) {
  add("locale", `(() => { const l = new Intl.Locale(${q(t)}); return [l.toString(), l.baseName, l.language, l.script, l.region, l.calendar, l.collation, l.hourCycle, l.numeric, l.numberingSystem, l.caseFirst, l.maximize().toString(), l.minimize().toString()]; })()`);
}
add("locale", `new Intl.Locale("en-US").getWeekInfo()`);
add("locale", `new Intl.Locale("en-US").hourCycles`);
add("locale", `new Intl.Locale("de-DE").getTextInfo()`);
add("locale", `new Intl.Locale("ja").getCalendars()`);
add("locale", `new Intl.Locale("en", { region: "GB", calendar: "gregory", hourCycle: "h23", numeric: true }).toString()`);
add("locale", `new Intl.Locale("en-u-ca-buddhist", { calendar: "gregory" }).calendar`);
add("locale", `new Intl.Locale("x-bad")`);
add("locale", `new Intl.Locale()`);
add("locale", `new Intl.Locale(5)`);
add("locale", `Intl.Locale("en")`);
add("locale", `new Intl.NumberFormat(new Intl.Locale("de-DE")).format(1234.5)`);
add("locale", `Intl.getCanonicalLocales([new Intl.Locale("EN-us"), "de-de"])`);
add("locale", `JSON.stringify(new Intl.Locale("en-US"))`);
add("locale", `String(new Intl.Locale("fr-CA"))`);
add("canonical", `Intl.getCanonicalLocales(["EN-us", "zh-hant-tw", "en-US", "sgn-GR", "iw", "in", "ji"])`);
add("canonical", `Intl.getCanonicalLocales("x-private")`);
add("canonical", `Intl.getCanonicalLocales()`);
add("canonical", `Intl.getCanonicalLocales("en_US")`);
add("canonical", `Intl.getCanonicalLocales([5])`);
add("canonical", `Intl.getCanonicalLocales({ length: 2, 0: "de", 1: "FR" })`);
for (const k of ["calendar", "collation", "currency", "numberingSystem", "timeZone", "unit"]) add("values", `Intl.supportedValuesOf(${q(k)}).length > 10`);
add("values", `Intl.supportedValuesOf("unit")`);
add("values", `Intl.supportedValuesOf("timeZone").filter((z) => z.startsWith("Europe/B"))`);
add("values", `Intl.supportedValuesOf("calendar")`);
add("values", `Intl.supportedValuesOf("bogus")`);

// ---- what Intl objects are ----
add("object", `Object.prototype.toString.call(Intl)`);
add("object", `Object.keys(Intl)`);
add("object", `typeof Intl`);
add("object", `["DateTimeFormat", "NumberFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "DisplayNames", "Segmenter", "Locale"].map((n) => [Intl[n].length, Intl[n].name, Object.prototype.toString.call(Object.create(Intl[n].prototype)), typeof Intl[n].supportedLocalesOf])`);
add("object", `new Intl.NumberFormat() instanceof Intl.NumberFormat`);
add("object", `Intl.NumberFormat() instanceof Intl.NumberFormat`);
add("object", `Intl.DateTimeFormat() instanceof Intl.DateTimeFormat`);
add("object", `Object.prototype.toString.call(new Intl.DateTimeFormat())`);
add("object", `(() => { const f = new Intl.NumberFormat(); return f.resolvedOptions() !== f.resolvedOptions(); })()`);
add("object", `(() => { const f = new Intl.NumberFormat(); const o = f.resolvedOptions(); o.locale = "x"; return f.resolvedOptions().locale; })()`);
add("object", `(() => { const f = new Intl.NumberFormat(); return f.format === f.format; })()`);
add("object", `(() => { const f = new Intl.NumberFormat("en").format; return [f(1234), f.name, f.length]; })()`);
add("object", `Object.keys(new Intl.NumberFormat())`);
add("object", `Intl.NumberFormat.prototype.format`);
add("object", `Intl.NumberFormat.prototype.resolvedOptions.call({})`);
add("object", `Intl.DateTimeFormat.prototype.formatToParts.call(new Intl.NumberFormat(), 0)`);
add("object", `Object.getOwnPropertyNames(Intl.NumberFormat.prototype).sort()`);
add("object", `Object.getOwnPropertyNames(Intl.DateTimeFormat.prototype).sort()`);
add("object", `(() => { class F extends Intl.NumberFormat { hi() { return this.format(5000); } } return new F("de").hi(); })()`);
add("object", `(() => { try { new Intl.NumberFormat("en", { maximumFractionDigits: 500 }); } catch (e) { return [e instanceof RangeError, e.constructor === RangeError, e.name]; } })()`);
add("object", `(() => { try { new Intl.DisplayNames("en"); } catch (e) { return [e instanceof TypeError, e.name]; } })()`);
add("object", `Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, Symbol.toStringTag)`);
add("object", `Object.getOwnPropertyDescriptor(Intl, "NumberFormat").enumerable`);
add("object", `Object.getOwnPropertyDescriptor(Number.prototype, "toLocaleString").enumerable`);
add("object", `[Number.prototype.toLocaleString.length, String.prototype.localeCompare.length, Date.prototype.toLocaleDateString.length, Array.prototype.toLocaleString.length]`);

// ---- hour cycles (hour12 as V8 13.4 reads it) ----
for (const l of ["en-US", "en-GB", "ja-JP", "ko-KR", "de-DE", "zh-CN", "ar-EG", "fr-CA", "en-US-u-hc-h24", "ja-JP-u-hc-h24", "en-GB-u-hc-h11"]) {
  for (const h of [true, false]) {
    add("hourCycle", `(() => { const f = new Intl.DateTimeFormat(${q(l)}, { hour: "numeric", minute: "numeric", hour12: ${h} }); const r = f.resolvedOptions(); return [r.locale, r.hourCycle, r.hour12, f.format(0), f.format(43200000)]; })()`);
    add("hourCycle", `(() => { const r = new Intl.DateTimeFormat(${q(l)}, { hour: "numeric", hour12: ${h}, hourCycle: "h11" }).resolvedOptions(); return [r.locale, r.hourCycle, r.hour12]; })()`);
    add("hourCycle", `(() => { const r = new Intl.DateTimeFormat(${q(l)}, { hour12: ${h} }).resolvedOptions(); return [r.hourCycle, r.hour12]; })()`);
  }
  add("hourCycle", `new Date(0).toLocaleTimeString(${q(l)}, { hour12: false })`);
}
add("hourCycle", `new Intl.DateTimeFormat("en-US", { hour12: false, timeStyle: "short" }).resolvedOptions()`);
add("hourCycle", `new Intl.DateTimeFormat("en-US", { hourCycle: "h24", hour: "2-digit" }).format(0)`);

// ---- what V8 says when a call is refused ----
const RECEIVERS = ["5", `"x"`, "null", "undefined", "true", "5n", `Symbol("s")`, "[]", "[1, 2]", "{}", "new Date(0)", "new Map()", "function foo() {}", "new Intl.DateTimeFormat()", "new Intl.Collator()", "Object.create(null)", "new (class Foo {})()", `new Error("e")`, "/re/"];
for (const r of RECEIVERS) {
  add("receiver", `Intl.NumberFormat.prototype.resolvedOptions.call(${r})`);
  add("receiver", `Intl.DateTimeFormat.prototype.resolvedOptions.call(${r})`);
  add("receiver", `Intl.NumberFormat.prototype.formatToParts.call(${r}, 1)`);
  add("receiver", `Object.getOwnPropertyDescriptor(Intl.Collator.prototype, "compare").get.call(${r})`);
  add("receiver", `Number.prototype.toLocaleString.call(${r})`);
  add("receiver", `Date.prototype.toLocaleDateString.call(${r})`);
  add("receiver", `String.prototype.localeCompare.call(${r}, "a")`);
  add("receiver", `Array.prototype.toLocaleString.call(${r})`);
  add("receiver", `Uint8Array.prototype.toLocaleString.call(${r})`);
}
for (const [name, expr] of [
  ["nf-get", `Object.getOwnPropertyDescriptor(Intl.NumberFormat.prototype, "format").get.call(5)`],
  ["dtf-get", `Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, "format").get.call(new Intl.NumberFormat())`],
  ["locale-get", `Object.getOwnPropertyDescriptor(Intl.Locale.prototype, "baseName").get.call(5)`],
  ["rtf", `Intl.RelativeTimeFormat.prototype.format.call(new Intl.NumberFormat(), 1, "day")`],
  ["segments", `(() => { const s = new Intl.Segmenter().segment("ab"); return [Object.prototype.toString.call(s), Object.prototype.toString.call(s[Symbol.iterator]()), typeof s.containing]; })()`],
  ["bound", `[new Intl.NumberFormat().format.name, new Intl.DateTimeFormat().format.name, new Intl.Collator().compare.name, new Intl.NumberFormat().format.length, new Intl.Collator().compare.length]`],
]) add("receiver", expr);
for (const expr of [
  `new Intl.DateTimeFormat().format(Symbol())`, `new Intl.Collator().compare(Symbol(), "a")`, `new Intl.RelativeTimeFormat().format(Symbol(), "day")`,
  `new Intl.RelativeTimeFormat().format(1, Symbol())`, `new Intl.DisplayNames("en", { type: "region" }).of(Symbol())`, `new Intl.NumberFormat("en", { style: Symbol() })`,
  `new Intl.NumberFormat("en", { maximumFractionDigits: Symbol() })`, `new Intl.NumberFormat([Symbol()])`, `new Intl.RelativeTimeFormat().format(1n, "day")`,
  `new Intl.NumberFormat("en", { maximumFractionDigits: 1n })`, `new Intl.PluralRules().selectRange(1n, 2)`, `new Intl.Locale(null)`, `new Intl.Locale({})`, `new Intl.Locale("")`,
  `Intl.getCanonicalLocales(null)`, `Intl.getCanonicalLocales(["en", null])`, `Intl.getCanonicalLocales(["a".repeat(300)])`, `Intl.supportedValuesOf(Symbol())`,
  `new Intl.ListFormat().format([Symbol()])`, `new Intl.ListFormat().format([{}])`,
  `new Date(0).toLocaleString("en-US", { month: "bogus" })`, `new Date(0).toLocaleDateString("en-US", { month: "bogus" })`, `new Date(0).toLocaleTimeString("en-US", { timeZone: "X/Y" })`,
  `new Date(0).toLocaleDateString("en-US", null)`, `new Date(0).toLocaleTimeString("en-US", null)`, `new Date(0).toLocaleString("en-US", { dateStyle: "short", hour: "numeric" })`,
  `new Date(0).toLocaleString("xx-")`, `(1).toLocaleString("en", { style: "currency" })`, `(1).toLocaleString("en", { maximumFractionDigits: 200 })`, `(1n).toLocaleString("en", { style: "bogus" })`,
  `(1).toLocaleString("en", null)`, `(1n).toLocaleString("en", null)`, `(1).toLocaleString("xx-")`, `"a".localeCompare("b", "xx-")`, `"a".localeCompare("b", "en", null)`,
  `"a".localeCompare("b", "en", { usage: "x" })`, `new Intl.PluralRules("en", { roundingMode: "bogus" })`, `new Intl.PluralRules("en", { maximumSignificantDigits: 2, minimumFractionDigits: 1 }).resolvedOptions()`,
  `new Intl.PluralRules("en", { type: "ordinal" }).resolvedOptions()`, `new Intl.PluralRules("fr", { notation: "compact" }).select(1e6)`,
  `(1).toLocaleString("en", { minimumFractionDigits: 30 })`, `new Intl.NumberFormat("en", { maximumFractionDigits: 21 }).resolvedOptions()`,
]) add("errors", expr);

export const CASES = cases;
