/** The Usage tab: charges by day and kind, top-ups, and the credit over time (GET /billing/usage). */
import { lazy, Suspense } from "preact/compat";
import { useState } from "preact/hooks";
import { unwrap } from "@client";
import type { Backend } from "../backend";
import { Alert, Section, useLoad } from "../ui";
import { dollars } from "./runList";

const UsageChart = lazy(() => import("./usageChart"));

export function UsageView({ backend }: { backend: Backend }) {
  const [days, setDays] = useState(30);
  const usage = useLoad(() => unwrap(backend.api.GET("/core/v1/billing/usage", { params: { query: { days } } })), [days]);
  const busy = usage.data?.days.filter((d) => d.run_count || d.write_count || d.topup_cents).reverse();
  const total = (k: "run_cents" | "write_cents" | "topup_cents") => usage.data?.days.reduce((s, d) => s + d[k], 0) ?? 0;
  return (
    <Section title="Usage">
      <label class="field">
        <span>Period</span>
        <select name="usage_days" value={days} onChange={(e) => setDays(Number((e.currentTarget as HTMLSelectElement).value))}>
          {[7, 30, 90, 365].map((n) => (
            <option key={n} value={n}>
              last {n} days
            </option>
          ))}
        </select>
      </label>
      <Alert error={usage.error} />
      {usage.data && (
        <>
          <p data-testid="usage-totals">
            Credit now <strong>{dollars(usage.data.credit_cents)}</strong>. In these {days} days: runs {dollars(total("run_cents"))}, relayed writes {dollars(total("write_cents"))}, top-ups{" "}
            {dollars(total("topup_cents"))}.
          </p>
          <Suspense fallback={<p class="hint">Drawing the chart…</p>}>
            <UsageChart days={usage.data.days.map((d) => ({ date: d.date, credit_cents: d.credit_cents, charged_cents: d.run_cents + d.write_cents }))} />
          </Suspense>
          <h3>By day</h3>
          <div class="scroll">
            <table class="list cards" data-testid="usage-days">
              <thead>
                <tr>
                  <th>Day (UTC)</th>
                  <th>Runs</th>
                  <th>Relayed writes</th>
                  <th>Top-ups</th>
                  <th>Credit at day's end</th>
                </tr>
              </thead>
              <tbody>
                {busy?.map((d) => (
                  <tr key={d.date}>
                    <td data-label="Day">{d.date}</td>
                    <td data-label="Runs">
                      {d.run_count} · {dollars(d.run_cents)}
                    </td>
                    <td data-label="Relayed writes">
                      {d.write_count} · {dollars(d.write_cents)}
                    </td>
                    <td data-label="Top-ups">{dollars(d.topup_cents)}</td>
                    <td data-label="Credit">{dollars(d.credit_cents)}</td>
                  </tr>
                ))}
                {busy?.length === 0 && (
                  <tr>
                    <td colSpan={5}>Nothing charged or topped up in these days.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
          {usage.data.topups.length > 0 && (
            <>
              <h3>Top-ups</h3>
              <ul data-testid="usage-topups">
                {usage.data.topups.map((t) => (
                  <li key={t.at}>
                    {new Date(t.at).toLocaleString()}: {dollars(t.cents)} ({t.kind === "card" ? "card payment" : "free credit"})
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </Section>
  );
}
