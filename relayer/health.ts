import type { Express } from "express";
import type { Ctx } from "./context";

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
 * GET /health (no authentication, for load balancers): 200 when the relayer can serve, 503 when it
 * cannot, with Chipotle's fields (`lit_actions_reachable`: the sandbox runs actions; `cpu_available`:
 * its queue has room; `billing_keys_present`: card payments are configured, informational) and
 * `chain_reachable` (the RPC answered within 2 s, probed at most every 5 s).
 */
export function healthRoute(app: Express, ctx: Ctx) {
  const chainReachable = chainProbe(ctx);
  app.get("/health", async (_req, res) => {
    const load = ctx.executor.sandboxLoad();
    const body = {
      lit_actions_reachable: !ctx.signal.aborted,
      cpu_available: load.queued < load.queueLimit,
      billing_keys_present: ctx.billing?.payments !== undefined,
      chain_reachable: await chainReachable(),
    };
    const healthy = body.lit_actions_reachable && body.cpu_available && body.chain_reachable;
    res.status(healthy ? 200 : 503).set("cache-control", "no-store").json(body);
  });
}
