/**
 * The guest's bindings to the sandbox process: installs the sandbox's globals in a fresh QuickJS
 * context. The raw bindings (call, log, setResponse, timers, ethers, web, subtle, info, load) live on an
 * object no global reaches; the globals (Lit, console, fetch, ethers, URL, crypto, ...: GLOBALS) are lazy: the guest
 * module defining each (guest/*.js) is compiled on first access only, so a run pays for what it
 * touches. The API is installed once per sandbox process, in the warm context whose memory every
 * run starts from (context.ts): nothing here may make a host function or keep a handle made during
 * a run past its end (GuestApi.endRun). Only strings and numbers cross the boundary (getString/getNumber in, new QuickJS values
 * out), so no handle to an object of this process, nor Node's Function constructor, ever exists in
 * the sandbox. Errors raised here become plain guest errors (name + message, no Node stack).
 */
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { QuickJSContext, QuickJSHandle, VmCallResult } from "quickjs-emscripten";
import { SandboxLimitError } from "../errors";
import { MAX_HOST_ERROR_BYTES, truncateUtf8 } from "../wire/bounds";
import { clearIntlCaches } from "./intl-calls";
import { WasmAllocationError } from "./module-guard";

/** The guest modules' sources (guest/*.js), read once per process. */
export type GuestSources = { track: string; globals: string; random: string; locale: string; modules: ReadonlyMap<string, string> };

/** Reads the guest modules from `dir`, with whole-line comments dropped (QuickJS compiles a module in every run that uses it). */
export function readGuestSources(dir: string): GuestSources {
  const source = (name: string) => fs.readFileSync(path.join(dir, `${name}.js`), "utf8").replace(/^\s*\/\/.*\n/gm, "");
  return { track: source("track"), globals: source("globals"), random: source("random"), locale: source("locale"), modules: new Map(GUEST_MODULES.map((name) => [name, source(name)])) };
}
/** Every guest module (guest/<name>.js). */
const GUEST_MODULES = [
  "lib", "bytes", "actions", "console", "inspect", "timers", "fetch", "ethers", "encoding", "dom", "http", "url", "crypto",
  "intl-core", "intl", "platform", "self",
  "ethers5-logger", "ethers5-bignumber", "ethers5-bytes", "ethers5-units", "ethers5-calls", "ethers5-utils", "ethers5-abi", "ethers5-tx", "ethers5-providers", "ethers5-signer", "ethers5-contract",
];
/**
 * Guest modules compiled in the warm context rather than on first use: the ones large enough that
 * compiling them per run costs more than copying them back after each (context.ts), and with no
 * state a run must not see (`actions` reads the run's headers when it loads: not one of them).
 */
const PRELOADED = ["lib", "console", "inspect", "bytes", "encoding", "dom", "http", "timers", "fetch", "actions"];
/**
 * The guest modules of the `ethers` global (v6's surface and v5's, guest/ethers*.js: ~140 KB of
 * source, 1.4 ms to compile for a run that calls ethers.keccak256, 4-8 ms for one that uses v5's
 * utils or an Interface): compiled into a second copy of the warm context, which a run whose code
 * names `ethers` starts from (context.ts). A run that does not name it starts from the first copy
 * and never has them in its memory.
 */
