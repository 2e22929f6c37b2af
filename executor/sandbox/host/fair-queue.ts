/**
 * The sandbox's fair share, by who pays. Runs wait in one FIFO per account, grouped by payer (the
 * billing customer: a managed account pays for itself, a wallet pays for every account it holds);
 * payers take turns (round robin), and within a payer its accounts take turns, so a payer splits one
 * share among its accounts: five accounts of one payer get what one account of another payer gets.
 * A payer, each account and each key may hold at most their share of the sandboxes at a time. A
 * run holds its place in the queue (`hold`) before anything is done for it, so a full queue refuses
 * at once and no code is read or hashed for a run that cannot wait; places are bounded per account,
 * per payer and in total.
 */
import type { RunOwner } from "../types";

export type FairShare = {
  /** Runs of one payer's accounts at a time (default: all workers but one, at least 1). */
  perPayer: number;
  /** Runs of one account at a time (default: perPayer). */
  perAccount: number;
  /** Runs of one key at a time (default: perAccount). */
  perKey: number;
  /** Runs of one payer's accounts waiting (or about to) for a worker (default 64). */
  queuePerPayer: number;
  /** Runs of one account waiting for a worker (default: queuePerPayer). */
  queuePerAccount: number;
  /** Runs waiting in all (default 1024). */
  queueTotal: number;
};

export const defaultFairShare = (workers: number, over: Partial<FairShare> = {}): FairShare => {
  const perPayer = over.perPayer ?? Math.max(1, workers - 1);
  const perAccount = over.perAccount ?? perPayer;
  const queuePerPayer = over.queuePerPayer ?? 64;
  return { perPayer, perAccount, perKey: over.perKey ?? perAccount, queuePerPayer, queuePerAccount: over.queuePerAccount ?? queuePerPayer, queueTotal: over.queueTotal ?? 1024 };
};

/** Which bound refused a place. */
export type QueueBound = "account" | "payer" | "total";

/** A place in the queue for one run of `owner`: counted from `hold` until the run is taken (or the place released). */
export type Hold = { readonly owner: RunOwner; state: "held" | "queued" | "released" };

type Owned = { owner: RunOwner };
/** A payer's waiting runs: by account, and its accounts with waiting runs in turn order. */
type PayerQueue<J> = { accounts: Map<string, J[]>; turns: string[]; last?: string };

type OwnerKeys = { payer: string; account: string; key: string };
/** An owner's counter keys, made once per owner object (a run's owner is looked up ~10 times on its way through the queue). */
const ownerKeys = new WeakMap<RunOwner, OwnerKeys>();
function keysOf(o: RunOwner): OwnerKeys {
  let keys = ownerKeys.get(o);
  if (!keys) ownerKeys.set(o, (keys = { payer: `p/${o.payer ?? o.account}`, account: `a/${o.account}`, key: `k/${o.account}/${o.key}` }));
  return keys;
}
const payerOf = (o: RunOwner) => keysOf(o).payer;
const accountOf = (o: RunOwner) => keysOf(o).account;
const keyOf = (o: RunOwner) => keysOf(o).key;

export class FairQueue<J extends Owned> {
  private readonly payers = new Map<string, PayerQueue<J>>();
  /** Payers with waiting runs, in turn order. */
  private turns: string[] = [];
  /** The payer (and, per payer, the account) that had the last turn. */
  private lastPayer?: string;
  /** Places held or waiting, by payer and by account. */
  private readonly places = new Counts();
  private readonly running = new Counts();
  private holds = 0;
  private waitingCount = 0;

  constructor(readonly share: FairShare) {}

  /** Places taken: held for runs being prepared, and runs waiting. */
  get length(): number {
    return this.holds + this.waitingCount;
  }

  /** Runs waiting for a worker (ready to be taken). */
  get waiting(): number {
    return this.waitingCount;
  }

  queuedFor(owner: RunOwner, bound: "account" | "payer"): number {
    return this.places.of(bound === "account" ? accountOf(owner) : payerOf(owner));
  }

  /**
   * Takes a place for one run of `owner`, or answers which bound refused it: an account (a payer)
   * has at most its share running plus its queue waiting or being prepared, and all places in the
   * queue are at most queueTotal. (A burst of runs is admitted up to the share plus the queue even
   * before any starts: those within the share may start at once.)
   */
  hold(owner: RunOwner): Hold | QueueBound {
    const full = (k: string, share: number, queue: number) => this.places.of(k) + this.running.of(k) >= share + queue;
    if (this.length >= this.share.queueTotal) return "total";
    if (full(accountOf(owner), this.share.perAccount, this.share.queuePerAccount)) return "account";
    if (full(payerOf(owner), this.share.perPayer, this.share.queuePerPayer)) return "payer";
    this.count(owner, 1);
    this.holds++;
    return { owner, state: "held" };
  }

