import express, { type RequestHandler } from "express";
import { jsonDeeperThan, tooDeepMessage } from "./json";
import { AppError } from "./errors";

/** The media types the relayer's routes take as JSON (route() refuses others with 415; each body parser reads these). */
export const JSON_MEDIA_TYPES = ["application/json", "application/*+json"];

export type JsonBodyOptions = {
  /** Largest body, in bytes or as "256kb" (then 413 body_too_large). */
  limit: number | string;
  /** Deepest nesting of arrays and objects (then 400 json_too_deep). */
  maxDepth: number;
  /** Accept any JSON value at the top, not only objects and arrays (default false). */
  anyValue?: boolean;
  type?: string | string[];
};

/**
 * The JSON body parser of both services: size checked while reading, nesting measured right after
 * parsing (iteratively), before any handler, validator or serializer recurses into the body.
 */
export function jsonBody(opts: JsonBodyOptions): RequestHandler[] {
  const parse = express.json({ limit: opts.limit, strict: !opts.anyValue, ...(opts.type ? { type: opts.type } : {}) });
  const depth: RequestHandler = (req, _res, next) => {
    if (req.body !== undefined && jsonDeeperThan(req.body, opts.maxDepth)) return next(new AppError(400, "json_too_deep", tooDeepMessage("the JSON body", opts.maxDepth)));
    next();
  };
  return [parse, depth];
}