export const ETHERS_MODULES = [
  "ethers", "ethers5-logger", "ethers5-bignumber", "ethers5-bytes", "ethers5-units", "ethers5-calls", "ethers5-utils", "ethers5-abi", "ethers5-tx", "ethers5-providers", "ethers5-signer", "ethers5-contract",
];
/** Each global of the sandbox and the guest module that defines it. */
const GLOBALS: Record<string, string> = {
  Lit: "actions",
  LitActions: "actions",
  LitAuth: "actions",
  LitHeaders: "actions",
  Actions: "actions",
  console: "console",
  setTimeout: "timers",
  setInterval: "timers",
  clearTimeout: "timers",
  clearInterval: "timers",
  queueMicrotask: "timers",
  fetch: "fetch",
  ethers: "ethers",
  TextEncoder: "encoding",
  TextDecoder: "encoding",
  atob: "encoding",
  btoa: "encoding",
  DOMException: "dom",
  Event: "dom",
  EventTarget: "dom",
  AbortController: "dom",
  AbortSignal: "dom",
  structuredClone: "dom",
  Headers: "http",
  Request: "http",
  Response: "http",
  URL: "url",
  URLSearchParams: "url",
  crypto: "crypto",
  Crypto: "crypto",
  CryptoKey: "crypto",
  SubtleCrypto: "crypto",
  CustomEvent: "dom",
  ErrorEvent: "dom",
  Intl: "intl",
  performance: "platform",
  navigator: "platform",
  self: "self",
};
/**
 * The Lit namespace is read-only as on Chipotle (non-writable, non-configurable globals of frozen
 * objects): before its first read an assignment throws in strict code and does nothing otherwise
 * (an accessor without a setter), after it a non-writable property does the same.
 */
const READ_ONLY = ["Lit", "LitActions", "LitAuth", "LitHeaders"];
const GLOBALS_JSON = JSON.stringify(GLOBALS);
const READ_ONLY_JSON = JSON.stringify(READ_ONLY);

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
  /** One ethers shim operation (ethers-calls.ts): tagged JSON arguments in, tagged JSON out. */
  ethers(name: string, argsJson: string): string;
  /** One synchronous web platform helper (web-calls.ts: URL parsing, random bytes). */
  web(name: string, argsJson: string): string;
  /** One crypto.subtle operation (subtle-calls.ts): the handle of a promise of its tagged JSON answer. */
  subtle(op: string, argsJson: string): QuickJSHandle;
  /** What the run knows of itself, as JSON: "headers" (Lit.Headers), "imports" (showImportDetails). */
  info(what: string): string;
  /** Throws the run's memory limit (a SandboxLimitError) when `text` (`what`) cannot be made a QuickJS string now. */
  room(text: string, what: string): void;
}

export type GuestApi = {
  /** guest/track.js: track(mainOrPromise, paramsJson) → promise of the response JSON. */
  track: QuickJSHandle;
  /** () → the action's `main` when it is a function, else undefined (called after the action's script ran). */
  findMain: QuickJSHandle;
  /** Frees what the API made during a run (the guest modules it loaded) and forgets it: the next run starts from the snapshot. */
  endRun(): void;
  /**
   * Compiles the ethers modules (ETHERS_MODULES) into the context, with no run bound, and keeps
   * their exports for the memory in which they were compiled: context.ts copies that memory as a
   * second copy, for runs whose code names `ethers`.
   */
  loadEthers(): void;
  /** Whether the memory now holds the ethers modules (the second copy, put back): `load` answers from them only then. */
  setEthersLoaded(loaded: boolean): void;
};

/** An exception raised inside QuickJS (e.g. out of memory while compiling a guest module). */
export class GuestException {
  constructor(readonly handle: QuickJSHandle) {}
}

type Impl = (...args: QuickJSHandle[]) => QuickJSHandle | void;

/** Per context: a function of the warm context that answers JSON.stringify of its argument (captured before any action ran). */
const quoters = new WeakMap<QuickJSContext, QuickJSHandle>();

/**
 * A guest string exactly: quickjs-emscripten reads strings as C strings (UTF-8 up to the first NUL,
 * a lone surrogate as three U+FFFD), so a read shorter or longer than the string is redone through
 * its JSON text, which escapes both (review finding: `console.log("a\0b")` logged "a").
 */
export function exactString(ctx: QuickJSContext, h: QuickJSHandle): string {
  const read = ctx.getString(h);
  const length = ctx.getProp(h, "length").consume((l) => ctx.getNumber(l));
  const quote = quoters.get(ctx);
  if (read.length === length || !quote) return read;
  const json = ctx.callFunction(quote, ctx.undefined, h);
  if (json.error) {
    json.error.dispose();
    return read;
  }
  return JSON.parse(json.value.consume((v) => ctx.getString(v))) as string;
}

