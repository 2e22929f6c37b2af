/** Usage keys: the permission set as checkboxes and a group picker; create (shown once), edit, remove. */
import { useState } from "preact/hooks";
import { usageKeyId, type Backend, type Group, type KeyInput, type UsageKey } from "../backend";
import { Alert, Check, Field, Form, ListTable, Section, SecretReveal, short, useAction, useLoad } from "../ui";
import { knownKeys } from "../session";

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

const fromRow = (k: UsageKey): KeyInput => ({
  name: k.name,
  description: k.description,
  expiration: Number(k.expiration),
  can_create_groups: k.can_create_groups,
  can_delete_groups: k.can_delete_groups,
  can_create_pkps: k.can_create_pkps,
  manage_ipfs_ids_in_groups: k.manage_ipfs_ids_in_groups,
  add_pkp_to_groups: k.add_pkp_to_groups,
  remove_pkp_from_groups: k.remove_pkp_from_groups,
  execute_in_groups: k.execute_in_groups,
});

const groupsText = (ids: number[], groups: Group[]) =>
  ids.length === 0 ? "none" : ids.includes(0) ? "all groups" : ids.map((id) => groups.find((g) => g.id === id)?.name ?? `#${id}`).join(", ");

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

export function KeysView({ backend }: { backend: Backend }) {
  const keys = useLoad(() => backend.listKeys());
  const groups = useLoad(() => backend.listGroups());
  const act = useAction();
  const [draft, setDraft] = useState<KeyInput>();
  const [editing, setEditing] = useState<UsageKey>();
  const [secretInput, setSecretInput] = useState("");
  const [created, setCreated] = useState<string>();
  const known = knownKeys();
  const needsValue = backend.kind === "key";

  const open = (row?: UsageKey) => {
    setCreated(undefined);
    setEditing(row);
    setSecretInput(row ? (known.get(row.id) ?? "") : "");
    setDraft(row ? fromRow(row) : emptyKey());
  };
  const save = () =>
    act.run(async () => {
      if (!draft!.name.trim()) throw new Error("give the key a name");
      if (editing) {
        await backend.updateKey({ id: editing.id, secret: secretInput.trim() || undefined }, draft!);
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
      const secret = known.get(row.id) ?? (needsValue ? window.prompt(`The value of usage key "${row.name}" (the API removes a key by its value):`)?.trim() : undefined);
      if (needsValue && !secret) return;
      if (!window.confirm(`Remove usage key "${row.name}"? Services using it stop at once.`)) return;
      await backend.removeKey({ id: row.id, secret });
      known.delete(row.id);
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
            <td>{groupsText(k.execute_in_groups, groups.data ?? [])}</td>
            <td>{k.expiration !== "0" ? new Date(Number(k.expiration) * 1000).toISOString().slice(0, 16).replace("T", " ") : "never"}</td>
            <td class="actions">
              <button type="button" onClick={() => open(k)}>Edit</button>
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
          {editing && needsValue && (
            <Field label="The key's value (the API identifies a usage key by its value)" name="usage_api_key" type="password" value={secretInput} onInput={setSecretInput} required />
          )}
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
