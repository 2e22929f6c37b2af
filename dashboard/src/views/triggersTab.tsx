/**
 * The Triggers tab: the signed-in triggers user's webhook, schedule and chain-event triggers (the
 * triggers service, with its session cookie), made from this account's actions and usage keys; each
 * with its run history. Signing in to the triggers service is its e-mail link, which comes back here.
 */
import { useMemo, useState } from "preact/hooks";
import { codeOfCid, usageKeyId, type Backend } from "../backend";
import { codeStore, knownKeys, type DashboardConfig } from "../session";
import { triggersApi, type Trigger, type TriggersApi, type TriggerRun } from "../triggersApi";
import { bodyOf, CHAINS, cronPreview, draftOf, emptyDraft, problems, type Draft } from "../triggerDraft";
import { Alert, copyText, Field, Form, Section, short, useAction, useEvery, useLoad } from "../ui";
import { CodeField, syntaxError } from "../codeField";

/** How often the trigger list (and an open run history) refreshes by itself. */
export const REFRESH_MS = 10_000;
import { fromTriggerRun, RunList, StatusBadge, when } from "./runList";

const KINDS = [
  ["webhook", "Webhook (an HTTP POST runs it)"],
  ["schedule", "Schedule (cron, UTC)"],
  ["chain_event", "Chain event (a contract's log)"],
] as const;

/**
 * Whether two URLs are on the same site, as browsers decide where a SameSite=Lax cookie goes: the
 * same scheme and registrable domain (approximated by the last two labels of the host name; an IP
 * address or a single-label host is its own site). Ports do not count.
 */
export function sameSite(a: string, b: string): boolean {
  const [x, y] = [new URL(a), new URL(b)];
  const site = (h: string) => (/^[\d.]+$|^\[|^[^.]+$/.test(h) ? h : h.split(".").slice(-2).join("."));
  return x.protocol === y.protocol && site(x.hostname) === site(y.hostname);
}

/** The triggers service's sign-in is a SameSite=Lax cookie: served from another site, this page never sees it. */
function CrossSiteWarning({ base }: { base: string }) {
  if (sameSite(base, window.location.href)) return null;
  return (
    <p class="warning" role="note" data-testid="triggers-cross-site">
      The triggers service ({new URL(base).host}) is on another site than this dashboard ({window.location.host}): browsers do not send its sign-in cookie
      (SameSite=Lax) with this page's requests, so the Triggers tab cannot stay signed in. Serve both under one site (e.g. dashboard.example.com and
      triggers.example.com, both https), or manage triggers with an API token (SKILL.md).
    </p>
  );
}

export function TriggersView({ backend, config }: { backend: Backend; config: DashboardConfig }) {
  const base = (config.triggers_url ?? "").replace(/\/+$/, "");
  const api = useMemo(() => triggersApi(base), [base]);
  const session = useLoad(() => (base ? api.session() : Promise.resolve(null)), [base]);
  if (!base) return <Section title="Triggers"><Alert error="this node has no triggers service configured (VESTA_TRIGGERS_URL)" /></Section>;
  if (session.error) return <Section title="Triggers"><Alert error={session.error} /></Section>;
  if (session.data === undefined) return <Section title="Triggers"><p>Checking your triggers session…</p></Section>;
  if (session.data === null)
    return (
      <>
        <CrossSiteWarning base={base} />
        <TriggersSignIn api={api} base={base} />
      </>
    );
  return <TriggersManager api={api} backend={backend} email={session.data.email} base={base} />;
}

