import crypto from "node:crypto";
import path from "node:path";
import type { Logger } from "pino";
import type { BillingConfig } from "./config";
import { Ledger } from "./ledger";
import { LocalRemote } from "./localRemote";
import { StripeRemote } from "./stripeRemote";
import { Settler, type SettleReport } from "./settler";
import { paymentRequired, providerCall } from "./errors";
import { Payments } from "./payments";
import type { BalanceRemote, Payer } from "./types";

/** A refused charge asks the provider again (the customer may have paid elsewhere) at most this often. */
const REFRESH_ON_REFUSAL_MS = 5_000;
/** How long shutdown waits for the last settlement. */
const CLOSE_SETTLE_MS = 10_000;

type Cached = { credit: number; pending: number; refreshedAt: number };

/**
 * Credits and charges. Requests never wait for the provider once an account's customer record is
 * known: a charge is admitted against the cached credit minus the debits not settled yet, and
 * recorded in the ledger; the settler sends the debits in batches (periodically and at shutdown)
 * and recovers, at start, those a previous process left unsettled.
 */
export class Billing {
  readonly ledger: Ledger;
  readonly remote: BalanceRemote;
  readonly settler: Settler;
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
    if (this.remote.payments) this.payments = new Payments(this, this.remote.payments, logger);
  }

  /** Settles what a previous process left (without holding up the start), then every `settleMs`. */
  start(signal: AbortSignal): void {
    void this.settler.settle();
    this.settler.start(this.config.settleMs, signal);
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

  /** Credit minus the debits not settled yet, in cents (negative when runs overran it). */
  async balance(payer: Payer): Promise<number> {
    return this.available(await this.customerId(payer));
  }

  /** Refuses (402) when the payer's balance is below `cents`; returns the customer to debit. */
  async admit(payer: Payer, cents: number, what: string): Promise<string> {
    const customerId = await this.customerId(payer);
    if (this.available(customerId) >= cents) return customerId;
    const c = this.cached(customerId);
    if (Date.now() - c.refreshedAt >= REFRESH_ON_REFUSAL_MS) {
      await this.refresh(customerId).catch((err) => this.logger.warn({ err: (err as Error).message, customer: customerId }, "billing: could not re-read a balance"));
    }
    const available = this.available(customerId);
    if (available >= cents) return customerId;
    throw paymentRequired(available, cents, what, this.config.currency);
  }

  /**
   * Adds `cents` of free credit to the payer: the top-up of a development node. Local mode only
   * (the route refuses it when `payments` exist: in Stripe mode credit comes only from payments).
   */
  async addFreeCredit(payer: Payer, cents: number): Promise<void> {
    const customerId = await this.customerId(payer);
    await this.settler.serial(async () => {
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
    return c.credit - c.pending;
  }

  private cached(customerId: string): Cached {
    let c = this.cache.get(customerId);
    if (!c) {
      const known = this.ledger.creditOf(customerId);
      c = { credit: known?.creditCents ?? 0, pending: this.ledger.unsettledCents(customerId), refreshedAt: known?.syncedAt ?? 0 };
      this.cache.set(customerId, c);
    }
    return c;
  }
}
