/**
 * A sandbox worker thread: one warm QuickJS WASM module (sync build) whose memory has a hard
 * ceiling, running one action at a time; each run gets a fresh runtime + context (see run.ts).
 * Loaded by SandboxPool through worker-entry.js.
 */
import { parentPort, workerData } from "node:worker_threads";
import { newQuickJSWASMModuleFromVariant, newVariant, RELEASE_SYNC } from "quickjs-emscripten";
import { boundError, codeText, paramsProblem } from "./bounds";
import { readToWorker, type FromWorker, type RunMessage, type WorkerConfig } from "./messages";
import { freshContext, type FreshContext } from "./context";
import { ActionRun } from "./run";

const PAGE_BYTES = 64 * 1024;
/** Emscripten's INITIAL_MEMORY for this build (16 MB); the imported memory may not start smaller. */
const INITIAL_PAGES = 256;

const port = parentPort!;
const config = workerData as WorkerConfig;
const memory = new WebAssembly.Memory({
  initial: INITIAL_PAGES,
  maximum: Math.max(INITIAL_PAGES * 2, Math.floor(config.wasmMaxBytes / PAGE_BYTES)),
});
/** Emscripten's stderr (e.g. a failed QuickJS assertion when a runtime is freed), for the pool's log. */
let diagnostic: string | undefined;
// printErr is an Emscripten Module option the quickjs-emscripten types do not list.
const emscriptenModule: Parameters<typeof newVariant>[1]["emscriptenModule"] & { printErr: (text: string) => void } = {
  printErr: (text) => (diagnostic = text.slice(0, 500)),
};
const quickjs = newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory, emscriptenModule }));
let current: { runId: number; run: ActionRun } | undefined;
/** The context the next run will use, made while the worker is idle. */
let spare: FreshContext | undefined;
/** The QuickJS module may be corrupt: run nothing more (the pool replaces this worker). */
let poisoned = false;

// Emscripten grows the heap through memory.grow() (its sbrk). Refusing a growth past the run's
// ceiling makes malloc fail right there (QuickJS throws "out of memory"), which also catches the
// allocations QuickJS's own memory limit does not count (large strings).
const nativeGrow = memory.grow.bind(memory);
memory.grow = (pages: number): number => {
  if (current && !current.run.allowGrowth(memory.buffer.byteLength + pages * PAGE_BYTES)) {
    throw new RangeError("sandbox: WASM memory ceiling of the run reached");
  }
  return nativeGrow(pages);
};

const post = (msg: FromWorker) => port.postMessage(msg);

async function runAction(msg: RunMessage): Promise<void> {
  const { runId, limits } = msg;
  const code = codeText(msg.code, limits);
  const problem = "problem" in code ? code.problem : paramsProblem(msg.paramsJson, limits);
  if (problem || !("text" in code)) {
    // The pool checks the same before sending: a refusal here means the two sides disagree.
    return post({ type: "done", runId, responseJson: null, logs: "", error: boundError(problem ?? { message: "bad code" }), wasmBytes: memory.buffer.byteLength, poisoned: false });
  }
  const qjs = await quickjs;
  const fresh = spare ?? freshContext(qjs);
  spare = undefined;
  const req = { code: code.text, ipfsId: msg.ipfsId, paramsJson: msg.paramsJson, limits };
  const run = new ActionRun(fresh, memory, req, (callId, op, argsJson) => post({ type: "call", runId, callId, op, argsJson }));
  current = { runId, run };
  const { result, crashed } = await run.start();
  current = undefined;
  post({ type: "done", runId, ...result, wasmBytes: memory.buffer.byteLength, poisoned: crashed, ...(diagnostic ? { diagnostic } : {}) });
  diagnostic = undefined;
  // Freeing the run's QuickJS runtime and making the next one happen after the answer is sent.
  poisoned = crashed || !run.release();
  if (poisoned && !crashed) post({ type: "poisoned", ...(diagnostic ? { diagnostic } : {}) });
  if (!poisoned) spare = freshContext(qjs);
}

port.on("message", (raw: unknown) => {
  const msg = readToWorker(raw);
  if (!msg) return; // not from the pool's protocol: ignored (the pool's kill timer ends a run that waits forever)
  if (msg.type === "run" && !poisoned && !current) {
    runAction(msg).catch((err) => {
      // A failure outside the action (e.g. making a context): this worker may be damaged.
      current = undefined;
      poisoned = true;
      post({ type: "done", runId: msg.runId, responseJson: null, logs: "", error: boundError({ message: `the sandbox failed: ${(err as Error)?.message ?? String(err)}` }), wasmBytes: memory.buffer.byteLength, poisoned: true });
    });
  } else if (msg.type === "answer" && current?.runId === msg.runId) current.run.answer(msg.callId, msg);
});

void quickjs.then((qjs) => {
  spare = freshContext(qjs);
  post({ type: "ready" });
});
