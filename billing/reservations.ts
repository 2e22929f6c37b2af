import type Database from "better-sqlite3";
import type { Ledger } from "./ledger";

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
  /** A write's transaction hash, recorded before the transaction is broadcast. */
  txHash: string | null;
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS reservations (
  id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, cents INTEGER NOT NULL, unit_cents INTEGER NOT NULL, kind TEXT NOT NULL,
  detail TEXT NOT NULL, owner TEXT NOT NULL, created_at INTEGER NOT NULL, alive_at INTEGER NOT NULL, tx_hash TEXT, started_at INTEGER);
CREATE INDEX IF NOT EXISTS reservations_customer ON reservations (customer_id);
`;

/**
 * A ledger from before runs recorded their start: the column is added, and the runs it holds are
 * taken as started at admission (what recovery charged them from then).
 */
function addStartedAt(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('reservations')").all();
  if (columns.some((c) => c.name === "started_at")) return;
  db.transaction(() => {
    db.exec("ALTER TABLE reservations ADD COLUMN started_at INTEGER");
    db.exec("UPDATE reservations SET started_at = created_at WHERE kind = 'run'");
  })();
}

type Raw = {
  id: string;
  customer_id: string;
  cents: number;
  unit_cents: number;
  kind: string;
  detail: string;
  owner: string;
  created_at: number;
  started_at: number | null;
  alive_at: number;
  tx_hash: string | null;
};
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
  txHash: r.tx_hash,
});

/**
 * The reservations table, in the ledger's SQLite file: a reservation is committed before the work it
 * pays for starts, and ends in one transaction with the debit of what the work cost (or with
 * nothing, when released). Rows whose process died stay until recovery ends them (Billing.recover).
 */
export class ReservationStore {
  private readonly stmts;

  constructor(
    private readonly db: Database.Database,
    private readonly ledger: Ledger,
  ) {
    db.exec(SCHEMA);
    addStartedAt(db);
    this.stmts = {
      sum: db.prepare<[string], { cents: number | null }>("SELECT SUM(cents) AS cents FROM reservations WHERE customer_id = ?"),
      insert: db.prepare<[string, string, number, number, string, string, string, number, number]>(
        "INSERT INTO reservations (id, customer_id, cents, unit_cents, kind, detail, owner, created_at, alive_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      remove: db.prepare<[string]>("DELETE FROM reservations WHERE id = ?"),
      noteTx: db.prepare<[string, string]>("UPDATE reservations SET tx_hash = ? WHERE id = ?"),
      start: db.prepare<[number, string]>("UPDATE reservations SET started_at = ? WHERE id = ?"),
      abandon: db.prepare<[string]>("UPDATE reservations SET owner = '' WHERE id = ?"),
      abandonAll: db.prepare<[string]>("UPDATE reservations SET owner = '' WHERE owner = ?"),
      heartbeat: db.prepare<[number, string]>("UPDATE reservations SET alive_at = ? WHERE owner = ?"),
      orphans: db.prepare<[string, number], Raw>("SELECT * FROM reservations WHERE owner = '' OR (owner != ? AND alive_at < ?) ORDER BY created_at"),
    };
  }

  /** Credit held by the customer's reservations. */
  reservedCents(customerId: string): number {
    this.ledger.commits.flush();
    return this.stmts.sum.get(customerId)?.cents ?? 0;
  }

  /** Records a reservation held by `owner` (committed when this returns). */
  insert(r: Pick<ReservationRow, "id" | "customerId" | "cents" | "unitCents" | "kind" | "detail" | "owner">): void {
    const t = Date.now();
    this.stmts.insert.run(r.id, r.customerId, r.cents, r.unitCents, r.kind, r.detail, r.owner, t, t);
  }

  /**
   * Ends a reservation: in one transaction it is removed and `chargeCents` (if any) becomes a debit.
   * False when it was ended before (by its owner or by recovery): nothing is done twice.
   */
  readonly end = (r: Pick<ReservationRow, "id" | "customerId" | "kind">, chargeCents: number, detail: string): boolean =>
    this.db.transaction(() => {
      if (this.stmts.remove.run(r.id).changes === 0) return false;
      if (chargeCents > 0) this.ledger.debit(r.customerId, chargeCents, r.kind, detail);
      return true;
    })();

  /** Records the transaction hash of a reserved write (before it is broadcast). */
  noteTx(id: string, txHash: string): void {
    this.stmts.noteTx.run(txHash, id);
  }

  /** Records that the reserved run started now (left the queue for a sandbox); a later start replaces it. */
  noteStart(id: string): void {
    this.stmts.start.run(Date.now(), id);
  }

  /** Hands a reservation to recovery: its owner will not end it. */
  abandon(id: string): void {
    this.stmts.abandon.run(id);
  }

  /** Hands every reservation of `owner` to recovery (a process shutting down with work under way). */
  abandonAll(owner: string): void {
    this.stmts.abandonAll.run(owner);
  }

  /** `owner` is alive: its reservations are not orphans. */
  heartbeat(owner: string): void {
    this.stmts.heartbeat.run(Date.now(), owner);
  }

  /** Reservations handed to recovery, or held by another process not seen alive since `staleBefore` (ms). */
  orphans(owner: string, staleBefore: number): ReservationRow[] {
    this.ledger.commits.flush();
    return this.stmts.orphans.all(owner, staleBefore).map(toRow);
  }
}
