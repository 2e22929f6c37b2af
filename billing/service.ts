import crypto from "node:crypto";
import path from "node:path";
import type { Kysely } from "kysely";
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
import type { BillingDb } from "./schema";

/** A refused charge asks the provider again (the customer may have paid elsewhere) at most this often. */
const REFRESH_ON_REFUSAL_MS = 5_000;
/** How long shutdown waits for the last settlement. */
const CLOSE_SETTLE_MS = 10_000;
/** How often a process marks its reservations alive and looks for those of dead processes. */
export const HEARTBEAT_MS = 5_000;

type Cached = { credit: number; pending: number; reserved: number; refreshedAt: number };
type Figures = Pick<Cached, "credit" | "pending" | "reserved">;

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
  /** A write's transaction hash, recorded before the transaction is broadcast (so recovery can find what it cost): await it before the broadcast. Never rejects (a failure is logged). */
  noteTx(txHash: string): Promise<void>;
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
 * known: work is admitted by reserving its worst-case cost against the credit minus the debits not
 * settled yet minus the other reservations, and when it ends the reservation becomes the debit of
 * what it cost. On SQLite (the ledger file belongs to this process) those figures are cached here
 * and an admission checks and updates them in one synchronous step, so concurrent admissions see
 * each other; on PostgreSQL (shared by replicas) an admission reads them in a transaction holding
 * the customer's row (FOR UPDATE), so the admissions of every replica take turns and together
 * never pass the balance;
 * the settler sends the debits in batches (periodically and at shutdown) and recovers, at start,
 * those a previous process left unsettled. A reservation, a run's start and the end of a
 * reservation are committed with the other ledger writes of the same turn of the event loop
 * (GroupCommit: one commit for all the requests of a turn); what they change in the cached figures
 * is applied at once (so the next admission sees it) and undone if their commit fails. Reservations of a process that died are ended by
 * recovery (see recovery.ts): never left holding credit, never lost as a charge.
 */
export class Billing {
  readonly remote: BalanceRemote;
  readonly settler: Settler;
  readonly reservations: ReservationStore;
  /** This process, as the holder of its reservations. */
  readonly owner = `proc-${crypto.randomUUID()}`;
  /** Card payments: Stripe mode only. */
  readonly payments?: Payments;
  private readonly customers = new Map<string, Promise<string>>();
  /** SQLite only: each customer's figures, as the ledger holds them plus what this turn's writes add (see cached). */
  private readonly cache = new Map<string, Cached>();
  private readonly loading = new Map<string, Promise<void>>();

  private constructor(
    readonly config: BillingConfig,
    readonly ledger: Ledger,
    private readonly logger: Logger,
  ) {
    this.remote = config.stripe ? new StripeRemote(config.stripe, config.currency) : new LocalRemote(ledger.storage, config.freeCreditCents);
    this.settler = new Settler(this.ledger, this.remote, logger, (customerId) => this.reload(customerId));
    this.reservations = new ReservationStore(this.ledger);
    if (this.remote.payments) this.payments = new Payments(this, this.remote.payments, logger);
  }

  /** Opens the ledger: `billing.sqlite` in `dataDir`, or the PostgreSQL database at `databaseUrl` (shared by replicas). */
  static async open(config: BillingConfig, where: { dataDir: string; databaseUrl?: string }, logger: Logger): Promise<Billing> {
    const ledger = await Ledger.open({ sqliteFile: path.join(where.dataDir, "billing.sqlite"), databaseUrl: where.databaseUrl });
    return new Billing(config, ledger, logger);
  }

  /** Several processes share this ledger (PostgreSQL): nothing is cached, admissions lock the customer's row. */
  private get shared(): boolean {
    return this.ledger.storage.dialect.shared;
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
        await this.reservations.heartbeat(this.owner);
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
    await this.reservations.heartbeat(this.owner);
    await this.reservations.abandonAll(this.owner);
    await this.ledger.close();
  }

