/** Small building blocks: every API or wallet error ends up in an <Alert> with its message. */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Runs an async action with a busy flag; its error is kept to be shown, never swallowed. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (err) {
      setError(messageOf(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

/** Loads data on mount and on `reload()`; the error is shown by the caller. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setError(undefined);
    load().then(
      (d) => live && setData(d),
      (err) => live && setError(messageOf(err)),
    );
    return () => void (live = false);
  }, [tick, ...deps]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

/** Calls `fn` every `ms` while the tab is visible (a list that changes on its own: triggers and their runs). */
export function useEvery(ms: number, fn: () => void) {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    const t = setInterval(() => document.visibilityState === "visible" && latest.current(), ms);
    return () => clearInterval(t);
  }, [ms]);
}

export const Alert = ({ error }: { error?: string }) => (error ? <p class="alert" role="alert">{error}</p> : null);

export const Section = ({ title, children }: { title: string; children: ComponentChildren }) => (
  <section class="card">
    <h2>{title}</h2>
    {children}
  </section>
);

export function Field(props: { label: string; name: string; value: string; onInput: (v: string) => void; type?: string; placeholder?: string; required?: boolean; area?: boolean; rows?: number }) {
  const common = {
    id: `f-${props.name}`,
    name: props.name,
    value: props.value,
    placeholder: props.placeholder,
    required: props.required,
    onInput: (e: Event) => props.onInput((e.currentTarget as HTMLInputElement).value),
  };
  return (
    <label class="field" for={common.id}>
      <span>{props.label}</span>
      {props.area ? <textarea {...common} rows={props.rows ?? 8} spellcheck={false} /> : <input {...common} type={props.type ?? "text"} />}
    </label>
  );
}

export const Check = ({ label, checked, onChange, name }: { label: string; checked: boolean; onChange: (v: boolean) => void; name: string }) => (
  <label class="check">
    <input type="checkbox" name={name} checked={checked} onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)} />
    <span>{label}</span>
  </label>
);

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API refused (no permission, not a secure context): the old way.
    const t = document.createElement("textarea");
    t.value = text;
    document.body.append(t);
    t.select();
    document.execCommand("copy");
    t.remove();
  }
}

/** A secret shown once: read-only, with a copy button and the warning. */
export function SecretReveal({ title, secret, onDone, doneLabel = "I have stored it" }: { title: string; secret: string; onDone?: () => void; doneLabel?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" data-testid="secret">
      <h3>{title}</h3>
      <p class="warning" role="note">
        This is the only time the key is shown. Store it now (a password manager or your secret store): Vesta keeps only its hash and cannot show it again.
      </p>
      <div class="row">
        <input readOnly value={secret} aria-label={title} data-testid="secret-value" onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <button type="button" onClick={() => copyText(secret).then(() => setCopied(true))}>
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
      {onDone && (
        <button type="button" class="primary" onClick={onDone}>
          {doneLabel}
        </button>
      )}
    </div>
  );
}

export const short = (s: string, n = 10) => (s.length > 2 * n + 1 ? `${s.slice(0, n)}…${s.slice(-6)}` : s);
export const pretty = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** A list of rows with a header, and a line saying so when there are none. */
export function ListTable<T>(props: { testId: string; columns: string[]; rows?: T[]; empty: string; keyOf: (row: T) => string | number; cells: (row: T) => ComponentChildren }) {
  return (
    <div class="scroll">
    <table class="list" data-testid={props.testId}>
      <thead>
        <tr>
          {props.columns.map((c, i) => (
            <th key={i}>{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(props.rows ?? []).map((row) => (
          <tr key={props.keyOf(row)}>{props.cells(row)}</tr>
        ))}
        {props.rows?.length === 0 && (
          <tr>
            <td colSpan={props.columns.length}>{props.empty}</td>
          </tr>
        )}
      </tbody>
    </table>
    </div>
  );
}

/** A form whose submit runs `onSubmit` (the page never reloads). */
export const Form = ({ onSubmit, children }: { onSubmit: () => unknown; children: ComponentChildren }) => (
  <form
    onSubmit={(e) => {
      e.preventDefault();
      void onSubmit();
    }}
  >
    {children}
  </form>
);