function TriggersSignIn({ api, base }: { api: TriggersApi; base: string }) {
  const act = useAction();
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState(false);
  const send = () =>
    act.run(async () => {
      await api.login(email, `${window.location.href.split("#")[0]}#/triggers`);
      setSent(true);
      setEmail("");
    });
  return (
    <Section title="Triggers">
      <p>
        Triggers run your actions on a webhook, a schedule or a chain event. They live in the triggers service at <span class="mono">{base}</span>, which
        signs you in by e-mail.
      </p>
      <Alert error={act.error} />
      {sent ? (
        <p class="ok" role="status">A sign-in link is on its way (on a local node it is printed in the triggers service's log). Open it: it brings you back here.</p>
      ) : (
        <Form onSubmit={() => send()}>
          <Field label="E-mail" name="triggers_login_email" type="email" value={email} onInput={setEmail} required />
          <button class="primary" disabled={act.busy}>Send me a sign-in link</button>
        </Form>
      )}
    </Section>
  );
}

type Latest = Record<string, TriggerRun | undefined>;

function TriggersManager({ api, backend, email, base }: { api: TriggersApi; backend: Backend; email: string; base: string }) {
  const list = useLoad(async () => {
    const triggers = await api.list();
    // The newest run of each: a failing trigger shows in the list.
    const latest: Latest = Object.fromEntries(await Promise.all(triggers.map(async (t) => [t.id, (await api.runs(t.id, 1)).runs[0]] as const)));
    return { triggers, latest };
  });
  useEvery(REFRESH_MS, () => list.reload());
  const keys = useLoad(() => backend.listKeys().catch(() => []));
  const act = useAction();
  const [draft, setDraft] = useState<Draft>();
  const [history, setHistory] = useState<string>();
  const [done, setDone] = useState<string>();
  const keyName = (hash: string) => keys.data?.find((k) => k.api_key_hash.toLowerCase() === hash.toLowerCase())?.name;

  const toggle = (t: Trigger) =>
    act.run(async () => {
      await api.update(t.id, { enabled: !t.enabled });
      setDone(`${t.enabled ? "Paused" : "Resumed"} “${t.name}”.`);
      list.reload();
    });
  const remove = (t: Trigger) =>
    act.run(async () => {
      if (!window.confirm(`Delete trigger "${t.name}" and its run history?`)) return;
      await api.remove(t.id);
      if (history === t.id) setHistory(undefined);
      setDone(`Deleted “${t.name}”.`);
      list.reload();
    });
  const copy = (t: Trigger) => act.run(async () => (await copyText(t.webhook_url!), setDone(`Copied the webhook URL of “${t.name}”.`)));

  return (
    <>
      <Section title="Triggers">
        <p class="hint">
          Signed in to the triggers service at <span class="mono">{base}</span> as <strong data-testid="triggers-user">{email}</strong>. Agents use the same API:{" "}
          <a href={`${base}/SKILL.md`} target="_blank" rel="noopener">
            triggers guide (SKILL.md)
          </a>
          .
        </p>
        <Alert error={list.error ?? act.error} />
        {done && <p class="ok" role="status">{done}</p>}
        <p class="hint">
          The list refreshes every {REFRESH_MS / 1000} s.{" "}
          <button type="button" onClick={() => list.reload()}>
            Refresh list
          </button>
        </p>
        <div class="scroll">
          <table class="list cards" data-testid="triggers">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>State</th>
                <th>Last run</th>
                <th>Usage key</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data?.triggers.map((t) => {
                const last = list.data!.latest[t.id];
                return (
                  <tr key={t.id} class={last?.status === "failed" ? "failed" : ""} data-testid="trigger-row">
                    <td data-label="Name">{t.name}</td>
                    <td data-label="Kind">{t.kind === "schedule" ? `schedule ${String(t.config.cron)}` : t.kind.replace("_", " ")}</td>
                    <td data-label="State">{t.enabled ? "active" : <strong>paused</strong>}</td>
                    <td data-label="Last run" data-testid="trigger-last-run">
                      {last ? (
                        <>
                          <StatusBadge status={last.status} /> {when(last.started_at ?? last.created_at)}
                        </>
                      ) : (
                        "never"
                      )}
                    </td>
                    <td data-label="Usage key">{keyName(t.usage_api_key_hash) ?? <span class="mono">{short(t.usage_api_key_hash)}</span>}</td>
                    <td class="actions">
                      <button type="button" onClick={() => setHistory(history === t.id ? undefined : t.id)}>
                        Runs
                      </button>
                      <button type="button" onClick={() => (setDone(undefined), setDraft(draftOf(t)))}>
                        Edit
                      </button>
                      <button type="button" disabled={act.busy} onClick={() => toggle(t)}>
                        {t.enabled ? "Pause" : "Resume"}
                      </button>
                      {t.webhook_url && (
                        <button type="button" onClick={() => copy(t)}>
                          Copy URL
                        </button>
                      )}
                      <button type="button" class="danger" disabled={act.busy} onClick={() => remove(t)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                );
              })}
              {list.data?.triggers.length === 0 && (
                <tr>
                  <td colSpan={6}>No triggers yet.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
        {!draft && (
          <button type="button" class="primary" onClick={() => (setDone(undefined), setDraft(emptyDraft()))}>
            New trigger
          </button>
        )}
      </Section>
      {draft && (
        <TriggerForm
          key={draft.id ?? "new"}
          api={api}
          backend={backend}
          initial={draft}
          keys={keys.data ?? []}
          onCancel={() => setDraft(undefined)}
          onSaved={(t, created) => {
            setDraft(undefined);
            setDone(created ? `Created “${t.name}”.${t.webhook_url ? ` Its webhook URL: ${t.webhook_url}` : ""}` : `Saved “${t.name}”.`);
            list.reload();
          }}
        />
      )}
      {history && list.data?.triggers.some((t) => t.id === history) && <TriggerRuns api={api} trigger={list.data.triggers.find((t) => t.id === history)!} />}
    </>
  );
}

function TriggerRuns({ api, trigger }: { api: TriggersApi; trigger: Trigger }) {
  const [offset, setOffset] = useState(0);
  const runs = useLoad(() => api.runs(trigger.id, 20, offset), [trigger.id, offset]);
  useEvery(REFRESH_MS, () => runs.reload());
  return (
    <Section title={`Runs of “${trigger.name}”`}>
      {trigger.webhook_url && (
        <p class="hint">
          Fire it: <span class="mono" data-testid="webhook-url">{trigger.webhook_url}</span> (POST any JSON or text body).
        </p>
      )}
      <Alert error={runs.error} />
      <button type="button" onClick={() => runs.reload()}>
        Refresh
      </button>
      <RunList testId="trigger-runs" runs={runs.data?.runs.map(fromTriggerRun)} empty="No runs yet." />
      {runs.data && (
        <div class="row">
          <span class="hint">
            {runs.data.total === 0 ? "" : `${offset + 1}–${offset + runs.data.runs.length} of ${runs.data.total}`}
          </span>
          {offset > 0 && <button type="button" onClick={() => setOffset(Math.max(0, offset - 20))}>Newer</button>}
          {offset + runs.data.runs.length < runs.data.total && <button type="button" onClick={() => setOffset(offset + 20)}>Older</button>}
        </div>
      )}
    </Section>
  );
}

function TriggerForm(props: { api: TriggersApi; backend: Backend; initial: Draft; keys: { api_key_hash: string; name: string }[]; onCancel: () => void; onSaved: (t: Trigger, created: boolean) => void }) {
  const { api, backend, keys } = props;
  const creating = props.initial.id === undefined;
  const [d, setD] = useState(props.initial);
  const [keyRow, setKeyRow] = useState("");
  const [cid, setCid] = useState("");
  const [touched, setTouched] = useState<Record<string, boolean>>({});
  const actions = useLoad(() => backend.listActions().catch(() => []));
  const act = useAction();
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const touch = (name: string) => setTouched((t) => ({ ...t, [name]: true }));
  const bad = problems(d, creating);
  const shown = (name: string) => (touched[name] || touched.submit ? bad[name] : undefined);
  const cron = d.kind === "schedule" ? cronPreview(d.cron) : undefined;
  const withCid = (actions.data ?? []).map((a) => ({ ...a, cid: codeStore.cidOf(a.hashedCid) })).filter((a) => a.cid);

  const loadCid = (c: string) =>
    act.run(async () => {
      setCid(c);
      if (!c) return;
      const code = await codeOfCid(c);
      if (code === undefined) throw new Error(`this node stores no code for ${c} yet (code is stored when it is first run): paste it`);
      set({ code });
      touch("code");
    });
  const pickKey = (hash: string) => {
    setKeyRow(hash);
    set({ key: hash ? (knownKeys().get(hash) ?? "") : "" });
  };
  const keyMismatch = keyRow && d.key.trim() && usageKeyId(d.key.trim()).toLowerCase() !== keyRow.toLowerCase() ? "this value is not the chosen usage key (its hash differs)" : undefined;

  const save = () =>
    act.run(async () => {
      setTouched({ submit: true });
      const first = Object.values(bad)[0] ?? keyMismatch ?? (d.code.trim() ? await syntaxError(d.code) : undefined);
      if (first) throw new Error(first);
      const body = bodyOf(d);
      if (creating) return props.onSaved(await api.create(body), true);
      const { kind: _kind, ...patch } = body;
      props.onSaved(await api.update(d.id!, patch), false);
    });

  const err = (name: string) => (shown(name) ? <p class="field-error" role="alert">{shown(name)}</p> : null);

  return (
    <Section title={creating ? "New trigger" : `Edit “${props.initial.name}”`}>
      <Form onSubmit={() => save()}>
        <Field label="Trigger name" name="trigger_name" value={d.name} onInput={(v) => (set({ name: v }), touch("name"))} />
        {err("name")}
        <label class="field">
          <span>Kind</span>
          <select name="trigger_kind" value={d.kind} disabled={!creating} onChange={(e) => set({ kind: (e.currentTarget as HTMLSelectElement).value as Draft["kind"] })}>
            {KINDS.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>

        {d.kind === "schedule" && (
          <div>
            <Field label="Cron (UTC; 5 fields, or 6 with seconds)" name="trigger_cron" value={d.cron} onInput={(v) => (set({ cron: v }), touch("cron"))} />
            {cron && "error" in cron ? (
              <p class="field-error" role="alert">{cron.error}</p>
            ) : (
              cron && (
                <div class="hint" data-testid="cron-preview">
                  <strong>{cron.words}</strong>. Next: {cron.next.map((t) => `${t.toISOString().replace("T", " ").slice(0, 19)} UTC`).join(", ")}
                </div>
              )
            )}
          </div>
        )}

        {d.kind === "chain_event" && (
          <fieldset>
            <legend>Chain event</legend>
            <label class="field">
              <span>Chain</span>
              <select name="trigger_chain" value={d.chain} onChange={(e) => set({ chain: (e.currentTarget as HTMLSelectElement).value })}>
                {CHAINS.map((c) => (
                  <option key={c}>{c}</option>
                ))}
              </select>
            </label>
            <Field label="Contract address" name="trigger_contract" value={d.contract} onInput={(v) => (set({ contract: v }), touch("contract"))} placeholder="0x…" />
            {err("contract")}
            <Field label="Event signature" name="trigger_event" value={d.event} onInput={(v) => (set({ event: v }), touch("event"))} placeholder="Transfer(address indexed from, address indexed to, uint256 value)" />
            {err("event")}
            {[0, 1, 2].map((i) => (
              <div key={i}>
                <Field
                  label={`Topic ${i + 1} filter (optional; several: comma-separated)`}
                  name={`trigger_topic${i + 1}`}
                  value={d.topics[i]}
                  onInput={(v) => (set({ topics: d.topics.map((t, j) => (j === i ? v : t)) as Draft["topics"] }), touch(`topic${i + 1}`))}
                  placeholder="0x… (32 bytes)"
                />
                {err(`topic${i + 1}`)}
              </div>
            ))}
            <Field label="Start block (optional: backfill from it)" name="trigger_start_block" value={d.startBlock} onInput={(v) => (set({ startBlock: v }), touch("startBlock"))} />
            {err("startBlock")}
            <Field label="Confirmations (optional)" name="trigger_confirmations" value={d.confirmations} onInput={(v) => (set({ confirmations: v }), touch("confirmations"))} />
            {err("confirmations")}
          </fieldset>
        )}

        <label class="field">
          <span>Action</span>
          <select name="trigger_action" value={cid} onChange={(e) => loadCid((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">{withCid.length ? "(choose one of this account's actions)" : "(no action of this account is known to this browser: paste its code)"}</option>
            {withCid.map((a) => (
              <option key={a.hashedCid} value={a.cid}>
                {a.name || a.cid}
              </option>
            ))}
          </select>
        </label>
        <CodeField label="Action code" name="trigger_code" value={d.code} onInput={(v) => (set({ code: v }), touch("code"))} rows={8} />
        {err("code")}
        <Field label="Default params (JSON object, merged into every run's params)" name="trigger_params" value={d.params} onInput={(v) => (set({ params: v }), touch("params"))} area rows={3} />
        {err("params")}

        <label class="field">
          <span>{creating ? "Usage key it runs with" : "Usage key (keep the trigger's, or choose another)"}</span>
          <select name="trigger_key" value={keyRow} onChange={(e) => pickKey((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">{creating ? "(paste a usage key's value below)" : "(keep the current key)"}</option>
            {keys.map((k) => (
              <option key={k.api_key_hash} value={k.api_key_hash}>
                {k.name} {short(k.api_key_hash, 6)}
                {knownKeys().get(k.api_key_hash) ? "" : " (paste its value)"}
              </option>
            ))}
          </select>
        </label>
        {(creating || keyRow) && !(keyRow && knownKeys().get(keyRow)) && (
          <Field label="Usage key value (never the account key; stored encrypted by the triggers service)" name="trigger_key_value" type="password" value={d.key} onInput={(v) => (set({ key: v }), touch("key"))} />
        )}
        {err("key")}
        {keyMismatch && <p class="field-error" role="alert">{keyMismatch}</p>}

        <Alert error={act.error} />
        <button class="primary" disabled={act.busy}>{creating ? "Create trigger" : "Save trigger"}</button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </Form>
    </Section>
  );
}
