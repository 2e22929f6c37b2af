/**
 * Runs, as the Triggers tab (a trigger's history) and the Runs tab (the core's list_runs) show them:
 * one list, the same detail view. A failed run is marked in red in its row, and counted in the header.
 */
import { useState } from "preact/hooks";
import type { Schemas } from "@client";
import type { TriggerRun } from "../triggersApi";
import { pretty, short } from "../ui";

/** One run, whichever service recorded it. */
export type RunShown = {
  id: string;
  status: string;
  startedAt: string | null;
  durationMs: number | null;
  attempts?: number;
  costCents?: number;
  cid?: string;
  keyHash?: string;
  params?: unknown;
  response?: unknown;
  logs?: string;
  logsTruncated?: boolean;
  error?: string | null;
};

/** A triggers run: the core's answer it stored holds the action's response and logs. */
export function fromTriggerRun(r: TriggerRun): RunShown {
  const answer = r.response as { response?: unknown; logs?: unknown; ipfs_id?: unknown; cost_cents?: unknown } | null;
  const wrapped = answer !== null && typeof answer === "object" && "logs" in answer;
  return {
    id: r.id,
    status: r.status,
    startedAt: r.started_at ?? r.created_at,
    durationMs: r.started_at && r.finished_at ? Date.parse(r.finished_at) - Date.parse(r.started_at) : null,
    attempts: r.attempts,
    params: r.params,
    response: wrapped ? answer.response : r.response,
    logs: wrapped && typeof answer.logs === "string" ? answer.logs : undefined,
    cid: wrapped && typeof answer.ipfs_id === "string" ? answer.ipfs_id : undefined,
    // The core's answer says what the run cost (a node with billing).
    ...(wrapped && typeof answer.cost_cents === "number" ? { costCents: answer.cost_cents } : {}),
    error: r.error,
  };
}

/** A run of the core's history (list_runs): no params or response are kept there. */
export const fromCoreRun = (r: Schemas["RunItem"]): RunShown => ({
  id: r.run_id,
  status: r.status,
  startedAt: r.started_at,
  durationMs: r.duration_ms,
  costCents: r.cost_cents,
  cid: r.ipfs_id,
  keyHash: r.key_hash,
  logs: r.logs,
  logsTruncated: r.logs_truncated,
  error: r.error,
});

export const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—");
export const duration = (ms: number | null) => (ms === null ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
export const dollars = (cents: number) => `$${(cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

export const StatusBadge = ({ status }: { status: string }) => <span class={`badge ${status}`}>{status}</span>;

export function RunDetail({ run }: { run: RunShown }) {
  return (
    <div class="run-detail" data-testid="run-detail">
      <dl>
        <dt>Run</dt>
        <dd class="mono">{run.id}</dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge status={run.status} />
        </dd>
        <dt>Started</dt>
        <dd>{when(run.startedAt)}</dd>
        <dt>Duration</dt>
        <dd data-testid="run-duration">{duration(run.durationMs)}</dd>
        {run.attempts !== undefined && (
          <>
            <dt>Attempts</dt>
            <dd data-testid="run-attempts">{run.attempts}</dd>
          </>
        )}
        {run.costCents !== undefined && (
          <>
            <dt>Cost</dt>
            <dd data-testid="run-cost">{dollars(run.costCents)}</dd>
          </>
        )}
        {run.cid && (
          <>
            <dt>Action</dt>
            <dd class="mono">{run.cid}</dd>
          </>
        )}
        {run.keyHash && (
          <>
            <dt>Key</dt>
            <dd class="mono">{short(run.keyHash)}</dd>
          </>
        )}
      </dl>
      {run.error && (
        <>
          <h4>Error</h4>
          <pre class="alert" data-testid="run-error">{run.error}</pre>
        </>
      )}
      {run.params !== undefined && (
        <>
          <h4>Params</h4>
          <pre data-testid="run-params">{pretty(run.params)}</pre>
        </>
      )}
      {run.response !== undefined && (
        <>
          <h4>Response</h4>
          <pre data-testid="run-detail-response">{pretty(run.response)}</pre>
        </>
      )}
      {run.logs !== undefined && (
        <>
          <h4>Logs{run.logsTruncated ? " (the first ones)" : ""}</h4>
          <pre data-testid="run-detail-logs">{run.logs || "(none)"}</pre>
        </>
      )}
    </div>
  );
}

/** A list of runs; each opens its detail in place. */
export function RunList({ runs, testId, empty }: { runs?: RunShown[]; testId: string; empty: string }) {
  const [open, setOpen] = useState<string>();
  const failed = (runs ?? []).filter((r) => r.status === "failed").length;
  return (
    <div data-testid={testId}>
      {failed > 0 && (
        <p class="failed-count" data-testid="failed-count">
          {failed} failed {failed === 1 ? "run" : "runs"} on this page
        </p>
      )}
      {runs?.length === 0 && <p class="hint">{empty}</p>}
      <ul class="runs">
        {(runs ?? []).map((r) => (
          <li key={r.id} class={r.status === "failed" ? "failed" : ""} data-testid="run-row">
            <button type="button" class="run-summary" aria-expanded={open === r.id} onClick={() => setOpen(open === r.id ? undefined : r.id)}>
              <StatusBadge status={r.status} />
              <span>{when(r.startedAt)}</span>
              <span>{duration(r.durationMs)}</span>
              {r.costCents !== undefined && <span>{dollars(r.costCents)}</span>}
              {r.cid && <span class="mono">{short(r.cid, 6)}</span>}
            </button>
            {open === r.id && <RunDetail run={r} />}
          </li>
        ))}
      </ul>
    </div>
  );
}
