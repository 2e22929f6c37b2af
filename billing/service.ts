import crypto from "node:crypto";
import path from "node:path";
import type { Logger } from "pino";
import type { BillingConfig } from "./config";
import { Ledger } from "./ledger";
import { LocalRemote } from "./localRemote";
import { StripeRemote } from "./stripeRemote";
import { Settler, type SettleReport } from "./settler";
import { display, paymentRequired, providerCall } from "./errors";
import { AppError } from "../protocol/errors";
import { Payments } from "./payments";
import { ReservationStore, type ReservationRow } from "./reservations";
import { recoverOrphans, type WriteOutcome } from "./recovery";
import type { BalanceRemote, Payer } from "./types";

/** A refused charge asks the provider again (the customer may have paid elsewhere) at most this often. */
const REFRESH_ON_REFUSAL_MS = 5_000;
/** How long shutdown waits for the last settlement. */
const CLOSE_SETTLE_MS = 10_000;
/** How often a process marks its reservations alive and looks for those of dead processes. */
export const HEARTBEAT_MS = 5_000;

type Cached = { credit: number; pending: number; reserved: number; refreshedAt: number };

/**
 * Credit held for one piece of work until it ends: see Billing.reserve. Every method is safe to call
 * late or twice (the first settle or release ends it; the rest do nothing).
 */
export type Reservation = {
  readonly cents: number;
  /** Charges `cents` (never more than reserved) and frees the rest; resolves once the debit is committed (never rejects: a failure is logged, recovery ends it). */
  settle(cents: number, detail: string): Promise<void>;
  /** Frees it all, charging nothing (the work did not happen); resolves once committed, as settle. */
  release(): Promise<void>;
  /** A write's transaction hash, recorded before the transaction is broadcast (so recovery can find what it cost). */
  noteTx(txHash: string): void;
  /**
   * A run's start (it left the queue for a sandbox): recovery charges a run from its start, and
   * releases one that never started. Committed with the other writes of this turn of the event loop.
   */
  noteStart(): void;
  /** Leaves the outcome to recovery (a write whose receipt did not come in time). */
  abandon(): void;
};

/**
 * Credits and charges. Requests never wait for the provider once an account's customer record is
 * known: work is admitted by reserving its worst-case cost against the cached credit minus the
 * debits not settled yet minus the other reservations (one synchronous step, so concurrent
 * admissions see each other), and when it ends the reservation becomes the debit of what it cost;
 * the settler sends the debits in batches (periodically and at shutdown) and recovers, at start,
 * those a previous process left unsettled. A reservation, a run's start and the end of a
 * reservation are committed with the other ledger writes of the same turn of the event loop
 * (GroupCommit: one commit for all the requests of a turn); what they change in the cached figures
 * is applied at once (so the next admission sees it) and undone if their commit fails. Reservations of a process that died are ended by
 * recovery (see recovery.ts): never left holding credit, never lost as a charge.
 */
export class Billing {
  readonly ledger: Ledger;
  readonly remote: BalanceRemote;
  readonly settler: Settler;
  readonly reservations: ReservationStore;
  /** This process, as the holder of its reservations. */
  readonly owner = `proc-${crypto.randomUUID()}`;
  /** Card payments: Stripe mode only. */
  readonly payments?: Payments;
  private readonly customers = new Map<string, Promise<string>>();
  private readonly cache = new Map<string, Cached>();

  constructor(
    readonly config: BillingConfig,
    dataDir: string,
    private readonly logger: Logger,
  ) {
    this.ledger = new Ledger(path.join(dataDir, "billing.sqlite"));
    this.remote = config.stripe ? new StripeRemote(config.stripe, config.currency) : new LocalRemote(this.ledger.db, config.freeCreditCents);
    this.settler = new Settler(this.ledger, this.remote, logger, (customerId) => this.reload(customerId));
    this.reservations = new ReservationStore(this.ledger.db, this.ledger);
    if (this.remote.payments) this.payments = new Payments(this, this.remote.payments, logger);
  }

