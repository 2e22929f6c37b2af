/**
 * An account's money, day by day, from the billing ledger: what it was charged (action runs, relayed
 * writes), what it topped up (card payments credited; free credit on a local node), and its credit at
 * the end of each day. Read-only queries, all of them in this one file (to be ported with the ledger
 * to the storage layer). Days are UTC.
 *
 * The credit at the end of a day is walked back from the credit now: now, less what was topped up
 * since, plus what was charged since. Credit held by work still under way is not a charge yet.
 */
import type Database from "better-sqlite3";
import type { Ledger } from "./ledger";

const DAY_MS = 86_400_000;

export type UsageDay = {
  /** YYYY-MM-DD (UTC). */
  date: string;
  run_cents: number;
  run_count: number;
  write_cents: number;
  write_count: number;
  topup_cents: number;
  /** The credit at the end of the day (or now, for today). */
  credit_cents: number;
};
export type TopUp = { at: string; cents: number; kind: "card" | "free_credit" };
export type Usage = { days: UsageDay[]; topups: TopUp[] };

const tableExists = (db: Database.Database, name: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;

/** Top-ups of `customerId` at or after `since` (ms), oldest first. */
function topUps(db: Database.Database, customerId: string, since: number): { at: number; cents: number; kind: TopUp["kind"] }[] {
  const card = db
    .prepare<[string, number], { at: number; cents: number }>("SELECT credited_at AS at, cents FROM credits WHERE customer_id = ? AND credited_at IS NOT NULL AND credited_at >= ?")
    .all(customerId, since)
    .map((r) => ({ ...r, kind: "card" as const }));
  // Local mode (no payment provider) keeps its customers beside the ledger: free credit is an adjustment there.
  const free = tableExists(db, "local_adjustments")
    ? db
        .prepare<[string, number], { at: number; cents: number }>(
          "SELECT created_at * 1000 AS at, delta_cents AS cents FROM local_adjustments WHERE customer_id = ? AND created_at >= ? AND delta_cents > 0 AND json_extract(metadata, '$.vesta_kind') = 'free_credit'",
        )
        .all(customerId, Math.floor(since / 1000)) // Stripe's unit: seconds
        .map((r) => ({ ...r, kind: "free_credit" as const }))
    : [];
  return [...card, ...free].sort((a, b) => a.at - b.at);
}

/** The last `days` days (today included) of `customerId`, oldest first; `creditNow` is its available credit now (cents). */
export function usageOf(ledger: Ledger, customerId: string, days: number, creditNow: number, now = Date.now()): Usage {
  ledger.commits.flush(); // every debit committed so far
  const db = ledger.db;
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (days - 1) * DAY_MS;
  const charges = db
    .prepare<[string, number], { day: number; kind: string; cents: number; count: number }>(
      "SELECT (created_at / 86400000) * 86400000 AS day, kind, SUM(cents) AS cents, COUNT(*) AS count FROM debits WHERE customer_id = ? AND created_at >= ? GROUP BY day, kind",
    )
    .all(customerId, since);
  const tops = topUps(db, customerId, since);
  const out: UsageDay[] = [];
  for (let d = since; d <= today; d += DAY_MS) {
    const of = (kind: string) => charges.find((c) => c.day === d && c.kind === kind);
    const topup = tops.filter((t) => t.at >= d && t.at < d + DAY_MS).reduce((s, t) => s + t.cents, 0);
    out.push({
      date: new Date(d).toISOString().slice(0, 10),
      run_cents: of("run")?.cents ?? 0,
      run_count: of("run")?.count ?? 0,
      write_cents: of("write")?.cents ?? 0,
      write_count: of("write")?.count ?? 0,
      topup_cents: topup,
      credit_cents: 0,
    });
  }
  // Walk back from now: the credit at the end of a day is the next day's end less that day's flows.
  let credit = creditNow;
  for (let i = out.length - 1; i >= 0; i--) {
    out[i].credit_cents = credit;
    credit -= out[i].topup_cents - out[i].run_cents - out[i].write_cents;
  }
  return { days: out, topups: tops.map((t) => ({ at: new Date(t.at).toISOString(), cents: t.cents, kind: t.kind })) };
}
