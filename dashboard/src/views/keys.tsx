/** Usage keys: the permission set as checkboxes and a group picker; create (shown once), edit, remove. */
import { useState } from "preact/hooks";
import { usageKeyId, type Backend, type Group, type KeyInput, type UsageKey } from "../backend";
import { Alert, Check, Field, Form, ListTable, Section, SecretReveal, short, useAction, useLoad } from "../ui";
import { knownKeys, type DashboardConfig } from "../session";
import { triggersApi } from "../triggersApi";

const LISTS = [
  ["execute_in_groups", "Run actions"],
  ["manage_ipfs_ids_in_groups", "Manage actions"],
  ["add_pkp_to_groups", "Add wallets"],
  ["remove_pkp_from_groups", "Remove wallets"],
] as const;
type ListField = (typeof LISTS)[number][0];

const emptyKey = (): KeyInput => ({
  name: "",
  description: "",
  expiration: 0,
  can_create_groups: false,
  can_delete_groups: false,
  can_create_pkps: false,
  manage_ipfs_ids_in_groups: [],
  add_pkp_to_groups: [],
  remove_pkp_from_groups: [],
  execute_in_groups: [],
});

const fromRow = (k: UsageKey, groups: Group[]): KeyInput => ({
  name: k.name,
  description: k.description,
  expiration: Number(k.expiration),
  can_create_groups: k.can_create_groups,
  can_delete_groups: k.can_delete_groups,
  can_create_pkps: k.can_create_pkps,
  manage_ipfs_ids_in_groups: existing(k.manage_ipfs_ids_in_groups, groups),
  add_pkp_to_groups: existing(k.add_pkp_to_groups, groups),
  remove_pkp_from_groups: existing(k.remove_pkp_from_groups, groups),
  execute_in_groups: existing(k.execute_in_groups, groups),
});

/** The groups of `ids` that exist (a deleted group grants nothing, and is not shown). */
const existing = (ids: number[], groups: Group[]) => ids.filter((id) => id === 0 || groups.some((g) => g.id === id));

const groupsText = (ids: number[], groups: Group[]) => {
  const shown = existing(ids, groups);
  return shown.length === 0 ? "none" : shown.includes(0) ? "all groups" : shown.map((id) => groups.find((g) => g.id === id)!.name).join(", ");
};

const toDate = (s: number) => (s ? new Date(s * 1000).toISOString().slice(0, 16) : "");
const fromDate = (v: string) => (v ? Math.floor(new Date(`${v}Z`).getTime() / 1000) : 0);