  /**
   * Settles what a previous process left (without holding up the start), then every `settleMs`;
   * every HEARTBEAT_MS marks this process's reservations alive and ends those of dead processes
   * (`resolveWrite` tells what a write left by one cost; see recovery.ts).
   */
  start(signal: AbortSignal, resolveWrite?: (r: ReservationRow) => Promise<WriteOutcome>): void {
    void this.settler.settle();
    this.settler.start(this.config.settleMs, signal);
    let timer: NodeJS.Timeout | undefined;
    const beat = async () => {
      try {
        this.reservations.heartbeat(this.owner);
        await this.recover(resolveWrite);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, "billing: the reservation heartbeat failed; retried at the next one");
      }
      if (!signal.aborted) timer = setTimeout(beat, HEARTBEAT_MS);
    };
    void beat();
    signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }

  /** Ends the reservations of dead processes (and those handed to recovery) now; returns how many. */
  recover(resolveWrite?: (r: ReservationRow) => Promise<WriteOutcome>): Promise<number> {
    return recoverOrphans(this, resolveWrite, this.logger);
  }

  settle(): Promise<SettleReport> {
    return this.settler.settle();
  }

  /** The last settlement (bounded), then the ledger file is closed; what did not settle waits in it for the next start. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_SETTLE_MS)));
    await Promise.race([this.settler.settle().then(() => undefined), timeout]);
    clearTimeout(timer);
    // Work still holding credit is left to the next process's recovery, as of now.
    this.reservations.heartbeat(this.owner);
    this.reservations.abandonAll(this.owner);
    this.ledger.close();
  }

  /** The payer's customer record id: from the ledger, else found or created at the provider (once per payer). */
  customerId(payer: Payer): Promise<string> {
    let id = this.customers.get(payer.key);
    if (!id) {
      const known = this.ledger.customer(payer);
      id = known
        ? Promise.resolve(known.customerId)
        : providerCall(this.remote.customer(payer), "looking up this account's customer record").then((c) => {
            this.ledger.putCustomer(payer, c.id, c.creditCents);
            return c.id;
          });
      this.customers.set(payer.key, id);
      id.catch(() => this.customers.delete(payer.key)); // a failed lookup is tried again by the next request
    }
    return id;
  }

  /** Credit minus the debits not settled yet and the credit reserved for work under way, in cents. */
  async balance(payer: Payer): Promise<number> {
    return this.available(await this.customerId(payer));
  }

  /**
   * Refuses (402) when the payer's balance, less what is reserved already, does not cover `cents`:
   * a cheap check before the work's own admission, so a request that cannot pay costs no RPC or
   * key derivation. Reserves nothing (the admission does).
   */
  async covers(payer: Payer, cents: number, what: string): Promise<void> {
    const customerId = await this.customerId(payer);
    if (this.available(customerId) < cents && Date.now() - this.cached(customerId).refreshedAt >= REFRESH_ON_REFUSAL_MS) {
      await this.refresh(customerId).catch((err) => this.logger.warn({ err: (err as Error).message, customer: customerId }, "billing: could not re-read a balance"));
    }
    const available = this.available(customerId);
    if (available < cents) throw paymentRequired(available, cents, what, this.config.currency);
  }

  /**
   * Reserves `cents` of the payer's credit for one piece of work (402 when the balance, less what is
   * reserved already, does not cover it): the check and the reservation are one synchronous step,
   * so concurrent admissions see each other. The reservation is durable when this returns.
   */
  async reserve(payer: Payer, cents: number, what: string, work: { kind: "run" | "write"; detail: string; unitCents?: number }): Promise<Reservation> {
    const customerId = await this.customerId(payer);
    await this.covers(payer, cents, what);
    // From here to the insert nothing awaits: this admission and the next see each other.
    const available = this.available(customerId);
    if (available < cents) throw paymentRequired(available, cents, what, this.config.currency);
    const row = { id: `vesta-res-${crypto.randomUUID()}`, customerId, cents, unitCents: work.unitCents ?? 0, kind: work.kind, detail: work.detail, owner: this.owner };
    const c = this.cached(customerId); // loaded before the insert, which it must not count twice
    c.reserved += cents; // the next admission sees it now; the row is committed with this turn's writes
    try {
      await this.ledger.commits.add(() => this.reservations.insert(row));
    } catch (err) {
      if (this.cache.get(customerId) === c) c.reserved -= cents;
      throw err;
    }
    return this.handle(row);
  }

  /** Ends reservation `r`, charging `chargeCents` (capped at the reservation); false when it had ended before. */
  endReservation(r: Pick<ReservationRow, "id" | "customerId" | "kind" | "cents">, chargeCents: number, detail: string): boolean {
    const charge = Math.max(0, Math.min(r.cents, Math.ceil(chargeCents)));
    const c = this.cached(r.customerId);
    if (!this.reservations.end(r, charge, detail)) return false;
    c.reserved -= r.cents;
    c.pending += charge;
    return true;
  }

  /**
   * endReservation with this turn's other writes: the cached figures change at once (undone when the
   * reservation had ended before, or the commit fails).
   */
  private endGrouped(r: Pick<ReservationRow, "id" | "customerId" | "kind" | "cents">, chargeCents: number, detail: string): Promise<void> {
    const charge = Math.max(0, Math.min(r.cents, Math.ceil(chargeCents)));
    const c = this.cached(r.customerId);
    c.reserved -= r.cents;
    c.pending += charge;
    const undo = () => {
      if (this.cache.get(r.customerId) !== c) return; // reloaded since: the ledger's figures hold
      c.reserved += r.cents;
      c.pending -= charge;
    };
    return this.ledger.commits.add(() => this.reservations.end(r, charge, detail)).then(
      (ended) => void (ended || undo()),
      (err) => {
        undo();
        throw err;
      },
    );
  }

  private handle(row: Pick<ReservationRow, "id" | "customerId" | "kind" | "cents">): Reservation {
    const warn = (what: string) => (err: unknown) =>
      // e.g. the ledger closed at shutdown: the row stays, and the next process's recovery ends it
      this.logger.warn({ err: (err as Error)?.message, reservation: row.id }, `billing: could not ${what} a reservation`);
    const safely = (what: string, fn: () => void) => {
      try {
        fn();
      } catch (err) {
        warn(what)(err);
      }
    };
    let ended = false;
    const end = (cents: number, detail: string, what: string): Promise<void> => {
      if (ended) return Promise.resolve();
      ended = true;
      try {
        return this.endGrouped(row, cents, detail).catch(warn(what));
      } catch (err) {
        warn(what)(err);
        return Promise.resolve();
      }
    };
    return {
      cents: row.cents,
      settle: (cents, detail) => end(cents, detail, "settle"),
      release: () => end(0, "released", "release"),
      noteTx: (txHash) => safely("record the transaction of", () => this.reservations.noteTx(row.id, txHash)),
      noteStart: () => void this.ledger.commits.add(() => this.reservations.noteStart(row.id)).catch(warn("record the start of")),
      abandon: () => safely("abandon", () => this.reservations.abandon(row.id)),
    };
  }

  /**
   * Adds `cents` of free credit to the payer: the top-up of a development node (local billing only;
   * the route also demands VESTA_MODE=development and the owner). Refused (409) when it would raise
   * the balance above `freeCreditCapCents`; checked and applied one at a time, so racing top-ups
   * cannot pass the cap together.
   */
  async addFreeCredit(payer: Payer, cents: number): Promise<void> {
    if (this.config.mode !== "local") throw new AppError(404, "free_credit_unavailable", "free credit exists only with local billing on a development node");
    const customerId = await this.customerId(payer);
    await this.settler.serial(async () => {
      const cap = this.config.freeCreditCapCents;
      const balance = this.available(customerId);
      if (balance + cents > cap) {
        throw new AppError(409, "free_credit_capped", `free credit may raise a balance to at most ${display(cap, this.config.currency)} (VESTA_FREE_CREDIT_CAP_CENTS); this one is ${display(balance, this.config.currency)}, nothing was added`, {
          credit_cents: balance,
          cap_cents: cap,
        });
      }
      const adj = await this.remote.adjust(customerId, cents, `free_credit_${crypto.randomUUID()}`, { vesta_kind: "free_credit" });
      this.ledger.setCredit(customerId, adj.endingCreditCents);
      this.reload(customerId);
    });
  }

  /** Records a debit (durable when this returns); it reaches the provider at the next settlement. */
  debit(customerId: string, cents: number, kind: "write" | "run", detail: string): void {
    if (cents <= 0) return;
    const c = this.cached(customerId); // loaded before the insert, which it must not count twice
    this.ledger.debit(customerId, cents, kind, detail);
    c.pending += cents;
  }

  /** Reads the customer's credit from the provider again. */
  refresh(customerId: string): Promise<void> {
    return this.settler.serial(async () => {
      this.ledger.setCredit(customerId, await this.remote.credit(customerId));
      this.reload(customerId);
    });
  }

  /** Drops the cached figures of a customer (the ledger changed under them). */
  reload(customerId: string): void {
    this.cache.delete(customerId);
  }

  private available(customerId: string): number {
    const c = this.cached(customerId);
    return c.credit - c.pending - c.reserved;
  }

  private cached(customerId: string): Cached {
    let c = this.cache.get(customerId);
    if (!c) {
      const known = this.ledger.creditOf(customerId);
      c = {
        credit: known?.creditCents ?? 0,
        pending: this.ledger.unsettledCents(customerId),
        reserved: this.reservations.reservedCents(customerId),
        refreshedAt: known?.syncedAt ?? 0,
      };
      this.cache.set(customerId, c);
    }
    return c;
  }
}
