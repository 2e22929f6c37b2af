/**
 * The one place that bounds what crosses the sandbox boundary, in and out. The run request
 * (code, params), each host call's arguments and each answer, and everything a run sends back
 * (response, logs, error message, stack) are checked here; the sandbox process applies the same functions
 * to what it sends and the pool to what it receives, so neither side trusts the other.
 */
import { jsonDeeperThan } from "../../../protocol/json";
import { decodeUtf8, truncateUtf8 } from "../../../protocol/text";
import { isLimitKey, limitError, type RunError } from "../errors";
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
 * Characters of JSON in one host call's arguments or one host answer: room for the largest thing
 * a legitimate call carries (a fetch body of maxFetchBytes, or a Decrypt ciphertext), escapes
 * included (a control character takes 6).
 */
export const hostMessageChars = (limits: RunLimits) => 6 * Math.max(limits.maxFetchBytes, 2 * MAX_CRYPTO_MESSAGE_CHARS) + 64 * 1024;

/**
 * Bytes of one frame from a sandbox process (frames.ts): its largest message, a host call's
 * arguments or the end of a run, with every character escaped at worst (6 bytes). Between runs a
 * process has only short things to say.
 */
export function sandboxFrameBytes(limits: RunLimits | undefined): number {
  if (!limits) return 64 * 1024;
  const result = limits.maxResponseBytes + limits.maxLogBytes + MAX_ERROR_MESSAGE_BYTES + MAX_ERROR_STACK_BYTES;
  return 6 * Math.max(hostMessageChars(limits), result) + 64 * 1024;
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
