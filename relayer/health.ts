import type { Express } from "express";
import type { Ctx } from "./context";
import { DEFAULT_READY, liveRoute, readyRoute, type ReadyCheck } from "../protocol/ops/ready";

/** A permission cache that has not followed the chain's events for this many polls (and at least 30 s) is not synced. */
const SYNC_POLLS = 20;
/** The derivation path the readiness check asks the key provider for (never used as a key). */
export const READY_KEY_PATH = "readiness-probe/v1";

/** How long one probe of the chain is reused (an unauthenticated route never costs more than one RPC call per period). */
const CHAIN_PROBE_MS = 5_000;
/** Longest wait for the chain's answer. */
const CHAIN_TIMEOUT_MS = 2_000;

/** The chain's reachability, probed at most once per CHAIN_PROBE_MS (concurrent callers share the probe). */
function chainProbe(ctx: Ctx): () => Promise<boolean> {
  let last: { at: number; ok: Promise<boolean> } | undefined;
  return () => {
    if (last && Date.now() - last.at < CHAIN_PROBE_MS) return last.ok;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHAIN_TIMEOUT_MS)));
    const ok = Promise.race([ctx.chain.provider.getBlockNumber().then(() => true, () => false), timeout]).finally(() => clearTimeout(timer));
    last = { at: Date.now(), ok };
    return ok;
  };
}

/**
 * GET /health (no authentication, for load balancers; Chipotle's route, fields and rule): 200 when
 * the relayer can serve actions, 503 when it cannot. As in Chipotle, only `lit_actions_reachable`
 * (the sandbox runs actions) and `cpu_available` (its queue has room) decide the status; the other
 * fields are informational: `billing_keys_present` (card payments are configured),
 * `account_event_listener_lag_seconds` (seconds since the permission cache last followed the
 * chain's events; null before its first poll) and `chain_reachable` (the RPC answered within 2 s,
 * probed at most every 5 s). A chain outage shows in /ready (`chain`), which takes the replica out
 * of a load balancer's pool, and never in /live, which an orchestrator restarts on.
 */
export function healthRoute(app: Express, ctx: Ctx) {
  const chainReachable = chainProbe(ctx);
  app.get("/health", async (_req, res) => {
    const load = ctx.executor.sandboxLoad();
    const lag = ctx.executor.permissions.syncAgeSeconds();
    const body = {
      lit_actions_reachable: !ctx.signal.aborted,
      cpu_available: load.queued < load.queueLimit,
      billing_keys_present: ctx.billing?.payments !== undefined,
      account_event_listener_lag_seconds: Number.isFinite(lag) ? Math.floor(lag) : null,
      chain_reachable: await chainReachable(),
    };
    const healthy = body.lit_actions_reachable && body.cpu_available;
    res.status(healthy ? 200 : 503).set("cache-control", "no-store").json(body);
  });
  liveRoute(app);
  readyRoute(app, readyChecks(ctx), { ...DEFAULT_READY, stopping: () => ctx.drain.stopping });
}

/**
 * What GET /ready checks (names are all a caller learns): `chain` (the RPC answers and is not
 * syncing), `chain_sync` (the permission cache followed the chain's events recently), `database`
 * (the action code store answers), `payers` (at least one payer wallet is above
 * VESTA_PAYER_MIN_BALANCE_WEI), `keys` (the key provider derives).
 */
export function readyChecks(ctx: Ctx): ReadyCheck[] {
  const maxSyncAge = Math.max(30, (SYNC_POLLS * ctx.config.permissionPollMs) / 1000);
  return [
    { name: "chain", probe: async () => (await ctx.chain.provider.getBlockNumber()) >= 0 && (await ctx.chain.provider.send("eth_syncing", [])) === false },
    { name: "chain_sync", probe: async () => ctx.executor.permissions.syncAgeSeconds() <= maxSyncAge },
    { name: "database", probe: async () => (await ctx.executor.codes.ping(), true) },
    { name: "payers", probe: async () => ctx.payers.health().some((p) => p.active) },
    { name: "keys", probe: async () => (await ctx.keys.deriveSecret(READY_KEY_PATH)).length === 32 },
  ];
}
