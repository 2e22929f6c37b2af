/**
 * Prometheus metrics both services share (prom-client): one registry per running service (several
 * run in one test process), HTTP requests by route template and status with latencies, and the
 * `/metrics` route behind a bearer token. Service-specific metrics register on the same registry
 * (relayer/metrics.ts, triggers/metrics.ts); gauges that would cost work are read at scrape time
 * (`collect`), never on a request's path.
 */
import crypto from "node:crypto";
import type { Express, Request, RequestHandler } from "express";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { AppError, errorBodyOf, notFound } from "../errors";

/** Latency buckets (seconds): from a cached read to a long action run. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** The route label of a request no route matched (unknown paths, static files, refusals by a middleware). */
export const OTHER_ROUTE = "other";
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);

/**
 * A request's route label: the template of the route that matched, under the router mount (one
 * of `mounts`, fixed strings) its path starts with (`/core/v1/usage_keys/:hash`, never the raw
 * path), or OTHER_ROUTE when no route matched. Labels are bounded by the routes the code registers,
 * whatever paths callers send. (The mount is found from the path because express restores
 * req.baseUrl when an error leaves a router.)
 */
export function routeLabel(req: Request, mounts: readonly string[] = []): string {
  const template = req.route?.path;
  if (typeof template !== "string") return OTHER_ROUTE;
  const url = req.originalUrl;
  const mount = mounts.find((m) => url.startsWith(m) && (url.length === m.length || url[m.length] === "/"));
  // A route registered on the app with its mount in its path (the relayer's run routes) has it already.
  return mount === undefined || template.startsWith(`${mount}/`) ? template : `${mount}${template}`;
}

/** The status label: a real HTTP status (bounded), "other" for anything else. */
const statusLabel = (status: number): string => (status >= 100 && status < 600 ? String(status) : "other");

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"route" | "method" | "status">;
  private readonly latency: Histogram<"route" | "method">;

  /** `mounts`: the paths routers are mounted at (fixed strings, no parameters). */
  constructor(
    readonly prefix: "vesta" | "vesta_triggers",
    private readonly mounts: readonly string[] = [],
  ) {
    collectDefaultMetrics({ register: this.registry, prefix: `${prefix}_process_` });
    this.requests = new Counter({ name: `${prefix}_http_requests_total`, help: "HTTP requests answered, by route template, method and status", labelNames: ["route", "method", "status"], registers: [this.registry] });
    this.latency = new Histogram({ name: `${prefix}_http_request_duration_seconds`, help: "HTTP request latency (seconds), by route template and method", labelNames: ["route", "method"], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  }

  /** Middleware (first in the chain): counts each request and observes its latency when the answer ends. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const started = process.hrtime.bigint();
      res.once("finish", () => {
        const route = routeLabel(req, this.mounts);
        const method = METHODS.has(req.method) ? req.method : "other";
        this.requests.inc({ route, method, status: statusLabel(res.statusCode) });
        this.latency.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
      });
      next();
    };
  }

  /**
   * GET /metrics: the Prometheus text format, only for a caller presenting `Authorization: Bearer
   * <token>` (compared in constant time); 404 when no token is configured (metrics not exposed),
   * 401 for a missing or wrong token. Nothing in the registry names an account, key or secret.
   */
  route(app: Express, token: string | undefined): void {
    const expected = token === undefined ? undefined : crypto.createHash("sha256").update(token).digest();
    app.get("/metrics", async (req, res) => {
      res.set("cache-control", "no-store");
      if (!expected) return void res.status(404).json(errorBodyOf(notFound("not_found", "metrics are not exposed on this node: set its metrics token (README, Operating Vesta)")));
      const given = /^Bearer (.+)$/.exec(req.get("authorization") ?? "")?.[1];
      const ok = given !== undefined && crypto.timingSafeEqual(crypto.createHash("sha256").update(given).digest(), expected);
      if (!ok) return void res.status(401).set("www-authenticate", 'Bearer realm="metrics"').json(errorBodyOf(new AppError(401, "invalid_metrics_token", "GET /metrics needs Authorization: Bearer <metrics token>")));
      res.type(this.registry.contentType).send(await this.registry.metrics());
    });
  }
}
