/**
 * Run an action: code in the editor (or a saved action's), or an action by its CID (from any
 * browser: the service runs the code it stores); params as JSON with a wallet picker for `pkpId`;
 * the response, the logs, and the run's time and cost.
 */
import { useMemo, useState } from "preact/hooks";
import { createVestaClient, unwrap, type Schemas } from "@client";
import { can, codeOfCid, serviceBase, type Backend } from "../backend";
import { CodeField } from "../codeField";
import { codeStore } from "../session";
import { Alert, Field, Form, pretty, Section, short, useAction, useLoad } from "../ui";
import { dollars, duration } from "./runList";
import { WHOLE_CID } from "./actions";

const HELLO = 'async function main(params) {\n  console.log("hello", params.name);\n  return { greeting: `hello ${params.name}` };\n}\n';

/** `params` with `pkpId` set (or removed): the wallet picker edits the JSON the user sees. */
function withPkp(params: string, pkp: string): string {
  const parsed = JSON.parse(params.trim() || "{}");
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("params must be a JSON object to hold pkpId");
  const { pkpId: _old, ...rest } = parsed as Record<string, unknown>;
  return JSON.stringify(pkp ? { ...rest, pkpId: pkp } : rest, null, 2);
}

export function RunView({ backend, cid: initialCid }: { backend: Backend; cid?: string }) {
  const actions = useLoad(() => backend.listActions());
  const wallets = useLoad(() => backend.listWallets());
  const act = useAction();
  const [mode, setMode] = useState<"code" | "cid">(initialCid ? "cid" : "code");
  const [code, setCode] = useState(HELLO);
  const [cid, setCid] = useState(initialCid ?? "");
  const stored = useLoad(async () => (mode === "cid" && WHOLE_CID.test(cid.trim()) ? { text: await codeOfCid(cid.trim()) } : undefined), [mode, cid.trim()]);
  const [params, setParams] = useState('{\n  "name": "Vesta"\n}');
  const [key, setKey] = useState(backend.runKey ?? "");
  const [result, setResult] = useState<Schemas["RunActionResponse"]>();
  const paramsError = useMemo(() => {
    try {
      JSON.parse(params || "null");
      return undefined;
    } catch (err) {
      return `params are not JSON: ${(err as Error).message}`;
    }
  }, [params]);
  const pkpShown = useMemo(() => {
    try {
      const p = JSON.parse(params || "null");
      const pkp = typeof p?.pkpId === "string" ? p.pkpId.toLowerCase() : "";
      return (wallets.data ?? []).find((w) => w.address.toLowerCase() === pkp)?.address ?? "";
    } catch {
      return "";
    }
  }, [params, wallets.data]);
  const runnable = (actions.data ?? []).map((a) => ({ ...a, cid: codeStore.cidOf(a.hashedCid) })).filter((a) => a.cid && codeStore.get(a.cid));
  const allowed = can(backend).run;

  const pickWallet = (pkp: string) =>
    act.run(async () => {
      setParams(withPkp(params, pkp));
    });

  const run = () =>
    act.run(async () => {
      if (paramsError) throw new Error(paramsError);
      if (!key.trim()) throw new Error("enter a usage key (or the account key) to run with");
      if (mode === "cid" && !WHOLE_CID.test(cid.trim())) throw new Error("a CID is Qm and 44 base58 characters, or b and base32 (CIDv1)");
      setResult(undefined);
      const client = createVestaClient({ baseUrl: serviceBase(), apiKey: key.trim() });
      const js_params = params.trim() ? JSON.parse(params) : undefined;
      const call = client.POST("/core/v1/lit_action", { body: mode === "cid" ? { ipfs_id: cid.trim(), js_params } : { code, js_params } });
      // A failed run answers 422 action_failed with the run's response and logs: shown as a failed run, not as a service error.
      const failed = (await call.catch(() => undefined))?.error as (Schemas["RunActionResponse"] & { code?: string }) | undefined;
      if (failed && typeof failed === "object" && failed.code === "action_failed") return setResult(failed);
      setResult(await unwrap(call));
    });

  return (
    <Section title="Run an action">
      <Alert error={actions.error ?? wallets.error ?? act.error} />
      {!allowed && (
        <p class="warning" role="note" data-testid="run-not-allowed">
          This usage key may run actions in no group: it cannot run anything. The account key can give it a group (Usage keys, Edit).
        </p>
      )}
      <div class="row" role="radiogroup" aria-label="What to run">
        <label class="check">
          <input type="radio" name="run_mode" checked={mode === "code"} onChange={() => setMode("code")} />
          <span>Code</span>
        </label>
        <label class="check">
          <input type="radio" name="run_mode" checked={mode === "cid"} onChange={() => setMode("cid")} />
          <span>An action by its CID</span>
        </label>
      </div>
      {mode === "code" && runnable.length > 0 && (
        <label class="field">
          <span>Load a saved action</span>
          <select name="saved_action" onChange={(e) => setCode(codeStore.get((e.currentTarget as HTMLSelectElement).value) ?? code)}>
            <option value="">(choose)</option>
            {runnable.map((a) => (
              <option key={a.hashedCid} value={a.cid}>
                {a.name || a.cid}
              </option>
            ))}
          </select>
        </label>
      )}
      <Form onSubmit={() => run()}>
        {mode === "code" ? (
          <CodeField label="Code" name="run_code" value={code} onInput={setCode} rows={10} />
        ) : (
          <>
            <Field label="Action CID" name="run_cid" value={cid} onInput={setCid} placeholder="Qm…" />
            {stored.data?.text !== undefined && <pre class="code" data-testid="run-cid-code">{stored.data.text}</pre>}
            {stored.data && stored.data.text === undefined && (
              <p class="warning" role="note">
                This node stores no code for this CID yet: run it once with its code.
              </p>
            )}
          </>
        )}
        <label class="field">
          <span>Wallet (sets params.pkpId)</span>
          <select name="run_wallet" value={pkpShown} onChange={(e) => pickWallet((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">{(wallets.data ?? []).length ? "(none)" : "(this account has no wallets yet)"}</option>
            {(wallets.data ?? []).map((w) => (
              <option key={w.address} value={w.address}>
                {w.name || "(unnamed)"} {short(w.address, 6)}
              </option>
            ))}
          </select>
        </label>
        <Field label="Params (JSON, passed to main(params))" name="run_params" value={params} onInput={setParams} area rows={6} />
        {paramsError && <p class="alert" role="alert">{paramsError}</p>}
        <Field label={backend.kind === "wallet" ? "Usage key to run with (wallet-owned accounts run with usage keys)" : "Key to run with (default: the signed-in key)"} name="run_key" type="password" value={key} onInput={setKey} />
        <button class="primary" disabled={act.busy || !!paramsError || !allowed}>{act.busy ? "Running…" : "Run"}</button>
      </Form>
      {result && (
        <div class="result" data-testid="run-result">
          <h3>{result.has_error ? "Failed" : "Response"}</h3>
          <p data-testid="run-meta">
            Ran <span data-testid="run-time">{duration(result.duration_ms ?? null)}</span>, cost <span data-testid="run-cost">{dollars(result.cost_cents ?? 0)}</span> · CID{" "}
            <span class="mono">{result.ipfs_id}</span>
          </p>
          {result.has_error && <p class="alert" role="alert">{result.error}</p>}
          <pre data-testid="run-response">{pretty(result.response)}</pre>
          <h3>Logs</h3>
          <pre data-testid="run-logs">{result.logs || "(none)"}</pre>
        </div>
      )}
    </Section>
  );
}
