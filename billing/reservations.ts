import { sql, type Kysely } from "kysely";
import type { Ledger } from "./ledger";
import type { BillingDb } from "./schema";
import type { Prepared } from "../storage/prepared";

/** Credit held for work that may still be charged (a run, a relayed write): see Billing.reserve. */
export type ReservationRow = {
  id: string;
  customerId: string;
  cents: number;
  /** Runs: the price of one second (recovery charges the seconds its process was seen alive). */
  unitCents: number;
  kind: "run" | "write";
  detail: string;
  /** The process holding it ("" once handed to recovery, e.g. a write whose receipt did not come). */
  owner: string;
  createdAt: number;
  /** Runs: when the run left the queue for a sandbox (ms), or null while it waits (it may never start). */
  startedAt: number | null;
  /** The owner's last heartbeat (ms). */
  aliveAt: number;
  /**
   * A write's transaction hashes, each recorded before it is broadcast: the transaction, then each
   * replacement (same nonce, higher fees). Any one of them may be the one mined.
   */
  txHashes: string[];
};

type Raw = BillingDb["reservations"];
const toRow = (r: Raw): ReservationRow => ({
  id: r.id,
  customerId: r.customer_id,
  cents: r.cents,
  unitCents: r.unit_cents,
  kind: r.kind as ReservationRow["kind"],
  detail: r.detail,
  owner: r.owner,
  createdAt: r.created_at,
  startedAt: r.started_at,
  aliveAt: r.alive_at,
  txHashes: r.tx_hash ? r.tx_hash.split(" ") : [],
});

type Q = Kysely<BillingDb>;

/**
 * The reservations table, in the ledger's database: a reservation is committed before the work it
 * pays for starts, and ends in one transaction with the debit of what the work cost (or with
 * nothing, when released). Rows whose process died stay until recovery ends them (Billing.recover),
 * whichever replica sees it first (the end removes the row: only one ends it).
 */
export class ReservationStore {
  // The hot path's statements (a run's reservation, its start, its end), compiled once: see Prepared.
  private readonly inserted: Prepared<BillingDb, Omit<Raw, "started_at" | "tx_hash">>;
  private readonly removed: Prepared<BillingDb, { id: string }>;
  private readonly started: Prepared<BillingDb, { id: string; started_at: number }>;

  constructor(private readonly ledger: Ledger) {
    const s = ledger.storage;
    this.inserted = s.prepare((db, p) =>
      db.insertInto("reservations").values({
        id: p("id"),
        customer_id: p("customer_id"),
        cents: p("cents"),
        unit_cents: p("unit_cents"),
        kind: p("kind"),
        detail: p("detail"),
        owner: p("owner"),
        created_at: p("created_at"),
        alive_at: p("alive_at"),
      }),
    );
    this.removed = s.prepare((db, p) => db.deleteFrom("reservations").where("id", "=", p("id")));
    this.started = s.prepare((db, p) => db.updateTable("reservations").set({ started_at: p("started_at") }).where("id", "=", p("id")));
  }

  private get db(): Q {
    return this.ledger.db;
  }

  /** Credit held by the customer's reservations. */
  async reservedCents(customerId: string): Promise<number> {
    return (await this.ledger.figures(customerId)).reserved;
  }

  /** Records a reservation held by `owner` (committed with `q`). */
  async insert(r: Pick<ReservationRow, "id" | "customerId" | "cents" | "unitCents" | "kind" | "detail" | "owner">, q: Q = this.db): Promise<void> {
    const t = Date.now();
    const detail = this.ledger.storage.dialect.text(r.detail);
    await this.inserted.run(q, { id: r.id, customer_id: r.customerId, cents: r.cents, unit_cents: r.unitCents, kind: r.kind, detail, owner: r.owner, created_at: t, alive_at: t });
  }

  /**
   * Ends a reservation: with `q`'s commit it is removed and `chargeCents` (if any) becomes a debit
   * (`q` must be a transaction, or the ledger's group commit). False when it was ended before (by
   * its owner or by recovery, in any replica): nothing is done twice.
   */
  async end(r: Pick<ReservationRow, "id" | "customerId" | "kind">, chargeCents: number, detail: string, q: Q): Promise<boolean> {
    if ((await this.removed.run(q, { id: r.id })).changed === 0n) return false;
    if (chargeCents > 0) await this.ledger.debit(r.customerId, chargeCents, r.kind, detail, q);
    return true;
  }

  /**
   * Adds a transaction hash of a reserved write (before it is broadcast) to those recorded: a
   * replacement adds its own, and the one it replaces is kept (it may be the one that is mined).
   */
  async noteTx(id: string, txHash: string): Promise<void> {
    await this.db.updateTable("reservations").set({ tx_hash: sql<string>`coalesce(tx_hash || ' ', '') || ${txHash}` }).where("id", "=", id).execute();
  }

  /** Records that the reserved run started now (left the queue for a sandbox); a later start replaces it. */
  async noteStart(id: string, q: Q = this.db): Promise<void> {
    await this.started.run(q, { id, started_at: Date.now() });
  }

  /** Hands a reservation to recovery: its owner will not end it. */
  async abandon(id: string): Promise<void> {
    await this.db.updateTable("reservations").set({ owner: "" }).where("id", "=", id).execute();
  }

  /** Hands every reservation of `owner` to recovery (a process shutting down with work under way). */
  async abandonAll(owner: string): Promise<void> {
    await this.ledger.commits.flush();
    await this.db.updateTable("reservations").set({ owner: "" }).where("owner", "=", owner).execute();
  }

  /** `owner` is alive: its reservations are not orphans. */
  async heartbeat(owner: string): Promise<void> {
    await this.db.updateTable("reservations").set({ alive_at: Date.now() }).where("owner", "=", owner).execute();
  }

  /** Reservations handed to recovery, or held by another process not seen alive since `staleBefore` (ms). */
  async orphans(owner: string, staleBefore: number): Promise<ReservationRow[]> {
    await this.ledger.commits.flush();
    const rows = await this.db
      .selectFrom("reservations")
      .selectAll()
      .where((eb) => eb.or([eb("owner", "=", ""), eb.and([eb("owner", "!=", owner), eb("alive_at", "<", staleBefore)])]))
      .orderBy("created_at")
      .execute();
    return rows.map(toRow);
  }
}
