/**
 * The syntax check before an action is saved: the code is parsed with CodeMirror's JavaScript
 * grammar (Lezer), and the first place it does not parse is named by line and column.
 */
import { javascriptLanguage } from "@codemirror/lang-javascript";

/** Undefined when `code` parses; else what is wrong and where (1-based line and column). */
export function syntaxProblem(code: string): { line: number; column: number; message: string } | undefined {
  const tree = javascriptLanguage.parser.parse(code);
  let at: number | undefined;
  tree.iterate({
    enter: (node) => {
      if (at !== undefined) return false;
      if (node.type.isError) {
        at = node.from;
        return false;
      }
      return undefined;
    },
  });
  if (at === undefined) return undefined;
  const before = code.slice(0, at).split("\n");
  const line = before.length;
  const column = before[before.length - 1].length + 1;
  const near = code.slice(at, at + 20).split("\n")[0];
  return { line, column, message: `the code does not parse: syntax error at line ${line}, column ${column}${near ? ` (near “${near}”)` : " (the code ends too early)"}` };
}
