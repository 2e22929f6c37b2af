/**
 * Turns a guest request (op name + JSON arguments) into a checked HostCall, and counts it against
 * the run's limits: the one place key requests, fetches (imported modules included) and host calls are counted (the pool's
 * channel does it on the main thread, before the Host sees the call). The guest API (guest/*.js)
 * validates too, but the action can reach the Host only through these checks.
 */
import { MAX_CID_CHARS, MAX_CRYPTO_MESSAGE_CHARS, MAX_HOST_CALLS_PER_RUN } from "../wire/bounds";
import { isPin, MAX_MODULE_URL_CHARS, MAX_MODULES_PER_RUN } from "../imports";
import type { HostCall, RunLimits } from "../types";

const MAX_ID_CHARS = 512;
const MAX_CHAIN_CHARS = 64;
const MAX_URL_CHARS = 8192;
const MAX_HEADERS = 64;
const MAX_HEADER_CHARS = 8192;

/** Every call that derives key material: each counts against maxKeyRequests. */
const KEY_OPS: ReadonlySet<HostCall["op"]> = new Set(["getPrivateKey", "getLitActionPrivateKey", "getLitActionPublicKey", "getLitActionWalletAddress", "encrypt", "decrypt"]);

/** Every call that reaches the network: each counts against maxFetches (a module of the import graph is a fetch too). */
const FETCH_OPS: ReadonlySet<HostCall["op"]> = new Set(["fetch", "import"]);

export type CallCounts = { total: number; keys: number; fetches: number; imports: number };

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

function text(args: Record<string, unknown>, name: string, max: number): string {
  const v = args[name];
  if (typeof v !== "string") throw new TypeError(`${name} must be a string`);
  if (v.length > max) throw new RangeError(`${name} is longer than ${max} characters`);
  return v;
}

function headers(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new TypeError("fetch headers must be an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_HEADERS) throw new RangeError(`at most ${MAX_HEADERS} fetch headers`);
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (typeof v !== "string" || k.length + v.length > MAX_HEADER_CHARS) throw new TypeError(`bad fetch header ${k.slice(0, 64)}`);
    out[k] = v;
  }
  return out;
}

/** Builds the HostCall for `op`; throws a TypeError/RangeError the action sees on bad input. */
export function toHostCall(op: string, args: Record<string, unknown>, ipfsId: string, limits: RunLimits): HostCall {
  switch (op) {
    case "getPrivateKey":
      return { op, pkpId: text(args, "pkpId", MAX_ID_CHARS) };
    case "getLitActionPrivateKey":
      return { op };
    case "getLitActionPublicKey":
    case "getLitActionWalletAddress":
      return { op, ipfsId: args.ipfsId === undefined ? ipfsId : text(args, "ipfsId", MAX_CID_CHARS) };
    case "encrypt":
      return { op, pkpId: text(args, "pkpId", MAX_ID_CHARS), message: text(args, "message", MAX_CRYPTO_MESSAGE_CHARS) };
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
      const body = args.body === undefined ? undefined : text(args, "body", limits.maxFetchBytes);
      const bodyBase64 = args.bodyBase64 === undefined ? undefined : text(args, "bodyBase64", 4 * Math.ceil(limits.maxFetchBytes / 3));
      if (body !== undefined && bodyBase64 !== undefined) throw new TypeError("fetch: a body is text or base64, not both");
      if (bodyBase64 !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(bodyBase64)) throw new TypeError("fetch: bodyBase64 is not base64");
      const method = text(args, "method", 16);
      if (!/^[A-Z]+$/.test(method)) throw new TypeError(`bad fetch method ${method}`);
      const url = text(args, "url", MAX_URL_CHARS);
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1].toLowerCase();
      if (scheme !== "http" && scheme !== "https") {
        throw new TypeError(`fetch: only http and https URLs are allowed, got ${scheme ? `${scheme}:` : JSON.stringify(url.slice(0, 100))}`);
      }
      return { op, url, method, headers: headers(args.headers), ...(body === undefined ? {} : { body }), ...(bodyBase64 === undefined ? {} : { bodyBase64 }) };
    }
    default:
      throw new TypeError(`unknown host operation ${op.slice(0, 64)}`);
  }
}