export function installGuestApi(ctx: QuickJSContext, host: GuestHost, sources: GuestSources): GuestApi {
  const unwrap = (r: VmCallResult<QuickJSHandle>): QuickJSHandle => {
    if ("error" in r && r.error) throw new GuestException(r.error);
    return (r as { value: QuickJSHandle }).value;
  };
  const str = (h: QuickJSHandle | undefined, name: string): string => {
    if (!h || ctx.typeof(h) !== "string") throw new TypeError(`${name} must be a string`);
    return ctx.getString(h);
  };
  /** A string the action wrote (a log line, an error's message or stack): read whole, NULs and lone surrogates included. */
  const text = (h: QuickJSHandle | undefined, name: string): string => {
    if (!h || ctx.typeof(h) !== "string") throw new TypeError(`${name} must be a string`);
    return exactString(ctx, h);
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
        // Web platform errors keep their DOMException name (QuotaExceededError, ...); the rest is TypeError, RangeError or Error.
        const name = e instanceof TypeError ? "TypeError" : e instanceof RangeError ? "RangeError" : /^[A-Z][A-Za-z]{0,40}Error$/.test(e.name) && !(e instanceof SandboxLimitError) ? e.name : "Error";
        try {
          return { error: ctx.newError({ name, message: truncateUtf8(e.message, MAX_HOST_ERROR_BYTES) }) };
        } catch (again) {
          // No room for the error either: the run is over (its memory limit) and stops at the next interrupt check; QuickJS gets undefined, which takes no memory.
          if (again instanceof WasmAllocationError) return undefined;
          throw again;
        }
      }
    };
  /** A string of this process handed to the guest: refused (the run's memory limit) when the run's memory has no room for it. */
  const hostString = (text: string, what: string): QuickJSHandle => {
    host.room(text, what);
    return ctx.newString(text);
  };

  // What is made here (raw, its functions, track, findMain) lives as long as the process: no run frees it.
  quoters.set(ctx, unwrap(ctx.evalCode("(() => { const quote = JSON.stringify; return (s) => quote(s); })()", "vesta:quote", { type: "global" })));
  const raw = ctx.newObject();
  const exportsOf = new Map<string, QuickJSHandle>();
  /** The modules compiled in the warm context (PRELOADED): kept for the process, their state put back with the memory after each run. */
  const preloaded = new Map<string, QuickJSHandle>();
  /** The ethers modules compiled for the second copy: their handles point into that copy's memory, used only while it is the one put back. */
  const ethersPreloaded = new Map<string, QuickJSHandle>();
  let ethersLoaded = false;
  const load = (name: string): QuickJSHandle => {
    const cached = preloaded.get(name) ?? (ethersLoaded ? ethersPreloaded.get(name) : undefined) ?? exportsOf.get(name);
    if (cached) return cached;
    const source = sources.modules.get(name);
    if (source === undefined) throw new TypeError("unknown guest module");
    host.room(source, `loading the sandbox's ${name} module`);
    const factory = unwrap(ctx.evalCode(source, `vesta:${name}`, { type: "global" }));
    try {
      const exports = unwrap(ctx.callFunction(factory, ctx.undefined, name === "lib" ? raw : load("lib")));
      exportsOf.set(name, exports);
      return exports;
    } finally {
      factory.dispose();
    }
  };

  /** Compiles `names` (and what they load) with no run bound, and keeps their exports in `into` rather than freeing them at a run's end. */
  const keepCompiled = (names: readonly string[], into: Map<string, QuickJSHandle>) => {
    if (exportsOf.size > 0) throw new Error("sandbox: guest modules are kept only when compiled before any run");
    for (const name of names) load(name);
    for (const [name, exports] of exportsOf) into.set(name, exports);
    exportsOf.clear();
  };

  const fns: Record<string, Impl> = {
    call: (op, args) => host.call(str(op, "op"), str(args, "args")),
    log: (line) => void host.log(text(line, "line")),
    setResponse: (json) => void host.setResponse(str(json, "response")),
    sleep: (id, ms) => host.sleep(num(id, "id"), num(ms, "ms")),
    cancel: (id) => void host.cancel(num(id, "id")),
    fail: (message, stack) => void host.fail(text(message, "message"), text(stack, "stack")),
    ethers: (name, args) => {
      const fn = str(name, "name");
      return hostString(host.ethers(fn, str(args, "args")), `ethers.${fn.slice(0, 64)}`);
    },
    web: (name, args) => {
      const fn = str(name, "name");
      return hostString(host.web(fn, str(args, "args")), fn.slice(0, 64));
    },
    subtle: (op, args) => host.subtle(str(op, "op"), str(args, "args")),
    info: (what) => hostString(host.info(str(what, "what")), "the run's information"),
    load: (name) => load(str(name, "name")).dup(),
    // A 32-bit word from Node's CSPRNG, for the seed of the run's Math.random (guest/random.js).
    seed: () => ctx.newNumber(crypto.randomBytes(4).readUInt32LE(0)),
  };
  // Each function is held by a handle of its own: nothing a run does can free one (QuickJS would
  // then drop it from quickjs-emscripten's table, which the next run's snapshot still refers to).
  for (const [name, impl] of Object.entries(fns)) {
    ctx.setProp(raw, name, ctx.newFunction(name, guard(impl)));
  }

  // The lazy globals, defined by guest code (one script rather than two host functions per global).
  const install = unwrap(ctx.evalCode(sources.globals, "vesta:globals", { type: "global" }));
  try {
    const load = ctx.getProp(raw, "load");
    const args = [load, ctx.newString(GLOBALS_JSON), ctx.newString(READ_ONLY_JSON)];
    try {
      unwrap(ctx.callFunction(install, ctx.undefined, ...args)).dispose();
    } finally {
      args.forEach((h) => h.dispose());
    }
  } finally {
    install.dispose();
  }

  // The locale-sensitive built-ins (toLocaleString, localeCompare, ...): methods that load guest/intl-core.js on their first call in a run.
  const locale = unwrap(ctx.evalCode(sources.locale, "vesta:locale", { type: "global" }));
  try {
    ctx.getProp(raw, "load").consume((load) => unwrap(ctx.callFunction(locale, ctx.undefined, load)).dispose());
  } finally {
    locale.dispose();
  }

  // Math.random, seeded by each run when it is first called (the snapshot holds no seed).
  const random = unwrap(ctx.evalCode(sources.random, "vesta:random", { type: "global" }));
  try {
    ctx.getProp(raw, "seed").consume((seed) => unwrap(ctx.callFunction(random, ctx.undefined, seed)).dispose());
  } finally {
    random.dispose();
  }

  // Compiled once, before the copy: QuickJS compiles ~0.1 ms a KB, and console's formatter (inspect, ~45 KB)
  // cost every run that logged an object 5-20 ms. Their exports are the process's; their per-run state
  // (console's counters, timers, groups) lives in the memory the copy puts back.
  keepCompiled(PRELOADED, preloaded);

  const track = unwrap(ctx.evalCode(sources.track, "vesta:track", { type: "global" }));
  // A function of the global scope sees the action's top-level `function main`, `const main` or `let main`.
  const findMain = unwrap(ctx.evalCode('(() => (typeof main === "function" ? main : undefined))', "vesta:main", { type: "global" }));
  return {
    track,
    findMain,
    endRun: () => {
      for (const exports of exportsOf.values()) exports.dispose();
      exportsOf.clear();
      clearIntlCaches();
    },
    loadEthers: () => {
      if (ethersPreloaded.size > 0) throw new Error("sandbox: the ethers modules are compiled once, before any run");
      keepCompiled(ETHERS_MODULES, ethersPreloaded);
      ethersLoaded = true;
    },
    setEthersLoaded: (loaded) => {
      ethersLoaded = loaded && ethersPreloaded.size > 0;
    },
  };
}
