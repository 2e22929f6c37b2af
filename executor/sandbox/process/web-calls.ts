/**
 * The synchronous web-platform helpers behind the guest's URL and crypto.getRandomValues /
 * randomUUID (guest/url.js, guest/crypto.js): Node's own WHATWG URL parser and CSPRNG, run in the
 * sandbox process (no secret, no host call); performance's clock (guest/platform.js); Node's Intl
 * behind the guest's Intl and toLocale* built-ins (intl-calls.ts). Arguments are tagged JSON text,
 * bounded like the ethers shim's (ethers-bounds.ts: half the run's memory) before they are parsed;
 * a URL is at most MAX_URL_CHARS characters and one random draw at most 65,536 bytes (the Web
 * Crypto quota).
 */
import { randomBytes, randomUUID } from "node:crypto";
import { SandboxLimitError } from "../errors";
import type { RunLimits } from "../types";
import { checkArgsText } from "./ethers-bounds";
import { INTL_OPS } from "./intl-calls";
import { decodeTagged, encodeTagged } from "./tagged-json";

/** The longest URL (input, base, or a component set on one) the guest may parse. */
export const MAX_URL_CHARS = 64 * 1024;
/** crypto.getRandomValues' quota (Web Crypto: QuotaExceededError past 65,536 bytes). */
export const MAX_RANDOM_BYTES = 65_536;

const URL_PARTS = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"] as const;
const SETTABLE: ReadonlySet<string> = new Set(URL_PARTS.filter((p) => p !== "origin"));

const urlText = (v: unknown, what: string): string => {
  const s = String(v);
  if (s.length > MAX_URL_CHARS) throw new RangeError(`URL: ${what} is longer than ${MAX_URL_CHARS} characters`);
  return s;
};

const partsOf = (url: URL) => Object.fromEntries(URL_PARTS.map((p) => [p, url[p]]));

function parse(input: unknown, base?: unknown): URL {
  try {
    return base === undefined || base === null ? new URL(urlText(input, "the input")) : new URL(urlText(input, "the input"), urlText(base, "the base"));
  } catch (err) {
    if (err instanceof RangeError) throw err;
    throw new TypeError(`Invalid URL: ${JSON.stringify(String(input).slice(0, 200))}`);
  }
}

const OPS: Record<string, (...args: any[]) => unknown> = {
  /** (input, base?) → the URL's parts; TypeError "Invalid URL" as the platform throws. */
  urlParse: (input: unknown, base?: unknown) => partsOf(parse(input, base)),
  /** (href, part, value) → the parts after the setter ran (the platform ignores values it cannot take). */
  urlSet: (href: unknown, part: unknown, value: unknown) => {
    const url = parse(href);
    if (typeof part !== "string" || !SETTABLE.has(part)) throw new TypeError("URL: no such settable property");
    (url as unknown as Record<string, string>)[part] = urlText(value, part);
    return partsOf(url);
  },
  random: (n: unknown) => {
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) throw new TypeError("crypto.getRandomValues: bad length");
    if (n > MAX_RANDOM_BYTES) throw Object.assign(new Error(`crypto.getRandomValues: the array's byte length (${n}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES})`), { name: "QuotaExceededError" });
    return new Uint8Array(randomBytes(n));
  },
  uuid: () => randomUUID(),
  /** performance.now() of this process (ms, fractional) and its timeOrigin (ms since the epoch), behind the guest's performance. */
  clock: () => performance.now(),
  clockOrigin: () => performance.timeOrigin,
  // Intl and the toLocale* built-ins (intl-calls.ts): intlNew, intlCall, intlLocale, ...
  ...INTL_OPS,
};

/** Runs one helper: tagged JSON array of arguments in, tagged JSON out; errors keep their name (TypeError, RangeError, QuotaExceededError). */
export function callWeb(name: string, argsJson: string, limits: RunLimits): string {
  const op = Object.prototype.hasOwnProperty.call(OPS, name) ? OPS[name] : undefined;
  if (!op) throw new TypeError(`${name} is not a web platform helper`);
  try {
    checkArgsText(argsJson, limits);
  } catch (err) {
    throw new SandboxLimitError("memoryBytes", `${name}: ${(err as Error).message}`);
  }
  const args = decodeTagged(argsJson);
  if (!Array.isArray(args)) throw new TypeError("arguments must be an array");
  return encodeTagged(op(...args)); // a URL's parts or 64 KB of random bytes: bounded by the arguments' bounds

}
