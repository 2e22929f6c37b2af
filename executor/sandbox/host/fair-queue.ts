/**
 * The sandbox's fair share: runs wait in one FIFO per account, accounts take turns (round robin),
 * and an account (and each of its keys) may hold at most its share of the workers at a time. The
 * queue is bounded per account and in total; a full queue refuses at once, so one account can
 * neither starve the others nor pile up work.
 */
import type { RunOwner } from "../types";

export type FairShare = {
  /** Runs of one account at a time (default: all workers but one, at least 1). */
  perAccount: number;
  /** Runs of one key at a time (default: perAccount). */
  perKey: number;
  /** Runs of one account waiting for a worker (default 64). */
  queuePerAccount: number;
  /** Runs waiting in all (default 1024). */
  queueTotal: number;
};

export const defaultFairShare = (workers: number, over: Partial<FairShare> = {}): FairShare => {
  const perAccount = over.perAccount ?? Math.max(1, workers - 1);
  return { perAccount, perKey: over.perKey ?? perAccount, queuePerAccount: over.queuePerAccount ?? 64, queueTotal: over.queueTotal ?? 1024 };
};

type Owned = { owner: RunOwner };

export class FairQueue<J extends Owned> {
  private readonly waiting = new Map<string, J[]>();
  /** Accounts with waiting runs, in turn order. */
  private turns: string[] = [];
  private readonly runningAccount = new Map<string, number>();
  private readonly runningKey = new Map<string, number>();
  private count = 0;

  constructor(readonly share: FairShare) {}

  get length(): number {
    return this.count;
  }

  queuedFor(account: string): number {
    return this.waiting.get(account)?.length ?? 0;
  }

  runningFor(account: string): number {
    return this.runningAccount.get(account) ?? 0;
  }

  /** Queues `job`, or answers which bound refused it. */
  offer(job: J): "ok" | "account" | "total" {
    if (this.count >= this.share.queueTotal) return "total";
    if (this.queuedFor(job.owner.account) >= this.share.queuePerAccount) return "account";
    this.enqueue(job, false);
    return "ok";
  }

  /** Puts back a job that was taken but never started (its worker was retired), ahead of its account's queue. */
  requeue(job: J): void {
    this.finished(job);
    this.enqueue(job, true);
  }

  /** The next job whose account and key are under their share, marked running; undefined when none may start. */
  take(): J | undefined {
    for (let t = 0; t < this.turns.length; t++) {
      const account = this.turns[t];
      if (this.runningFor(account) >= this.share.perAccount) continue;
      const queue = this.waiting.get(account)!;
      const i = queue.findIndex((j) => (this.runningKey.get(keyOf(j.owner)) ?? 0) < this.share.perKey);
      if (i < 0) continue;
      const [job] = queue.splice(i, 1);
      this.count--;
      this.turns.splice(t, 1);
      if (queue.length > 0) this.turns.push(account); // its next run waits for the others' turns
      else this.waiting.delete(account);
      this.bump(job.owner, 1);
      return job;
    }
    return undefined;
  }

  /** A taken job ended (or was put back): its account and key hold one run less. */
  finished(job: J): void {
    this.bump(job.owner, -1);
  }

  /** Removes and answers every waiting job. */
  drain(): J[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    this.turns = [];
    this.count = 0;
    return all;
  }

  private enqueue(job: J, front: boolean): void {
    const account = job.owner.account;
    let queue = this.waiting.get(account);
    if (!queue) {
      this.waiting.set(account, (queue = []));
      if (front) this.turns.unshift(account);
      else this.turns.push(account);
    }
    if (front) queue.unshift(job);
    else queue.push(job);
    this.count++;
  }

  private bump(owner: RunOwner, by: number): void {
    for (const [map, k] of [
      [this.runningAccount, owner.account],
      [this.runningKey, keyOf(owner)],
    ] as const) {
      const n = (map.get(k) ?? 0) + by;
      if (n > 0) map.set(k, n);
      else map.delete(k);
    }
  }
}

const keyOf = (o: RunOwner) => `${o.account}/${o.key}`;
