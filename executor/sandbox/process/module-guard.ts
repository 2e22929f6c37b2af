/**
 * The QuickJS module's memory as this process's own code uses it. quickjs-emscripten copies what
 * the sandbox hands QuickJS into the module through the module's `_malloc` (`newHeapCharPointer`
 * for every string it makes: ctx.newString, evalCode's source, property names, newError's name and
 * message, a module loader's answer; `newHeapBufferPointer` for newArrayBuffer; `toPointerArray`
 * for a call's arguments; `newTypedArray` for out-parameters) and writes there without checking
 * for NULL: a run that filled its memory, then received a 1 MB fetch answer, had the answer
 * written from address 0 over the static data (malloc's own state), the stack and the heap's start
 * (review finding). ModuleGuard:
 *   - replaces the module's `_malloc` (the one quickjs-emscripten calls, looked up at each call):
 *     NULL throws WasmAllocationError before anything is written, once the run bound to the guard
 *     was told (its memory limit; `insideWasm` when WASM frames are under the allocation: a host
 *     function, the interrupt handler, the module loader);
 *   - counts the calls from WASM into this process (Emscripten calls `module.callbacks.*`), which
 *     is how it knows whether WASM frames are under an allocation;
 *   - refuses the memory's growth (Emscripten's sbrk) past what the bound run allows: QuickJS's
 *     own malloc fails there (its "out of memory");
 *   - keeps malloc and free as the module exports them (`raw`: 0 when there is no room, never a
 *     throw) for the sandbox's own measures (snapshot.ts heapTop, FreshContext.reserve, a run's
 *     headroom), and answers whether blocks can be had now (`fits`).
 * QuickJS's own C code checks its allocations; quickjs-emscripten's C interface (a JSValue copied to
 * the heap) checks too and hands back 0, which its JavaScript then reads as a value at address 0:
 * harmless while nothing is written there, which is what this guard keeps.
 */
import { SandboxLimitError } from "../errors";
import { WASM_PAGE_BYTES } from "../wasm-memory";
import type { Allocator } from "./snapshot";

/** What a run bound to the guard hears of the module's memory. */
export interface GuardedRun {
  /** Asked before the memory grows to `bytes`; false refuses the growth. */
  allowGrowth(bytes: number): boolean;
  /** malloc found no room for the sandbox's own code: true when the run freed some (then malloc is tried once more). */
  makeRoom(): boolean;
  /** No room even so: the allocation throws; `insideWasm` when WASM frames are under it. */
  exhausted(insideWasm: boolean): void;
}

/** The sandbox's own code asked the module for memory it does not have: nothing was written; the run ends with its memory limit. */
export class WasmAllocationError extends SandboxLimitError {
  constructor(readonly bytes: number) {
    super("memoryBytes", `sandbox: no room in the QuickJS module's memory for ${bytes} bytes`);
    this.name = "WasmAllocationError";
  }
}

/** The parts of quickjs-emscripten's Emscripten module the guard wraps. */
type EmscriptenModule = Allocator & { callbacks: Record<string, (...args: never[]) => unknown> };

/** The entries from WASM into this process (quickjs-emscripten's QuickJSEmscriptenModuleCallbacks). */
const WASM_CALLBACKS = ["callFunction", "shouldInterrupt", "loadModuleSource", "normalizeModule", "freeHostRef"];

export class ModuleGuard {
  /** malloc and free as the module exports them. */
  readonly raw: Allocator;
  /** The run the memory serves now (none between runs: the memory then grows freely, as when it is reserved). */
  run?: GuardedRun;
  /** Calls from WASM into this process under way. */
  private depth = 0;
  private probing = false;

  /** `module`: quickjs-emscripten's Emscripten module (it keeps it in QuickJSWASMModule's `module`); `memory`: its memory. */
  constructor(module: unknown, memory: WebAssembly.Memory) {
    const m = module as EmscriptenModule;
    if (typeof m?._malloc !== "function" || typeof m._free !== "function" || typeof m.callbacks !== "object") {
      throw new Error("sandbox: the QuickJS module does not expose malloc, free and its callbacks where this sandbox expects them");
    }
    const malloc = m._malloc;
    const free = m._free;
    this.raw = { _malloc: (bytes) => malloc(bytes), _free: (pointer) => free(pointer) };
    m._malloc = (bytes: number): number => {
      let pointer = malloc(bytes);
      if (pointer === 0 && this.run?.makeRoom()) pointer = malloc(bytes);
      if (pointer !== 0) return pointer;
      this.run?.exhausted(this.depth > 0);
      throw new WasmAllocationError(bytes);
    };
    for (const name of WASM_CALLBACKS) {
      const callback = m.callbacks[name];
      if (typeof callback !== "function") throw new Error(`sandbox: the QuickJS module has no ${name} callback`);
      m.callbacks[name] = (...args: never[]) => {
        this.depth++;
        try {
          return callback(...args);
        } finally {
          this.depth--;
        }
      };
    }
    const grow = memory.grow.bind(memory);
    memory.grow = (pages: number): number => {
      if (this.probing || (this.run && !this.run.allowGrowth(memory.buffer.byteLength + pages * WASM_PAGE_BYTES))) {
        throw new RangeError("sandbox: WASM memory ceiling of the run reached");
      }
      return grow(pages);
    };
  }

  /** Whether blocks of these sizes can be had at once now, from the memory as it is (nothing grows, nothing is kept). */
  fits(...sizes: number[]): boolean {
    const blocks: number[] = [];
    this.probing = true;
    try {
      for (const size of sizes) {
        const block = this.raw._malloc(size);
        if (block === 0) return false;
        blocks.push(block);
      }
      return true;
    } finally {
      this.probing = false;
      for (const block of blocks) this.raw._free(block);
    }
  }
}
