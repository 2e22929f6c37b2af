/**
 * A copy of the QuickJS module's WASM memory, taken once the warm context (context.ts) is built
 * and put back after every run: each run starts from the very bytes of a runtime and context in
 * which only the sandbox's own code has run. QuickJS has no state outside this memory that a run
 * can reach (the module's only mutable global is the stack pointer, back at its base between two
 * calls from JavaScript; its function table does not change).
 *
 * Emscripten lays the memory out as static data (data segments, then zero-initialised data), the
 * stack (growing down from the stack pointer's initial value), then the heap (malloc, growing up).
 * Between two calls from JavaScript nothing on the stack is live, so what is copied is:
 *   - the static data: from 0 to the start of the stack as the module left it after it started
 *     (the first STACK_PROBE_BYTES of zeros past the last data segment), plus that much again;
 *   - the heap, from the stack's top to the start of malloc's top chunk (every chunk it handed out
 *     lies below it), plus HEAP_SLACK_BYTES. The top is found by asking malloc (dlmalloc, no mmap)
 *     for HEAP_PROBE_BYTES, more than the whole heap holds: no free chunk can serve that, so the
 *     block starts at the top (then it is freed, merging back; the copy is taken after). That it
 *     is the top is checked by walking the heap's chunks (dlmalloc's size fields) from the heap's
 *     start: the walk must land on it. Scanning for the last non-zero byte instead would read every
 *     untouched page of the memory (~100 ms).
 * Past the heap's top, memory is free for malloc, which clears what calloc hands out: what a run
 * left there is reachable by nothing, as when a runtime is freed and another made in the same
 * memory. A layout this does not recognise stops the sandbox at start (layoutOf, heapTop throw).
 */

/** Zeros that mark the untouched stack after the module started; also the margin kept past it. */
const STACK_PROBE_BYTES = 64 * 1024;
const HEAP_SLACK_BYTES = 4 * 1024;
const HEAP_PROBE_BYTES = 4 * 1024 * 1024;
/** The stack this layout expects at least (quickjs-emscripten's is 5 MiB). */
const MIN_STACK_BYTES = 1024 * 1024;

export type MemoryLayout = {
  /** The stack pointer's initial value: the stack's top, where the heap starts. */
  stackTop: number;
  /** The end of the last data segment. */
  dataEnd: number;
};

/** Reads the stack pointer's initial value (the module's first global) and the end of its data from a WASM binary. */
export function layoutOf(binary: Uint8Array): MemoryLayout {
  let p = 8; // magic + version
  const byte = () => {
    if (p >= binary.length) throw new Error("sandbox: the QuickJS WASM file is truncated");
    return binary[p++];
  };
  const u32 = () => {
    let result = 0;
    for (let shift = 0; ; shift += 7) {
      const b = byte();
      result += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return result;
    }
  };
  const i32 = () => {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = byte();
      result |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    return shift < 32 && b & 0x40 ? result | (~0 << shift) : result;
  };
  let stackTop: number | undefined;
  let dataEnd = 0;
  while (p < binary.length) {
    const id = byte();
    const size = u32();
    const end = p + size;
    if (id === 6) {
      // global section: the first global, a mutable i32 set by i32.const, is the stack pointer
      if (u32() > 0 && byte() === 0x7f && byte() === 1 && byte() === 0x41) stackTop = i32();
    } else if (id === 11) {
      // data section: active segments of memory 0 at constant offsets
      for (let n = u32(); n > 0; n--) {
        if (u32() !== 0 || byte() !== 0x41) throw new Error("sandbox: the QuickJS WASM file has a data segment this sandbox cannot place");
        const offset = i32();
        byte(); // end
        const length = u32();
        dataEnd = Math.max(dataEnd, offset + length);
        p += length;
      }
    }
    p = end;
  }
  if (stackTop === undefined || stackTop - dataEnd < MIN_STACK_BYTES) throw new Error("sandbox: the QuickJS WASM memory layout is not data, stack, heap");
  return { stackTop, dataEnd };
}

/** Where the static data ends for copying: past the bss, as far as the module wrote after it started. */
export function staticEnd(memory: WebAssembly.Memory, layout: MemoryLayout): number {
  const bytes = new Uint8Array(memory.buffer);
  let zeros = 0;
  for (let i = layout.dataEnd; i < layout.stackTop; i++) {
    if (bytes[i] !== 0) zeros = 0;
    else if (++zeros === STACK_PROBE_BYTES) return Math.min(layout.stackTop, i + 1);
  }
  throw new Error("sandbox: the QuickJS WASM stack is not where this sandbox expects it");
}

/** The QuickJS module's malloc and free (quickjs-emscripten's Emscripten module exports them). */
export type Allocator = { _malloc(bytes: number): number; _free(pointer: number): void };

/** The start of malloc's top chunk: past every block malloc handed out (see above). */
export function heapTop(allocator: Allocator, layout: MemoryLayout, memory: WebAssembly.Memory): number {
  const probe = allocator._malloc(HEAP_PROBE_BYTES);
  if (probe === 0) throw new Error("sandbox: the QuickJS WASM heap cannot be measured (malloc failed)");
  allocator._free(probe);
  const misplaced = new Error("sandbox: the QuickJS WASM heap is not where this sandbox expects it");
  if (probe < layout.stackTop || probe - layout.stackTop >= HEAP_PROBE_BYTES) throw misplaced;
  // dlmalloc (32-bit): a chunk's size, with 3 flag bits, is the word after its start; its block starts 8 bytes in.
  const view = new DataView(memory.buffer);
  let chunk = layout.stackTop;
  while (chunk + 8 < probe) {
    const size = view.getUint32(chunk + 4, true) & ~7;
    if (size < 16) throw misplaced;
    chunk += size;
  }
  if (chunk + 8 !== probe) throw misplaced;
  return probe;
}

export class MemorySnapshot {
  private readonly statics: Uint8Array;
  private readonly heap: Uint8Array;

  /** Copies the live parts of `memory` (call between two calls into the module): [0, staticBytes) and the heap up to `top` (heapTop). */
  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly layout: MemoryLayout,
    staticBytes: number,
    top: number,
  ) {
    const bytes = new Uint8Array(memory.buffer);
    top = Math.min(bytes.length, top + HEAP_SLACK_BYTES);
    this.statics = bytes.slice(0, staticBytes);
    this.heap = bytes.slice(layout.stackTop, top);
  }

  /** Bytes put back per run. */
  get size(): number {
    return this.statics.length + this.heap.length;
  }

  /** Puts the copied bytes back (between two calls into the module). */
  restore(): void {
    const bytes = new Uint8Array(this.memory.buffer);
    bytes.set(this.statics, 0);
    bytes.set(this.heap, this.layout.stackTop);
  }
}
