/**
 * The context every run of a sandbox process gets: one QuickJS runtime and context with the guest
 * API installed (guest-bindings.ts), built once when the process starts, before any action ran,
 * then copied (snapshot.ts). After each run, once its result is sent, the memory is put back to
 * that copy: the next run gets a context in which no code but the sandbox's own has run, and a
 * runtime in the same state (its memory limit, interrupt handler, module loader, job queue,
 * atoms, garbage: nothing of an earlier run survives). Putting back the copy costs a copy of a few
 * hundred KB instead of making a runtime, a context and the guest prelude (~3x as long).
 *
 * What lives outside the WASM memory is kept in step: quickjs-emscripten's handles (a run's handles
 * are freed before the copy is put back and never used after; the API's own were made before the
 * copy, see GuestApi.endRun), its table of host functions (no host function, context or host
 * reference may be made once the copy is taken: `seal` makes that throw), the runtime's interrupt
 * handler as quickjs-emscripten remembers it (removed after each run), and its module loader (set
 * once before the copy; it answers for the run bound at the time). The scratch runtimes a run
 * makes to read its imports (module-graph.ts) are made and freed within the run.
 */
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten";
import { WASM_LIMIT_BYTES } from "../wasm-memory";
import { installGuestApi, type GuestApi, type GuestHost, type GuestSources } from "./guest-bindings";
import { ModuleGuard } from "./module-guard";
import { heapTop, MemorySnapshot, staticEnd, type MemoryLayout } from "./snapshot";

/** What reserve() leaves below the asked size: malloc's own overhead and Emscripten's 64 KiB steps. */
const RESERVE_MARGIN_BYTES = 1024 * 1024;
/** QuickJS stack limit; larger values let some recursions (JSON, nested arrays) exhaust V8's native stack first. */
const STACK_BYTES = 256 * 1024;

/** What answers QuickJS's module loader for a run (its import graph, module-graph.ts). */
export interface ModuleHost {
  normalizeModule(base: string, requested: string): string | { error: Error };
  loadModule(name: string): string | { error: Error };
}

export type FreshContext = {
  /** The QuickJS module the runtime belongs to (a run's scratch runtimes come from it too). */
  qjs: QuickJSWASMModule;
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  api: GuestApi;
  /** Makes `host` answer the guest API and the module loader (once, by the run that uses this context). */
  bind(host: GuestHost & ModuleHost): void;
  /** The WASM memory's size when the copy was taken: what a run's memory ceiling is counted from. */
  baseBytes: number;
  /** The most the WASM memory may hold (its maximum): no run's ceiling is past it. */
  maxBytes: number;
  /** The module's malloc as this process's own code meets it, its growth refused past the bound run's ceiling (module-guard.ts). */
  guard: ModuleGuard;
  /**
   * Grows the WASM memory to about `bytes` (never past it, nor past maxBytes) before a run, through the module's own
   * malloc (so Emscripten updates its views), and answers its size then. A run never grows the
   * memory itself: quickjs-emscripten reads some results of a call into the module (the context of
   * a promise job, a new promise's resolvers) through views made before the call, which a growth
   * during that call detaches (they read undefined: the job's context was taken for a new one).
   */
  reserve(bytes: number): number;
};

/** Code that names the ethers global (a run of it starts from the copy that holds the ethers modules). */
const NAMES_ETHERS = /\bethers\b/;

export class WarmContext {
  readonly fresh: FreshContext;
  private readonly snapshot: MemorySnapshot;
  /** The same, with the ethers modules compiled (guest-bindings.ts ETHERS_MODULES). */
  private readonly ethersSnapshot: MemorySnapshot;
  /** Which copy the memory holds now. */
  private ethers = false;

