/**
 * The Actions tab: the account's actions, one opened by CID from any browser (its code from the
 * service, GET get_action_code; its metadata from the account; run it; edit its metadata), and a
 * new action in a code editor, refused while its code does not parse.
 */
import { useState } from "preact/hooks";
import { can, cidHash, cidOf, codeOfCid, type ActionItem, type Backend } from "../backend";
import { CodeField, syntaxError } from "../codeField";
import { codeStore } from "../session";
import { Alert, Field, Form, ListTable, Section, short, useAction, useLoad } from "../ui";

const TEMPLATE = 'async function main(params) {\n  return { hello: params.name ?? "world" };\n}\n';
/** A whole CID: CIDv0 (Qm…) or CIDv1 in base32 (b…). */
export const WHOLE_CID = /^(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,})$/;

const openCid = (cid: string) => (window.location.hash = `#/actions?cid=${encodeURIComponent(cid)}`);

export function ActionsView({ backend, cid }: { backend: Backend; cid?: string }) {
  const actions = useLoad(() => backend.listActions());
  const act = useAction();
  const owner = can(backend).owner;
  const [lookup, setLookup] = useState("");
  const remove = (a: ActionItem) =>
    act.run(async () => {
      if (!window.confirm(`Remove action "${a.name}" from the account?`)) return;
      await backend.removeAction(a.hashedCid);
      if (cid && cidHash(cid).toLowerCase() === a.hashedCid.toLowerCase()) window.location.hash = "#/actions";
      actions.reload();
    });
  const open = () =>
    act.run(async () => {
      const c = lookup.trim();
      if (!WHOLE_CID.test(c)) throw new Error("a CID is Qm and 44 base58 characters, or b and base32 (CIDv1): check what you pasted");
      openCid(c);
    });
  return (
    <>
      {cid && <ActionDetail backend={backend} cid={cid} actions={actions.data} onChanged={() => actions.reload()} />}
      <Section title="Actions">
        <p class="hint">An action is JavaScript (`async function main(params)`) known by the IPFS CID of its code; groups list actions by the keccak256 of the CID.</p>
        <Alert error={actions.error ?? act.error} />
        <ListTable
          testId="actions"
          columns={["Name", "CID", "Hashed CID", ""]}
          rows={actions.data}
          empty="No actions yet."
          keyOf={(a) => a.hashedCid}
          cells={(a) => {
            const known = codeStore.cidOf(a.hashedCid);
            return (
              <>
                <td>{a.name}</td>
                <td class="mono">{known ?? "(added elsewhere: open it by its CID below)"}</td>
                <td class="mono" title={a.hashedCid}>{short(a.hashedCid)}</td>
                <td class="actions">
                  {known && (
                    <button type="button" onClick={() => openCid(known)}>
                      Open
                    </button>
                  )}
                  {owner && (
                    <button type="button" class="danger" disabled={act.busy} onClick={() => remove(a)}>
                      Remove
                    </button>
                  )}
                </td>
              </>
            );
          }}
        />
        <Form onSubmit={() => open()}>
          <div class="row">
            <Field label="Open an action by its CID (from any browser)" name="open_cid" value={lookup} onInput={setLookup} placeholder="Qm…" />
            <button disabled={act.busy}>Open</button>
          </div>
        </Form>
      </Section>
      {owner && <AddAction backend={backend} onAdded={() => actions.reload()} />}
    </>
  );
}

