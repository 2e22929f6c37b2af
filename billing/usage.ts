/**
 * An account's money, day by day, from the billing ledger: what it was charged (action runs, relayed
 * writes), what it topped up (card payments credited; free credit on a local node), and its credit at
 * the end of each day. Read-only queries, all of them in this one file (to be ported with the ledger
 * to the storage layer). Days are UTC.
 *
 * The credit at the end of a day is walked back from the credit now: now, less what was topped up
 * since, plus what was charged since. Credit held by work still under way is not a charge yet.
 */
import { sql } from "kysely";
import { toNumber } from "../storage";
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

/** Top-ups of `customerId` at or after `since` (ms), oldest first. */
async function topUps(ledger: Ledger, customerId: string, since: number): Promise<{ at: number; cents: number; kind: TopUp["kind"] }[]> {
  const card = (
    await ledger.db
      .selectFrom("credits")
      .select(["credited_at", "cents"])
      .where("customer_id", "=", customerId)
      .where("credited_at", "is not", null)
      .where("credited_at", ">=", since)
      .execute()
  ).map((r) => ({ at: Number(r.credited_at), cents: r.cents, kind: "card" as const }));
  // Local mode (no payment provider) keeps its customers beside the ledger: free credit is a positive adjustment there.
  const free = (
    await ledger.db
      .selectFrom("local_adjustments")
      .select(["created_at", "delta_cents", "metadata"])
      .where("customer_id", "=", customerId)
      .where("created_at", ">=", Math.floor(since / 1000)) // Stripe's unit: seconds
      .where("delta_cents", ">", 0)
      .execute()
  )
    .filter((r) => (JSON.parse(r.metadata) as Record<string, unknown>).vesta_kind === "free_credit")
    .map((r) => ({ at: r.created_at * 1000, cents: r.delta_cents, kind: "free_credit" as const }));
  return [...card, ...free].sort((a, b) => a.at - b.at);
}

/** The last `days` days (today included) of `customerId`, oldest first; `creditNow` is its available credit now (cents). */
export async function usageOf(ledger: Ledger, customerId: string, days: number, creditNow: number, now = Date.now()): Promise<Usage> {
  await ledger.commits.flush(); // every debit committed so far
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = today - (days - 1) * DAY_MS;
  // Days by integer division of the millisecond time, written once for both databases (BIGINT / BIGINT and INTEGER / INTEGER both truncate).
  const day = sql<number>`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
  const charges = (
    await ledger.db
      .selectFrom("debits")
      .select([day.as("day"), "kind", (eb) => eb.fn.sum<number>("cents").as("cents"), (eb) => eb.fn.countAll<number>().as("count")])
      .where("customer_id", "=", customerId)
      .where("created_at", ">=", since)
      .groupBy([day, "kind"])
      .execute()
  ).map((c) => ({ day: toNumber(c.day), kind: c.kind, cents: toNumber(c.cents), count: toNumber(c.count) }));
  const tops = await topUps(ledger, customerId, since);
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
