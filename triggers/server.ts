import fs from "node:fs";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import pino, { type Logger } from "pino";
import { notFound } from "../protocol/errors";
import { errorMiddleware, requestContext } from "../protocol/http";
import type { TriggersConfig } from "./config";
import type { Mailer, TriggersCtx } from "./context";
import { loadSecretKey } from "./crypto";
import { authRoutes } from "./api/auth";
import { triggerRoutes } from "./api/triggers";
import { webhookRoutes } from "./api/webhook";
import { providersFor, scanChains } from "./kinds/chainEvent";
import { scanSchedules } from "./kinds/schedule";
import { startWorkers } from "./runner";
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
export type RunningTriggers = { url: string; ctx: TriggersCtx; close: () => Promise<void> };

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

/** Opens the store, fails interrupted runs, starts workers, pollers and the HTTP API. `close` stops all of it. */
export async function startTriggers(config: TriggersConfig, opts: TriggersOptions = {}): Promise<RunningTriggers> {
  const logger = opts.logger ?? pino({ level: config.logLevel });
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
    mailer: opts.mailer ?? ((email, link) => logger.info({ email, link }, `sign-in link for ${email}: ${link}`)),
    providers: providersFor(config.rpc, config.rpcTimeoutMs),
    wake: () => {},
    publicUrl: () => config.publicUrl ?? url,
  };
  const interrupted = await store.failInterrupted(ctx.now());
  if (interrupted) logger.warn({ interrupted }, "failed runs left in flight by the previous process");
  const workers = opts.workers === false ? { wake: () => {}, idle: async () => {} } : startWorkers(ctx);
  ctx.wake = workers.wake;
  // Several processes share a PostgreSQL queue: runs of a process that stopped heartbeating are failed by the others.
  if (store.shared) every(STALE_HEARTBEATS * config.heartbeatMs, abort.signal, () => store.failInterrupted(ctx.now()), logger);
  if (opts.pollers !== false) {
    every(config.schedulerScanMs, abort.signal, () => scanSchedules(ctx), logger);
    every(config.chainPollMs, abort.signal, () => scanChains(ctx), logger);
  }

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy); // who may name the client in X-Forwarded-For: nobody unless TRIGGERS_TRUST_PROXY says
  app.use(requestContext(logger)); // X-Request-Id, X-Correlation-Id and the request's logger, on every answer
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
    close: async () => {
      if (abort.signal.aborted) return;
      abort.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await workers.idle();
      for (const p of Object.values(ctx.providers)) p?.destroy();
      await store.close();
    },
  };
}
