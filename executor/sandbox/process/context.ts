/**
 * A fresh QuickJS runtime + context with the guest API installed, made by the sandbox process while it
 * waits for its next run, so a run does not wait for it. No code but the sandbox's own has run
 * in it; the run binds itself as the host and sets its limits when it starts.
 */
import type { QuickJSContext, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten";
import { installGuestApi, type GuestApi, type GuestHost, type GuestSources } from "./guest-bindings";

/** QuickJS stack limit; larger values let some recursions (JSON, nested arrays) exhaust V8's native stack first. */
const STACK_BYTES = 256 * 1024;

export type FreshContext = {
  rt: QuickJSRuntime;
  ctx: QuickJSContext;
  api: GuestApi;
  /** Makes `host` answer the guest API (once, by the run that uses this context). */
  bind(host: GuestHost): void;
};

export function freshContext(qjs: QuickJSWASMModule, sources: GuestSources): FreshContext {
  const rt = qjs.newRuntime();
  rt.setMaxStackSize(STACK_BYTES);
  const ctx = rt.newContext();
  let bound: GuestHost | undefined;
  const host = (): GuestHost => {
    if (!bound) throw new Error("no run is bound to this context");
    return bound;
  };
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
  };
  try {
    const api = installGuestApi(ctx, forward, sources);
    return { rt, ctx, api, bind: (run) => (bound = run) };
  } catch (err) {
    ctx.dispose();
    rt.dispose();
    throw err;
  }
}
