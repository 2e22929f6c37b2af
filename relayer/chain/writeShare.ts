/**
 * The fair share of relayed writes. Every write holds a ticket from admission (before it is
 * simulated) until it is mined or fails; an account, whoever pays for it (its billing payer: the
 * account itself while managed, its admin wallet's customer record otherwise) and the service as a
 * whole may hold at most so many (queued + in flight), and a write past a bound is refused at once
 * (429 write_queue_full) before it costs an RPC call. Writes then wait for a payer wallet in one FIFO
 * per billing payer, and billing payers take turns (round robin): a payer with a hundred writes
 * waiting delays another payer's write by one turn, not by a hundred.
 */

export type WriteOwner = {
  /** The account the write acts on (or, for a new account, who asks: its client address). */
  account: string;
  /** Who pays for it (billing's payer key). */
  payer: string;
};

export type WriteLimits = {
  /** Writes of one account queued or in flight. */
  perAccount: number;
  /** Writes paid by one billing payer queued or in flight. */
  perPayer: number;
  /** Writes queued or in flight in all. */
  total: number;
};

export const DEFAULT_WRITE_LIMITS: WriteLimits = { perAccount: 16, perPayer: 32, total: 1024 };

/** A write's hold on the share, from admission to its end; `release` is safe to call twice. */
export type WriteTicket = { owner: WriteOwner; release(): void };

/** Which bound refused a write. */
export type WriteBound = "account" | "payer" | "total";

export class WriteShare<J> {
  private readonly heldBy = { account: new Map<string, number>(), payer: new Map<string, number>() };
  private held = 0;
  private readonly waiting = new Map<string, J[]>();
  /** Billing payers with writes waiting, in turn order. */
  private turns: string[] = [];

  constructor(readonly limits: WriteLimits) {}

  /** How many writes `owner`'s account and payer hold, and the service in all. */
  holding(owner: WriteOwner): Record<WriteBound, number> {
    return { account: this.heldBy.account.get(owner.account) ?? 0, payer: this.heldBy.payer.get(owner.payer) ?? 0, total: this.held };
  }

  /** Writes waiting for a payer wallet (admitted, not yet sent). */
  waitingCount(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /** A ticket for a write of `owner`, or the bound it would pass. */
  admit(owner: WriteOwner): WriteTicket | WriteBound {
    const h = this.holding(owner);
    if (h.total >= this.limits.total) return "total";
    if (h.account >= this.limits.perAccount) return "account";
    if (h.payer >= this.limits.perPayer) return "payer";
    this.bump(owner, 1);
    let held = true;
    return {
      owner,
      release: () => {
        if (held) this.bump(owner, -1);
        held = false;
      },
    };
  }

  /** Queues `job` of `ticket`'s payer for its turn. */
  wait(ticket: WriteTicket, job: J): void {
    const payer = ticket.owner.payer;
    const queue = this.waiting.get(payer);
    if (queue) return void queue.push(job);
    this.waiting.set(payer, [job]);
    this.turns.push(payer);
  }

  /** The next job: the first waiting one of the payer whose turn it is (who then goes last). */
  next(): J | undefined {
    const payer = this.turns.shift();
    if (payer === undefined) return undefined;
    const queue = this.waiting.get(payer)!;
    const job = queue.shift()!;
    if (queue.length > 0) this.turns.push(payer);
    else this.waiting.delete(payer);
    return job;
  }

  private bump(owner: WriteOwner, by: number): void {
    this.held += by;
    for (const [map, k] of [
      [this.heldBy.account, owner.account],
      [this.heldBy.payer, owner.payer],
    ] as const) {
      const n = (map.get(k) ?? 0) + by;
      if (n > 0) map.set(k, n);
      else map.delete(k);
    }
  }
}
