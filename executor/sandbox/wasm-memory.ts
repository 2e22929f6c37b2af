/**
 * The QuickJS module's WASM memory and a run's share of it, as both sides count it: the sandbox
 * process grows the memory to a run's ceiling before the run and refuses every growth during it
 * (process/run.ts); the relayer gives each process a maximum that the ceiling of its runs fits
 * (host/pool.ts, executor/index.ts) and an OS memory ceiling that holds that maximum
 * (host/launchers.ts); the configuration refuses a memory limit whose ceiling no memory of this
 * build can hold (relayer/config.ts).
 */

const MB = 1024 * 1024;

export const WASM_PAGE_BYTES = 64 * 1024;
/** Emscripten's INITIAL_MEMORY for this build: the memory a process starts with, in which the warm context is built. */
export const WASM_INITIAL_BYTES = 16 * MB;
/** The most this build's memory can ever hold: its Emscripten glue never grows it past 2 GiB (emscripten_resize_heap). */
export const WASM_LIMIT_BYTES = 2048 * MB;
/** Room kept past a run's ceiling in a process's maximum (Emscripten grows in 64 KiB pages, malloc keeps its own). */
const SLACK_BYTES = MB;

/**
 * WASM growth a run may use beyond the memory it starts with: its memoryBytes (QuickJS's own
 * limit), plus half of it and 16 MB for malloc's overhead and fragmentation (QuickJS under-counts
 * large strings).
 */
export const wasmAllowance = (memoryBytes: number): number => Math.ceil(memoryBytes * 1.5) + 16 * MB;

/** The WASM memory a sandbox process needs for runs of `memoryBytes` (its warm context, the run's allowance, slack), in whole pages; never past WASM_LIMIT_BYTES. */
export const wasmBytesFor = (memoryBytes: number): number =>
  Math.min(WASM_LIMIT_BYTES, Math.ceil((WASM_INITIAL_BYTES + wasmAllowance(memoryBytes) + SLACK_BYTES) / WASM_PAGE_BYTES) * WASM_PAGE_BYTES);

/** The largest memory limit of a run, in MB, whose whole allowance fits the memory of this build (1343 MB). */
export const MAX_RUN_MEMORY_MB = Math.floor((WASM_LIMIT_BYTES - WASM_INITIAL_BYTES - 16 * MB - SLACK_BYTES) / 1.5 / MB);
