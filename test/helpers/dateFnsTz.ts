/**
 * A module of the shape date-fns-tz 2.0.1 has (its src/_lib/tzTokenizeDate, tzParseTimezone and
 * tzIntlTimeZoneName, and format's tokens): its Intl.DateTimeFormat calls, reduced to what
 * Chipotle's import example (docs/lit-actions/imports.mdx) calls, utcToZonedTime and format with
 * yyyy MM dd HH mm ss zzz zzzz. date-fns-tz is not a dependency of this repository; the real 2.0.1
 * bundle answered byte for byte as Deno 2.2.2 in the sandbox when this was written (35 instants, 7
 * zones, 5 formats each). test/executor.intl.test.ts serves it as date-fns-tz@2.0.1 from a CDN double.
 */
export const DATE_FNS_TZ_SHAPE = `const dtfCache = {};
function getDateTimeFormat(timeZone) {
  if (!dtfCache[timeZone]) {
    const probe = new Intl.DateTimeFormat("en-US", { hour12: false, timeZone: "America/New_York", year: "numeric", month: "numeric", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(new Date("2014-06-25T04:00:00.123Z"));
    const hourCycleSupported = probe === "06/25/2014, 00:00:00" || probe === "\\u200e06\\u200e/\\u200e25\\u200e/\\u200e2014\\u200e \\u200e00\\u200e:\\u200e00\\u200e:\\u200e00";
    const fields = { timeZone, year: "numeric", month: "numeric", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" };
    dtfCache[timeZone] = new Intl.DateTimeFormat("en-US", hourCycleSupported ? { hour12: false, ...fields } : { hourCycle: "h23", ...fields });
  }
  return dtfCache[timeZone];
}
const POSITION = { year: 0, month: 1, day: 2, hour: 3, minute: 4, second: 5 };
function tzTokenizeDate(date, timeZone) {
  const out = [];
  for (const { type, value } of getDateTimeFormat(timeZone).formatToParts(date)) if (type in POSITION) out[POSITION[type]] = parseInt(value, 10);
  return out;
}
function offsetAt(timeZone, date) {
  const t = tzTokenizeDate(date, timeZone);
  const asUTC = Date.UTC(t[0], t[1] - 1, t[2], t[3] % 24, t[4], t[5], 0);
  const ms = date.getTime();
  return asUTC - (ms - (((ms % 1000) + 1000) % 1000));
}
export function utcToZonedTime(dirtyDate, timeZone) {
  const d = new Date(new Date(dirtyDate).getTime() + offsetAt(timeZone, new Date(dirtyDate)));
  const result = new Date(0);
  result.setFullYear(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  result.setHours(d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
  return result;
}
function zoneName(length, date, timeZone) {
  return new Intl.DateTimeFormat(undefined, { timeZone, timeZoneName: length }).formatToParts(date).find((p) => p.type === "timeZoneName").value;
}
const pad = (n, w) => String(n).padStart(w, "0");
export function format(date, pattern, { timeZone }) {
  const wall = Date.UTC(date.getFullYear(), date.getMonth(), date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds(), date.getMilliseconds());
  const instant = new Date(wall - offsetAt(timeZone, new Date(wall - offsetAt(timeZone, new Date(wall)))));
  const tokens = { yyyy: () => pad(date.getFullYear(), 4), MM: () => pad(date.getMonth() + 1, 2), dd: () => pad(date.getDate(), 2), HH: () => pad(date.getHours(), 2), mm: () => pad(date.getMinutes(), 2), ss: () => pad(date.getSeconds(), 2), zzzz: () => zoneName("long", instant, timeZone), zzz: () => zoneName("short", instant, timeZone) };
  return pattern.replace(/yyyy|MM|dd|HH|mm|ss|zzzz|zzz/g, (t) => tokens[t]());
}
`;
