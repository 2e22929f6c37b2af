/**
 * GET /ready, for load balancers and orchestrators (both services): 200 `{ready: true, failing: []}`
 * when every named check passes, else 503 `{ready: false, failing: [names]}`; the names are the
 * only detail an unauthenticated caller learns. Checks run at most once per `cacheMs` whatever the
 * request rate (concurrent callers share one probe), each bounded by `timeoutMs`, so the route
 * costs the service at most one round of probes per period.
 */
import type { Express } from "express";

/** One readiness check: resolves true when it holds (false, a throw or a timeout: failing). */
export type ReadyCheck = { name: string; probe: () => Promise<boolean> };
export type ReadyOptions = { cacheMs: number; timeoutMs: number; stopping: () => boolean };

export const DEFAULT_READY = { cacheMs: 5_000, timeoutMs: 2_000 };

function bounded(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const run = Promise.resolve()
    .then(probe)
    .then((ok) => ok === true, () => false);
  return Promise.race([run, timeout]).finally(() => clearTimeout(timer));
}

/** The names of the failing checks, probed at most once per `cacheMs` (shared by concurrent callers). */
export function readiness(checks: ReadyCheck[], opts: Omit<ReadyOptions, "stopping">): () => Promise<string[]> {
  let last: { at: number; failing: Promise<string[]> } | undefined;
  return () => {
    if (last && Date.now() - last.at < opts.cacheMs) return last.failing;
    const failing = Promise.all(checks.map(async (c) => ((await bounded(c.probe, opts.timeoutMs)) ? undefined : c.name))).then((names) => names.filter((n): n is string => n !== undefined));
    last = { at: Date.now(), failing };
    return failing;
  };
}

/**
 * GET /live (both services): 200 `{alive: true}` whenever the process answers HTTP, whatever its
 * dependencies (chain, database, core service) or its load. The liveness probe of orchestrators and
 * of the image's HEALTHCHECK: a probe that failed with the chain or under load would restart
 * healthy processes (and cut their runs short) exactly when the service is strained.
 */
export function liveRoute(app: Express): void {
  app.get("/live", (_req, res) => void res.set("cache-control", "no-store").json({ alive: true }));
}

/** Registers GET /ready on `app`; a stopping service answers 503 with `shutting_down` at once. */
export function readyRoute(app: Express, checks: ReadyCheck[], opts: ReadyOptions): void {
  const failingNow = readiness(checks, opts);
  app.get("/ready", async (_req, res) => {
    const failing = opts.stopping() ? ["shutting_down"] : await failingNow();
    res.status(failing.length ? 503 : 200).set("cache-control", "no-store").json({ ready: failing.length === 0, failing });
  });
}
