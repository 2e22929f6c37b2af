/**
 * The sandbox process's side of `import`. QuickJS (sync build) asks its module loader for each
 * module while it compiles the importing one and cannot wait, so the whole graph is fetched before
 * the action runs: each module's static imports are read by QuickJS itself (the module compiled,
 * not run, in a scratch runtime whose loader records what is asked and answers an empty module:
 * no second parser to disagree with the one that runs it), resolved (../imports.ts), and every
 * module not seen yet is asked of the host (an `import` host call, counted as a fetch), all of
 * one module's at once. Every module's bytes are checked against the pins its importers state.
 * When nothing is left under way, the action is evaluated as a module and QuickJS's loader is
 * answered from the graph: a module outside it (a dynamic `import()` of another specifier) is
 * an error that says so. Bounded: MAX_MODULES_PER_RUN modules, MAX_IMPORT_DEPTH levels.
 */
import type { QuickJSWASMModule } from "quickjs-emscripten";
import { limitError, type RunError } from "../errors";
import { ACTION_MODULE, dataModuleText, ImportRefused, MAX_IMPORT_DEPTH, MAX_MODULES_PER_RUN, pinChecker, resolveImport, type ImportSource } from "../imports";
import type { RunLimits } from "../types";
import type { HostAnswer } from "../wire/messages";
import { describeThrown } from "./run-output";

/** QuickJS stack of the scratch runtime (as a run's). */
const SCAN_STACK_BYTES = 256 * 1024;

/**
 * Appended to an action evaluated as a module (after its last line, so its lines keep their
 * numbers): exports its main, if it has one, under a name no identifier can spell.
 */
export const MODULE_TAIL = '\n;const $vesta$main$ = typeof main === "function" ? main : undefined;\nexport { $vesta$main$ as "vesta:main" };\n';

/** Where a QuickJS SyntaxError points in the action ("at action.js:12:5"), as one comparable number. */
export function errorPosition(stack: string | undefined): number {
  const m = /action\.js:(\d+):(\d+)/.exec(stack ?? "");
  return m ? Number(m[1]) * 1e7 + Number(m[2]) : 0;
}

/**
 * The name QuickJS's module normalizer gives a specifier it refuses. A normalizer must not answer
 * an error: quickjs-emscripten 0.32 drops it, names the module "" and asks the loader for that, so
 * the action would read `import "": ...`. The refusal travels in the name instead, and the loader
 * throws it (`outsideGraph`); no refused name is ever loaded as a module.
 */
const REFUSED = "vesta:refused:";
export const refusedName = (error: Error): string => `${REFUSED}${error.message}`;

const notInGraph = (name: string) => `import ${JSON.stringify(name.slice(0, 200))}: not in the action's static imports; import() can load only modules the action imports statically`;

/**
 * What QuickJS's loader gets for a module outside the graph (a dynamic import() of another
 * specifier, or any import in a script): the refusal a refused name carries, or this one.
 */
export const outsideGraph = (name: string) => ({ error: new TypeError(name.startsWith(REFUSED) ? name.slice(REFUSED.length) : notInGraph(name)) });

/** QuickJS's module normalizer for a run without an import graph (a script): each import() refused, by name. */
export const outsideGraphName = (requested: string): string => `${REFUSED}${notInGraph(requested)}`;

/**
 * The C pointer behind a quickjs-emscripten runtime or context (a protected field): 0 when QuickJS
 * had no memory to make it. quickjs-emscripten does not check; using or freeing it would write
 * near address 0.
 */
const pointerOf = (made: unknown, field: "rt" | "ctx"): number => (made as Record<typeof field, { value: number }>)[field].value;

/** The static imports of `source` as QuickJS reads them (compiled as the module `name`, not run), or its compile error. */
export function staticImports(qjs: QuickJSWASMModule, source: string, name: string, limits: RunLimits): { specifiers: string[] } | { error: RunError } {
  const rt = qjs.newRuntime();
  if (pointerOf(rt, "rt") === 0) return { error: limitError("memoryBytes", limits) }; // never used nor freed
  try {
    rt.setMemoryLimit(limits.memoryBytes);
    rt.setMaxStackSize(SCAN_STACK_BYTES);
    const specifiers: string[] = [];
    let stubs = 0;
    rt.setModuleLoader(
      () => "",
      (base, requested) => {
        if (base === name) specifiers.push(requested);
        return `vesta:stub:${++stubs}`;
      },
    );
    const ctx = rt.newContext();
    if (pointerOf(ctx, "ctx") === 0) return { error: limitError("memoryBytes", limits) }; // never used nor freed; the runtime is
    try {
      const compiled = ctx.evalCode(source, name, { type: "module", compileOnly: true });
      if (compiled.error) {
        const error = describeThrown(ctx, compiled.error, limits);
        compiled.error.dispose();
        return { error };
      }
      compiled.value.dispose();
      return { specifiers };
    } finally {
      ctx.dispose();
    }
  } finally {
    rt.dispose();
  }
}

/** A module of the graph; `matches` checks a pin against its bytes once they are here. */
type Node = { url: string; kind: "cdn" | "data"; depth: number; pins: Set<string>; source?: string; matches?: (pin: string) => boolean; hash?: string; from: string };

export type GraphCall = (op: string, argsJson: string, done: (answer: HostAnswer) => void) => void;

export class ImportGraph {
  private readonly nodes = new Map<string, Node>();
  /** CDN modules in the order they arrived (showImportDetails). */
  private readonly arrived: Node[] = [];
  private pending = 0;
  private ended = false;

