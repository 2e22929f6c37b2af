import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Router } from "express";
import swaggerUi from "swagger-ui-express";
import type { Ctx } from "./context";
import { errorMiddleware, notFoundRoute } from "./errors";
import { allClientsLimit, perClientLimit } from "./http/rateLimits";
import { authenticateBeforeBody } from "./http/auth";
import { jsonBody, JSON_MEDIA_TYPES } from "../protocol/jsonBody";
import { newRegistry, openApiDocument } from "./openapi";
import { configRoutes, versionRoutes } from "./routes/config";
import { accountRoutes } from "./routes/accounts";
import { usageKeyRoutes } from "./routes/usageKeys";
import { usageKeyByHashRoutes } from "./routes/usageKeysByHash";
import { currentKeyRoutes } from "./routes/currentKey";
import { groupRoutes } from "./routes/groups";
import { walletRoutes } from "./routes/wallets";
import { actionRoutes } from "./routes/actions";
import { runRoutes } from "./routes/run";
import type { Routes } from "./http/route";
import { runHistoryRoutes } from "./routes/runHistory";
import { auditRoutes } from "./routes/audit";
import { actionCodeRoutes } from "./routes/actionCode";
import { chainSecuredRoutes } from "./routes/chainSecured";
import { identityRoutes } from "./routes/identity";
import { identityPasskeyRoutes } from "./routes/identityPasskey";
import { identityLinkRoutes } from "./routes/identityLinks";
import { billingRoutes, webhookRawBody, WEBHOOK_PATH } from "./routes/billing";
import { attestationRoutes } from "../attestation/routes";
import { dashboardRoutes } from "./dashboard";
import { healthRoute } from "./health";
import { headerAuthCors, inSequence, requestContext } from "../protocol/http";

/** A get_action_ipfs_id body over this (or of unknown length) counts against the large-body limit too. */
const LARGE_CID_BODY = 1024 * 1024;

/**
 * Registers every `/core/v1` endpoint on `router` and returns the OpenAPI document they make (the
 * source of the typed client: scripts/gen-client.ts).
 */
export function apiRoutes(router: Router, ctx: Ctx, runs: Routes = mounted(router)) {
  const registry = newRegistry();
  configRoutes(router, registry, ctx);
  versionRoutes(router, registry, ctx);
  accountRoutes(router, registry, ctx);
  usageKeyRoutes(router, registry, ctx);
  usageKeyByHashRoutes(router, registry, ctx);
  currentKeyRoutes(router, registry, ctx);
  groupRoutes(router, registry, ctx);
  walletRoutes(router, registry, ctx);
  actionRoutes(router, registry, ctx);
  runRoutes(runs, registry, ctx);
  runHistoryRoutes(router, registry, ctx);
  auditRoutes(router, registry, ctx);
  actionCodeRoutes(router, registry, ctx);
  chainSecuredRoutes(router, registry, ctx);
  identityRoutes(router, registry, ctx);
  identityPasskeyRoutes(router, registry, ctx);
  identityLinkRoutes(router, registry, ctx);
  billingRoutes(router, registry, ctx);
  return openApiDocument(registry);
}

/** A router of its own, mounted on `router` at this point. */
function mounted(router: Router): Router {
  const own = express.Router();
  router.use(own);
  return own;
}

/**
 * The routes that carry most of the traffic (runs, CIDs), registered at `prefix` + their path: POST
 * only, each behind `common` (what every request passes: metrics, ids, CORS, the drain) and the
 * middleware `before` names for its path (a path it does not name is an error: its body would never
 * be read). `dispatch` is one layer, first in the app: a POST to one of them goes straight through
 * its chain, without express's router matching the app's other layers and a Route of its own
 * (each layer a path match, a params object and closures, for every request). It matches as express
 * does for a route: the path (not the query) case-insensitively, one trailing slash allowed. Errors
 * go to `failed` (the app's error middleware); a chain that ends without an answer, to `notFound`.
 */
