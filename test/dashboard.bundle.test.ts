/**
 * The dashboard's first page stays small (issue 23): the code editor (CodeMirror and its
 * JavaScript grammar) is a chunk of its own, loaded when a code field is shown, never part of the
 * entry chunk or anything it imports statically. Reads the build's manifest (npm run build).
 */
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";

const DIST = path.join(__dirname, "..", "dist", "dashboard");
type Chunk = { file: string; isEntry?: boolean; imports?: string[]; dynamicImports?: string[] };

/** CodeMirror's own marks, which survive minification: its CSS classes and a facet's property name. */
const CODEMIRROR = ["cm-content", "cm-gutters", "allowMultipleSelections"];

describe("dashboard bundle: the code editor is lazy-loaded", function () {
  const manifest = (): Record<string, Chunk> => JSON.parse(fs.readFileSync(path.join(DIST, ".vite", "manifest.json"), "utf8"));
  const text = (c: Chunk) => fs.readFileSync(path.join(DIST, c.file), "utf8");

  /** The entry chunk and every chunk it imports statically: what the first page loads. */
  function firstPage(m: Record<string, Chunk>): Chunk[] {
    const seen = new Map<string, Chunk>();
    const visit = (id: string) => {
      if (seen.has(id)) return;
      seen.set(id, m[id]);
      for (const i of m[id].imports ?? []) visit(i);
    };
    for (const [id, c] of Object.entries(m)) if (c.isEntry) visit(id);
    return [...seen.values()];
  }

  it("the first page's chunks hold no CodeMirror; the editor's dynamic chunk does", function () {
    const m = manifest();
    const first = firstPage(m);
    expect(first.length).to.be.at.least(1);
    for (const c of first) for (const mark of CODEMIRROR) expect(text(c).includes(mark), `${c.file} contains ${mark}`).to.equal(false);
    const editor = m["src/editor/codemirror.ts"];
    expect(editor, "the editor is a chunk of its own").to.not.equal(undefined);
    expect(first.map((c) => c.file)).not.to.include(editor.file);
    expect(m["index.html"].dynamicImports).to.include("src/editor/codemirror.ts");
    for (const mark of CODEMIRROR) expect(text(editor).includes(mark), `the editor chunk contains ${mark}`).to.equal(true);
  });

  it("the first page's JavaScript stays under 450 KB (minified, before compression)", function () {
    const bytes = firstPage(manifest()).reduce((n, c) => n + fs.statSync(path.join(DIST, c.file)).size, 0);
    expect(bytes).to.be.below(450_000);
  });
});
