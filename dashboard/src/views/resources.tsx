/** Groups, wallets and actions. */
import { useState } from "preact/hooks";
import { can, type ActionItem, type Backend, type Group, type WalletItem } from "../backend";
import { Alert, Check, Field, Form, ListTable, Section, short, useAction, useLoad } from "../ui";

type GroupDraft = { id?: number; name: string; description: string; pkps: string[]; cids: string[] };

function Picker<T>({ title, items, selected, keyOf, labelOf, onChange, name }: { title: string; items: T[]; selected: string[]; keyOf: (t: T) => string; labelOf: (t: T) => string; onChange: (s: string[]) => void; name: string }) {
  return (
    <fieldset>
      <legend>{title}</legend>
      {items.length === 0 && <p class="hint">None yet.</p>}
      {items.map((t) => {
        const k = keyOf(t);
        return <Check key={k} name={`${name}:${k}`} label={labelOf(t)} checked={selected.includes(k)} onChange={(on) => onChange(on ? [...selected.filter((s) => s !== k), k] : selected.filter((s) => s !== k))} />;
      })}
    </fieldset>
  );
}

export function GroupsView({ backend }: { backend: Backend }) {
  const groups = useLoad(() => backend.listGroups());
  const wallets = useLoad(() => backend.listWallets());
  const actions = useLoad(() => backend.listActions());
  const act = useAction();
  const [draft, setDraft] = useState<GroupDraft>();
  const may = can(backend);

  const edit = (g: Group) =>
    act.run(async () => {
      const m = await backend.groupMembers(g.id);
      setDraft({ id: g.id, name: g.name, description: g.description, pkps: m.wallets.map((w) => w.address), cids: m.actions.map((a) => a.hashedCid) });
    });
  const save = () =>
    act.run(async () => {
      const d = draft!;
      if (!d.name.trim()) throw new Error("give the group a name");
      if (d.id === undefined) await backend.addGroup(d.name, d.description, d.pkps, d.cids);
      else await backend.updateGroup(d.id, d.name, d.description, d.pkps, d.cids);
      setDraft(undefined);
      groups.reload();
    });
  const remove = (g: Group) =>
    act.run(async () => {
      if (!window.confirm(`Remove group "${g.name}"? Keys lose what it granted.`)) return;
      await backend.removeGroup(g.id);
      if (draft?.id === g.id) setDraft(undefined); // its form goes with it
      groups.reload();
    });

  return (
    <Section title="Groups">
      <p class="hint">A group lists the wallets (PKPs) and actions (by CID) that may be used together; usage keys get rights per group.</p>
      <Alert error={groups.error ?? wallets.error ?? actions.error ?? act.error} />
      <ListTable
        testId="groups"
        columns={["Id", "Name", "Description", "Wallets", "Actions", ""]}
        rows={groups.data}
        empty="No groups yet."
        keyOf={(g) => g.id}
        cells={(g) => (
          <>
            <td>{g.id}</td>
            <td>{g.name}</td>
            <td>{g.description}</td>
            <td>{g.pkpCount}</td>
            <td>{g.cidCount}</td>
            <td class="actions">
              {may.editGroups && <button type="button" onClick={() => edit(g)}>Edit</button>}
              {may.deleteGroups && <button type="button" class="danger" disabled={act.busy} onClick={() => remove(g)}>Remove</button>}
            </td>
          </>
        )}
      />
      {!draft && may.createGroups && (
        <button type="button" class="primary" onClick={() => setDraft({ name: "", description: "", pkps: [], cids: [] })}>
          New group
        </button>
      )}
      {draft && (
        <Form onSubmit={() => save()}>
          <h3>{draft.id === undefined ? "New group" : `Edit group ${draft.id}`}</h3>
          <Field label="Name" name="group_name" value={draft.name} onInput={(v) => setDraft({ ...draft, name: v })} required />
          <Field label="Description" name="group_description" value={draft.description} onInput={(v) => setDraft({ ...draft, description: v })} />
          <Picker title="Wallets in the group" name="pkp" items={wallets.data ?? []} selected={draft.pkps} keyOf={(w: WalletItem) => w.address} labelOf={(w) => `${w.name || "(unnamed)"} ${short(w.address)}`} onChange={(pkps) => setDraft({ ...draft, pkps })} />
          <Picker title="Actions in the group" name="cid" items={actions.data ?? []} selected={draft.cids} keyOf={(a: ActionItem) => a.hashedCid} labelOf={(a) => `${a.name || "(unnamed)"} ${short(a.hashedCid)}`} onChange={(cids) => setDraft({ ...draft, cids })} />
          <div class="row">
            <button class="primary" disabled={act.busy}>{act.busy ? "Saving…" : draft.id === undefined ? "Create group" : "Save group"}</button>
            <button type="button" onClick={() => setDraft(undefined)}>Cancel</button>
          </div>
        </Form>
      )}
    </Section>
  );
}

export function WalletsView({ backend }: { backend: Backend }) {
  const wallets = useLoad(() => backend.listWallets());
  const act = useAction();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [created, setCreated] = useState<string>();
  const create = () =>
    act.run(async () => {
      setCreated(await backend.createWallet(name, description));
      setName("");
      setDescription("");
      wallets.reload();
    });
  return (
    <Section title="Wallets">
      <p class="hint">Wallets (PKPs) are keys held in the TEE; an action uses one through Lit.Actions when a group allows it.</p>
      <Alert error={wallets.error ?? act.error} />
      <ListTable
        testId="wallets"
        columns={["Name", "Address", "Description"]}
        rows={wallets.data}
        empty="No wallets yet."
        keyOf={(w) => w.address}
        cells={(w) => (
          <>
            <td>{w.name}</td>
            <td class="mono">{w.address}</td>
            <td>{w.description}</td>
          </>
        )}
      />
      {can(backend).createWallets && <Form onSubmit={() => create()}>
        <h3>New wallet</h3>
        <Field label="Name" name="wallet_name" value={name} onInput={setName} />
        <Field label="Description" name="wallet_description" value={description} onInput={setDescription} />
        <button class="primary" disabled={act.busy}>{act.busy ? "Creating…" : "Create wallet"}</button>
        {created && (
          <p class="ok" role="status">
            Wallet <span class="mono">{created}</span> created.
          </p>
        )}
      </Form>}
    </Section>
  );
}