  /**
   * `call` sends a host call; `done` is called once, when the graph is complete (no error) or
   * when it cannot be (the error the run ends with).
   */
  constructor(
    private readonly qjs: QuickJSWASMModule,
    private readonly source: ImportSource | undefined,
    private readonly limits: RunLimits,
    private readonly call: GraphCall,
    private readonly done: (error?: RunError) => void,
  ) {}

  /** Walks from the action's own static imports. */
  start(specifiers: string[]): void {
    this.visit(ACTION_MODULE, 0, specifiers);
    this.settle();
  }

  /** Whether host calls of the walk are under way. */
  get busy(): boolean {
    return !this.ended;
  }

  /** The modules fetched, as Chipotle's showImportDetails() lists them. */
  details(): { url: string; hash: string }[] {
    return this.arrived.map((n) => ({ url: n.url, hash: n.hash! }));
  }

  /** QuickJS's module normalizer: the graph's name of `requested` imported by `base` (a refused name when it names none). */
  normalize(base: string, requested: string): string {
    try {
      return this.resolve(requested, base).url;
    } catch (err) {
      return refusedName(err as Error);
    }
  }

  /** QuickJS's module loader: the source of a module of the graph. */
  load(name: string): string | { error: Error } {
    const node = this.nodes.get(name);
    return node?.source !== undefined ? node.source : outsideGraph(name);
  }

  private resolve(specifier: string, referrer: string) {
    if (!this.source) throw new ImportRefused(`import ${JSON.stringify(specifier.slice(0, 200))}: imports are not available here`);
    return resolveImport(this.source, specifier, referrer);
  }

  /** Resolves what `referrer` (at `depth`) imports and asks for every module not seen yet. */
  private visit(referrer: string, depth: number, specifiers: string[]): void {
    const fresh: Node[] = [];
    for (const specifier of specifiers) {
      let r;
      try {
        r = this.resolve(specifier, referrer);
      } catch (err) {
        return this.fail({ message: `TypeError: ${(err as Error).message}${referrer === ACTION_MODULE ? "" : ` (imported by ${referrer})`}` });
      }
      let node = this.nodes.get(r.url);
      if (!node) {
        if (this.nodes.size >= MAX_MODULES_PER_RUN) return this.fail({ message: `TypeError: import limit exceeded: at most ${MAX_MODULES_PER_RUN} modules per run` });
        if (depth + 1 > MAX_IMPORT_DEPTH) return this.fail({ message: `TypeError: import ${JSON.stringify(specifier.slice(0, 200))}: imports nest at most ${MAX_IMPORT_DEPTH} levels deep (imported by ${referrer})` });
        node = { url: r.url, kind: r.kind, depth: depth + 1, pins: new Set(), from: referrer };
        this.nodes.set(r.url, node);
        fresh.push(node);
      }
      if (r.pin && !node.pins.has(r.pin)) {
        node.pins.add(r.pin);
        if (node.matches && !node.matches(r.pin)) return this.fail(this.integrityError(node, r.pin));
      }
    }
    for (const node of fresh) {
      if (this.ended) return;
      if (node.kind === "data") this.arrive(node, dataModuleText(node.url));
      else this.fetch(node);
    }
  }

  private fetch(node: Node): void {
    this.pending++;
    this.call("import", JSON.stringify({ url: node.url, integrity: [...node.pins] }), (answer) => {
      this.pending--;
      if (this.ended) return;
      if (!answer.ok) return this.fail({ message: `TypeError: ${answer.message}${node.from === ACTION_MODULE ? "" : ` (imported by ${node.from})`}`, ...(answer.limit ? { limit: answer.limit } : {}) });
      let bytes: Buffer;
      try {
        const a = JSON.parse(answer.json) as { url?: unknown; hash?: unknown; base64?: unknown };
        if (a.url !== node.url || typeof a.hash !== "string" || typeof a.base64 !== "string") throw new Error("malformed");
        bytes = Buffer.from(a.base64, "base64");
        node.hash = a.hash;
      } catch {
        return this.fail({ message: `TypeError: import: the host's answer for ${node.url} is malformed` });
      }
      node.matches = pinChecker(bytes);
      const pin = [...node.pins].find((p) => !node.matches!(p));
      if (pin) return this.fail(this.integrityError(node, pin));
      this.arrived.push(node);
      this.arrive(node, new TextDecoder("utf-8", { fatal: false }).decode(bytes));
      this.settle();
    });
  }

  /** A module's source is here: read its imports and walk on. */
  private arrive(node: Node, source: string | undefined): void {
    if (source === undefined) return this.fail({ message: `TypeError: import: ${node.url.slice(0, 200)} is not a valid data: URL of JavaScript text` });
    node.source = source;
    const read = staticImports(this.qjs, source, node.url, this.limits);
    if ("error" in read) return this.fail(read.error);
    this.visit(node.url, node.depth, read.specifiers);
  }

  private integrityError(node: Node, pin: string): RunError {
    return { message: `TypeError: import: integrity check failed for ${node.url}: the import pins ${pin}, the module is ${node.hash ?? "other bytes"}` };
  }

  private settle(): void {
    if (!this.ended && this.pending === 0) {
      this.ended = true;
      this.done();
    }
  }

  private fail(error: RunError): void {
    if (this.ended) return;
    this.ended = true;
    this.done(error);
  }
}
