/**
 * The services' logger: pino, JSON lines, with the ids of the request being served on every line
 * logged while serving it (an AsyncLocalStorage set by requestContext, read by pino's mixin), also
 * by library code that holds the service's logger rather than the request's. Fields that name a
 * secret are redacted as a second line of defence (the first: secrets are never passed to a logger).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import pino, { type Logger } from "pino";

export type RequestIds = { request_id: string; correlation_id?: string };

/** The ids of the request whose work is running (undefined outside any request). */
export const requestIds = new AsyncLocalStorage<RequestIds>();
const withIds = new WeakSet<Logger>();

/** Field names (at the top level and one level down) never written to a log. */
export const REDACTED_FIELDS = ["api_key", "apiKey", "usage_key", "usageKey", "private_key", "privateKey", "secret", "token", "session", "signature", "password", "authorization", "cookie", "x-api-key", "code_hash_secret"];
const redactPaths = REDACTED_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`]);

/** A service logger at `level` (writing to `stream`, default stdout) whose lines carry the current request's ids. */
export function serviceLogger(level: string, stream?: pino.DestinationStream): Logger {
  const logger = pino({ level, mixin: () => requestIds.getStore() ?? {}, redact: { paths: redactPaths, censor: "[redacted]" } }, stream);
  withIds.add(logger);
  return logger;
}

/** Whether lines of `logger` carry the request ids by themselves (a serviceLogger). */
export const carriesRequestIds = (logger: Logger): boolean => withIds.has(logger);
