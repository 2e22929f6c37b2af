import type { JsonRpcProvider } from "ethers";

type Waiter = { after: number; wake: () => void };

/**
 * The chain's head, polled for every payer at once: while any write waits for its receipt, one
 * `eth_blockNumber` every `pollMs` (not one receipt request per waiting payer per poll), and each
 * waiter is woken when a block above the one it had seen comes, to read its receipt once. The RPC
 * cost of waiting is the same with 1 payer or 20, so the interval can be short next to the block time.
 */
export class BlockWatch {
  /** The highest block number seen (-1 before the first poll). */
  latest = -1;
  private readonly waiters = new Set<Waiter>();
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(
    private readonly provider: Pick<JsonRpcProvider, "getBlockNumber">,
    private readonly pollMs: number,
  ) {}

  /**
   * Resolves once a block above `after` is seen, or after `maxMs` at most, or at the next poll when
   * the node did not answer it (the caller then reads its receipt as if a block had come).
   */
  next(after: number, maxMs: number): Promise<void> {
    if (this.latest > after) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timeout = setTimeout(() => w.wake(), Math.max(0, maxMs));
      const w: Waiter = {
        after,
        wake: () => {
          clearTimeout(timeout);
          this.waiters.delete(w);
          resolve();
        },
      };
      this.waiters.add(w);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.timer || this.polling || this.waiters.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    let failed = false;
    try {
      this.latest = Math.max(this.latest, await this.provider.getBlockNumber());
    } catch {
      failed = true; // every waiter reads its receipt itself, as without the watch
    } finally {
      this.polling = false;
    }
    for (const w of [...this.waiters]) if (failed || this.latest > w.after) w.wake();
    this.schedule();
  }
}
