/** The Runs tab: the account's action runs (list_runs), filtered by status, CID or key, a page at a time. */
import { useState } from "preact/hooks";
import { unwrap } from "@client";
import type { Backend } from "../backend";
import { Alert, Field, Section, useLoad } from "../ui";
import { fromCoreRun, RunList } from "./runList";

type Filter = { status: "" | "success" | "failed"; ipfs_id: string; key_hash: string };

/** A filter is applied once it is complete: a half-typed CID or hash filters nothing (and says so). */
const CID = /^(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,})$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;

export function RunsView({ backend }: { backend: Backend }) {
  const [filter, setFilter] = useState<Filter>({ status: "", ipfs_id: "", key_hash: "" });
  // The cursors of the pages before this one (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const [cid, keyHash] = [filter.ipfs_id.trim(), filter.key_hash.trim()];
  const incomplete = [cid && !CID.test(cid) ? "the CID is not a whole CID yet (Qm… or b…)" : "", keyHash && !HASH.test(keyHash) ? "the key hash is 0x and 64 hex digits" : ""].filter(Boolean);
  const page = useLoad(async () => {
    const query = {
      limit: 20,
      ...(filter.status ? { status: filter.status } : {}),
      ...(CID.test(cid) ? { ipfs_id: cid } : {}),
      ...(HASH.test(keyHash) ? { key_hash: keyHash } : {}),
      ...(cursor ? { cursor } : {}),
    };
    return unwrap(backend.api.GET("/core/v1/list_runs", { params: { query } }));
  }, [filter.status, CID.test(cid) ? cid : "", HASH.test(keyHash) ? keyHash : "", cursor]);
  const set = (patch: Partial<Filter>) => (setCursors([]), setFilter({ ...filter, ...patch }));

  return (
    <Section title="Runs">
      <p class="hint">Every action run of this account (dashboard, API, triggers), newest first: status, start, duration, cost, logs and the error with its stack. Params and responses are not kept here (a trigger's run keeps them, in the Triggers tab).</p>
      <div class="filters">
        <label class="field">
          <span>Status</span>
          <select name="runs_status" value={filter.status} onChange={(e) => set({ status: (e.currentTarget as HTMLSelectElement).value as Filter["status"] })}>
            <option value="">all</option>
            <option value="success">success</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <Field label="Action CID" name="runs_cid" value={filter.ipfs_id} onInput={(v) => set({ ipfs_id: v })} placeholder="Qm…" />
        {backend.kind === "wallet" || backend.runKey === undefined ? null : <Field label="Key hash" name="runs_key" value={filter.key_hash} onInput={(v) => set({ key_hash: v })} placeholder="0x…" />}
      </div>
      {incomplete.length > 0 && <p class="warning" role="note">Not filtering yet: {incomplete.join("; ")}.</p>}
      <Alert error={page.error} />
      <RunList testId="core-runs" runs={page.data?.runs.map(fromCoreRun)} empty="No runs recorded yet." />
      <div class="row">
        {cursors.length > 0 && (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer runs
          </button>
        )}
        {page.data?.next_cursor && (
          <button type="button" onClick={() => setCursors([...cursors, page.data!.next_cursor!])}>
            Older runs
          </button>
        )}
      </div>
    </Section>
  );
}