/** The permission form: three switches and, per group (or all groups), which rights the key has there. */
function KeyForm({ value, onChange, groups }: { value: KeyInput; onChange: (k: KeyInput) => void; groups: Group[] }) {
  const set = <K extends keyof KeyInput>(k: K, v: KeyInput[K]) => onChange({ ...value, [k]: v });
  const toggle = (field: ListField, id: number, on: boolean) => {
    const rest = value[field].filter((g) => g !== id);
    set(field, on ? [...rest, id].sort((a, b) => a - b) : rest);
  };
  return (
    <div class="keyform">
      <Field label="Name" name="key_name" value={value.name} onInput={(v) => set("name", v)} required />
      <Field label="Description" name="key_description" value={value.description} onInput={(v) => set("description", v)} />
      <Field label="Expires (UTC; empty = never)" name="key_expiration" type="datetime-local" value={toDate(value.expiration)} onInput={(v) => set("expiration", fromDate(v))} />
      <fieldset>
        <legend>Account-wide rights</legend>
        <Check name="can_create_groups" label="Create groups" checked={value.can_create_groups} onChange={(v) => set("can_create_groups", v)} />
        <Check name="can_delete_groups" label="Delete groups" checked={value.can_delete_groups} onChange={(v) => set("can_delete_groups", v)} />
        <Check name="can_create_pkps" label="Create wallets" checked={value.can_create_pkps} onChange={(v) => set("can_create_pkps", v)} />
      </fieldset>
      <fieldset>
        <legend>Rights per group</legend>
        <table class="picker">
          <thead>
            <tr>
              <th>Group</th>
              {LISTS.map(([, label]) => (
                <th key={label}>{label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {[{ id: 0, name: "All groups (present and future)" } as Group, ...groups].map((g) => (
              <tr key={g.id}>
                <td>{g.name}</td>
                {LISTS.map(([field, label]) => (
                  <td key={field}>
                    <input type="checkbox" aria-label={`${label} in ${g.name}`} name={`${field}:${g.id}`} checked={value[field].includes(g.id)} onChange={(e) => toggle(field, g.id, (e.currentTarget as HTMLInputElement).checked)} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </fieldset>
    </div>
  );
}

/** The triggers (of the signed-in triggers user, when this browser is signed in there) that run with the key of hash `id`. */
async function triggersUsing(config: DashboardConfig, id: string): Promise<string[]> {
  if (!config.triggers_url) return [];
  const api = triggersApi(config.triggers_url.replace(/\/+$/, ""));
  const signedIn = await api.session().catch(() => null);
  if (!signedIn) return [];
  return (await api.list()).filter((t) => t.usage_api_key_hash.toLowerCase() === id.toLowerCase()).map((t) => t.name);
}

export function KeysView({ backend, config }: { backend: Backend; config: DashboardConfig }) {
  const keys = useLoad(() => backend.listKeys());
  const groups = useLoad(() => backend.listGroups());
  const act = useAction();
  const [draft, setDraft] = useState<KeyInput>();
  const [editing, setEditing] = useState<UsageKey>();
  const [created, setCreated] = useState<string>();
  const known = knownKeys();

  const open = (row?: UsageKey) => {
    setCreated(undefined);
    setEditing(row);
    setDraft(row ? fromRow(row, groups.data ?? []) : emptyKey());
  };
  const save = () =>
    act.run(async () => {
      if (!draft!.name.trim()) throw new Error("give the key a name");
      const exp = draft!.expiration;
      if (exp && exp * 1000 <= Date.now()) throw new Error(`the expiry ${new Date(exp * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC is in the past: choose a later date, or none (never expires)`);
      if (editing) {
        await backend.updateKey({ id: editing.id }, draft!);
      } else {
        const secret = await backend.addKey(draft!);
        known.set(usageKeyId(secret), secret);
        setCreated(secret);
      }
      setDraft(undefined);
      keys.reload();
    });
  const remove = (row: UsageKey) =>
    act.run(async () => {
      const using = await triggersUsing(config, row.id);
      const warning = using.length
        ? `Usage key "${row.name}" is used by ${using.length === 1 ? "trigger" : "triggers"} ${using.map((n) => `"${n}"`).join(", ")}: ${using.length === 1 ? "its" : "their"} runs fail once it is removed. Remove it anyway?`
        : `Remove usage key "${row.name}"? Services using it stop at once.`;
      if (!window.confirm(warning)) return;
      await backend.removeKey({ id: row.id });
      known.delete(row.id);
      keys.reload();
    });
  const rotate = (row: UsageKey) =>
    act.run(async () => {
      const using = await triggersUsing(config, row.id);
      const note = using.length ? ` Triggers ${using.map((n) => `"${n}"`).join(", ")} run with it: give them the new key (Triggers tab, Edit).` : "";
      if (!window.confirm(`Rotate usage key "${row.name}"? A new key with the same permissions replaces it, and the old one stops at once.${note}`)) return;
      const secret = await backend.rotateKey!({ id: row.id });
      known.delete(row.id);
      known.set(usageKeyId(secret), secret);
      setCreated(secret);
      keys.reload();
    });

  return (
    <Section title="Usage keys">
      <p class="hint">Scoped keys for your services and bots. Only the account key (or the account's wallet) manages them.</p>
      <Alert error={keys.error ?? groups.error ?? act.error} />
      {created && <SecretReveal title="New usage key" secret={created} onDone={() => setCreated(undefined)} doneLabel="Done" />}
      <ListTable
        testId="keys"
        columns={["Name", "Hash", "Runs actions in", "Expires", ""]}
        rows={keys.data}
        empty="No usage keys yet."
        keyOf={(k) => k.id}
        cells={(k) => (
          <>
            <td>{k.name}</td>
            <td class="mono" title={k.id}>{short(k.id)}</td>
            <td>{groups.data ? groupsText(k.execute_in_groups, groups.data) : "…"}</td>
            <td>{k.expiration !== "0" ? new Date(Number(k.expiration) * 1000).toISOString().slice(0, 16).replace("T", " ") : "never"}</td>
            <td class="actions">
              <button type="button" onClick={() => open(k)}>Edit</button>
              {backend.rotateKey && <button type="button" disabled={act.busy} onClick={() => rotate(k)}>Rotate</button>}
              <button type="button" class="danger" disabled={act.busy} onClick={() => remove(k)}>Remove</button>
            </td>
          </>
        )}
      />
      {!draft && (
        <button type="button" class="primary" onClick={() => open()}>
          New usage key
        </button>
      )}
      {draft && (
        <Form onSubmit={() => save()}>
          <h3>{editing ? `Edit "${editing.name}"` : "New usage key"}</h3>
          <KeyForm value={draft} onChange={setDraft} groups={groups.data ?? []} />
          <div class="row">
            <button class="primary" disabled={act.busy}>{act.busy ? "Saving…" : editing ? "Save permissions" : "Create usage key"}</button>
            <button type="button" onClick={() => setDraft(undefined)}>Cancel</button>
          </div>
        </Form>
      )}
    </Section>
  );
}
