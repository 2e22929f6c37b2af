import type { ErrorRequestHandler, RequestHandler } from "express";
import { RunRefused } from "../executor/errors";
import { runRefusalAnswer } from "./http/runRefusals";

/** Every error the API answers with: a stable `code`, an HTTP status and a human message (and headers such as Retry-After). */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) => new AppError(400, "invalid_request", message, details);
export const unauthorized = (message = "a valid API key is required (X-Api-Key or Authorization: Bearer)") =>
  new AppError(401, "invalid_api_key", message);
export const forbidden = (message: string, details?: Record<string, unknown>) => new AppError(403, "forbidden", message, details);
export const notFound = (code: string, message: string, details?: Record<string, unknown>) => new AppError(404, code, message, details);

type Log = { error: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };

/** The one error middleware: AppError → its JSON body; body-parser errors → 4xx; anything else → 500 without internals. */
export function errorMiddleware(logger: Log): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) return;
    let e: AppError;
    if (err instanceof AppError) e = err;
    else if (err instanceof RunRefused) {
      const a = runRefusalAnswer(err);
      e = new AppError(a.status, a.code, err.message, undefined, a.headers);
    }
    else if (err?.type === "entity.parse.failed") e = badRequest("the request body is not valid JSON");
    else if (err?.type === "entity.too.large") e = new AppError(413, "body_too_large", `the request body is larger than ${err.limit} bytes`);
    else if (err?.type === "encoding.unsupported" || err?.type === "charset.unsupported") e = new AppError(415, "unsupported_encoding", String(err.message));
    else if (typeof err?.status === "number" && err.status >= 400 && err.status < 500) e = new AppError(err.status, "invalid_request", String(err.message));
    else {
      logger.error({ err, path: req.path }, "unhandled error");
      e = new AppError(500, "internal_error", "the service failed to handle this request; it has been logged");
    }
    if (e.status >= 500 && err instanceof AppError) logger.warn({ code: e.code, path: req.path }, e.message);
    if (e.headers) res.set(e.headers);
    res.status(e.status).json({ error: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) });
  };
}

export const notFoundRoute: RequestHandler = (req, _res, next) =>
  next(notFound("not_found", `no endpoint ${req.method} ${req.path}; see /core/v1/openapi.json`));
