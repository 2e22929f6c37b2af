/** The Audit tab: the account's administrative history from the contract's events (list_audit_events). */
import { useState } from "preact/hooks";
import { unwrap } from "@client";
import type { Backend } from "../backend";
import type { DashboardConfig } from "../session";
import { Alert, Section, short, useLoad } from "../ui";
import { when } from "./runList";

export function AuditView({ backend, config }: { backend: Backend; config: DashboardConfig }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => unwrap(backend.api.GET("/core/v1/list_audit_events", { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } })), [cursor]);
  const explorer = config.explorer_url?.replace(/\/+$/, "");
  return (
    <Section title="Audit log">
      <p class="hint">Every administrative change of this account, as the contract recorded it: who (the key that acted, the address that sent it), what, when, and its transaction.</p>
      <Alert error={page.error} />
      <div class="scroll">
        <table class="list cards" data-testid="audit">
          <thead>
            <tr>
              <th>When</th>
              <th>What</th>
              <th>Who</th>
              <th>Transaction</th>
            </tr>
          </thead>
          <tbody>
            {page.data?.events.map((e) => (
              <tr key={`${e.tx_hash}:${e.log_index}`} data-testid="audit-row">
                <td data-label="When">{when(e.time)}</td>
                <td data-label="What">
                  <strong>{e.event}</strong>
                  <div class="hint">
                    {Object.entries(e.args)
                      .map(([k, v]) => `${k}: ${typeof v === "string" && v.length > 24 ? short(v) : String(v)}`)
                      .join(", ")}
                  </div>
                </td>
                <td data-label="Who" class="mono">
                  {e.actor_key_hash ? `key ${short(e.actor_key_hash)}` : ""}
                  <div>{short(e.sender)}</div>
                </td>
                <td data-label="Transaction" class="mono">
                  {explorer ? (
                    <a href={`${explorer}/tx/${e.tx_hash}`} target="_blank" rel="noopener">
                      {short(e.tx_hash)}
                    </a>
                  ) : (
                    <span title={e.tx_hash}>{short(e.tx_hash)}</span>
                  )}
                </td>
              </tr>
            ))}
            {page.data?.events.length === 0 && (
              <tr>
                <td colSpan={4}>Nothing on this page.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <div class="row">
        {cursors.length > 0 && (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
        )}
        {page.data?.next_cursor && (
          <button type="button" onClick={() => setCursors([...cursors, page.data!.next_cursor!])}>
            Older
          </button>
        )}
      </div>
    </Section>
  );
}
