/**
 * Turns a guest request (op name + JSON arguments) into a checked HostCall, and counts it against
 * the run's limits: the one place key requests, fetches (imported modules included) and host calls are counted (the pool's
 * channel does it on the main thread, before the Host sees the call). The guest API (guest/*.js)
 * validates too, but the action can reach the Host only through these checks.
 */
import { MAX_CHAIN_CHARS, MAX_CID_CHARS, MAX_CRYPTO_MESSAGE_CHARS, MAX_HEADER_CHARS, MAX_HEADERS, MAX_HEADERS_BYTES, MAX_HOST_CALLS_PER_RUN, MAX_ID_CHARS, MAX_METHOD_CHARS, MAX_URL_CHARS } from "../wire/bounds";
import { fetchBodyArg, joinCall, stringArg as text, utf8Arg as utf8Text } from "../wire/calls";
import { isPin, MAX_MODULE_URL_CHARS, MAX_MODULES_PER_RUN } from "../imports";
import type { HostCall, RunLimits } from "../types";

// MAX_HEADERS_BYTES (wire/bounds.ts) bounds all the headers of one fetch (names and values): every
// redirect hop sends them again, so 64 headers of 8 KB (512 KB) would make each of a run's fetches
// send 3 MB of headers through 5 redirects. 64 KB is four times what Node's own HTTP server accepts (16 KB).

/** Every call that derives key material: each counts against maxKeyRequests. */
const KEY_OPS: ReadonlySet<HostCall["op"]> = new Set(["getPrivateKey", "getLitActionPrivateKey", "getLitActionPublicKey", "getLitActionWalletAddress", "encrypt", "decrypt"]);

/** Every call that reaches the network: each counts against maxFetches (a module of the import graph is a fetch too). */
const FETCH_OPS: ReadonlySet<HostCall["op"]> = new Set(["fetch", "import"]);

export type CallCounts = { total: number; keys: number; fetches: number; imports: number };

/**
 * One more request of a fetch already counted (a redirect hop that sends the body again): counted
 * against maxFetches like a call of its own, so what one run sends in all is at most maxFetches
 * bodies of maxFetchBytes. False, and nothing counted, when the run has no fetch left.
 */
export function countExtraFetch(counts: CallCounts, limits: RunLimits): boolean {
  if (counts.fetches >= limits.maxFetches) return false;
  counts.fetches++;
  return true;
}

/** Which limit this call would pass, or undefined when it may be sent (then it is counted). */
export function countCall(call: HostCall, counts: CallCounts, limits: RunLimits): keyof RunLimits | "maxHostCalls" | "maxImports" | undefined {
  if (counts.total >= MAX_HOST_CALLS_PER_RUN) return "maxHostCalls";
  if (KEY_OPS.has(call.op) && counts.keys >= limits.maxKeyRequests) return "maxKeyRequests";
  if (FETCH_OPS.has(call.op) && counts.fetches >= limits.maxFetches) return "maxFetches";
  if (call.op === "import" && counts.imports >= MAX_MODULES_PER_RUN) return "maxImports";
  counts.total++;
  if (KEY_OPS.has(call.op)) counts.keys++;
  if (FETCH_OPS.has(call.op)) counts.fetches++;
  if (call.op === "import") counts.imports++;
  return undefined;
}

/** The length of `url` as it is sent (WHATWG-serialized, percent-encoded: ASCII); a URL that does not parse is refused later, by hostFetch. */
function encodedLength(url: string): number {
  try {
    return new URL(url).href.length;
  } catch {
    return url.length;
  }
}

function headers(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError("fetch headers must be an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) throw new RangeError(`at most ${MAX_HEADERS} fetch headers`);
  const out: Record<string, string> = {};
  let total = 0;
  for (const [k, v] of entries) {
    if (typeof v !== "string" || k.length + v.length > MAX_HEADER_CHARS) throw new TypeError(`bad fetch header ${k.slice(0, 64)}`);
    // Header names and values are byte strings (undici refuses a character past U+00FF): characters are bytes.
    total += k.length + v.length;
    out[k] = v;
  }
  if (total > MAX_HEADERS_BYTES) throw new RangeError(`fetch headers are at most ${MAX_HEADERS_BYTES} bytes in all`);
  return out;
}

/**
 * Builds the HostCall for `op`; throws a TypeError/RangeError the action sees on bad input. `body`:
 * the call's bulk as it crossed, bytes (wire/calls.ts: a fetch body, an Encrypt message, a Decrypt
 * ciphertext), put back in the arguments as the string the Host reads, then checked as if given there.
 */
export function toHostCall(op: string, given: Record<string, unknown>, ipfsId: string, limits: RunLimits, body?: Uint8Array): HostCall {
  const args = body === undefined ? given : joinCall(op, given, body, limits);
  switch (op) {
    case "getPrivateKey":
      return { op, pkpId: text(args, "pkpId", MAX_ID_CHARS) };
    case "getLitActionPrivateKey":
      return { op };
    case "getLitActionPublicKey":
    case "getLitActionWalletAddress":
      return { op, ipfsId: args.ipfsId === undefined ? ipfsId : text(args, "ipfsId", MAX_CID_CHARS) };
    case "encrypt":
      // Bytes, as encrypted: the ciphertext of 1 MiB is base64 of 1.4 M characters, which Decrypt takes back (2 M).
      return { op, pkpId: text(args, "pkpId", MAX_ID_CHARS), message: utf8Text(args, "message", MAX_CRYPTO_MESSAGE_CHARS) };
    case "decrypt":
      return { op, pkpId: text(args, "pkpId", MAX_ID_CHARS), ciphertext: text(args, "ciphertext", 2 * MAX_CRYPTO_MESSAGE_CHARS) };
    case "import": {
      const integrity = args.integrity ?? [];
      if (!Array.isArray(integrity) || integrity.length > 8 || !integrity.every((p) => typeof p === "string" && isPin(p))) {
        throw new TypeError("import: integrity must be a list of at most 8 pins (sha384-<base64>)");
      }
      return { op, url: text(args, "url", MAX_MODULE_URL_CHARS), integrity: integrity as string[] };
    }
    case "getRpcUrl":
      return { op, chain: text(args, "chain", MAX_CHAIN_CHARS) };
    case "fetch": {
      const sent = fetchBodyArg(args, limits);
      const method = text(args, "method", MAX_METHOD_CHARS);
      if (!/^[A-Z]+$/.test(method)) throw new TypeError(`bad fetch method ${method}`);
      const url = text(args, "url", MAX_URL_CHARS);
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1].toLowerCase();
      if (scheme !== "http" && scheme !== "https") {
        throw new TypeError(`fetch: only http and https URLs are allowed, got ${scheme ? `${scheme}:` : JSON.stringify(url.slice(0, 100))}`);
      }
      // What is sent is the URL percent-encoded: a "€" of the path is 9 bytes on the wire (%E2%82%AC), sent again on every hop.
      if (encodedLength(url) > MAX_URL_CHARS) throw new RangeError(`url is longer than ${MAX_URL_CHARS} bytes once percent-encoded`);
      return { op, url, method, headers: headers(args.headers), ...sent };
    }
    default:
      throw new TypeError(`unknown host operation ${op.slice(0, 64)}`);
  }
}
