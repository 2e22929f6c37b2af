/** Messages between SandboxPool (main thread) and a sandbox worker thread. */
import type { HostCall, RunLimits, RunRequest, RunResult } from "./types";

/** Passed as workerData when a worker starts. */
export type WorkerConfig = {
  /** Hard ceiling of the worker's WASM memory (WebAssembly.Memory maximum). */
  wasmMaxBytes: number;
};

export type HostAnswer =
  | { ok: true; value: unknown }
  | { ok: false; message: string; limit?: keyof RunLimits };

export type ToWorker =
  | { type: "run"; runId: number; req: RunRequest }
  | ({ type: "answer"; runId: number; callId: number } & HostAnswer);

export type FromWorker =
  | { type: "ready" }
  | { type: "call"; runId: number; callId: number; call: HostCall }
  | {
      type: "done";
      runId: number;
      result: RunResult;
      /** Size of the worker's WASM memory after the run (it never shrinks). */
      wasmBytes: number;
      /** The QuickJS module may be corrupt (a WASM trap or a failed dispose): replace the worker. */
      poisoned: boolean;
      /** What QuickJS printed to stderr during the run, if anything. */
      diagnostic?: string;
    }
  /** Freeing the last run's runtime failed after its result was sent: replace this worker. */
  | { type: "poisoned"; diagnostic?: string };
