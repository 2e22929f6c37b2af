/**
 * Failures of a chain's RPC node (down, refusing connections, timing out, rate limiting, answering
 * garbage), told apart from the contract's own answers (reverts, bad data), and the one answer both
 * services give for them: 503 `chain_unavailable` with Retry-After. The error middleware
 * (protocol/http.ts) applies it to whatever a request met, so every read, write and permission
 * lookup answers the same; nothing about the node (its URL, which may hold an API key) is shown.
 */
import { AppError } from "./errors";

/** Seconds a client is told to wait before it retries after the chain did not answer. */
export const CHAIN_RETRY_AFTER_SECONDS = 5;

/** Socket errors of a request that never reached the node (nothing was delivered). */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ENETDOWN", "UND_ERR_CONNECT_TIMEOUT"]);
/** Socket errors of a request that may have reached the node before its answer was lost. */
const CUT_OFF = new Set(["ECONNRESET", "ETIMEDOUT", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
/** ethers' codes of a request that failed at the node or on the way (not a contract answer). */
const ETHERS_OUTAGE = new Set(["TIMEOUT", "NETWORK_ERROR", "SERVER_ERROR"]);
/** JSON-RPC errors a node gives when it cannot serve now (EIP-1474: resource unavailable, limit exceeded). */
const RPC_BUSY = new Set([-32002, -32005]);

type Outage = { delivered: "no" | "maybe" };

type ErrLike = { code?: unknown; operation?: unknown; info?: { responseStatus?: unknown; error?: unknown }; error?: unknown; cause?: unknown };

/** The errors `err` wraps (ethers puts the node's in `error` / `info.error`, Node in `cause`), itself first. */
function chainOf(err: unknown): ErrLike[] {
  const out: ErrLike[] = [];
  let e = err as ErrLike | undefined;
  for (let i = 0; i < 4 && e && typeof e === "object"; i++) {
    out.push(e);
    e = (e.error ?? e.info?.error ?? e.cause) as ErrLike | undefined;
  }
  return out;
}

/** Whether `err` is the node's (or the network's) failure, and whether the request may have reached it; undefined for anything else. */
export function chainOutage(err: unknown): Outage | undefined {
  for (const e of chainOf(err)) {
    const code = e.code;
    if (typeof code === "string" && NOT_CONNECTED.has(code)) return { delivered: "no" };
    if (typeof code === "string" && CUT_OFF.has(code)) return { delivered: "maybe" };
    if (code === "SERVER_ERROR") return { delivered: /^(599 .*)?429\b|\(429 /.test(String(e.info?.responseStatus ?? "")) ? "no" : "maybe" };
    if (typeof code === "string" && ETHERS_OUTAGE.has(code)) return { delivered: "maybe" };
    if (code === "UNSUPPORTED_OPERATION" && e.operation === "bodyJson") return { delivered: "maybe" }; // not a JSON-RPC answer (a proxy's error page)
    if (typeof code === "number" && RPC_BUSY.has(code)) return { delivered: "no" };
  }
  return undefined;
}

/** The answer to a request the chain could not serve: 503 chain_unavailable with Retry-After. */
export const chainUnavailable = (message = "the chain's RPC node did not answer; nothing was read or sent, try again"): AppError =>
  new AppError(503, "chain_unavailable", message, undefined, { "retry-after": String(CHAIN_RETRY_AFTER_SECONDS) });

/** `err` as the answer it calls for when it is a chain outage (undefined otherwise). */
export const fromChainOutage = (err: unknown): AppError | undefined => (chainOutage(err) ? chainUnavailable() : undefined);
