/**
 * A fresh QuickJS runtime + context with the guest API installed, made by the sandbox process while it
 * waits for its next run, so a run does not wait for it. No code but the sandbox's own has run
 * in it; the run binds itself as the host and sets its limits when it starts.
 */
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten";
import { installGuestApi, type GuestApi, type GuestHost, type GuestSources } from "./guest-bindings";

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
};

export function freshContext(qjs: QuickJSWASMModule, sources: GuestSources): FreshContext {
  const rt = qjs.newRuntime();
  rt.setMaxStackSize(STACK_BYTES);
  let bound: (GuestHost & ModuleHost) | undefined;
  const host = (): GuestHost & ModuleHost => {
    if (!bound) throw new Error("no run is bound to this context");
    return bound;
  };
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
  };
  try {
    const api = installGuestApi(ctx, forward, sources);
    return { qjs, rt, ctx, api, bind: (run) => (bound = run) };
  } catch (err) {
    ctx.dispose();
    rt.dispose();
    throw err;
  }
}
