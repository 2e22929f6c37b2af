/**
 * One action run inside the sandbox process: a fresh QuickJS context (the warm context's memory as
 * it was before any run, context.ts), limits, the guest API, and the loop that drives promises
 * until the action settles.
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten";
import { boundError, hostMessageChars, IO_OPS, MAX_HOST_CALLS_PER_RUN, MAX_OP_CHARS, MAX_OPEN_IO_CALLS, type WireResult } from "../wire/bounds";
import { splitCall, type WireCall } from "../wire/calls";
import type { FreshContext, ModuleHost } from "./context";
import { errorPosition, ImportGraph, MODULE_TAIL, outsideGraph, outsideGraphName, staticImports } from "./module-graph";
import { ACTION_MODULE, type ImportSource } from "../imports";
import { limitError, limitMessage, SandboxLimitError, type RunError } from "../errors";
import { callEthers, clearEthersCaches } from "./ethers-calls";
import { callSubtle } from "./subtle-calls";
import { callWeb } from "./web-calls";
import { GuestException, type GuestHost } from "./guest-bindings";
import { WasmAllocationError, type GuardedRun } from "./module-guard";
import type { HostAnswer } from "../wire/messages";
import { actionStack, buildResult, describeThrown, LogBuffer, readString } from "./run-output";
import { GuestTimers } from "./timers";
import { MAX_TIMEOUT_MS, type RunLimits } from "../types";
import { wasmAllowance } from "../wasm-memory";

/** One run as the sandbox process sees it: the code as text (decoded from the bytes its CID names), params as JSON. */
export type SandboxRunRequest = { code: string; ipfsId: string; paramsJson: string; limits: RunLimits; imports?: ImportSource; headersJson?: string };

/** Why a call past MAX_HOST_CALLS_PER_RUN is refused. */
const HOST_CALL_LIMIT = `host call limit exceeded: at most ${MAX_HOST_CALLS_PER_RUN} host calls per run`;

/** crypto.subtle operations one run may have under way at once. */
export const MAX_PENDING_SUBTLE = 16;

/**
 * Memory of the run's ceiling held back from the action for the sandbox's own code: freed when the
 * module's memory is exhausted (an allocation of the sandbox found no room, or the run is being
 * stopped for its memory), so that the errors and values that end the run can still be made.
 */
const HEADROOM_BYTES = 256 * 1024;
/** Strings up to this many characters are handed to QuickJS unmeasured (the headroom covers them); longer ones are measured first (room). */
const MEASURED_STRING_CHARS = 4096;

/** `crashed`: a host-side exception (a WASM trap) left the QuickJS module possibly corrupt. */
export type RunOutcome = { result: WireResult; crashed: boolean };

export class ActionRun implements GuestHost, ModuleHost, GuardedRun {
  readonly done: Promise<RunOutcome>;
  private resolveDone!: (outcome: RunOutcome) => void;
  private finished = false;
  private readonly ctx: QuickJSContext;
  /** Promise of the response JSON when there is a main() (or a promise completion value). */
  private settled?: QuickJSHandle;
  private readonly limits: RunLimits;
  private readonly deadline: number;
  private wasmCeiling: number;
  private readonly logs: LogBuffer;
  /** Ends the run at the next interrupt check. */
  private fatal?: RunError;
  /**
   * The first limit a call of the run met (the call refused, the action told): a run that then fails
   * fails with it (an uncaught rejection, or a library's error around it). A run whose action caught
   * it and went on is not failed for it, as on Chipotle (whose ops reject, and the action may catch).
   */
  private metLimit?: RunError;
  private responseJson?: string;
  private readonly calls = new Map<number, QuickJSDeferredPromise>();
  /** Host calls the sandbox process makes for the run itself (the modules of its imports), not for the action. */
  private readonly internal = new Map<number, (answer: HostAnswer) => void>();
  /** The action's import graph, when it is a module. */
  private graph?: ImportGraph;
  /** crypto.subtle operations under way in this process (not host calls: nothing leaves the process). */
  private readonly local = new Set<QuickJSDeferredPromise>();
  /** Characters of arguments the crypto.subtle operations under way hold: at most memoryBytes in all. */
  private localChars = 0;
  private readonly timers: GuestTimers;
  private lastCallId = 0;
  /** Fetch, import, Encrypt and Decrypt calls sent and not answered yet: at most MAX_OPEN_IO_CALLS. */
  private readonly openIo = new Set<number>();
  /** Such calls waiting for one of those to be answered, in the order the action made them, and the bytes they hold. */
  private readonly waiting: { callId: number; op: string; wire: WireCall }[] = [];
  private waitingBytes = 0;
  /** Calls refused before they left, rejected at the next host event (refuseSoon). */
  private readonly refusing = new Set<QuickJSDeferredPromise>();
  private deadlineTimer?: NodeJS.Timeout;
  /** The headroom block (HEADROOM_BYTES), until it is freed. */
  private headroom = 0;
  /** The sandbox's own code found no room in the module's memory with WASM frames under it: the process runs nothing more. */
  private retire = false;

