// Regenerates test/fixtures/intl-corpus.json: every expression of cases.mjs evaluated in Deno, the
// runtime of Chipotle's actions, with the harness the test runs in the sandbox (recorded in the
// fixture, so both sides evaluate alike). CI has no Deno; run this by hand when the cases change,
// with Chipotle's version (2.2.2) and its container's environment (no LANG, no TZ: en-US, UTC):
//
//   env -i /work/deno222/node_modules/.bin/deno run --allow-write=test/fixtures/intl-corpus.json scripts/intl-corpus/generate.mjs
import { CASES } from "./cases.mjs";

// Evaluates `() => (expression)` thunks; results as JSON can hold them (undefined, NaN, -0,
// bigints, symbols and functions tagged; own enumerable keys in order), errors as [name, message].
const HARNESS = `
function vestaSerialize(v, depth) {
  if (v === undefined) return { $undefined: true };
  if (typeof v === "number") return Object.is(v, -0) ? { $number: "-0" } : Number.isFinite(v) ? v : { $number: String(v) };
  if (typeof v === "bigint") return { $bigint: String(v) };
  if (typeof v === "symbol" || typeof v === "function") return { $type: typeof v };
  if (v === null || typeof v !== "object") return v;
  if (depth > 6) return { $deep: true };
  if (Array.isArray(v)) return v.map((x) => vestaSerialize(x, depth + 1));
  const out = {};
  for (const k of Object.keys(v)) out[k] = vestaSerialize(v[k], depth + 1);
  return out;
}
function vestaEvaluate(thunks) {
  return thunks.map((thunk) => {
    try {
      return { ok: vestaSerialize(thunk(), 0) };
    } catch (e) {
      return { throws: [e && e.name, String(e && e.message)] };
    }
  });
}
`;

const env = Intl.DateTimeFormat().resolvedOptions();
if (env.timeZone !== "UTC" || env.locale !== "en-US") {
  throw new Error(`run in Chipotle's environment (env -i: UTC, en-US), not ${env.timeZone} / ${env.locale}`);
}
const thunks = (0, eval)(`${HARNESS}; [${CASES.map((c) => `() => (${c.expr})`).join(",\n")}]`);
const results = (0, eval)(`${HARNESS}; vestaEvaluate`)(thunks);
const fixture = {
  generatedBy: "scripts/intl-corpus/generate.mjs",
  deno: Deno.version.deno,
  v8: Deno.version.v8,
  environment: { timeZone: env.timeZone, locale: env.locale },
  harness: HARNESS,
  cases: CASES.map((c, i) => ({ group: c.group, expr: c.expr, expected: results[i] })),
};
await Deno.writeTextFile("test/fixtures/intl-corpus.json", JSON.stringify(fixture, null, 1) + "\n");
console.log(`${fixture.cases.length} cases from Deno ${fixture.deno} (V8 ${fixture.v8}) → test/fixtures/intl-corpus.json`);
