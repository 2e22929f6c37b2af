/** The triggers service's Prometheus metrics, on its service registry (protocol/ops/metrics.ts). */
import { Counter, Gauge, Histogram } from "prom-client";
import { LATENCY_BUCKETS, ServiceMetrics } from "../protocol/ops/metrics";

export class TriggersMetrics extends ServiceMetrics {
  /** Finished runs by trigger kind (webhook, schedule, chain_event) and outcome (success, failed). */
  readonly runs: Counter<"kind" | "outcome">;
  readonly runSeconds: Histogram<"kind">;
  /** When each poller last completed a pass (ms). */
  private readonly polledAt: Record<"schedule" | "chain", number> = { schedule: 0, chain: 0 };

  constructor() {
    super("vesta_triggers");
    const registers = [this.registry];
    this.runs = new Counter({ name: "vesta_triggers_runs_total", help: "Trigger runs finished, by trigger kind and outcome (success, failed)", labelNames: ["kind", "outcome"], registers });
    this.runSeconds = new Histogram({ name: "vesta_triggers_run_seconds", help: "Time from a run's claim to its end, retries included (seconds), by trigger kind", labelNames: ["kind"], buckets: LATENCY_BUCKETS, registers });
    const polledAt = this.polledAt;
    new Gauge({
      name: "vesta_triggers_poll_lag_seconds",
      help: "Seconds since the schedule and chain-event pollers last completed a pass",
      labelNames: ["poller"],
      registers,
      collect() {
        for (const [poller, at] of Object.entries(polledAt)) if (at) this.set({ poller }, (Date.now() - at) / 1000);
      },
    });
  }

  /** A poller completed a pass. */
  polled(poller: "schedule" | "chain"): void {
    this.polledAt[poller] = Date.now();
  }

  observeRun(kind: string, outcome: "success" | "failed", ms: number): void {
    this.runs.inc({ kind, outcome });
    this.runSeconds.observe({ kind }, ms / 1000);
  }
}
