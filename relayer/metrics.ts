/**
 * The relayer's own Prometheus metrics, on the service registry (protocol/ops/metrics.ts). Events
 * on a request's path cost one counter increment or histogram observation; everything else (pool,
 * payers, billing, permission cache) is read from state the services already keep, at scrape time.
 * No label names an account, key or request: only outcomes (bounded code sets) and payer addresses
 * (the operator's own, a handful).
 */
import { Counter, Gauge, Histogram } from "prom-client";
import { LATENCY_BUCKETS, ServiceMetrics } from "../protocol/ops/metrics";
import { AppError } from "../protocol/errors";
import { RunRefused } from "../executor/errors";
import { ACCOUNT_CLASSES, accountClassOf } from "../billing/charges";
import type { Ctx } from "./context";

/** A bounded outcome label for an error: its catalogue code, else "error". */
export const outcomeOf = (err: unknown): string => (err instanceof AppError ? err.code : err instanceof RunRefused ? err.reason : "error");

const GAS_BUCKETS = [30_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 16_777_216];

export class RelayerMetrics extends ServiceMetrics {
  readonly runs: Counter<"outcome">;
  readonly runSeconds: Histogram<"outcome">;
  readonly queueWait: Histogram;
  readonly writes: Counter<"outcome">;
  readonly writeGas: Histogram<"outcome">;

  /** One finished run: its outcome and the time it ran. */
  observeRun(outcome: string, durationMs: number): void {
    this.runs.inc({ outcome });
    this.runSeconds.observe({ outcome }, durationMs / 1000);
  }

  /** One relayed write: its outcome and, once mined, the gas it used. */
  observeWrite(outcome: string, gasUsed?: bigint): void {
    this.writes.inc({ outcome });
    if (gasUsed !== undefined) this.writeGas.observe({ outcome }, Number(gasUsed));
  }

  constructor(ctx: () => Ctx) {
    super("vesta", ["/core/v1"]);
    const registers = [this.registry];
    this.runs = new Counter({ name: "vesta_action_runs_total", help: "Action runs (lit_action / run_action) by outcome: ok, action_failed, or the refusal code", labelNames: ["outcome"], registers });
    this.runSeconds = new Histogram({ name: "vesta_action_run_seconds", help: "Time an action ran in its sandbox (seconds), by outcome", labelNames: ["outcome"], buckets: LATENCY_BUCKETS, registers });
    this.queueWait = new Histogram({ name: "vesta_action_queue_wait_seconds", help: "Time an admitted run waited for a sandbox (seconds)", buckets: LATENCY_BUCKETS, registers });
    this.writes = new Counter({ name: "vesta_relayed_writes_total", help: "Relayed contract writes by outcome: ok, or the error code", labelNames: ["outcome"], registers });
    this.writeGas = new Histogram({ name: "vesta_relayed_write_gas", help: "Gas used by relayed writes that were mined, by outcome (ok, write_rejected)", labelNames: ["outcome"], buckets: GAS_BUCKETS, registers });
    const gauge = (name: string, help: string, read: (c: Ctx, g: Gauge<string>) => void, labelNames: string[] = []) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          const c = ctx();
          if (c) read(c, this);
        },
      });
    gauge("vesta_sandbox_processes", "Sandbox processes in the pool", (c, g) => g.set(c.executor.sandboxLoad().sandboxes));
    gauge("vesta_sandbox_busy", "Sandbox processes running an action now", (c, g) => g.set(c.executor.sandboxLoad().busy));
    gauge("vesta_sandbox_queue_depth", "Admitted runs waiting for a sandbox", (c, g) => g.set(c.executor.sandboxLoad().queued));
    gauge("vesta_sandbox_class_busy", "Sandbox processes running an action now, by account class (managed: API-mode accounts; wallet: ChainSecured accounts, billed to their admin wallet)", (c, g) => {
      for (const [cls, n] of Object.entries(c.executor.sandboxLoadBy(ACCOUNT_CLASSES, accountClassOf))) g.set({ account_class: cls }, n.busy);
    }, ["account_class"]);
    gauge("vesta_sandbox_class_queue_depth", "Admitted runs waiting for a sandbox, by account class", (c, g) => {
      for (const [cls, n] of Object.entries(c.executor.sandboxLoadBy(ACCOUNT_CLASSES, accountClassOf))) g.set({ account_class: cls }, n.queued);
    }, ["account_class"]);
    gauge("vesta_sandbox_queue_limit", "Most runs that may wait for a sandbox (VESTA_RUN_QUEUE_MAX)", (c, g) => g.set(c.executor.sandboxLoad().queueLimit));
    gauge("vesta_relay_queue_depth", "Relayed writes waiting for a payer wallet", (c, g) => g.set(c.payers.stats().waiting));
    gauge("vesta_payer_balance_wei", "Balance of each payer wallet at its last check (wei)", (c, g) => { for (const p of c.payers.health()) if (p.balance !== null) g.set({ payer: p.address }, Number(p.balance)); }, ["payer"]);
    gauge("vesta_payer_active", "1 when the payer wallet is in the pool, 0 when taken out (balance under VESTA_PAYER_MIN_BALANCE_WEI)", (c, g) => { for (const p of c.payers.health()) g.set({ payer: p.address }, p.active ? 1 : 0); }, ["payer"]);
    gauge("vesta_payer_pending_nonces", "Transactions of each payer sent and not mined yet, at its last check", (c, g) => { for (const p of c.payers.health()) g.set({ payer: p.address }, p.pending); }, ["payer"]);
    gauge("vesta_billing_settlement_lag_seconds", "Age of the oldest debit batch not settled with the payment provider (0 when all are)", (c, g) => g.set(c.billing ? c.billing.settler.lagSeconds() : 0));
    gauge("vesta_chain_poll_lag_seconds", "Seconds since the permission cache last followed the chain's events", (c, g) => g.set(c.executor.permissions.syncAgeSeconds()));
    const seen = new Map<string, number>(); // what was counted so far, per kind:result
    new Counter({
      name: "vesta_permission_cache_lookups_total",
      help: "Permission cache lookups by kind (key, decision, read) and result (hit, miss)",
      labelNames: ["kind", "result"],
      registers,
      collect() {
        const c = ctx();
        if (!c) return;
        for (const [kind, counts] of Object.entries(c.executor.permissions.cacheStats)) {
          for (const result of ["hit", "miss"] as const) {
            const now = counts[result];
            const before = seen.get(`${kind}:${result}`) ?? 0;
            if (now > before) this.inc({ kind, result }, now - before);
            seen.set(`${kind}:${result}`, now);
          }
        }
      },
    });
  }
}
