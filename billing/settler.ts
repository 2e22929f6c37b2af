import type { Logger } from "pino";
import { applyOnce } from "./applyOnce";
import type { Ledger, Batch } from "./ledger";
import type { BalanceRemote } from "./types";

export type SettleReport = { batches: number; cents: number; failed: number };

/**
 * Settles the ledger's debits to the provider in batches: every debit not in a batch yet goes into
 * a new batch per customer (durably, before anything is sent), then each open batch becomes one
 * adjustment whose idempotency key is the batch id. A batch is marked settled only after the
 * provider answered; one that failed stays open and is retried, with the same key, at the next run
 * (by this process or, after a crash, by the next one: see applyOnce).
 */
export class Settler {
  private running?: Promise<SettleReport>;
  private timer?: NodeJS.Timeout;
  private tail: Promise<unknown> = Promise.resolve();
  /** When the oldest batch left open by the last settlement was made (ms), or undefined when none is open. */
  private oldestOpenAt?: number;

  constructor(
    private readonly ledger: Ledger,
    private readonly remote: BalanceRemote,
    private readonly logger: Pick<Logger, "warn" | "debug">,
    /** Called after a customer's batch settled (its cached credit changed). */
    private readonly onSettled: (customerId: string) => void,
  ) {}

  /** Settles everything pending now; concurrent calls share one run. */
  settle(): Promise<SettleReport> {
    this.running ??= this.serial(() => this.run()).finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Runs `fn` after every balance change queued before it (settlements, credits, re-reads), one at a
   * time, so the credit cached from the provider's answers follows the order the provider applied them.
   */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Settlement lag (seconds): the age of the oldest batch the last settlement left open, 0 when none was left. */
  lagSeconds(): number {
    return this.oldestOpenAt === undefined ? 0 : Math.max(0, (Date.now() - this.oldestOpenAt) / 1000);
  }

  /** Settles every `intervalMs` until `signal` aborts. */
  start(intervalMs: number, signal: AbortSignal): void {
    const tick = () => {
      if (signal.aborted) return;
      void this.settle().finally(() => {
        if (!signal.aborted) this.timer = setTimeout(tick, intervalMs);
      });
    };
    this.timer = setTimeout(tick, intervalMs);
    signal.addEventListener("abort", () => clearTimeout(this.timer), { once: true });
  }

  private async run(): Promise<SettleReport> {
    const report: SettleReport = { batches: 0, cents: 0, failed: 0 };
    let open: Batch[];
    try {
      await this.ledger.batchUnbatched();
      open = await this.ledger.claimBatches();
      if (open.length) await this.ledger.durable(); // the batches outlive a power loss before they are sent
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "billing: the ledger could not be read; settlement skipped");
      return { ...report, failed: 1 };
    }
    const settled = new Set<string>();
    for (const batch of open) {
      try {
        await this.settleBatch(batch);
        settled.add(batch.id);
        report.batches++;
        report.cents += batch.cents;
      } catch (err) {
        report.failed++;
        await this.ledger.unclaim(batch.id).catch(() => undefined); // else it waits for its lease to end
        this.logger.warn({ err: (err as Error).message, batch: batch.id, customer: batch.customerId }, "billing: settling a batch failed; it is retried at the next run");
      }
    }
    this.oldestOpenAt = open.reduce<number | undefined>((oldest, b) => (settled.has(b.id) || (oldest !== undefined && oldest <= b.createdAt) ? oldest : b.createdAt), undefined);
    if (report.batches) this.logger.debug(report, "billing: debits settled");
    return report;
  }

  private async settleBatch(batch: Batch): Promise<void> {
    const retry = batch.attempts > 0; // counted by the claim, before this send
    // In turn with every replica's credit reads and changes for this customer (Ledger.creditTurn).
    await this.ledger.creditTurn(batch.customerId, async (q) => {
      const adjustment = await applyOnce(this.remote, {
        customerId: batch.customerId,
        deltaCents: -batch.cents,
        key: batch.id,
        metadata: { description: `Vesta usage: ${batch.count} charge(s)`, vesta_debits: String(batch.count) },
        retry,
        since: batch.createdAt,
      });
      await this.ledger.settleBatch(batch, adjustment.id, adjustment.endingCreditCents, q);
    });
    this.onSettled(batch.customerId);
  }
}
