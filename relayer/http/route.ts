import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Request, RequestHandler, Response } from "express";
import { z } from "../schemas/common";
import { AppError } from "../errors";
import { ERROR_CODES, type ErrorCode } from "../../protocol/errors";
import { parseOrThrow } from "../../protocol/validate";
import { JSON_MEDIA_TYPES } from "../../protocol/jsonBody";
import { authenticate, type Auth } from "./auth";
import { billingIdentity, type BillingIdentity } from "./walletAuth";
import type { Ctx } from "../context";

type Method = "get" | "post";

/** Where route() registers its handler: an express Router (or app), or anything with their get and post. */
export type Routes = Record<Method, (path: string, handler: RequestHandler) => unknown>;

export type RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> = {
  method: Method | Method[];
  path: string;
  summary: string;
  tag: string;
  /**
   * "key": any active key; "account": the account key only; "billing": an API key or an X-Wallet-Auth
   * signature (billingIdentity); "none": unauthenticated.
   */
  auth: "none" | "key" | "account" | "billing";
  body?: B;
  query?: Q;
  response: z.ZodType;
  /** The media type of the 200 answer (default application/json; a handler answering another one sends it itself). */
  responseType?: string;
  /**
   * The error codes this route answers beyond those every route of its kind does (see
   * `errorCodesOf`); the OpenAPI document lists them under their catalogue status.
   */
  errors?: ErrorCode[];
  handler: (args: {
    ctx: Ctx;
    auth: Auth;
    /** Who pays, for auth "billing". */
    identity: BillingIdentity;
    body: B extends z.ZodType ? z.output<B> : undefined;
    query: Q extends z.ZodType ? z.output<Q> : undefined;
    req: Request;
    res: Response;
  }) => Promise<unknown>;
};

/** Codes every route may answer, by what it takes. */
const EVERY: ErrorCode[] = ["invalid_request", "internal_error"];
const WITH_BODY: ErrorCode[] = ["invalid_text", "json_too_deep", "body_too_large", "unsupported_media_type", "unsupported_encoding"];
/** A key or a wallet is resolved on chain: its node failing answers chain_unavailable. */
const BY_AUTH: Record<RouteSpec<undefined, undefined>["auth"], ErrorCode[]> = {
  none: [],
  key: ["invalid_api_key", "rate_limited", "chain_unavailable"], // rate_limited: past the client's budget of failed authentications
  account: ["invalid_api_key", "owner_only", "rate_limited", "chain_unavailable"],
  billing: ["invalid_api_key", "invalid_wallet_auth", "rate_limited", "chain_unavailable"],
};

/** Every error code a route answers: its kind's, and its own. */
export const errorCodesOf = (method: Method, spec: Pick<RouteSpec<undefined, undefined>, "auth" | "errors">): ErrorCode[] =>
  [...new Set([...EVERY, ...(method === "post" ? WITH_BODY : []), ...BY_AUTH[spec.auth], ...(spec.errors ?? [])])];

/** The documented error answers of a route: one per status, listing its codes and their meaning from the catalogue. */
function errorResponses(codes: ErrorCode[]): RouteConfig["responses"] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERROR_CODES[c].status, [...(byStatus.get(ERROR_CODES[c].status) ?? []), c]);
  const out: RouteConfig["responses"] = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const sorted = [...list].sort();
    out[status] = {
      description: sorted.map((c) => `\`${c}\`: ${ERROR_CODES[c].meaning}`).join("\n\n"),
      content: { "application/json": { schema: errorBodyFor(sorted) } },
    };
  }
  return out;
}

/** The error body with `code` one of `codes`. */
const errorBodyFor = (codes: ErrorCode[]) =>
  z.object({
    error: z.string().openapi({ description: "What went wrong, for people (Chipotle's SDK shows it)." }),
    code: z.enum(codes as [ErrorCode, ...ErrorCode[]]).openapi({ description: "The stable code, for programs." }),
    message: z.string().openapi({ description: "The same text as error." }),
    details: z.record(z.string(), z.unknown()).optional(),
  });

/**
 * Registers one endpoint twice from the same zod schemas: on the express router (validation,
 * authentication, JSON answer) and in the OpenAPI registry (the published description).
 */
export function route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  router: Routes,
  registry: OpenAPIRegistry,
  ctx: Ctx,
  spec: RouteSpec<B, Q>,
) {
  const methods = Array.isArray(spec.method) ? spec.method : [spec.method];
  for (const method of methods) {
    const doc: RouteConfig = {
      method,
      path: `/core/v1${spec.path}`,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.auth === "none" ? [] : [{ ApiKey: [] }, { Bearer: [] }, ...(spec.auth === "billing" ? [{ WalletAuth: [] }] : [])],
      request: {
        ...(spec.query ? { query: spec.query as never } : {}),
        ...(spec.body && method === "post" ? { body: { content: { "application/json": { schema: spec.body } } } } : {}),
      },
      responses: {
        200: { description: "OK", content: { [spec.responseType ?? "application/json"]: { schema: spec.response } } },
        ...errorResponses(errorCodesOf(method, spec)),
      },
    };
    registry.registerPath(doc);
    router[method](spec.path, async (req, res, next) => {
      try {
        const hasContent = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
        if (method === "post" && hasContent && !req.is(JSON_MEDIA_TYPES)) {
          throw new AppError(415, "unsupported_media_type", "send the body as JSON with Content-Type: application/json");
        }
        const early = spec.auth === "key" ? (res.locals.auth as Auth | undefined) : undefined; // authenticateBeforeBody
        const auth = spec.auth === "none" || spec.auth === "billing" ? (undefined as unknown as Auth) : (early ?? (await authenticate(ctx, req, spec.auth)));
        const identity = spec.auth === "billing" ? await billingIdentity(ctx, req) : (undefined as unknown as BillingIdentity);
        // No body at all counts as {}; a JSON `null` (or any non-object where an object is expected) is a bad body.
        const source = method === "get" ? req.query : req.body === undefined ? {} : req.body;
        const body = spec.body ? parseOrThrow(spec.body, source, method === "get" ? "query" : "body") : undefined;
        const query = spec.query ? parseOrThrow(spec.query, req.query, "query") : undefined;
        const result = await spec.handler({ ctx, auth, identity, body: body as never, query: query as never, req, res });
        if (!res.headersSent) res.json(result);
      } catch (err) {
        next(err);
      }
    });
  }
}
