/**
 * The one place that bounds what crosses the sandbox boundary, in and out. The run request
 * (code, params), each host call's arguments and each answer, and everything a run sends back
 * (response, logs, error message, stack) are checked here; the sandbox process applies the same functions
 * to what it sends and the pool to what it receives, so neither side trusts the other.
 */
import { jsonDeeperThan } from "../../../protocol/json";
import { decodeUtf8, truncateUtf8 } from "../../../protocol/text";
import { isLimitKey, limitError, type RunError } from "../errors";
import { MAX_MODULE_URL_CHARS } from "../imports";
import type { RunLimits, RunResult } from "../types";

export { truncateUtf8 };

/** Bytes of an error message, and of its stack, that leave a run (the rest is cut). */
export const MAX_ERROR_MESSAGE_BYTES = 4096;
export const MAX_ERROR_STACK_BYTES = 4096;
/** Bytes of a host error's message as the action sees it. */
export const MAX_HOST_ERROR_BYTES = 2048;
/** Host calls of any kind per run, counted by the sandbox process (what it may send) and by the pool (what it answers). */
export const MAX_HOST_CALLS_PER_RUN = 256;
/** Characters of an Encrypt message (a Decrypt ciphertext may be twice that). */
export const MAX_CRYPTO_MESSAGE_CHARS = 1024 * 1024;
/** Characters of an action CID (ipfsId). */
export const MAX_CID_CHARS = 128;
/** Characters of a host operation name. */
export const MAX_OP_CHARS = 64;
/**
 * JSON values in one host call's arguments, counted on the text before the relayer parses it (a
 * fetch with its 64 headers holds about 70): the relayer never builds more objects than that out of
 * what a sandbox sends, whatever the size of the text.
 */
export const MAX_HOST_CALL_VALUES = 256;
/** JSON values in one frame (a message is a flat record of about 15), counted before it is parsed. */
export const MAX_FRAME_VALUES = 64;

/**
 * Characters of JSON in one host call's arguments as the action writes them, or one host answer:
 * room for the largest thing a legitimate call carries (a fetch body of maxFetchBytes, or a
 * Decrypt ciphertext), escapes included (a control character takes 6). The sandbox process refuses
 * longer arguments before it reads them; what it sends is far smaller (callArgsChars, callBodyBytes).
 */
export const hostMessageChars = (limits: RunLimits) => 6 * Math.max(limits.maxFetchBytes, 2 * MAX_CRYPTO_MESSAGE_CHARS) + 64 * 1024;

/** Characters of a wallet id (pkpId) in a key call, of a chain name (getRpcUrl). */
export const MAX_ID_CHARS = 512;
export const MAX_CHAIN_CHARS = 64;
/** A fetch: its URL, its headers (how many, each name + value, all of them: every redirect hop sends them again; 64 KB is four times what Node's own HTTP server accepts). */
export const MAX_URL_CHARS = 8192;
export const MAX_HEADERS = 64;
export const MAX_HEADER_CHARS = 8192;
export const MAX_HEADERS_BYTES = 64 * 1024;
/** Characters of a fetch method. */
export const MAX_METHOD_CHARS = 16;

/**
 * The calls that may carry or answer megabytes: a fetch (its body, its answer's body), an import
 * (a module), Encrypt and Decrypt (a message, a ciphertext). At most MAX_OPEN_IO_CALLS of them are
 * open at once in a run: sent by the sandbox process and not yet answered (process/run.ts queues
 * the others, in order, within the run's deadline; the pool retires a sandbox that opens more).
 * The relayer so holds at most that many such calls of a run, their requests and their answers
 * included, whatever the action starts and whether or not its sandbox reads what it is sent.
 * Six, as browsers open at most six connections to one host: a run gains little from more (its
 * fetches mostly go to few hosts), and each open call may hold maxFetchBytes in the relayer.
 */
export const MAX_OPEN_IO_CALLS = 6;
export const IO_OPS: ReadonlySet<string> = new Set(["fetch", "import", "encrypt", "decrypt"]);

/**
 * Characters of a host call's arguments as they cross (JSON, the call's bulk taken out: a fetch
 * body, an Encrypt message, a Decrypt ciphertext travel as bytes, callBodyBytes): room for every call
 * call-checks.ts accepts, each character escaped at worst (6). Checked on the text before it is
 * parsed, on both sides (the sandbox process refuses a longer call before it leaves).
 */
export function callArgsChars(op: string): number {
  // A fetch: its URL, method and headers (each header's quotes, colon and comma 6 more).
  if (op === "fetch") return 6 * (MAX_URL_CHARS + MAX_METHOD_CHARS + MAX_HEADERS_BYTES) + 8 * MAX_HEADERS + 256;
  // The others: an import (a URL of MAX_MODULE_URL_CHARS and at most 8 pins of at most 95 characters,
  // 13.6 K), a wallet id, a CID or a chain name; 16 K leaves an over-long id the relayer's own message.
  return Math.max(16 * 1024, 6 * MAX_MODULE_URL_CHARS + 8 * 128 + 256, 6 * MAX_ID_CHARS + 256);
}

/**
 * Bytes of a host call's bulk, which crosses as bytes beside its arguments (never JSON-escaped): a
 * fetch body (maxFetchBytes), an Encrypt message (its UTF-8), a Decrypt ciphertext (base64 text:
 * as many bytes as characters). Other calls carry none.
 */
