/**
 * The HTTP plumbing both services share: per-request ids and logger, the one error middleware and
 * its JSON body, and the CORS of header-authenticated routes.
 */
import crypto from "node:crypto";
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { AppError, badRequest, errorBodyOf } from "./errors";
import { fromChainOutage } from "./chainErrors";
import type { RequestIds } from "./ops/logger";
import { routeLabel } from "./ops/metrics";

/** An unexpected error as logged: its class, message (cut) and stack, never its own enumerable fields (a request, a config). */
const errText = (err: unknown) => (err instanceof Error ? { type: err.name, message: err.message.slice(0, 1000), stack: err.stack } : { message: String(err).slice(0, 1000) });

declare module "express-serve-static-core" {
  interface Request {
    /** The server-made id of this request (X-Request-Id). */
    requestId?: string;
    /** The caller's X-Correlation-Id, sanitized; undefined when it sent none. */
    correlationId?: string;
    /** The logger of this request: every line carries request_id (and correlation_id). */
    log?: Logger;
  }
}

/** Longest X-Correlation-Id echoed and logged (longer values are cut). */
export const MAX_CORRELATION_ID_LENGTH = 128;
const CORRELATION_CHARS = /[^A-Za-z0-9._:/+=@-]/g;

/**
 * The caller's X-Correlation-Id as it is echoed and logged: characters outside
 * `A-Z a-z 0-9 . _ : / + = @ -` dropped (no spaces, control characters or header tricks), cut to
 * MAX_CORRELATION_ID_LENGTH; undefined when nothing is left.
 */
export function sanitizeCorrelationId(raw: string | string[] | undefined): string | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== "string") return undefined;
  const clean = value.slice(0, 4 * MAX_CORRELATION_ID_LENGTH).replace(CORRELATION_CHARS, "").slice(0, MAX_CORRELATION_ID_LENGTH);
  return clean || undefined;
}

/**
 * First middleware of a service: a fresh UUID v4 as X-Request-Id on every answer (a caller's own
 * X-Request-Id is ignored: ids are the server's), the caller's X-Correlation-Id echoed (sanitized;
 * absent when it sent none), a logger whose lines carry both at `req.log` (what is logged for the
 * request goes through it: routes use it, and hand it to library code that logs about the request's
 * work), and one log line per request when it ends, naming its route template (`mounts`: the router
 * mounts, see routeLabel).
 */
export function requestContext(logger: Logger, mounts: readonly string[] = []): RequestHandler {
  return (req, res, next) => {
    const requestId = crypto.randomUUID();
    const correlationId = sanitizeCorrelationId(req.headers["x-correlation-id"]);
    req.requestId = requestId;
    req.correlationId = correlationId;
    const ids: RequestIds = correlationId ? { request_id: requestId, correlation_id: correlationId } : { request_id: requestId };
    const log = logger.child(ids);
    req.log = log;
    res.setHeader("X-Request-Id", requestId);
    if (correlationId) res.setHeader("X-Correlation-Id", correlationId);
    const started = performance.now();
    const { method } = req;
    // The route's template, never the raw path: paths may carry capabilities (a webhook's trigger id).
    res.once("finish", () => {
      if (log.isLevelEnabled("info")) log.info({ method, path: routeLabel(req, mounts), status: res.statusCode, ms: Math.round(performance.now() - started) }, "request");
    });
    next();
  };
}

/**
 * CORS of routes authenticated by headers only (X-Api-Key, Authorization: Bearer, X-Wallet-Auth):
 * any origin may call them and their preflights are answered, without credentials (no cookie is
 * ever sent or honoured: `*` forbids it). Never mount it on a cookie-authenticated route.
 */
export const headerAuthCors: RequestHandler = (req, res, next) => {
  res.setHeader("Access-Control-Allow-Origin", "*");
  res.setHeader("Access-Control-Expose-Headers", "X-Request-Id, X-Correlation-Id, Retry-After, RateLimit, RateLimit-Policy");
  if (req.method !== "OPTIONS") return next();
  res.setHeader("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  res.setHeader("Access-Control-Allow-Headers", "Content-Type, X-Api-Key, Authorization, X-Wallet-Auth, X-Correlation-Id");
  res.setHeader("Access-Control-Max-Age", "600");
  res.status(204).end();
};

/**
 * Middleware run one after the other as one layer: what express's router does for a list of
 * handlers, without its per-layer work (a path match, a params object, a closure and a prefix trim
 * for every handler of every request). Each calls `next()` to go on; an error (passed, thrown, or a
 * returned promise that rejects) skips the rest and goes to the caller's `next(err)`, as in express.
 * For the layers every request of a hot route passes through (see createApp).
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const out: unknown = handler(req, res, step);
        if (out && typeof (out as PromiseLike<unknown>).then === "function") (out as PromiseLike<unknown>).then(undefined, (e: unknown) => next(e || new Error("a middleware's promise rejected without a reason")));
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

type Log = Pick<Logger, "error" | "warn">;

/** Turns a service's own domain errors into AppErrors (undefined: not one of them). */
export type ErrorTranslator = (err: unknown) => AppError | undefined;

/** The AppError a body-parser or express error stands for (400 for anything else the client caused). */
function fromParser(err: any): AppError | undefined {
  if (err?.type === "entity.parse.failed") return badRequest("the request body is not valid JSON");
  if (err?.type === "entity.too.large") return new AppError(413, "body_too_large", `the request body is larger than ${err.limit} bytes`);
  if (err?.type === "encoding.unsupported" || err?.type === "charset.unsupported") return new AppError(415, "unsupported_encoding", String(err.message));
  if (typeof err?.status === "number" && err.status >= 400 && err.status < 500) return badRequest(String(err.message));
  return undefined;
}

/**
 * The one error middleware: AppError (or what `translate` makes of a domain error) → its JSON body
 * (protocol/errors.ts, ErrorBody); body-parser errors → 4xx; a chain RPC node's failure → 503
 * chain_unavailable with Retry-After (chainErrors.ts); anything else → 500 without internals.
 */
export function errorMiddleware(logger: Log, translate?: ErrorTranslator): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    const log: Log = req.log ?? logger;
    let e = err instanceof AppError ? err : (translate?.(err) ?? fromParser(err) ?? fromChainOutage(err));
    if (!e) {
      log.error({ err: errText(err), path: routeLabel(req) }, "unhandled error");
      e = new AppError(500, "internal_error", "the service failed to handle this request; it has been logged");
    } else if (e.status >= 500) log.warn({ code: e.code, path: routeLabel(req), ...(e === err ? {} : { cause: String((err as Error)?.message ?? err) }) }, e.message);
    if (e.headers) res.set(e.headers);
    res.status(e.status).json(errorBodyOf(e));
  };
}
