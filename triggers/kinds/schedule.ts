import { Cron } from "croner";
import { z } from "zod";
import { badRequest } from "../../protocol/errors";
import { text } from "../../protocol/textSchema";
import { newId } from "../crypto";
import type { TriggersCtx } from "../context";
import type { TriggerRow } from "../store/types";

export const MIN_INTERVAL_MS = 30_000;
export const ScheduleConfig = z.strictObject({ cron: text({ kind: "label", min: 1, maxChars: 200 }) });

const cronOf = (expr: string) => new Cron(expr, { paused: true, timezone: "UTC" });

/**
 * Validates the cron (5 or 6 fields) and rejects anything that can fire twice within 30 seconds,
 * with a bounded amount of work whatever the expression (a rare date such as Feb 29 costs one
 * search, not hundreds): a 5-field cron fires at most once a minute, so only the seconds of a
 * 6-field one can come closer than 30 s, and those repeat every minute (checked over one minute,
 * with the wrap to the next).
 */
export function validateSchedule(config: z.output<typeof ScheduleConfig>): void {
  const fields = config.cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) throw badRequest(`config.cron: a cron needs 5 fields, or 6 with seconds; got ${fields.length}`);
  let cron: Cron;
  try {
    cron = cronOf(config.cron);
  } catch (err) {
    throw badRequest(`config.cron: ${(err as Error).message}`);
  }
  if (fields.length === 6) {
    const secs = new Set(cronOf(`${fields[0]} * * * * *`).nextRuns(61, new Date("2000-01-01T00:00:00Z")).map((d) => d.getUTCSeconds()));
    const s = [...secs].sort((a, b) => a - b);
    const gaps = s.map((v, i) => (i === 0 ? s[0] + 60 - s[s.length - 1] : v - s[i - 1]));
    if (s.length > 1 && Math.min(...gaps) * 1000 < MIN_INTERVAL_MS) throw badRequest(`config.cron fires more often than every 30 seconds (the minimum interval)`);
  }
  if (!cron.nextRun()) throw badRequest("config.cron never fires");
}

export const initialScheduleState = (now: number) => ({ last_checked: now });

/**
 * The latest cron time in (after, upTo], if any, by bisection on nextRun (which never decreases):
 * about 40 nextRun calls whatever the expression and however long the service was down.
 */
export function latestDue(expr: string, after: number, upTo: number): Date | undefined {
  const cron = cronOf(expr);
  const first = cron.nextRun(new Date(after));
  if (!first || first.getTime() > upTo) return undefined;
  // Invariant: lo is a cron time <= the answer; no cron time lies in (hi, upTo]. Cron times are whole seconds apart.
  let lo = first.getTime();
  let hi = upTo;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    const next = cron.nextRun(new Date(mid));
    if (next && next.getTime() <= upTo) lo = next.getTime();
    else hi = mid;
  }
  const last = cron.nextRun(new Date(lo)); // the answer is lo, or hi = lo + 1 s
  return new Date(last && last.getTime() <= upTo ? last.getTime() : lo);
}

/** One scheduler scan: each enabled schedule fires at most once, for its latest missed time (so downtime runs it once). */
export async function scanSchedules(ctx: TriggersCtx, triggers?: TriggerRow[]): Promise<number> {
  const now = ctx.now();
  let fired = 0;
  for (const t of triggers ?? (await ctx.store.listEnabled("schedule"))) {
    try {
      const cronExpr = String(t.config.cron);
      const last = Number(t.state.last_checked ?? t.createdAt);
      const due = latestDue(cronExpr, last, now);
      if (!due) continue;
      const scheduledAt = due.toISOString();
      const params = { ...t.defaultParams, source: "schedule", scheduled_at: scheduledAt, cron: cronExpr };
      const ids = await ctx.store.enqueue(t.id, [{ id: newId("run"), params, dedupeKey: `schedule:${scheduledAt}` }], now, { ...t.state, last_checked: due.getTime() });
      fired += ids.length;
    } catch (err) {
      // One schedule that cannot be read (e.g. a cron an older version accepted) never stops the others.
      ctx.logger.warn({ trigger: t.id, err: (err as Error).message }, "schedule scan failed for one trigger; skipping it");
    }
  }
  if (fired) ctx.wake();
  return fired;
}
