/**
 * A sandbox process (started by host/launchers.ts with an empty environment, no access to the
 * relayer's files, and its own user when the relayer runs as root): one warm QuickJS WASM module
 * (sync build) whose memory has a hard ceiling, running one action at a time; each run gets a
 * fresh context: the warm context's memory as it was before any run (context.ts), put back after
 * the previous run's result was sent. Everything it needs from the relayer (keys, encryption,
 * fetch) is a host call over its port (port.ts); it holds no secret of its own.
 */
import fs from "node:fs";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { WASM_INITIAL_BYTES, WASM_LIMIT_BYTES, WASM_PAGE_BYTES } from "../wasm-memory";
import { boundError, codeText, paramsProblem } from "../wire/bounds";
import { readToSandbox, type FromSandbox, type RunMessage } from "../wire/messages";
import { WarmContext } from "./context";
import { readGuestSources } from "./guest-bindings";
import { DEFAULT_TIME_ZONE, warmIntl } from "./intl-calls";
import { openHostPort } from "./port";
import { ActionRun } from "./run";
import { layoutOf } from "./snapshot";

// The sandbox's time zone, never the host's (/etc/localtime): QuickJS's local time (Emscripten asks
// this process's Date) and Intl's default, before the QuickJS module starts (the empty environment,
// host/launchers.ts, already leaves the locale at ICU's default, en-US); then ICU's data, loaded
// before any run rather than in the first that formats.
process.env.TZ = DEFAULT_TIME_ZONE;
warmIntl();
const port = openHostPort();
const { config } = port;
const guest = readGuestSources(config.guestDir);
// The imported memory may not start smaller than Emscripten's INITIAL_MEMORY; its glue never grows it past WASM_LIMIT_BYTES.
const maxBytes = Math.min(WASM_LIMIT_BYTES, Math.max(2 * WASM_INITIAL_BYTES, Math.floor(config.wasmMaxBytes / WASM_PAGE_BYTES) * WASM_PAGE_BYTES));
const memory = new WebAssembly.Memory({ initial: WASM_INITIAL_BYTES / WASM_PAGE_BYTES, maximum: maxBytes / WASM_PAGE_BYTES });
/** Emscripten's stderr (e.g. a failed QuickJS assertion when a runtime is freed), for the pool's log. */
let diagnostic: string | undefined;
// printErr is an Emscripten Module option the quickjs-emscripten types do not list.
const emscriptenModule: Parameters<typeof newVariant>[1]["emscriptenModule"] & { printErr: (text: string) => void } = {
  printErr: (text) => (diagnostic = text.slice(0, 500)),
};
const wasm = fs.readFileSync(config.wasmFile);
const wasmBinary = wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength);
const quickjs = newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory, wasmBinary, emscriptenModule }));
// Built before anything else runs in the module (the snapshot measures its static data as it started).
// It guards the module's malloc and memory growth: each run refuses growth past its ceiling, which
// makes malloc fail right there (QuickJS throws "out of memory"; module-guard.ts), and also catches
// the allocations QuickJS's own memory limit does not count (large strings).
const warm = quickjs.then((qjs) => new WarmContext(qjs, guest, memory, layoutOf(wasm), maxBytes));
let current: { runId: number; run: ActionRun } | undefined;
/** The last run whose result was sent (a failure after it may not send a second one). */
let answered = 0;
/** The QuickJS module may be corrupt: run nothing more (the pool replaces this process). */
let poisoned = false;

const post = (msg: FromSandbox) => port.send(msg);

async function runAction(msg: RunMessage): Promise<void> {
  const { runId, limits } = msg;
  const code = codeText(msg.code, limits);
  const problem = "problem" in code ? code.problem : paramsProblem(msg.paramsJson, limits);
  if (problem || !("text" in code)) {
    // The pool checks the same before sending: a refusal here means the two sides disagree.
    return post({ type: "done", runId, responseJson: null, logs: "", error: boundError(problem ?? { message: "bad code" }), wasmBytes: memory.buffer.byteLength, poisoned: false });
  }
  const context = await warm;
  context.prepare(code.text);
  const fresh = context.fresh;
  const imports = msg.importBase !== undefined && msg.importEntry !== undefined ? { base: msg.importBase, entry: msg.importEntry } : undefined;
  const req = { code: code.text, ipfsId: msg.ipfsId, paramsJson: msg.paramsJson, limits, imports, headersJson: msg.headersJson };
  const run = new ActionRun(fresh, memory, req, (callId, op, argsJson, body) => post({ type: "call", runId, callId, op, argsJson, ...(body ? { body } : {}) }));
  current = { runId, run };
  const { result, crashed } = await run.start();
  current = undefined;
  post({ type: "done", runId, ...result, wasmBytes: memory.buffer.byteLength, poisoned: crashed, ...(diagnostic ? { diagnostic } : {}) });
  answered = runId;
  diagnostic = undefined;
  // Freeing the run's handles and putting the memory back happen after the answer is sent.
  poisoned = crashed || !run.release();
  if (poisoned && !crashed) post({ type: "poisoned", ...(diagnostic ? { diagnostic } : {}) });
  if (!poisoned) context.reset();
}

port.onMessage((raw: unknown) => {
  const msg = readToSandbox(raw);
  if (!msg) return; // not from the pool's protocol: ignored (the pool's kill timer ends a run that waits forever)
  if (msg.type === "run" && !poisoned && !current) {
    runAction(msg).catch((err) => {
      // A failure outside the action (e.g. making a context): this process may be damaged.
      current = undefined;
      poisoned = true;
      const message = `the sandbox failed: ${(err as Error)?.message ?? String(err)}`;
      if (answered === msg.runId) post({ type: "poisoned", diagnostic: message.slice(0, 500) }); // the run already has its result
      else post({ type: "done", runId: msg.runId, responseJson: null, logs: "", error: boundError({ message }), wasmBytes: memory.buffer.byteLength, poisoned: true });
    });
  } else if (msg.type === "answer" && current?.runId === msg.runId) current.run.answer(msg.callId, msg);
});

void warm.then(() => post({ type: "ready" }));