function hotRoutes(
  prefix: string,
  common: RequestHandler[],
  before: ReadonlyMap<string, RequestHandler>,
  failed: ErrorRequestHandler,
  notFound: RequestHandler,
): { routes: Routes; dispatch: RequestHandler; paths: () => string[] } {
  const chains = new Map<string, { chain: RequestHandler; route: { path: string } }>();
  const routes: Routes = {
    post: (path, handler) => {
      const first = before.get(path);
      if (!first) throw new Error(`POST ${prefix}${path}: no middleware is set for this route in createApp`);
      chains.set((prefix + path).toLowerCase(), { chain: inSequence(...common, first, handler), route: { path: prefix + path } });
    },
    get: (path) => {
      throw new Error(`GET ${prefix}${path}: the hot routes take POST only`);
    },
  };
  const answered = () => undefined; // the error middleware answers every error itself
  const dispatch: RequestHandler = (req, res, next) => {
    if (req.method !== "POST") return next();
    const path = req.path;
    const hot = chains.get((path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path).toLowerCase());
    if (!hot) return next();
    req.route = hot.route; // its template, for the metrics and the request's log line (routeLabel)
    const end = (err?: unknown) => (err ? failed(err, req, res, answered) : notFound(req, res, end));
    hot.chain(req, res, end);
  };
  return { routes, dispatch, paths: () => [...chains.values()].map((c) => c.route.path) };
}

/** The paths of the app's hot routes (POST only), which express's router does not list: they are dispatched ahead of it. */
const hotPaths = new WeakMap<Express, () => string[]>();
export const hotRoutePaths = (app: Express): string[] => hotPaths.get(app)?.() ?? [];

