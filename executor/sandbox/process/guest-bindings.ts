/**
 * The guest's bindings to the sandbox process: installs the sandbox's globals in a fresh QuickJS
 * context. The raw bindings (call, log, setResponse, timers, ethers, load) live on an object no
 * global reaches; the globals (Lit, Actions, console, timers, fetch, ethers) are lazy: the guest
 * module defining each (guest/*.js) is compiled on first access only, so a run pays for what it
 * touches. Only strings and numbers cross the boundary (getString/getNumber in, new QuickJS values
 * out), so no handle to an object of this process, nor Node's Function constructor, ever exists in
 * the sandbox. Errors raised here become plain guest errors (name + message, no Node stack).
 */
import fs from "node:fs";
import path from "node:path";
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten";
import { MAX_HOST_ERROR_BYTES, truncateUtf8 } from "../wire/bounds";
import { callEthers } from "./ethers-calls";

/** The guest modules' sources (guest/*.js), read once per process. */
export type GuestSources = { track: string; modules: ReadonlyMap<string, string> };

/** Reads the guest modules from `dir`, with whole-line comments dropped (QuickJS compiles them on every run). */
export function readGuestSources(dir: string): GuestSources {
  const source = (name: string) => fs.readFileSync(path.join(dir, `${name}.js`), "utf8").replace(/^\s*\/\/.*\n/gm, "");
  return { track: source("track"), modules: new Map(["lib", "actions", "console", "timers", "fetch", "ethers"].map((name) => [name, source(name)])) };
}
/** Each global of the sandbox and the guest module that defines it. */
const GLOBALS: Record<string, string> = {
  Lit: "actions",
  Actions: "actions",
  console: "console",
  setTimeout: "timers",
  setInterval: "timers",
  clearTimeout: "timers",
  clearInterval: "timers",
  queueMicrotask: "timers",
  fetch: "fetch",
  ethers: "ethers",
};

/** What the run provides to the guest; each method may throw an Error the action sees. */
export interface GuestHost {
  /** Starts a host call; returns the handle of a promise of its JSON answer. */
  call(op: string, argsJson: string): QuickJSHandle;
  log(line: string): void;
  setResponse(json: string): void;
  /** A promise handle resolved after `ms` (timer `id`), unless cancelled. */
  sleep(id: number, ms: number): QuickJSHandle;
  cancel(id: number): void;
  /** An uncaught error outside the main promise (e.g. in a timer callback): ends the run. */
  fail(message: string, stack: string): void;
}

export type GuestApi = {
  /** guest/track.js: track(mainOrPromise, paramsJson) → promise of the response JSON. */
  track: QuickJSHandle;
  /** Frees the handles the API holds (before the context is disposed). */
  dispose(): void;
};

/** An exception raised inside QuickJS (e.g. out of memory while compiling a guest module). */
export class GuestException {
  constructor(readonly handle: QuickJSHandle) {}
}

type Impl = (...args: QuickJSHandle[]) => QuickJSHandle | void;

export function installGuestApi(ctx: QuickJSContext, host: GuestHost, sources: GuestSources): GuestApi {
  const owned: QuickJSHandle[] = [];
  const keep = (h: QuickJSHandle) => (owned.push(h), h);
  const unwrap = (r: VmCallResult<QuickJSHandle>): QuickJSHandle => {
    if ("error" in r && r.error) throw new GuestException(r.error);
    return (r as { value: QuickJSHandle }).value;
  };
  const str = (h: QuickJSHandle | undefined, name: string): string => {
    if (!h || ctx.typeof(h) !== "string") throw new TypeError(`${name} must be a string`);
    return ctx.getString(h);
  };
  const num = (h: QuickJSHandle | undefined, name: string): number => {
    if (!h || ctx.typeof(h) !== "number") throw new TypeError(`${name} must be a number`);
    return ctx.getNumber(h);
  };
  const guard =
    (impl: Impl) =>
    (...args: QuickJSHandle[]): QuickJSHandle | VmCallResult<QuickJSHandle> | void => {
      try {
        return impl(...args);
      } catch (err) {
        if (err instanceof GuestException) return { error: err.handle };
        const e = err instanceof Error ? err : new Error(String(err));
        const name = e instanceof TypeError ? "TypeError" : e instanceof RangeError ? "RangeError" : "Error";
        return { error: ctx.newError({ name, message: truncateUtf8(e.message, MAX_HOST_ERROR_BYTES) }) };
      }
    };

  // Object.defineProperty as the context started (before the action could replace it).
  const defineProperty = keep(ctx.getProp(ctx.global, "Object").consume((o) => ctx.getProp(o, "defineProperty")));
  const setGlobal = (name: string, value: QuickJSHandle) => {
    const descriptor = ctx.newObject();
    ctx.setProp(descriptor, "value", value);
    ctx.setProp(descriptor, "writable", ctx.true);
    ctx.setProp(descriptor, "configurable", ctx.true);
    try {
      ctx.newString(name).consume((key) => unwrap(ctx.callFunction(defineProperty, ctx.undefined, ctx.global, key, descriptor)).dispose());
    } finally {
      descriptor.dispose();
    }
  };

  const raw = keep(ctx.newObject());
  const exportsOf = new Map<string, QuickJSHandle>();
  const load = (name: string): QuickJSHandle => {
    const cached = exportsOf.get(name);
    if (cached) return cached;
    const source = sources.modules.get(name);
    if (source === undefined) throw new TypeError("unknown guest module");
    const factory = unwrap(ctx.evalCode(source, `vesta:${name}`, { type: "global" }));
    try {
      const exports = keep(unwrap(ctx.callFunction(factory, ctx.undefined, name === "lib" ? raw : load("lib"))));
      exportsOf.set(name, exports);
      return exports;
    } finally {
      factory.dispose();
    }
  };

  const fns: Record<string, Impl> = {
    call: (op, args) => host.call(str(op, "op"), str(args, "args")),
    log: (line) => void host.log(str(line, "line")),
    setResponse: (json) => void host.setResponse(str(json, "response")),
    sleep: (id, ms) => host.sleep(num(id, "id"), num(ms, "ms")),
    cancel: (id) => void host.cancel(num(id, "id")),
    fail: (message, stack) => void host.fail(str(message, "message"), str(stack, "stack")),
    ethers: (name, args) => ctx.newString(callEthers(str(name, "name"), str(args, "args"))),
    load: (name) => load(str(name, "name")).dup(),
  };
  for (const [name, impl] of Object.entries(fns)) {
    ctx.newFunction(name, guard(impl)).consume((fn) => ctx.setProp(raw, name, fn));
  }

  for (const [name, module] of Object.entries(GLOBALS)) {
    ctx.defineProp(ctx.global, name, {
      configurable: true,
      get: guard(() => {
        const value = ctx.getProp(load(module), name);
        setGlobal(name, value);
        return value;
      }) as () => QuickJSHandle,
      set: guard((value) => setGlobal(name, value)) as (value: QuickJSHandle) => void,
    });
  }

  const track = keep(unwrap(ctx.evalCode(sources.track, "vesta:track", { type: "global" })));
  return {
    track,
    dispose: () => owned.splice(0).forEach((h) => h.alive && h.dispose()),
  };
}
