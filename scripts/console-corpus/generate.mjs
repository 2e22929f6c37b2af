// Regenerates test/fixtures/console-corpus.json: every program of cases.mjs run in Deno, the runtime
// of Chipotle's actions, each in a process of its own (console state starts fresh, as in a run),
// stdout and stderr read together in the order written, colors off. CI has no Deno; run this by
// hand when the cases change, with Chipotle's version (2.2.2):
//
//   /work/deno222/node_modules/.bin/deno run --allow-run --allow-read --allow-write scripts/console-corpus/generate.mjs
import { CASES } from "./cases.mjs";

// Chipotle's actions have ethers 5.7 as a global; Deno here does not. A BigNumber of ethers 5.7 is
// an instance of a class named BigNumber with two own enumerable properties, frozen: all the
// console shows of it, so that is what stands in for it on the Deno side (one line, before the case).
const PRELUDE = `globalThis.ethers = { BigNumber: class BigNumber { constructor(v) { const n = BigInt(v); const d = (n < 0n ? -n : n).toString(16); this._hex = (n < 0n ? "-0x" : "0x") + (d.length % 2 ? "0" : "") + d; this._isBigNumber = true; Object.freeze(this); } static from(v) { return new this(v); } } };\n`;
const TIMING = /: \d+(\.\d+)?ms\b/g;

if (Deno.version.deno !== "2.2.2") console.warn(`warning: Chipotle runs Deno 2.2.2, this is ${Deno.version.deno}`);
const dir = await Deno.makeTempDir({ prefix: "console-corpus-" });
async function runCase(c, i) {
  const file = `${dir}/case${i}.js`;
  await Deno.writeTextFile(file, PRELUDE + c.code + "\n");
  // One pipe for both streams keeps console.error's lines where they were written.
  const command = new Deno.Command("sh", {
    args: ["-c", 'exec "$0" run --quiet --no-config --no-lock "$1" 2>&1', Deno.execPath(), file],
    clearEnv: true,
    env: { NO_COLOR: "1", PATH: "/usr/bin:/bin" },
    stdout: "piped",
    stderr: "piped",
  });
  const { code, stdout } = await command.output();
  const text = new TextDecoder().decode(stdout);
  if (code !== 0) throw new Error(`case ${i} (${c.group}) exited with ${code}:\n${c.code}\n${text}`);
  // Stable across machines: the file's URL, the timers' durations.
  return text.replaceAll(`file://${file}`, "file:///case.js").replace(TIMING, ": <n>ms");
}
const expected = new Array(CASES.length);
let next = 0;
await Promise.all(
  Array.from({ length: 6 }, async () => {
    while (next < CASES.length) {
      const i = next++;
      expected[i] = await runCase(CASES[i], i);
    }
  }),
);
await Deno.remove(dir, { recursive: true });
const fixture = {
  generatedBy: "scripts/console-corpus/generate.mjs",
  deno: Deno.version.deno,
  v8: Deno.version.v8,
  prelude: PRELUDE,
  cases: CASES.map((c, i) => ({ ...c, expected: expected[i] })),
};
await Deno.writeTextFile("test/fixtures/console-corpus.json", JSON.stringify(fixture, null, 1) + "\n");
console.log(`${fixture.cases.length} cases from Deno ${fixture.deno} (V8 ${fixture.v8}) → test/fixtures/console-corpus.json`);