/** The relayer's HTTP app: `/core/v1/...`, its OpenAPI description and explorer. */
export function createApp(ctx: Ctx): Express {
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag"); // no conditional requests on an API: hashing every answer is work for nothing
  app.set("trust proxy", ctx.config.trustProxy); // who may name the client in X-Forwarded-For: nobody unless VESTA_TRUST_PROXY says
  const maxDepth = ctx.config.maxJsonDepth;
  // Action code may be large (up to the code limit): a larger body limit on the routes that carry it,
  // read only once the key is known (a bad key costs no parse) or, for the unauthenticated CID
  // route, within its per-client rate limits (each call hashes up to the code limit for nobody).
  const { maxCodeBytes, maxParamsBytes } = ctx.config.limits;
  // Every body parser takes the JSON types route() accepts: a route whose parser skipped its body would see none.
  // Code routes: the key is authenticated before the body is read (a bad key costs no parse).
  const codeRoute = inSequence(authenticateBeforeBody(ctx), ...jsonBody({ limit: maxCodeBytes + maxParamsBytes + 64 * 1024, maxDepth, anyValue: true, type: JSON_MEDIA_TYPES }));
  // The unauthenticated CID routes: their per-client rate limits before the body is read.
  const largeBody = (req: Request) => Number(req.get("content-length") ?? Infinity) > LARGE_CID_BODY;
  const cidRoute = inSequence(
    perClientLimit(ctx.config.cidRateLimitPerMinute, "CID computations"),
    perClientLimit(ctx.config.cidLargeRateLimitPerMinute, "CID computations of code over 1 MiB", (req) => !largeBody(req)),
    allClientsLimit(ctx.config.cidLargeTotalPerMinute, "CID computations of code over 1 MiB", (req) => !largeBody(req)),
    ...jsonBody({ limit: maxCodeBytes + 64 * 1024, maxDepth, anyValue: true, type: JSON_MEDIA_TYPES }),
  );

  // Requests by route template and status, latencies; then X-Request-Id, X-Correlation-Id and the
  // request's logger, on every answer. (inSequence: the layers every request passes as one.)
  const everyRequest = inSequence(ctx.metrics.middleware(), requestContext(ctx.logger, ["/core/v1"]));
  const drain = ctx.drain.middleware(); // once stopping: 503 shutting_down for new requests
  const failed = errorMiddleware(ctx.logger);
  // The run and CID routes carry most of the traffic: one layer ahead of all others sends them
  // through the same middleware as every request (hotRoutes), then each through its own.
  const hot = hotRoutes(
    "/core/v1",
    [everyRequest, headerAuthCors, drain],
    new Map([
      ["/lit_action", codeRoute],
      ["/run_action", codeRoute],
      ["/check_execute_permission", codeRoute],
      ["/get_action_ipfs_id", cidRoute],
      ["/get_lit_action_ipfs_id", cidRoute],
    ]),
    failed,
    notFoundRoute,
  );
  app.use(hot.dispatch);
  hotPaths.set(app, hot.paths);
  app.use(everyRequest);
  // Header-authenticated routes (no cookie anywhere in the relayer): any origin may call them, as Chipotle allows.
  app.use(["/core/v1", "/health", "/ready", "/openapi.json", "/dstack/v1", "/info", "/attestation", "/evidences"], headerAuthCors);
  healthRoute(app, ctx); // /health and /ready, before the drain: a stopping relayer still tells it is stopping
  ctx.metrics.route(app, ctx.config.metricsToken); // /metrics, bearer token (VESTA_METRICS_TOKEN)
  app.use(drain);

  const v1 = express.Router();
  // Unauthenticated reads of up to the code limit each: per client, before the store is read.
  v1.use("/get_action_code", perClientLimit(ctx.config.codeReadRateLimitPerMinute, "action code reads"));
  // Each audit page costs the chain's node up to 50 log queries and a block and a transaction read per entry.
  v1.use("/list_audit_events", perClientLimit(ctx.config.auditRateLimitPerMinute, "audit log pages"), allClientsLimit(ctx.config.auditTotalRateLimitPerMinute, "audit log pages"));
  v1.use(WEBHOOK_PATH, webhookRawBody(ctx)); // Stripe signs the raw bytes: parsed before (and instead of) JSON
  v1.use(jsonBody({ limit: ctx.config.bodyLimit, maxDepth, anyValue: true, type: JSON_MEDIA_TYPES }));
  // Unauthenticated calls that cost the service gas or key derivation share one per-client limit.
  v1.use(["/new_account", "/create_wallet_with_signature", "/add_usage_api_key_with_signature"], perClientLimit(ctx.config.newAccountRateLimitPerMinute, "account or wallet creations"));
  // Identity sign-in (each request a nonce, a mail, a token check or a code guess): one per-client budget.
  v1.use(["/identity/oidc", "/identity/email", "/identity/passkey", "/identity/link", "/identity/unlink"], perClientLimit(ctx.config.identity.ratePerMinute, "sign-in requests"));
  // Every call that makes the service check a signature (EIP-712, and ERC-1271 calls into a contract
  // the caller chose) shares another: a refused signature costs the caller a request of its budget.
  const signatures = perClientLimit(ctx.config.signatureRateLimitPerMinute, "signed requests");
  v1.use(["/create_wallet_with_signature", "/add_usage_api_key_with_signature", "/convert_to_chain_secured_account"], signatures);
  v1.use("/billing", (req, res, next) => (req.get("x-wallet-auth") ? signatures(req, res, next) : next()));

  const doc = apiRoutes(v1, ctx, hot.routes);
  v1.get("/openapi.json", (_req, res) => {
    res.json(doc);
  });
  v1.use("/swagger-ui", swaggerUi.serve, swaggerUi.setup(doc, { customSiteTitle: "Vesta core API" }));

  app.use("/core/v1", v1);
  app.get("/openapi.json", (_req, res) => res.redirect(308, "/core/v1/openapi.json")); // where Chipotle serves it too
  dashboardRoutes(app, ctx); // /dashboard/ (and / redirects there)
  attestationRoutes(app, ctx); // /info, /attestation (and /dstack/v1/...), /evidences/ at the base URL
  app.use(notFoundRoute);
  app.use(failed);
  return app;
}