  /**
   * Builds the runtime and context and copies the memory. `memory` is the QuickJS module's, which
   * must have run nothing else since it started (its static data is measured now); `maxBytes` its
   * maximum.
   */
  constructor(qjs: QuickJSWASMModule, sources: GuestSources, memory: WebAssembly.Memory, layout: MemoryLayout, maxBytes = WASM_LIMIT_BYTES) {
    const statics = staticEnd(memory, layout);
    // quickjs-emscripten keeps its Emscripten module (with malloc and free) in a protected field.
    const guard = new ModuleGuard((qjs as unknown as { module: unknown }).module, memory);
    const allocator = guard.raw; // the sandbox's own measures get 0 for no room, not a throw
    const rt = qjs.newRuntime();
    rt.setMaxStackSize(STACK_BYTES);
    let bound: (GuestHost & ModuleHost) | undefined;
    const host = (): GuestHost & ModuleHost => {
      if (!bound) throw new Error("no run is bound to this context");
      return bound;
    };
    // Set once, before the copy (as every host function): it answers for the run bound at the time.
    const unbound = { error: new TypeError("import: no run is bound to this context") };
    rt.setModuleLoader(
      (name) => (bound ? bound.loadModule(name) : unbound),
      (base, requested) => (bound ? bound.normalizeModule(base, requested) : unbound),
    );
    const ctx = rt.newContext();
    const forward: GuestHost = {
      call: (op, args) => host().call(op, args),
      log: (line) => host().log(line),
      setResponse: (json) => host().setResponse(json),
      sleep: (id, ms) => host().sleep(id, ms),
      cancel: (id) => host().cancel(id),
      fail: (message, stack) => host().fail(message, stack),
      ethers: (name, args) => host().ethers(name, args),
      web: (name, args) => host().web(name, args),
      subtle: (op, args) => host().subtle(op, args),
      info: (what) => host().info(what),
      // The guest modules compiled before the copy are loaded with no run bound: nothing to measure against.
      room: (text, what) => bound?.room(text, what),
    };
    const api = installGuestApi(ctx, forward, sources);
    void ctx.global; // quickjs-emscripten makes this handle on first use: before the copy, not in a run
    seal(rt, ctx);
    this.snapshot = new MemorySnapshot(memory, layout, statics, heapTop(allocator, layout, memory));
    // The second copy: the first, and the ethers modules compiled in it (no run is bound: nothing of a run is in it).
    api.loadEthers();
    this.ethersSnapshot = new MemorySnapshot(memory, layout, statics, heapTop(allocator, layout, memory));
    this.snapshot.restore();
    api.setEthersLoaded(false);
    const reserve = (bytes: number): number => {
      const missing = Math.min(bytes, maxBytes) - memory.buffer.byteLength - RESERVE_MARGIN_BYTES;
      if (missing > 0) {
        const block = allocator._malloc(missing); // from the top of the heap: the memory grows by about that much
        if (block !== 0) allocator._free(block); // malloc keeps the space; the memory keeps its size
      }
      return memory.buffer.byteLength;
    };
    this.fresh = { qjs, rt, ctx, api, bind: (run) => (bound = run), baseBytes: memory.buffer.byteLength, maxBytes, guard, reserve };
  }

  /** Bytes put back after each run (of code that does not name ethers, and of code that does). */
  get snapshotBytes(): number {
    return this.snapshot.size;
  }

  get ethersSnapshotBytes(): number {
    return this.ethersSnapshot.size;
  }

  /** Whether the memory holds the copy with the ethers modules now. */
  get holdsEthers(): boolean {
    return this.ethers;
  }

  /**
   * Before a run of `code` (between runs: after reset): the copy that holds the ethers modules when
   * the code names `ethers`, else the first one, put back unless the memory holds it already (the
   * copy a run started from is the one put back after it, so runs of one kind in a row copy once).
   * Code that reaches the global another way (globalThis["eth" + "ers"]) loads the modules in its
   * run, as every guest module not compiled in the copy it started from.
   */
  prepare(code: string): void {
    const ethers = NAMES_ETHERS.test(code);
    if (ethers === this.ethers) return;
    (ethers ? this.ethersSnapshot : this.snapshot).restore();
    this.ethers = ethers;
    this.fresh.api.setEthersLoaded(ethers);
  }

  /**
   * After a run whose handles are freed (ActionRun.release): forgets what the run made and puts
   * the memory back. Never after a crash (a WASM trap may leave the stack pointer off its base):
   * that process runs nothing more.
   */
  reset(): void {
    const { rt, api } = this.fresh;
    api.endRun();
    rt.removeInterruptHandler();
    (this.ethers ? this.ethersSnapshot : this.snapshot).restore();
  }
}

/** After this, making a host function, a host reference or a context throws (they would outlive the snapshot wrongly). */
function seal(rt: QuickJSRuntime, ctx: QuickJSContext): void {
  const refuse = (what: string) => () => {
    throw new Error(`sandbox: ${what} cannot be made once the warm context is copied (context.ts)`);
  };
  Object.assign(ctx, { newFunction: refuse("a host function"), newFunctionWithOptions: refuse("a host function"), newConstructorFunction: refuse("a host function"), newHostRef: refuse("a host reference") });
  Object.assign(rt, { newContext: refuse("a context") });
}
