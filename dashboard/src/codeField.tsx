/**
 * A code field: a plain textarea at once, replaced by CodeMirror (JavaScript highlighting) when its
 * chunk has loaded. The textarea stays in the page, hidden, holding the same value (a form's field).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { MountedEditor } from "./editor/codemirror";

/** Loaded once, on first use: CodeMirror and the syntax check are a chunk of their own. */
const loadEditor = () => import("./editor/codemirror");

/** What is wrong with `code` as JavaScript (line and column), or undefined when it parses. */
export async function syntaxError(code: string): Promise<string | undefined> {
  return (await loadEditor()).syntaxProblem(code)?.message;
}

export function CodeField(props: { label: string; name: string; value: string; onInput: (v: string) => void; rows?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<MountedEditor>();
  const onInput = useRef(props.onInput);
  onInput.current = props.onInput;
  const value = useRef(props.value); // what the editor starts with: whatever was typed before its chunk arrived
  value.current = props.value;
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let live = true;
    loadEditor().then(
      (m) => {
        if (!live || !host.current) return;
        editor.current = m.mountEditor(host.current, { value: value.current, label: props.label, onChange: (v) => onInput.current(v) });
        setReady(true);
      },
      () => undefined, // the chunk could not load: the textarea stays
    );
    return () => {
      live = false;
      editor.current?.destroy();
    };
  }, []);
  useEffect(() => editor.current?.set(props.value), [props.value]);

  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={ready ? undefined : id}>
        <span>{props.label}</span>
      </label>
      <div ref={host} class="code-editor" data-code-editor={props.name} />
      <textarea
        id={id}
        name={props.name}
        value={props.value}
        rows={props.rows ?? 8}
        spellcheck={false}
        hidden={ready}
        onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
      />
    </div>
  );
}
