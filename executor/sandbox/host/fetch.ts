/**
 * The host side of the sandbox's fetch(): http/https only (on every redirect hop too), a timeout
 * per request, the response body capped at limits.maxFetchBytes, credentials dropped on a
 * cross-origin redirect. A body travels as text when it is UTF-8, else as base64 (`bodyBase64`),
 * both ways, so bytes reach the action and the server unchanged. Every connection (every redirect hop, every address family) goes through
 * the egress connector (./egress.ts): it resolves the host once, checks every address against the
 * policy and connects to a checked address only. The deployment's RPC URLs (`rpcUrls`) are the one
 * exception: a hop to exactly such a URL may reach its private or loopback address, with a single
 * JSON-RPC request of an allowed method (./rpc-urls.ts). Errors are thrown with the message the
 * action sees; an oversized body throws SandboxLimitError("maxFetchBytes").
 *
 * A request never outlives its run: the run's signal (HostCallContext.signal) aborts it, and its
 * connections close, when the run ends. A redirect hop that sends the body again (307, 308, or a
 * 301/302 of a method other than POST) is one more fetch of the run (`countFetch`): a run sends at
 * most maxFetches bodies, each at most maxFetchBytes, however its targets redirect.
 */
import { isUtf8 } from "node:buffer";
import { Agent, fetch, type Response } from "undici";
import { EgressRefused, guardedConnector, type EgressOptions } from "./egress";
import { rpcRequest, rpcUrlKey } from "./rpc-urls";
import { SandboxLimitError, limitMessage } from "../errors";
import { decodeUtf8 } from "../../../protocol/text";
import type { FetchAnswer, HostCall, RunLimits } from "../types";

const MAX_REQUEST_MS = 10_000;
const MAX_REDIRECTS = 5;
/** Credentials not sent on to another origin after a redirect (as browsers and undici do). */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie"]);
/** Headers the action may not set (the HTTP client owns them). */
const DROPPED_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "upgrade", "te", "trailer", "expect"]);

export type HostFetchOptions = EgressOptions & {
  /** Epoch ms when the run ends: the request gets min(10 s, what is left). */
  deadline?: number;
  /** The deployment's JSON-RPC URLs (VESTA_ACTION_RPC_URLS): exactly these may be reached at a private or loopback address. */
  rpcUrls?: readonly string[];
  /** The end of the run (HostCallContext.signal): the request is aborted, its connections closed, when it aborts. */
  signal?: AbortSignal;
  /** Counts a redirect hop that sends the body again as a fetch of the run (HostCallContext.countFetch); false when none is left. */
  countFetch?: () => boolean;
};

const RUN_ENDED = "fetch: the run has ended";

/** Headers a request to an RPC URL gets from the host, not the action: the body's type (JSON, written again) and no page origin. */
const RPC_REWRITTEN_HEADERS = new Set(["content-type", "origin"]);

function httpUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new TypeError(`fetch: invalid URL ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`fetch: only http and https URLs are allowed, got ${url.protocol}`);
  }
  return url;
}

function requestHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !DROPPED_HEADERS.has(k.toLowerCase()) && !k.toLowerCase().startsWith("proxy-")));
}

/**
 * The body of `res`, at most `maxBytes` (a larger declared or streamed body aborts the request and
 * throws `tooLarge()`): the bytes as they came. `progress` (optional) hears the bytes the answer
 * will hold at least, the declared length before any byte of the body is read, then the bytes read
 * as they arrive; it may abort `abort` to stop reading.
 */
export async function readCapped(res: Response, maxBytes: number, abort: AbortController, tooLarge: () => Error, progress?: (bytes: number) => void): Promise<Buffer> {
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    abort.abort();
    throw tooLarge();
  }
  const least = Number.isFinite(declared) && declared > 0 ? declared : 0;
  if (least > 0) progress?.(least);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        abort.abort();
        throw tooLarge();
      }
      chunks.push(chunk);
      if (size > least) progress?.(size);
    }
  }
  return Buffer.concat(chunks);
}

/** The bytes of the bodies of hostFetch's answers (fetchedBytes). */
const bodies = new WeakMap<object, Buffer>();

/**
 * The bytes of the body of `answer` when hostFetch made it: the channel sends them to the sandbox as
 * they are (wire/calls.ts), so the body's text or base64 is never made in the relayer.
 */
export const fetchedBytes = (answer: unknown): Buffer | undefined => (answer !== null && typeof answer === "object" ? bodies.get(answer) : undefined);

/**
 * An answer with its body as the action gets it: its text when the bytes are UTF-8 (most answers),
 * else base64 (the guest decodes it to the same bytes). The text or base64 is made when `body` or
 * `bodyBase64` is first read (JSON.stringify reads it; the pool's channel does not: fetchedBytes).
 */
function withBody(head: Omit<FetchAnswer, "body" | "bodyBase64">, bytes: Buffer): FetchAnswer {
  const answer: FetchAnswer = { ...head };
  const text = isUtf8(bytes);
  let made: string | undefined;
  Object.defineProperty(answer, text ? "body" : "bodyBase64", {
    enumerable: true,
    configurable: true,
    get: () => (made ??= text ? bytes.toString("utf8") : bytes.toString("base64")),
  });
  bodies.set(answer, bytes);
  return answer;
}

export async function hostFetch(call: Extract<HostCall, { op: "fetch" }>, limits: RunLimits, opts: HostFetchOptions = {}): Promise<FetchAnswer> {
  let url = httpUrl(call.url);
  if (opts.signal?.aborted) throw new Error(RUN_ENDED);
  const remaining = opts.deadline === undefined ? limits.timeoutMs : opts.deadline - Date.now();
  const timeoutMs = Math.max(0, Math.min(MAX_REQUEST_MS, remaining));
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const runEnded = () => abort.abort();
  opts.signal?.addEventListener("abort", runEnded, { once: true });
  let method = call.method.toUpperCase();
  let body: string | Buffer | undefined = call.bodyBase64 !== undefined ? Buffer.from(call.bodyBase64, "base64") : call.body;
  let headers = requestHeaders(call.headers);
  // One dispatcher per call: its connections (to checked addresses only) die with the call. A hop to
  // one of the deployment's RPC URLs goes through a dispatcher of its own, which may reach that URL's
  // private address: no other hop ever shares its connections.
  const dispatcher = new Agent({ connect: guardedConnector(opts) });
  const rpcUrls = new Set((opts.rpcUrls ?? []).map(rpcUrlKey));
  let rpcDispatcher: Agent | undefined;
  try {
    for (let hop = 0; ; hop++) {
      let via = dispatcher;
      if (rpcUrls.has(rpcUrlKey(url))) {
        // Only a fetch of the RPC URL itself reaches it: it waits its turn among the run's chain
        // requests (host.ts, rpc-slots.ts), which a public server redirecting there would skip.
        if (hop > 0) throw new Error("fetch: a redirect to the deployment's RPC URL is not followed (fetch the RPC URL itself)");
        // (a JSON-RPC request is JSON text: bytes that are not UTF-8 are no request, and are refused as such)
        const checked = rpcRequest(method, typeof body === "string" || body === undefined ? body : (decodeUtf8(body) ?? "\u0000"));
        if ("refused" in checked) throw new Error(`fetch: ${checked.refused}`);
        body = checked.body;
        // Sent as JSON, as a node expects it (npm start's chain refuses other types: a browser's page sends them without asking first)
        headers = { ...Object.fromEntries(Object.entries(headers).filter(([k]) => !RPC_REWRITTEN_HEADERS.has(k.toLowerCase()))), "content-type": "application/json" };
        via = rpcDispatcher ??= new Agent({ connect: guardedConnector({ ...opts, allowPrivateNetworks: true }) });
      }
      const sent = method === "GET" || method === "HEAD" ? undefined : body;
      // The first request is the call's own fetch (counted by the channel); each later one that carries the body again is one more.
      if (hop > 0 && sent !== undefined && opts.countFetch && !opts.countFetch()) {
        throw new SandboxLimitError("maxFetches", `${limitMessage("maxFetches", limits)}: a redirect that sends the body again is one more fetch`);
      }
      const res = await fetch(url, { method, headers, body: sent, redirect: "manual", signal: abort.signal, dispatcher: via });
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new Error(`fetch: more than ${MAX_REDIRECTS} redirects`);
        const next = httpUrl(location, url);
        if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.has(k.toLowerCase())));
        url = next;
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      const answerHeaders: Record<string, string> = {};
      res.headers.forEach((value, key) => (answerHeaders[key] = value));
      const tooLarge = () => new SandboxLimitError("maxFetchBytes", limitMessage("maxFetchBytes", limits));
      return withBody({ status: res.status, statusText: res.statusText, headers: answerHeaders }, await readCapped(res, limits.maxFetchBytes, abort, tooLarge));
    }
  } catch (err) {
    if (err instanceof SandboxLimitError) throw err;
    const e = err as Error & { cause?: { message?: string } };
    if (e.cause instanceof EgressRefused) throw new Error(e.cause.message);
    if (opts.signal?.aborted) throw new Error(RUN_ENDED);
    if (abort.signal.aborted) throw new Error(`fetch: ${call.url.slice(0, 200)} timed out after ${timeoutMs} ms`);
    if (e.message?.startsWith("fetch:")) throw e;
    throw new Error(`fetch: ${e.message}${e.cause?.message ? ` (${e.cause.message})` : ""}`);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", runEnded);
    dispatcher.destroy().catch(() => {});
    rpcDispatcher?.destroy().catch(() => {});
  }
}