/** One action by CID: its code (the service's copy), metadata, run it, edit the metadata. */
function ActionDetail({ backend, cid, actions, onChanged }: { backend: Backend; cid: string; actions?: ActionItem[]; onChanged: () => void }) {
  const hashed = cidHash(cid);
  const code = useLoad(async () => {
    const text = await codeOfCid(cid);
    if (text !== undefined) codeStore.set(cid, hashed, text); // the list names it by CID from now on, in this browser
    return { text };
  }, [cid]);
  const mine = actions?.find((a) => a.hashedCid.toLowerCase() === hashed.toLowerCase());
  const owner = can(backend).owner;
  const act = useAction();
  const [edit, setEdit] = useState<{ name: string; description: string }>();
  const [done, setDone] = useState<string>();
  const save = () =>
    act.run(async () => {
      if (!edit!.name.trim()) throw new Error("give the action a name");
      await backend.updateAction(hashed, edit!.name.trim(), edit!.description);
      setEdit(undefined);
      setDone("Metadata saved.");
      onChanged();
    });
  const add = () =>
    act.run(async () => {
      await backend.addAction(cid, "", "");
      if (code.data?.text !== undefined) codeStore.set(cid, hashed, code.data.text);
      setDone("Added to this account's actions.");
      onChanged();
    });
  return (
    <Section title={mine ? `Action “${mine.name || "(unnamed)"}”` : "Action"}>
      <Alert error={code.error ?? act.error} />
      {done && <p class="ok" role="status">{done}</p>}
      <dl data-testid="action-detail">
        <dt>CID</dt>
        <dd class="mono" data-testid="detail-cid">{cid}</dd>
        <dt>Hashed CID</dt>
        <dd class="mono">{hashed}</dd>
        <dt>Name</dt>
        <dd data-testid="detail-name">{actions === undefined ? "…" : mine ? mine.name || "(unnamed)" : "(not one of this account's actions)"}</dd>
        <dt>Description</dt>
        <dd data-testid="detail-description">{mine?.description || "—"}</dd>
      </dl>
      {code.data === undefined ? (
        !code.error && <p class="hint">Loading the code…</p>
      ) : code.data.text === undefined ? (
        <p class="warning" role="note" data-testid="detail-no-code">
          This node stores no code for this CID yet: code is stored when it is first run (Run, with the code).
        </p>
      ) : (
        <pre class="code" data-testid="detail-code">{code.data.text}</pre>
      )}
      <div class="row">
        <a class="button" href={`#/run?cid=${encodeURIComponent(cid)}`}>
          Run it
        </a>
        {owner && mine && !edit && (
          <button type="button" onClick={() => (setDone(undefined), setEdit({ name: mine.name, description: mine.description }))}>
            Edit metadata
          </button>
        )}
        {owner && actions && !mine && (
          <button type="button" disabled={act.busy} onClick={() => add()}>
            Add to this account
          </button>
        )}
      </div>
      {edit && (
        <Form onSubmit={() => save()}>
          <Field label="Action name" name="edit_action_name" value={edit.name} onInput={(v) => setEdit({ ...edit, name: v })} required />
          <Field label="Action description" name="edit_action_description" value={edit.description} onInput={(v) => setEdit({ ...edit, description: v })} />
          <button class="primary" disabled={act.busy}>{act.busy ? "Saving…" : "Save metadata"}</button>
          <button type="button" onClick={() => setEdit(undefined)}>
            Cancel
          </button>
        </Form>
      )}
    </Section>
  );
}

function AddAction({ backend, onAdded }: { backend: Backend; onAdded: () => void }) {
  const act = useAction();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [code, setCode] = useState(TEMPLATE);
  const [added, setAdded] = useState<{ cid: string; hashed: string }>();
  const add = () =>
    act.run(async () => {
      setAdded(undefined);
      if (!code.trim()) throw new Error("write the action's code");
      const bad = await syntaxError(code);
      if (bad) throw new Error(bad);
      const cid = await cidOf(code);
      const hashed = await backend.addAction(cid, name, description);
      codeStore.set(cid, hashed, code);
      setAdded({ cid, hashed });
      setName("");
      setDescription("");
      setCode(TEMPLATE);
      onAdded();
    });
  return (
    <Section title="Add an action">
      <Form onSubmit={() => add()}>
        <Field label="Name" name="action_name" value={name} onInput={setName} />
        <Field label="Description" name="action_description" value={description} onInput={setDescription} />
        <CodeField label="Code" name="action_code" value={code} onInput={setCode} rows={10} />
        <Alert error={act.error} />
        <button class="primary" disabled={act.busy}>{act.busy ? "Adding…" : "Add action"}</button>
        {added && (
          <p class="ok" role="status" data-testid="action-added">
            Added. CID{" "}
            <a class="mono" data-testid="action-cid" href={`#/actions?cid=${encodeURIComponent(added.cid)}`}>
              {added.cid}
            </a>{" "}
            (hashed <span class="mono">{short(added.hashed)}</span>).
          </p>
        )}
      </Form>
    </Section>
  );
}
