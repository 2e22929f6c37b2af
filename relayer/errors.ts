import type { RequestHandler } from "express";
import { RunRefused } from "../executor/errors";
import { errorMiddleware as sharedErrorMiddleware } from "../protocol/http";
import { appError, notFound, type AppError } from "../protocol/errors";
import { runRefusalAnswer } from "./http/runRefusals";

export { AppError, appError, badRequest, forbidden, notFound, unauthorized } from "../protocol/errors";

/** The executor's refusals (RunRefused) as the API answers them. */
const translate = (err: unknown): AppError | undefined => {
  if (!(err instanceof RunRefused)) return undefined;
  const a = runRefusalAnswer(err);
  return appError(a.code, err.message, undefined, a.headers);
};

/** The relayer's error middleware: the shared one (protocol/http.ts), which also knows the executor's refusals. */
export const errorMiddleware = (logger: Parameters<typeof sharedErrorMiddleware>[0]) => sharedErrorMiddleware(logger, translate);

export const notFoundRoute: RequestHandler = (req, _res, next) =>
  next(notFound("not_found", `no endpoint ${req.method} ${req.path}; see /core/v1/openapi.json`));