  constructor(
    private readonly fresh: FreshContext,
    private readonly memory: WebAssembly.Memory,
    private readonly req: SandboxRunRequest,
    private readonly send: (callId: number, op: string, argsJson: string, body?: Uint8Array) => void,
  ) {
    this.ctx = fresh.ctx;
    this.limits = req.limits;
    this.deadline = Date.now() + Math.min(req.limits.timeoutMs, MAX_TIMEOUT_MS);
    this.wasmCeiling = Math.min(fresh.baseBytes + wasmAllowance(req.limits.memoryBytes), fresh.maxBytes);
    this.logs = new LogBuffer(req.limits.maxLogBytes);
    this.timers = new GuestTimers(this.ctx, this.deadline, (err) => (err ? this.crash(err) : this.pump()));
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  start(): Promise<RunOutcome> {
    clearEthersCaches(); // nothing of the last run is kept for this one
    try {
      // The memory the run may use is there before it starts (the first run of a process grows it;
      // the next ones find it): during the run, every growth is refused (allowGrowth), which is where
      // QuickJS's allocations fail with its out of memory (see FreshContext.reserve for why).
      this.wasmCeiling = this.fresh.reserve(this.wasmCeiling);
      this.headroom = this.fresh.guard.raw._malloc(HEADROOM_BYTES);
      this.fresh.guard.run = this;
      this.fresh.bind(this);
      this.fresh.rt.setMemoryLimit(this.limits.memoryBytes);
      this.fresh.rt.setInterruptHandler(() => this.shouldInterrupt());
      this.evaluate(this.ctx);
      this.pump();
    } catch (err) {
      if (err instanceof GuestException) this.finishThrown(err.handle);
      else this.crash(err);
    }
    // Until here the interrupt handler held the deadline; a run that waits (host calls, timers) is
    // ended by this timer. Most runs are over by now: they make no timer (~10 us of the run's path).
    if (!this.finished) this.deadlineTimer = setTimeout(() => this.pump(), Math.max(0, this.deadline - Date.now()) + 1);
    return this.done;
  }

  /** Evaluates the action, then tracks main(params), a promise completion value, or nothing. */
  private evaluate(ctx: QuickJSContext): void {
    let result = ctx.evalCode(this.req.code, ACTION_MODULE, { type: "global" });
    if (result.error && !this.fatal && readString(ctx, result.error, "name") === "SyntaxError") {
      // Top-level await (Lit-style code): same lines, wrapped in an async function.
      const wrapped = ctx.evalCode(`(async () => {${this.req.code}\n})()`, ACTION_MODULE, { type: "global" });
      if (wrapped.error) {
        wrapped.error.dispose();
        if (this.startModule(result.error)) return;
      } else {
        result.error.dispose();
        result = wrapped;
      }
    }
    if (result.error) return this.finishThrown(result.error);
    let target = result.value;
    const state = ctx.getPromiseState(target);
    if (state.type === "fulfilled" && state.notAPromise) {
      target.dispose();
      const lookup = ctx.callFunction(this.fresh.api.findMain, ctx.undefined);
      if (lookup.error) return this.finishThrown(lookup.error);
      target = lookup.value;
      if (ctx.typeof(target) === "undefined") return target.dispose();
    }
    this.track(target, false);
  }

  /** Tracks main(params) or a promise (for a module, the promise of its namespace): the run ends when it settles. */
  private track(target: QuickJSHandle, module: boolean): void {
    const ctx = this.ctx;
    const params = ctx.newString(this.req.paramsJson);
    const call = ctx.callFunction(this.fresh.api.track, ctx.undefined, target, params, module ? ctx.true : ctx.false);
    target.dispose();
    params.dispose();
    if (call.error) return this.finishThrown(call.error);
    this.settled = call.value;
  }

  /**
   * Code that does not parse as a script may be an ES module (it imports): QuickJS compiles it as
   * one (nothing runs) and, when it is, the run fetches its import graph before evaluating it.
   * False (the script's SyntaxError stands) when it is not a module either and the script's parse
   * got at least as far; takes `scriptError` otherwise.
   */
  private startModule(scriptError: QuickJSHandle): boolean {
    if (!/\b(?:import|export)\b/.test(this.req.code)) return false;
    const read = staticImports(this.fresh.qjs, this.req.code, ACTION_MODULE, this.limits);
    if ("error" in read) {
      if (!read.error.limit && errorPosition(read.error.stack) <= errorPosition(readString(this.ctx, scriptError, "stack"))) return false;
      scriptError.dispose();
      this.finish(read.error);
      return true;
    }
    scriptError.dispose();
    this.graph = new ImportGraph(this.fresh.qjs, this.req.imports, this.limits, (op, args, done) => this.callInternal(op, args, done), (error) =>
      error ? this.finish(error) : this.evaluateModule(),
    );
    this.graph.start(read.specifiers);
    return true;
  }

  /** The import graph is complete: the action runs as a module, its imports answered from the graph. */
  private evaluateModule(): void {
    if (this.finished) return;
    try {
      const result = this.ctx.evalCode(this.req.code + MODULE_TAIL, ACTION_MODULE, { type: "module" });
      if (result.error) return this.finishThrown(result.error);
      this.track(result.value, true);
    } catch (err) {
      if (err instanceof GuestException) this.finishThrown(err.handle);
      else this.crash(err);
    }
  }

  // ---- GuardedRun: the module's memory (module-guard.ts) ---------------------------------

  /** Asked before the WASM memory grows to `bytes`; a refusal ends the run with the memory limit. */
  allowGrowth(bytes: number): boolean {
    if (bytes <= this.wasmCeiling) return true;
    this.fatal ??= limitError("memoryBytes", this.limits);
    return false;
  }

  /** An allocation of the sandbox found no room: the memory is exhausted, the run ends with its limit; the headroom goes to what ends it. */
  makeRoom(): boolean {
    this.fatal ??= limitError("memoryBytes", this.limits);
    return this.freeHeadroom();
  }

  /** No room even after the headroom: the allocation throws. Under WASM frames the module may be left mid-call: the process is replaced after the run. */
  exhausted(insideWasm: boolean): void {
    this.fatal ??= limitError("memoryBytes", this.limits);
    if (insideWasm) this.retire = true;
  }

  private freeHeadroom(): boolean {
    if (this.headroom === 0) return false;
    this.fresh.guard.raw._free(this.headroom);
    this.headroom = 0;
    return true;
  }

  /**
   * Why `text` cannot be made a QuickJS string now (the run's limit met), or undefined: its UTF-8
   * copy and QuickJS's string (a byte a character when ASCII, else up to three bytes of UTF-8 while
   * QuickJS widens it) must fit the memory left, measured by malloc itself (module-guard.ts fits).
   */
  private noRoomFor(text: string, what: string): string | undefined {
    if (text.length <= MEASURED_STRING_CHARS) return undefined;
    const utf8 = Buffer.byteLength(text, "utf8");
    if (this.fresh.guard.fits(utf8 + 1, (utf8 === text.length ? 1 : 3) * utf8 + 64)) return undefined;
    this.metLimit ??= limitError("memoryBytes", this.limits);
    return `${what}: no room for its ${utf8} bytes in the run's memory: ${limitMessage("memoryBytes", this.limits)}`;
  }

  /** Throws the run's memory limit (the action may catch it) when `text` cannot be made a QuickJS string now. */
  room(text: string, what: string): void {
    const refused = this.noRoomFor(text, what);
    if (refused !== undefined) throw new SandboxLimitError("memoryBytes", refused);
  }

  private shouldInterrupt(): boolean {
    if (this.fatal) {
      this.freeHeadroom(); // QuickJS unwinds the action, and the sandbox reads its error: with room to do it
      return true;
    }
    if (Date.now() > this.deadline) this.fatal = limitError("timeoutMs", this.limits);
    else if (this.memory.buffer.byteLength > this.wasmCeiling) this.fatal = limitError("memoryBytes", this.limits);
    return this.fatal !== undefined;
  }

  /** Runs pending jobs and decides whether the run is over. Called after every host event. */
  private pump(): void {
    if (this.finished) return;
    try {
      if (!this.shouldInterrupt()) this.fresh.rt.executePendingJobs().error?.dispose();
      // executePendingJobs may report success after dropping an interrupted job: check ourselves.
      if (this.shouldInterrupt()) return this.finish(this.fatal!);
      if (this.settled) {
        const state = this.ctx.getPromiseState(this.settled);
        if (state.type === "rejected") return this.finishThrown(state.error);
        if (state.type === "fulfilled") {
          const json = this.ctx.typeof(state.value) === "string" ? this.ctx.getString(state.value) : undefined;
          state.value.dispose();
          return this.finish(undefined, json);
        }
      }
      if (this.calls.size > 0 || this.internal.size > 0 || this.refusing.size > 0 || this.graph?.busy || this.local.size > 0 || this.timers.size > 0) return;
      if (this.settled) return this.finish({ message: "the action's promise never settled (nothing left to wait for)" });
      this.finish(undefined);
    } catch (err) {
      this.crash(err);
    }
  }

  answer(callId: number, answer: HostAnswer): void {
    if (this.openIo.delete(callId)) this.sendWaiting();
    const internal = this.internal.get(callId);
    if (internal) {
      this.internal.delete(callId);
      if (this.finished) return;
      try {
        internal(answer);
      } catch (err) {
        return this.crash(err);
      }
      return this.pump();
    }
    const deferred = this.calls.get(callId);
    if (!deferred || this.finished) return;
    this.calls.delete(callId);
    try {
      // An answer that does not fit what is left of the run's memory is refused (the run's limit met), not written.
      const refused = answer.ok ? this.noRoomFor(answer.json, "the host's answer") : answer.message;
      if (answer.ok && refused === undefined) {
        this.ctx.newString(answer.json).consume((h) => deferred.resolve(h));
      } else {
        if (!answer.ok && answer.limit) this.metLimit ??= { message: answer.message, limit: answer.limit };
        this.ctx.newError({ name: "Error", message: refused ?? "" }).consume((h) => deferred.reject(h));
      }
    } catch (err) {
      return this.crash(err);
    } finally {
      deferred.dispose();
    }
    this.pump();
  }

  // ---- GuestHost ------------------------------------------------------------------------

  /**
   * Sends a host call to the pool, which checks and counts it (host/call-checks.ts) and answers. This
   * side bounds what it sends: the size of each message (the call's bulk apart, as bytes:
   * wire/calls.ts; a bulk past its bound is refused here, as the relayer would, without crossing),
   * how many (a flood of calls must not reach the relayer), and how many I/O calls are open at once.
   */
  call(op: string, argsJson: string): QuickJSHandle {
    // Nothing of a run that is over may reach the host (its result is sent; a later message would be another run's).
    if (this.finished) throw new Error("the run is over");
    this.checkCall(op, argsJson);
    const deferred = this.ctx.newPromise();
    const callId = this.nextCallId();
    let refused = callId === undefined ? HOST_CALL_LIMIT : undefined;
    if (callId !== undefined) {
      const wire = this.wireCall(op, argsJson);
      if ("refused" in wire) refused = wire.refused;
      else {
        this.calls.set(callId, deferred);
        refused = this.dispatch(callId, op, wire);
        if (refused !== undefined) this.calls.delete(callId);
      }
    }
    if (refused !== undefined) this.refuseSoon(deferred, refused);
    return deferred.handle;
  }

  /** A host call of the run itself (a module of its imports): `done` gets the answer, unless the run is over. */
  private callInternal(op: string, argsJson: string, done: (answer: HostAnswer) => void): void {
    this.checkCall(op, argsJson);
    const callId = this.nextCallId();
    if (callId === undefined) return done({ ok: false, message: HOST_CALL_LIMIT });
    const wire = this.wireCall(op, argsJson);
    if ("refused" in wire) return done({ ok: false, message: wire.refused });
    this.internal.set(callId, done);
    const refused = this.dispatch(callId, op, wire);
    if (refused === undefined) return;
    this.internal.delete(callId);
    done({ ok: false, message: refused });
  }

  /**
   * A call refused before it leaves is rejected as the relayer's refusal would be: from a later host
   * event, so that a loop of refused calls still returns to the pump (which checks the deadline)
   * after each one, as it does when the relayer answers.
   */
  private refuseSoon(deferred: QuickJSDeferredPromise, message: string): void {
    this.refusing.add(deferred);
    setImmediate(() => {
      if (this.finished || !this.refusing.delete(deferred)) return; // the run is over: release() frees it
      try {
        this.ctx.newError({ name: "Error", message }).consume((h) => deferred.reject(h));
      } catch (err) {
        return this.crash(err);
      } finally {
        deferred.dispose();
      }
      this.pump();
    });
  }

  private checkCall(op: string, argsJson: string): void {
    if (op.length > MAX_OP_CHARS) throw new TypeError("unknown host operation");
    if (argsJson.length > hostMessageChars(this.limits)) throw new RangeError(`${op}: the arguments are too large`);
  }

  /** The call as it crosses (its bulk apart, as bytes), or why it does not. */
  private wireCall(op: string, argsJson: string): WireCall | { refused: string } {
    const split = splitCall(op, argsJson, this.limits);
    return "tooLarge" in split ? { refused: `${op}: the arguments are too large` } : split;
  }

  /**
   * Sends the call, or, an I/O call when MAX_OPEN_IO_CALLS are open, keeps it until one of them is
   * answered (the run's deadline runs meanwhile). What waits stays within the run's memory: past it,
   * the call is refused (the message returned) and memoryBytes is the run's limit met.
   */
  private dispatch(callId: number, op: string, wire: WireCall): string | undefined {
    if (IO_OPS.has(op) && this.openIo.size >= MAX_OPEN_IO_CALLS) {
      const bytes = wire.argsJson.length + (wire.body?.length ?? 0);
      if (this.waitingBytes + bytes > this.limits.memoryBytes) {
        this.metLimit ??= limitError("memoryBytes", this.limits);
        return `${op}: the calls waiting for their turn hold too much: ${limitMessage("memoryBytes", this.limits)}`;
      }
      this.waitingBytes += bytes;
      this.waiting.push({ callId, op, wire });
      return undefined;
    }
    if (IO_OPS.has(op)) this.openIo.add(callId);
    this.send(callId, op, wire.argsJson, wire.body);
    return undefined;
  }

  /** An I/O call was answered: the next ones waiting go, unless the run is over. */
  private sendWaiting(): void {
    while (!this.finished && this.openIo.size < MAX_OPEN_IO_CALLS && this.waiting.length > 0) {
      const { callId, op, wire } = this.waiting.shift()!;
      this.waitingBytes -= wire.argsJson.length + (wire.body?.length ?? 0);
      this.openIo.add(callId);
      this.send(callId, op, wire.argsJson, wire.body);
    }
  }

  /** The next call's id, or undefined past MAX_HOST_CALLS_PER_RUN (the call is refused with HOST_CALL_LIMIT). */
  private nextCallId(): number | undefined {
    return this.lastCallId >= MAX_HOST_CALLS_PER_RUN ? undefined : ++this.lastCallId;
  }

  info(what: string): string {
    if (what === "headers") return this.req.headersJson ?? "{}";
    if (what === "imports") return JSON.stringify(this.graph?.details() ?? []);
    throw new TypeError(`unknown run information ${what.slice(0, 64)}`);
  }

  normalizeModule(base: string, requested: string): string | { error: Error } {
    // quickjs-emscripten drops a normalizer's error and asks the loader for "": the refusal travels in the name.
    return this.graph ? this.graph.normalize(base, requested) : outsideGraphName(requested);
  }

  loadModule(name: string): string | { error: Error } {
    const source = this.graph ? this.graph.load(name) : outsideGraph(name);
    const refused = typeof source === "string" ? this.noRoomFor(source, `import ${JSON.stringify(name.slice(0, 200))}`) : undefined;
    return refused === undefined ? source : { error: new RangeError(refused) };
  }

  log(line: string): void {
    if (!this.fatal && !this.logs.append(line)) this.fatal = limitError("maxLogBytes", this.limits);
  }

  setResponse(json: string): void {
    if (Buffer.byteLength(json, "utf8") > this.limits.maxResponseBytes) this.fatal ??= limitError("maxResponseBytes", this.limits);
    else this.responseJson = json;
  }

  sleep(id: number, ms: number): QuickJSHandle {
    return this.timers.sleep(id, ms);
  }

  cancel(id: number): void {
    this.timers.cancel(id);
  }

  fail(message: string, stack: string): void {
    this.fatal ??= boundError({ message, stack: actionStack(stack) });
  }

  /** A call past what the run may handle throws its limit to the action (which may catch it); the limit is the run's limit met (metLimit). */
  ethers(name: string, argsJson: string): string {
    return this.limited(() => callEthers(name, argsJson, this.limits));
  }

  /** A synchronous web platform helper; a call past what the run may handle throws its limit, like ethers. */
  web(name: string, argsJson: string): string {
    return this.limited(() => callWeb(name, argsJson, this.limits));
  }

  /**
   * A crypto.subtle operation, run by Node's Web Crypto in this process: a promise settled when it
   * is done. At most MAX_PENDING_SUBTLE at a time (each holds its arguments in this process's heap).
   */
  subtle(op: string, argsJson: string): QuickJSHandle {
    if (this.local.size >= MAX_PENDING_SUBTLE) throw new RangeError(`crypto.subtle: at most ${MAX_PENDING_SUBTLE} operations may be under way at once`);
    // Their arguments live in this process's heap until they settle: all of them together within the run's memory.
    if (this.localChars + argsJson.length > this.limits.memoryBytes) {
      this.metLimit ??= limitError("memoryBytes", this.limits);
      throw new SandboxLimitError("memoryBytes", `crypto.subtle.${op}: the operations under way hold too much: ${limitMessage("memoryBytes", this.limits)}`);
    }
    const chars = argsJson.length;
    this.localChars += chars;
    let work: Promise<string>;
    try {
      work = callSubtle(op, argsJson, this.limits);
    } catch (err) {
      work = Promise.reject(err);
    }
    const deferred = this.ctx.newPromise();
    this.local.add(deferred);
    void work.finally(() => (this.localChars -= chars)).catch(() => {});
    work.then(
      (json) =>
        this.settleLocal(deferred, () => {
          const refused = this.noRoomFor(json, `crypto.subtle.${op}`);
          if (refused === undefined) this.ctx.newString(json).consume((h) => deferred.resolve(h));
          else this.ctx.newError({ name: "Error", message: refused }).consume((h) => deferred.reject(h));
        }),
      (err: Error) => {
        if (err instanceof SandboxLimitError) this.metLimit ??= limitError(err.limit, this.limits);
        const name = err instanceof TypeError ? "TypeError" : /^[A-Z][A-Za-z]{0,40}Error$/.test(err?.name) && !(err instanceof SandboxLimitError) ? err.name : "Error";
        this.settleLocal(deferred, () => this.ctx.newError({ name, message: String(err?.message).slice(0, 2048) }).consume((h) => deferred.reject(h)));
      },
    );
    return deferred.handle;
  }

  private settleLocal(deferred: QuickJSDeferredPromise, settle: () => void): void {
    if (this.finished || !this.local.delete(deferred)) return; // the run is over: release() frees it
    try {
      settle();
    } catch (err) {
      return this.crash(err);
    } finally {
      deferred.dispose();
    }
    this.pump();
  }

  private limited<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof SandboxLimitError) this.metLimit ??= limitError(err.limit, this.limits);
      throw err;
    }
  }

  // ---- the end of a run -----------------------------------------------------------------

  private finishThrown(thrown: QuickJSHandle): void {
    let error: RunError;
    try {
      error = this.fatal ?? describeThrown(this.ctx, thrown, this.limits);
    } catch (err) {
      // No room to read what was thrown (start() calls this from its own catch): the memory limit, which the refusal set.
      if (!(err instanceof WasmAllocationError)) throw err;
      error = this.fatal ?? limitError("memoryBytes", this.limits);
    }
    thrown.dispose();
    // A limit the run met and then failed (an uncaught rejection of the call over it, or an error of a
    // library around it, such as an ethers provider's SERVER_ERROR): the run ends with that limit.
    if (!error.limit && this.metLimit?.limit) error = { ...error, limit: this.metLimit.limit };
    this.finish(error);
  }

  private finish(error: RunError | undefined, mainJson?: string): void {
    if (this.finished) return;
    this.finished = true;
    this.clearTimers();
    // What main returned wins over setResponse's, as on Chipotle (its runtime calls setResponse with it after main).
    const result = buildResult(this.logs, this.limits, mainJson ?? this.responseJson, error);
    this.resolveDone({ result, crashed: this.retire });
  }

  /**
   * A host-side exception (a WASM trap, V8 stack exhaustion): the module may be corrupt. An
   * allocation of the sandbox's own code refused where no WASM frame lay under it (an answer, a
   * timer, the pump) wrote nothing and left the module between two calls: the run ends with its
   * memory limit, and the process goes on.
   */
  private crash(err: unknown): void {
    if (this.finished) return;
    if (err instanceof WasmAllocationError && !this.retire) return this.finish(this.fatal ?? limitError("memoryBytes", this.limits));
    this.finished = true;
    const e = err instanceof Error ? err : new Error(String(err));
    const error = this.fatal ?? (/call stack/i.test(e.message) ? { message: "InternalError: stack overflow" } : { message: `the sandbox failed: ${e.message}` });
    this.clearTimers();
    this.resolveDone({ result: buildResult(this.logs, this.limits, this.responseJson, error), crashed: true });
  }

  /** The run is over: its timers stop, and the module's memory serves it no more. */
  private clearTimers(): void {
    clearTimeout(this.deadlineTimer);
    this.timers.stop();
    if (this.fresh.guard.run === this) this.fresh.guard.run = undefined;
  }

  /**
   * Frees every handle the run made, after the result is sent (never after a crash), before the
   * warm context's memory is put back (context.ts): none may be used or freed after that; false
   * when QuickJS could not free them.
   */
  release(): boolean {
    try {
      this.timers.dispose();
      for (const deferred of this.calls.values()) deferred.dispose();
      this.calls.clear();
      this.internal.clear();
      this.waiting.length = 0;
      this.openIo.clear();
      for (const deferred of this.refusing) deferred.dispose();
      this.refusing.clear();
      for (const deferred of this.local) deferred.dispose();
      this.local.clear();
      this.settled?.dispose();
      return true;
    } catch {
      return false;
    }
  }
}
