import { statusOf, type ErrorCode, type StatusOf } from "./errorCodes";

export { ERROR_CODES, statusOf, isErrorCode, type ErrorCode } from "./errorCodes";

type Details = Record<string, unknown>;
type Headers = Record<string, string>;
/** `(status, code, message, details?, headers?)` where the status is the catalogue's status of the code. */
type AppErrorArgs = { [C in ErrorCode]: [status: StatusOf<C>, code: C, message: string, details?: Details, headers?: Headers] }[ErrorCode];

/**
 * Every error the APIs answer with: a stable `code` from the catalogue (protocol/errorCodes.ts), its
 * HTTP status and a human message (and details, and headers such as Retry-After).
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: Details;
  readonly headers?: Headers;

  constructor(...[status, code, message, details, headers]: AppErrorArgs) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

/** An AppError whose status is read from the catalogue (for codes chosen at run time). */
export const appError = (code: ErrorCode, message: string, details?: Details, headers?: Headers): AppError =>
  new AppError(...([statusOf(code), code, message, details, headers] as AppErrorArgs));

export const badRequest = (message: string, details?: Details) => new AppError(400, "invalid_request", message, details);
export const unauthorized = (message = "a valid API key is required (X-Api-Key or Authorization: Bearer)") => new AppError(401, "invalid_api_key", message);
export const forbidden = (message: string, details?: Details) => new AppError(403, "forbidden", message, details);
/** A 404 with one of the catalogue's 404 codes. */
export const notFound = (code: { [C in ErrorCode]: StatusOf<C> extends 404 ? C : never }[ErrorCode], message: string, details?: Details) =>
  new AppError(404, code, message, details);

/**
 * The JSON error body of every API: `error` is the human message (what Chipotle's SDK shows its
 * user), `code` the stable code programs branch on, `message` the same text as `error` (for clients
 * that read `message`), and `details` when there are any.
 */
export type ErrorBody = { error: string; code: ErrorCode; message: string; details?: Details };

export const errorBodyOf = (e: AppError): ErrorBody => ({ error: e.message, code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) });