  /**
   * The payer's customer record id: from the ledger, else found or created at the provider. This
   * process asks once however many requests wait. Replicas asking at once each ask the provider,
   * which finds or creates one record (a search, then a create under the idempotency key
   * `vesta-customer-<payer>`), and the first row recorded stands (putCustomer: insert-or-get), so a
   * replica whose answer came late uses that row and never writes its stale credit over it. (No lock
   * is held across the provider call: a slow provider must not tie up the ledger's connections.)
   */
  customerId(payer: Payer): Promise<string> {
    let id = this.customers.get(payer.key);
    if (!id) {
      id = this.ledger.customer(payer).then(
        (known) =>
          known?.customerId ??
          providerCall(this.remote.customer(payer), "looking up this account's customer record").then((c) => this.ledger.putCustomer(payer, c.id, c.creditCents)),
      );
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
    const seen = await this.figures(customerId);
    if (spendable(seen) < cents && Date.now() - seen.refreshedAt >= REFRESH_ON_REFUSAL_MS) {
      await this.refresh(customerId).catch((err) => this.logger.warn({ err: (err as Error).message, customer: customerId }, "billing: could not re-read a balance"));
    }
    const available = await this.available(customerId);
    if (available < cents) throw paymentRequired(available, cents, what, this.config.currency);
  }

  /**
   * Reserves `cents` of the payer's credit for one piece of work (402 when the balance, less what is
   * reserved already, does not cover it): the check and the reservation are one step (SQLite: one
   * synchronous step on the cached figures; PostgreSQL: one transaction holding the customer's row),
   * so concurrent admissions, of this process or of any replica, see each other. The reservation is
   * durable when this returns.
   */
  async reserve(payer: Payer, cents: number, what: string, work: { kind: "run" | "write"; detail: string; unitCents?: number }): Promise<Reservation> {
    const customerId = await this.customerId(payer);
    await this.covers(payer, cents, what);
    const row = { id: `vesta-res-${crypto.randomUUID()}`, customerId, cents, unitCents: work.unitCents ?? 0, kind: work.kind, detail: work.detail, owner: this.owner };
    const admit = (f: Figures) => {
      const available = spendable(f);
      if (available < cents) throw paymentRequired(available, cents, what, this.config.currency);
    };
    if (this.shared) {
      await this.ledger.storage.transaction(async (trx) => {
        admit(await this.ledger.figures(customerId, trx, true));
        await this.reservations.insert(row, trx);
      });
      return this.handle(row);
    }
    const c = await this.cached(customerId); // loaded before the insert, which it must not count twice
    // From here to the add nothing awaits: this admission and the next see each other.
    admit(c);
    c.reserved += cents; // the next admission sees it now; the row is committed with this turn's writes
    try {
      await this.ledger.commits.add((trx) => this.reservations.insert(row, trx));
    } catch (err) {
      if (this.cache.get(customerId) === c) c.reserved -= cents;
      throw err;
    }
    return this.handle(row);
  }

  /**
   * Ends reservation `r`, charging `chargeCents` (capped at the reservation), with this turn's other
   * writes; false when it had ended before (here or in another replica). The cached figures change
   * at once (undone when the reservation had ended before, or the commit fails).
   */
  endReservation(r: Pick<ReservationRow, "id" | "customerId" | "kind" | "cents">, chargeCents: number, detail: string): Promise<boolean> {
    const charge = Math.max(0, Math.min(r.cents, Math.ceil(chargeCents)));
    return this.changing(r.customerId, { reserved: -r.cents, pending: charge }, (trx) => this.reservations.end(r, charge, detail, trx));
  }

  /**
   * Commits `write` with this turn's other writes; what it changes in the customer's cached figures
   * (`delta`) is applied at once (the next admission sees it) and undone when the write answers
   * false or fails. Figures not cached are loaded later, from the ledger after this commit (a load
   * under way is discarded).
   */
  private changing<T>(customerId: string, delta: { reserved?: number; pending?: number }, write: (trx: Kysely<BillingDb>) => Promise<T>): Promise<T> {
    const c = this.cache.get(customerId);
    if (!c) this.loading.delete(customerId); // a load under way may read the ledger before this commit: it is done again
    const apply = (sign: number) => {
      if (!c || this.cache.get(customerId) !== c) return; // not cached, or reloaded since: the ledger's figures hold
      c.reserved += sign * (delta.reserved ?? 0);
      c.pending += sign * (delta.pending ?? 0);
    };
    apply(1);
    return this.ledger.commits.add(write).then(
      (done) => {
        if (done === false) apply(-1);
        return done;
      },
      (err) => {
        apply(-1);
        throw err;
      },
    );
  }

  private handle(row: Pick<ReservationRow, "id" | "customerId" | "kind" | "cents">): Reservation {
    const warn = (what: string) => (err: unknown) =>
      // e.g. the ledger closed at shutdown: the row stays, and the next process's recovery ends it
      this.logger.warn({ err: (err as Error)?.message, reservation: row.id }, `billing: could not ${what} a reservation`);
    let ended = false;
    let start: { withdraw(): boolean } | undefined;
    const end = (cents: number, detail: string, what: string): Promise<void> => {
      if (ended) return Promise.resolve();
      ended = true;
      // A start still waiting for its commit is not written: the end, in that same commit, removes the row.
      start?.withdraw();
      return this.endReservation(row, cents, detail).then(() => undefined, warn(what));
    };
    return {
      cents: row.cents,
      settle: (cents, detail) => end(cents, detail, "settle"),
      release: () => end(0, "released", "release"),
      noteTx: (txHash) => this.reservations.noteTx(row.id, txHash).catch(warn("record the transaction of")),
      noteStart: () => {
        if (ended) return;
        const pending = this.ledger.commits.addWithdrawable((trx) => this.reservations.noteStart(row.id, trx));
        pending.done.catch(warn("record the start of"));
        start = pending;
      },
      abandon: () => void this.reservations.abandon(row.id).catch(warn("abandon")),
    };
  }

  /**
   * Adds `cents` of free credit to the payer: the top-up of a development node (local billing only;
   * the route also demands VESTA_MODE=development and the owner). Refused (409) when it would raise
   * the balance above `freeCreditCapCents`. The check and the top-up are one step in the customer's
   * credit turn (Ledger.creditTurn: this process's settler, and on PostgreSQL an advisory lock
   * every replica takes), so racing top-ups, through one replica or several, cannot pass the cap together.
   */
  async addFreeCredit(payer: Payer, cents: number): Promise<void> {
    if (this.config.mode !== "local") throw new AppError(404, "free_credit_unavailable", "free credit exists only with local billing on a development node");
    const customerId = await this.customerId(payer);
    await this.settler.serial(async () => {
      const cap = this.config.freeCreditCapCents;
      try {
        await this.ledger.creditTurn(customerId, async (q) => {
          // Read in the turn: another replica's top-up committed before it is counted.
          const balance = spendable(q ? await this.ledger.figures(customerId, q) : await this.figures(customerId));
          if (balance + cents > cap) {
            throw new AppError(409, "free_credit_capped", `free credit may raise a balance to at most ${display(cap, this.config.currency)} (VESTA_FREE_CREDIT_CAP_CENTS); this one is ${display(balance, this.config.currency)}, nothing was added`, {
              credit_cents: balance,
              cap_cents: cap,
            });
          }
          const adj = await this.remote.adjust(customerId, cents, `free_credit_${crypto.randomUUID()}`, { vesta_kind: "free_credit" });
          await this.ledger.setCredit(customerId, adj.endingCreditCents, q);
        });
      } finally {
        this.reload(customerId);
      }
    });
  }

  /** Records a debit (durable when this resolves); it reaches the provider at the next settlement. */
  async debit(customerId: string, cents: number, kind: "write" | "run", detail: string): Promise<void> {
    if (cents <= 0) return;
    await this.changing(customerId, { pending: cents }, (trx) => this.ledger.debit(customerId, cents, kind, detail, trx));
  }

  /** Reads the customer's credit from the provider again. */
  refresh(customerId: string): Promise<void> {
    return this.settler.serial(async () => {
      // In turn with every replica's settlements and credits for this customer (Ledger.creditTurn).
      await this.ledger.creditTurn(customerId, async (q) => this.ledger.setCredit(customerId, await this.remote.credit(customerId), q));
      this.reload(customerId);
    });
  }

  /** Drops the cached figures of a customer (the ledger changed under them). */
  reload(customerId: string): void {
    this.cache.delete(customerId);
    this.loading.delete(customerId);
  }

  /** Credit minus the debits not settled yet and the credit reserved, in cents. */
  private async available(customerId: string): Promise<number> {
    return spendable(await this.figures(customerId));
  }

  /** The customer's figures: cached (SQLite), or as the shared ledger holds them now (PostgreSQL). */
  private async figures(customerId: string): Promise<Cached> {
    if (!this.shared) return this.cached(customerId);
    const f = await this.ledger.figures(customerId);
    return { credit: f.credit, pending: f.pending, reserved: f.reserved, refreshedAt: f.syncedAt };
  }

  /**
   * The customer's cached figures (SQLite), loaded from the ledger (after the writes queued so far
   * are committed) once, however many requests ask at once. What is returned is the cached object
   * itself (a load overtaken by reload() is done again): a caller that changes it without awaiting
   * in between changes what the next admission sees.
   */
  private async cached(customerId: string): Promise<Cached> {
    for (;;) {
      const hit = this.cache.get(customerId);
      if (hit) return hit;
      let load = this.loading.get(customerId);
      if (!load) {
        const p: Promise<void> = this.ledger.figures(customerId).then((f) => {
          if (this.loading.get(customerId) !== p) return; // reloaded meanwhile: what was read may be stale
          this.loading.delete(customerId);
          this.cache.set(customerId, { credit: f.credit, pending: f.pending, reserved: f.reserved, refreshedAt: f.syncedAt });
        });
        p.catch(() => this.loading.get(customerId) === p && this.loading.delete(customerId));
        this.loading.set(customerId, p);
        load = p;
      }
      await load;
    }
  }
}

const spendable = (f: Pick<Cached, "credit" | "pending" | "reserved">): number => f.credit - f.pending - f.reserved;