export function callBodyBytes(op: string, limits: RunLimits): number {
  if (op === "fetch") return limits.maxFetchBytes;
  if (op === "encrypt") return MAX_CRYPTO_MESSAGE_CHARS;
  if (op === "decrypt") return 2 * MAX_CRYPTO_MESSAGE_CHARS;
  return 0;
}

/** The largest host call of a run as it crosses: its arguments and its bulk. */
const largestCall = (limits: RunLimits) => Math.max(...[...IO_OPS].map((op) => 6 * callArgsChars(op) + callBodyBytes(op, limits)));

/**
 * Bytes of one frame from a sandbox process (frames.ts): its largest legitimate message, a host
 * call (its arguments, every character escaped at worst, and its bulk as bytes) or the end of a run
 * (response, logs, error, each character escaped at worst: 6 bytes). A larger frame is refused from
 * its header, before it is buffered or read. Between runs a process has only short things to say.
 */
export function sandboxFrameBytes(limits: RunLimits | undefined): number {
  if (!limits) return 64 * 1024;
  const result = limits.maxResponseBytes + limits.maxLogBytes + MAX_ERROR_MESSAGE_BYTES + MAX_ERROR_STACK_BYTES;
  return Math.max(largestCall(limits), 6 * result) + 64 * 1024;
}

/** An error as it may leave a run: message and stack cut to their caps, `limit` only when it is a RunLimits key. */
export function boundError(error: { message?: unknown; stack?: unknown; limit?: unknown }): RunError {
  const message = truncateUtf8(typeof error.message === "string" ? error.message : "the action failed", MAX_ERROR_MESSAGE_BYTES);
  const stack = typeof error.stack === "string" && error.stack !== "" ? truncateUtf8(error.stack, MAX_ERROR_STACK_BYTES) : undefined;
  return { message, ...(stack ? { stack } : {}), ...(isLimitKey(error.limit) ? { limit: error.limit } : {}) };
}

/** What the sandbox process sends back at the end of a run: plain strings, no object graph. */
export type WireResult = {
  /** The response as JSON text (setResponse's or main's), or null. */
  responseJson: string | null;
  /** console output, each console call's text ending with "\n" (without the error). */
  logs: string;
  error?: RunError;
};

/**
 * Turns what a run sent back into the RunResult that leaves the executor, every channel capped:
 * the response (maxResponseBytes of JSON, maxJsonDepth), the logs (maxLogBytes, then the error's
 * message and stack as their last lines, ending with "\n" as every console call's text does), the error message and stack (4 KB each).
 */
export function boundResult(wire: { responseJson?: unknown; logs?: unknown; error?: unknown }, limits: RunLimits): RunResult {
  let error = wire.error && typeof wire.error === "object" ? boundError(wire.error as RunError) : undefined;
  let response: unknown = null;
  const json = wire.responseJson;
  if (typeof json === "string") {
    if (json.length > limits.maxResponseBytes || Buffer.byteLength(json, "utf8") > limits.maxResponseBytes) {
      error ??= limitError("maxResponseBytes", limits);
    } else {
      try {
        response = JSON.parse(json);
      } catch {
        error ??= { message: "TypeError: the response is not valid JSON" };
      }
      if (jsonDeeperThan(response, limits.maxJsonDepth)) {
        response = null;
        error ??= limitError("maxJsonDepth", limits);
      }
    }
  }
  const lines = truncateUtf8(typeof wire.logs === "string" ? wire.logs : "", limits.maxLogBytes);
  if (!error) return { response, logs: lines, hasError: false };
  const tail = error.stack ? `${error.message}\n${error.stack.trimEnd()}` : error.message;
  return { response, logs: `${lines}${lines && !lines.endsWith("\n") ? "\n" : ""}${tail}\n`, hasError: true, error };
}

/** A result for a run that ended before or outside the action (limits checked up front, crashes). */
export const failedResult = (error: RunError, limits: RunLimits): RunResult => boundResult({ responseJson: null, logs: "", error }, limits);

/** Why `paramsJson` may not be handed to a run (size, JSON, nesting), or undefined. */
export function paramsProblem(paramsJson: unknown, limits: RunLimits): RunError | undefined {
  if (typeof paramsJson !== "string") return { message: "TypeError: params must be JSON text" };
  if (paramsJson.length > limits.maxParamsBytes || Buffer.byteLength(paramsJson, "utf8") > limits.maxParamsBytes) return limitError("maxParamsBytes", limits);
  let params: unknown;
  try {
    params = JSON.parse(paramsJson);
  } catch {
    return { message: "TypeError: params are not valid JSON" };
  }
  return jsonDeeperThan(params, limits.maxJsonDepth) ? limitError("maxJsonDepth", limits) : undefined;
}

/** Why `code` may not be handed to a run (not UTF-8 bytes, too large), or undefined; answers its text. */
export function codeText(code: unknown, limits: RunLimits): { text: string } | { problem: RunError } {
  if (!(code instanceof Uint8Array)) return { problem: { message: "TypeError: code must be UTF-8 bytes" } };
  if (code.byteLength > limits.maxCodeBytes) return { problem: limitError("maxCodeBytes", limits) };
  const text = decodeUtf8(code);
  return text === undefined ? { problem: { message: "TypeError: the code is not valid UTF-8" } } : { text };
}
