/**
 * The services' logger: pino, JSON lines. A request's lines carry its ids because they are logged
 * through the request's own logger (`req.log`, a child made by requestContext in protocol/http.ts),
 * and library code that logs about a request's work is handed that logger (a run's sandbox events:
 * RunHooks.log); there is no ambient request context (an AsyncLocalStorage would put a hook on every
 * promise of the process: ~80 us of the event loop a hello-world run, issue 18). Fields that name a
 * secret are redacted as a second line of defence (the first: secrets are never passed to a logger).
 */
import pino, { type Logger } from "pino";

export type RequestIds = { request_id: string; correlation_id?: string };

/** Field names (at the top level and one level down) never written to a log. */
export const REDACTED_FIELDS = ["api_key", "apiKey", "usage_key", "usageKey", "private_key", "privateKey", "secret", "token", "session", "signature", "password", "authorization", "cookie", "x-api-key", "code_hash_secret"];
const redactPaths = REDACTED_FIELDS.flatMap((f) => [`["${f}"]`, `*["${f}"]`]);

/** A service logger at `level` (writing to `stream`, default stdout). */
export function serviceLogger(level: string, stream?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: "[redacted]" } }, stream);
}
