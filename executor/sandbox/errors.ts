/** The errors a run can end with: limits (with their RunLimits key) and action failures. */
import type { RunLimits, RunResult } from "./types";

export type RunError = NonNullable<RunResult["error"]>;

/**
 * Thrown by host-side code (e.g. hostFetch) when a limit is hit: the action sees the message as a
 * rejected promise and the run ends with hasError and `error.limit` set.
 */
export class SandboxLimitError extends Error {
  constructor(
    readonly limit: keyof RunLimits,
    message: string,
  ) {
    super(message);
    this.name = "SandboxLimitError";
  }
}

export const LIMIT_KEYS: ReadonlyArray<keyof RunLimits> = [
  "memoryBytes",
  "timeoutMs",
  "maxFetches",
  "maxResponseBytes",
  "maxLogBytes",
  "maxKeyRequests",
  "maxParamsBytes",
  "maxCodeBytes",
  "maxFetchBytes",
  "maxJsonDepth",
];

export function isLimitKey(value: unknown): value is keyof RunLimits {
  return typeof value === "string" && (LIMIT_KEYS as readonly string[]).includes(value);
}

function bytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}

/** The message of each limit, e.g. "log limit exceeded: logs are capped at 100 KB (maxLogBytes)". */
export function limitMessage(limit: keyof RunLimits, limits: RunLimits): string {
  const text: Record<keyof RunLimits, string> = {
    memoryBytes: `memory limit exceeded: the action may use at most ${bytes(limits.memoryBytes)}`,
    timeoutMs: `timeout: the action ran longer than ${limits.timeoutMs} ms`,
    maxFetches: `fetch limit exceeded: at most ${limits.maxFetches} fetches per run`,
    maxResponseBytes: `response too large: at most ${bytes(limits.maxResponseBytes)} of JSON`,
    maxLogBytes: `log limit exceeded: logs are capped at ${bytes(limits.maxLogBytes)}`,
    maxKeyRequests: `key request limit exceeded: at most ${limits.maxKeyRequests} key requests per run`,
    maxParamsBytes: `params too large: at most ${bytes(limits.maxParamsBytes)} of JSON`,
    maxCodeBytes: `code too large: at most ${bytes(limits.maxCodeBytes)}`,
    maxFetchBytes: `fetch response too large: at most ${bytes(limits.maxFetchBytes)} per response`,
    maxJsonDepth: `JSON nested too deeply: at most ${limits.maxJsonDepth} levels of arrays and objects`,
  };
  return `${text[limit]} (${limit})`;
}

export function limitError(limit: keyof RunLimits, limits: RunLimits): RunError {
  return { message: limitMessage(limit, limits), limit };
}
