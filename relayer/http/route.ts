import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Request, Response, Router } from "express";
import type { z } from "zod";
import { errorBody } from "../schemas/common";
import { AppError } from "../errors";
import { parseOrThrow } from "./validate";
import { authenticate, type Auth } from "./auth";
import { billingIdentity, type BillingIdentity } from "./walletAuth";
import type { Ctx } from "../context";

type Method = "get" | "post";

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
  /** More documented answers (e.g. 402, 404, 409). */
  responses?: RouteConfig["responses"];
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

/**
 * Registers one endpoint twice from the same zod schemas: on the express router (validation,
 * authentication, JSON answer) and in the OpenAPI registry (the published description).
 */
export function route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
  router: Router,
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
        200: { description: "OK", content: { "application/json": { schema: spec.response } } },
        400: { description: "Bad input", content: { "application/json": { schema: errorBody } } },
        ...(spec.auth === "none" ? {} : { 401: { description: "Missing, unknown or revoked key", content: { "application/json": { schema: errorBody } } } }),
        ...(spec.auth === "none" ? {} : { 403: { description: "Not permitted", content: { "application/json": { schema: errorBody } } } }),
        ...spec.responses,
      },
    };
    registry.registerPath(doc);
    router[method](spec.path, async (req, res, next) => {
      try {
        const hasContent = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
        if (method === "post" && hasContent && !req.is(["application/json", "application/*+json"])) {
          throw new AppError(415, "unsupported_media_type", "send the body as JSON with Content-Type: application/json");
        }
        const auth = spec.auth === "none" || spec.auth === "billing" ? (undefined as unknown as Auth) : await authenticate(ctx, req, spec.auth);
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