  /** The run of a held place is ready: it waits its turn. */
  enqueue(hold: Hold, job: J): void {
    if (hold.state !== "held") throw new Error("FairQueue: this place was used or released");
    hold.state = "queued";
    this.holds--;
    this.add(job, false);
  }

  /** Gives back a held place whose run will not come (refused or failed while it was prepared). */
  release(hold: Hold): void {
    if (hold.state !== "held") return;
    hold.state = "released";
    this.holds--;
    this.count(hold.owner, -1);
  }

  /** Holds a place and queues `job` at once, or answers which bound refused it. */
  offer(job: J): "ok" | QueueBound {
    const hold = this.hold(job.owner);
    if (typeof hold === "string") return hold;
    this.enqueue(hold, job);
    return "ok";
  }

  /** Puts back a job that was taken but never started (its worker was retired), ahead of its account's queue. */
  requeue(job: J): void {
    this.finished(job);
    this.count(job.owner, 1);
    this.add(job, true);
  }

  /**
   * The next job, marked running: payers in turn, then that payer's accounts in turn, skipping a
   * payer, account or key at its share; undefined when none may start.
   */
  take(): J | undefined {
    for (let t = 0; t < this.turns.length; t++) {
      const payer = this.turns[t];
      if (this.running.of(payer) >= this.share.perPayer) continue;
      const p = this.payers.get(payer)!;
      for (let u = 0; u < p.turns.length; u++) {
        const account = p.turns[u];
        const queue = p.accounts.get(account)!;
        if (this.running.of(`a/${account}`) >= this.share.perAccount) continue;
        const i = queue.findIndex((j) => this.running.of(keyOf(j.owner)) < this.share.perKey);
        if (i < 0) continue;
        const [job] = queue.splice(i, 1);
        p.last = account;
        this.lastPayer = payer;
        rotate(p.turns, u, queue.length > 0); // its next run waits for the payer's other accounts
        if (queue.length === 0) p.accounts.delete(account);
        rotate(this.turns, t, p.turns.length > 0); // and the payer's next run for the other payers
        if (p.turns.length === 0) this.payers.delete(payer);
        this.waitingCount--;
        this.count(job.owner, -1);
        this.bumpRunning(job.owner, 1);
        return job;
      }
    }
    return undefined;
  }

  /** A taken job ended (or was put back): its payer, account and key hold one run less. */
  finished(job: J): void {
    this.bumpRunning(job.owner, -1);
  }

  /** The owners of the runs waiting for a worker, one entry per run (read at metrics scrape time; at most queueTotal). */
  waitingOwners(): RunOwner[] {
    return [...this.payers.values()].flatMap((p) => [...p.accounts.values()].flatMap((jobs) => jobs.map((j) => j.owner)));
  }

  /** Removes and answers every waiting job (held places stay until released). */
  drain(): J[] {
    const all = [...this.payers.values()].flatMap((p) => [...p.accounts.values()].flat());
    for (const job of all) this.count(job.owner, -1);
    this.payers.clear();
    this.turns = [];
    this.waitingCount = 0;
    return all;
  }

  private add(job: J, front: boolean): void {
    const payer = payerOf(job.owner);
    let p = this.payers.get(payer);
    if (!p) {
      this.payers.set(payer, (p = { accounts: new Map(), turns: [] }));
      join(this.turns, payer, front, this.lastPayer);
    }
    const account = job.owner.account;
    let queue = p.accounts.get(account);
    if (!queue) {
      p.accounts.set(account, (queue = []));
      join(p.turns, account, front, p.last);
    }
    if (front) queue.unshift(job);
    else queue.push(job);
    this.waitingCount++;
  }

  private count(owner: RunOwner, by: number): void {
    this.places.bump(payerOf(owner), by);
    this.places.bump(accountOf(owner), by);
  }

  private bumpRunning(owner: RunOwner, by: number): void {
    this.running.bump(payerOf(owner), by);
    this.running.bump(accountOf(owner), by);
    this.running.bump(keyOf(owner), by);
  }
}

/** Counters that forget what falls to zero. */
class Counts {
  private readonly n = new Map<string, number>();

  of(k: string): number {
    return this.n.get(k) ?? 0;
  }

  bump(k: string, by: number): void {
    const v = this.of(k) + by;
    if (v > 0) this.n.set(k, v);
    else this.n.delete(k);
  }
}

/** Removes turn `i`, and puts it last again when it still waits. */
function rotate(turns: string[], i: number, again: boolean): void {
  const [who] = turns.splice(i, 1);
  if (again) turns.push(who);
}

/**
 * Adds a newcomer to the turns: at the front when put back, else last in this round, that is,
 * ahead of the one that just had its turn (it went last), so a newcomer never waits for a second
 * turn of a flood it found running.
 */
function join(turns: string[], who: string, front: boolean, lastServed: string | undefined): void {
  if (front) turns.unshift(who);
  else if (lastServed !== undefined && turns[turns.length - 1] === lastServed) turns.splice(turns.length - 1, 0, who);
  else turns.push(who);
}
