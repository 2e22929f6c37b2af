/**
 * CodeMirror 6 with JavaScript highlighting: loaded only when a code field is shown (a dynamic
 * import of this module), so the first page's bundle carries none of it.
 */
import { basicSetup, EditorView } from "codemirror";
import { javascript } from "@codemirror/lang-javascript";
import { syntaxProblem } from "./syntax";

export type MountedEditor = { set(value: string): void; destroy(): void };

export function mountEditor(parent: HTMLElement, opts: { value: string; label: string; onChange: (v: string) => void }): MountedEditor {
  const view = new EditorView({
    parent,
    doc: opts.value,
    extensions: [
      basicSetup,
      javascript(),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ "aria-label": opts.label }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged) opts.onChange(u.state.doc.toString());
      }),
    ],
  });
  return {
    set(value: string) {
      if (value !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    },
    destroy: () => view.destroy(),
  };
}

export { syntaxProblem };
