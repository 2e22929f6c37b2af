import fs from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import type { Logger } from "pino";
import { serviceLogger } from "../protocol/ops/logger";
import { notFound } from "../protocol/errors";
import { errorMiddleware, requestContext } from "../protocol/http";
import type { TriggersConfig } from "./config";
import type { Mailer, TriggersCtx } from "./context";
import { loadSecretKey } from "./crypto";
import { authRoutes, LINK_TTL_MS } from "./api/auth";
import { linkMailer } from "./mailer";
import { triggerRoutes } from "./api/triggers";
import { webhookRoutes } from "./api/webhook";
import { providersFor, scanChains } from "./kinds/chainEvent";
import { scanSchedules } from "./kinds/schedule";
import { startWorkers } from "./runner";
import { TriggersMetrics } from "./metrics";
import { Drain } from "../protocol/ops/drain";
import { DEFAULT_READY, liveRoute, readyRoute, type ReadyCheck } from "../protocol/ops/ready";
import { STALE_HEARTBEATS, TriggersStore } from "./store/store";
import type { Store } from "./store/types";

export type TriggersOptions = {
  logger?: Logger;
  now?: () => number;
  mailer?: Mailer;
  store?: Store;
  /** false: no scheduler/chain pollers (tests call `scanSchedules`/`scanChains`); workers still run. */
  pollers?: boolean;
  /** false: no run workers (runs stay queued, durably, until a process with workers takes them). */
  workers?: boolean;
};
export type RunningTriggers = { url: string; ctx: TriggersCtx; close: (opts?: { deadlineMs?: number }) => Promise<void> };

const SKILL = fs.readFileSync(path.join(__dirname, "SKILL.md"), "utf8");

function every(ms: number, signal: AbortSignal, fn: () => Promise<unknown>, logger: Logger): void {
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    await fn().catch((err) => logger.error({ err }, "poller failed"));
    if (!signal.aborted) timer = setTimeout(tick, ms);
  };
  signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  void tick();
}

/**
 * What GET /ready checks: `database` (the store answers), `core` (the core service answers its
 * /core/v1/version), and `chain:<name>` for each configured chain RPC (it answers a block number).
 */
function triggersReadyChecks(ctx: TriggersCtx): ReadyCheck[] {
  const chains = Object.entries(ctx.providers).map(([name, p]): ReadyCheck => ({ name: `chain:${name}`, probe: async () => (await p!.getBlockNumber()) >= 0 }));
  return [
    { name: "database", probe: async () => (await ctx.store.ping(), true) },
    { name: "core", probe: async () => (await fetch(`${ctx.config.coreUrl}/core/v1/version`, { signal: AbortSignal.timeout(DEFAULT_READY.timeoutMs) })).ok },
    ...chains,
  ];
}

/** Opens the store, fails interrupted runs, starts workers, pollers and the HTTP API. `close` stops all of it. */
export async function startTriggers(config: TriggersConfig, opts: TriggersOptions = {}): Promise<RunningTriggers> {
  const logger = opts.logger ?? serviceLogger(config.logLevel);
  const store = opts.store ?? (await TriggersStore.open({ databaseUrl: config.databaseUrl, sqliteFile: path.join(config.dataDir, "triggers.sqlite") }, config.heartbeatMs));
  const abort = new AbortController();
  let url = "";
  const ctx: TriggersCtx = {
    config,
    logger,
    store,
    signal: abort.signal,
    secretKey: loadSecretKey(config.secretKeyHex, config.secretFile),
    now: opts.now ?? Date.now,
    mailer: opts.mailer ?? linkMailer(config, LINK_TTL_MS / 60_000, logger),
    providers: providersFor(config.rpc, config.rpcTimeoutMs),
    wake: () => {},
    publicUrl: () => config.publicUrl ?? url,
    metrics: new TriggersMetrics(),
  };
  const drain = new Drain();
  const interrupted = await store.failInterrupted(ctx.now());
  if (interrupted) logger.warn({ interrupted }, "failed runs left in flight by the previous process");
  const workers = opts.workers === false ? { wake: () => {}, idle: async () => {}, drain: async () => {} } : startWorkers(ctx);
  ctx.wake = workers.wake;
  // Several processes share a PostgreSQL queue: runs of a process that stopped heartbeating are failed by the others.
  if (store.shared) every(STALE_HEARTBEATS * config.heartbeatMs, abort.signal, () => store.failInterrupted(ctx.now()), logger);
  if (opts.pollers !== false) {
    every(config.schedulerScanMs, abort.signal, () => scanSchedules(ctx).then(() => ctx.metrics.polled("schedule")), logger);
    every(config.chainPollMs, abort.signal, () => scanChains(ctx).then(() => ctx.metrics.polled("chain")), logger);
  }

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy); // who may name the client in X-Forwarded-For: nobody unless TRIGGERS_TRUST_PROXY says
  app.use(ctx.metrics.middleware()); // requests by route template and status, latencies
  app.use(requestContext(logger)); // X-Request-Id, X-Correlation-Id and the request's logger, on every answer
  app.get("/health", (_req, res) => void res.set("cache-control", "no-store").json({ ok: true })); // the process answers
  liveRoute(app); // the same, in the relayer's shape: GET /live, the image's HEALTHCHECK
  readyRoute(app, triggersReadyChecks(ctx), { ...DEFAULT_READY, stopping: () => drain.stopping });
  ctx.metrics.route(app, config.metricsToken); // /metrics, bearer token (TRIGGERS_METRICS_TOKEN)
  app.use(drain.middleware()); // once stopping: 503 shutting_down for new requests
  app.get("/SKILL.md", (_req, res) => void res.type("text/markdown").send(SKILL.replaceAll("{triggers_url}", ctx.publicUrl())));
  app.get("/", (_req, res) => void res.type("text/plain").send(`Vesta triggers service. Agent guide: ${ctx.publicUrl()}/SKILL.md\n`));
  app.use(webhookRoutes(ctx));
  app.use(authRoutes(ctx));
  app.use(triggerRoutes(ctx));
  app.use((req, _res, next) => next(notFound("not_found", `no endpoint ${req.method} ${req.path}; see /SKILL.md`)));
  app.use(errorMiddleware(logger));

  const server: Server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host);
    s.once("listening", () => resolve(s));
    s.once("error", (err: NodeJS.ErrnoException) =>
      reject(err.code === "EADDRINUSE" ? new Error(`port ${config.port} is in use: set TRIGGERS_PORT to a free port`) : err),
    );
  }).catch(async (err) => {
    abort.abort();
    await workers.idle();
    for (const p of Object.values(ctx.providers)) p?.destroy();
    await store.close();
    throw err;
  });
  url = `http://${config.host}:${(server.address() as AddressInfo).port}`;
  logger.info({ url, core: config.coreUrl }, "triggers service listening");
  return {
    url,
    ctx,
    close: async ({ deadlineMs = 0 } = {}) => {
      if (abort.signal.aborted) return;
      if (deadlineMs > 0) {
        // No new requests or claims; the runs under way get until the deadline (then they stay `running`
        // and are failed as interrupted by the next start, or by another process sharing the queue).
        const started = Date.now();
        const drained = Promise.all([drain.stop(server, deadlineMs), workers.drain()]);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, deadlineMs)))]);
        clearTimeout(timer);
        logger.info({ ms: Date.now() - started, ...drain.inFlight() }, "triggers service stopping");
      }
      abort.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await workers.idle();
      for (const p of Object.values(ctx.providers)) p?.destroy();
      await store.close();
    },
  };
}
