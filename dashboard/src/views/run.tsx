/** Run an action: code or a saved action, params in a JSON editor, the response and logs. */
import { useMemo, useState } from "preact/hooks";
import { createVestaClient, unwrap, type Schemas } from "@client";
import { serviceBase, type Backend } from "../backend";
import { codeStore } from "../session";
import { Alert, Field, Form, pretty, Section, useAction, useLoad } from "../ui";

export function RunView({ backend }: { backend: Backend }) {
  const actions = useLoad(() => backend.listActions());
  const act = useAction();
  const [code, setCode] = useState("async function main(params) {\n  console.log(\"hello\", params.name);\n  return { greeting: `hello ${params.name}` };\n}\n");
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
  const runnable = (actions.data ?? []).map((a) => ({ ...a, cid: codeStore.cidOf(a.hashedCid) })).filter((a) => a.cid && codeStore.get(a.cid));

  const run = () =>
    act.run(async () => {
      if (paramsError) throw new Error(paramsError);
      if (!key.trim()) throw new Error("enter a usage key (or the account key) to run with");
      setResult(undefined);
      const client = createVestaClient({ baseUrl: serviceBase(), apiKey: key.trim() });
      const call = client.POST("/core/v1/lit_action", { body: { code, js_params: params.trim() ? JSON.parse(params) : undefined } });
      // A failed run answers 422 action_failed with the run's response and logs: shown as a failed run, not as a service error.
      const failed = (await call.catch(() => undefined))?.error as (Schemas["RunActionResponse"] & { code?: string }) | undefined;
      if (failed && typeof failed === "object" && failed.code === "action_failed") return setResult(failed);
      setResult(await unwrap(call));
    });

  return (
    <Section title="Run an action">
      <Alert error={actions.error ?? act.error} />
      {runnable.length > 0 && (
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
        <Field label="Code" name="run_code" value={code} onInput={setCode} area rows={10} />
        <Field label="Params (JSON, passed to main(params))" name="run_params" value={params} onInput={setParams} area rows={6} />
        {paramsError && <p class="alert" role="alert">{paramsError}</p>}
        <Field label={backend.kind === "wallet" ? "Usage key to run with (wallet-owned accounts run with usage keys)" : "Key to run with (default: the signed-in key)"} name="run_key" type="password" value={key} onInput={setKey} />
        <button class="primary" disabled={act.busy || !!paramsError}>{act.busy ? "Running…" : "Run"}</button>
      </Form>
      {result && (
        <div class="result" data-testid="run-result">
          <h3>{result.has_error ? "Failed" : "Response"}</h3>
          {result.has_error && <p class="alert" role="alert">{result.error}</p>}
          <pre data-testid="run-response">{pretty(result.response)}</pre>
          <h3>Logs</h3>
          <pre data-testid="run-logs">{result.logs || "(none)"}</pre>
          <p class="hint">CID {result.ipfs_id}</p>
        </div>
      )}
    </Section>
  );
}
