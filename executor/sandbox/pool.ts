/**
 * SandboxPool: runs actions on a pool of worker threads (one run per worker at a time, FIFO queue
 * when all are busy), answers their HostCalls through the run's Host, and terminates + replaces a
 * worker that overruns its deadline (the only stop for built-ins that never check the interrupt
 * handler), that reports a possibly corrupt QuickJS module, or whose WASM memory grew too large.
 */
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { failedResult, isLimitKey, limitError, type RunError } from "./errors";
import type { FromWorker, HostAnswer, ToWorker, WorkerConfig } from "./messages";
import { DEFAULT_LIMITS, MAX_TIMEOUT_MS, type Host, type RunRequest, type RunResult } from "./types";

export type SandboxPoolOptions = {
  /** Worker threads (default os.availableParallelism()). */
  size?: number;
  logger?: Logger;
  /** Hard ceiling of each worker's WASM memory (default 1 GiB); caps memoryBytes in effect. */
  wasmMaxBytes?: number;
  /** A worker whose WASM memory grew past this (it never shrinks) is replaced after its run (default 256 MB). */
  recycleWasmBytes?: number;
  /** Time past a run's deadline before its worker is terminated (default 500 ms). */
  graceMs?: number;
};

export type SandboxPoolStats = { workers: number; busy: number; queued: number; started: number; replaced: number };

type Job = { req: RunRequest; host: Host; resolve: (result: RunResult) => void };
type Slot = { worker: Worker; ready: boolean; exited: boolean; current?: { runId: number; job: Job; killTimer: NodeJS.Timeout; startedAt: number } };

const WORKER_ENTRY = path.join(__dirname, "worker-entry.js");
const MB = 1024 * 1024;

export class SandboxPool {
  private readonly size: number;
  private readonly logger?: Logger;
  private readonly config: WorkerConfig;
  private readonly recycleWasmBytes: number;
  private readonly graceMs: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private lastRunId = 0;
  private started = 0;
  private replaced = 0;
  private closed = false;

  constructor(opts: SandboxPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? os.availableParallelism()));
    this.logger = opts.logger;
    this.config = { wasmMaxBytes: opts.wasmMaxBytes ?? 1024 * MB };
    this.recycleWasmBytes = opts.recycleWasmBytes ?? 256 * MB;
    this.graceMs = opts.graceMs ?? 500;
  }

  /** Runs one action. Resolves a RunResult for every action outcome; rejects only when the pool is closed. */
  run(req: RunRequest, host: Host): Promise<RunResult> {
    if (this.closed) return Promise.reject(new Error("SandboxPool is closed"));
    const limits = { ...DEFAULT_LIMITS, ...req.limits, timeoutMs: Math.min(req.limits?.timeoutMs ?? DEFAULT_LIMITS.timeoutMs, MAX_TIMEOUT_MS) };
    const rejected = checkRequest(req, limits);
    if (rejected) return Promise.resolve(failedResult(rejected));
    return new Promise((resolve) => {
      this.queue.push({ req: { ...req, limits }, host, resolve });
      this.dispatch();
    });
  }

  stats(): SandboxPoolStats {
    const busy = [...this.slots].filter((s) => s.current).length;
    return { workers: this.slots.size, busy, queued: this.queue.length, started: this.started, replaced: this.replaced };
  }

  /** Ends queued and running runs with an error result and terminates the workers; later run() calls reject. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(failedResult({ message: "the sandbox pool was closed before the run started" }));
    const exits = [...this.slots].map((slot) => {
      this.endRun(slot, failedResult({ message: "the sandbox pool was closed during the run" }));
      return this.retire(slot, false);
    });
    await Promise.all(exits);
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (slot.ready && !slot.current && !slot.exited) this.assign(slot, this.queue.shift()!);
    }
    // Start workers for what is still queued (each takes a job once it is ready).
    let starting = [...this.slots].filter((s) => !s.ready).length;
    while (starting < this.queue.length && this.slots.size < this.size) {
      this.spawn();
      starting++;
    }
  }

  private spawn(): void {
    const worker = new Worker(WORKER_ENTRY, { workerData: this.config, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    worker.unref(); // a running job keeps the process alive through its kill timer
    const slot: Slot = { worker, ready: false, exited: false };
    this.slots.add(slot);
    this.started++;
    let failure: Error | undefined;
    worker.on("message", (msg: FromWorker) => this.onMessage(slot, msg));
    worker.on("error", (err) => (failure = err));
    worker.on("exit", (code) => this.onExit(slot, code, failure));
  }

  private assign(slot: Slot, job: Job): void {
    const runId = ++this.lastRunId;
    const killTimer = setTimeout(() => this.kill(slot, runId), job.req.limits.timeoutMs + this.graceMs);
    slot.current = { runId, job, killTimer, startedAt: performance.now() };
    this.post(slot, { type: "run", runId, req: job.req });
  }

  private onMessage(slot: Slot, msg: FromWorker): void {
    if (msg.type === "ready") {
      slot.ready = true;
      return this.dispatch();
    }
    if (msg.type === "poisoned") return this.onPoisoned(slot, msg.diagnostic);
    const current = slot.current;
    if (!current || current.runId !== msg.runId) return; // late message of a run that already ended
    if (msg.type === "call") {
      const { runId, callId } = msg;
      void answerCall(current.job.host, msg.call).then((answer) => {
        if (slot.current?.runId === runId) this.post(slot, { type: "answer", runId, callId, ...answer });
      });
      return;
    }
    this.endRun(slot, msg.result);
    const recycle = msg.poisoned || msg.wasmBytes > this.recycleWasmBytes;
    if (recycle) {
      this.logger?.info({ wasmBytes: msg.wasmBytes, poisoned: msg.poisoned, diagnostic: msg.diagnostic }, "sandbox: replacing a worker");
      void this.retire(slot);
    }
    this.dispatch();
  }

  /** The worker will run nothing more; a run already sent to it never started there: queue it again. */
  private onPoisoned(slot: Slot, diagnostic?: string): void {
    this.logger?.info({ diagnostic }, "sandbox: replacing a worker whose QuickJS runtime could not be freed");
    const current = slot.current;
    if (current) {
      clearTimeout(current.killTimer);
      slot.current = undefined;
      this.queue.unshift(current.job);
    }
    void this.retire(slot);
    this.dispatch();
  }

  /** The hard stop: the run passed its deadline plus the grace period without answering. */
  private kill(slot: Slot, runId: number): void {
    if (slot.current?.runId !== runId) return;
    const limits = slot.current.job.req.limits;
    this.logger?.warn({ timeoutMs: limits.timeoutMs }, "sandbox: terminating a worker that overran its deadline");
    const error = limitError("timeoutMs", limits);
    this.endRun(slot, failedResult({ ...error, message: `${error.message}; the sandbox worker was terminated` }));
    void this.retire(slot);
    this.dispatch();
  }

  private onExit(slot: Slot, code: number, failure?: Error): void {
    const retired = slot.exited;
    slot.exited = true;
    this.slots.delete(slot);
    if (!slot.ready && !retired) {
      // It never started (e.g. its code failed to load): fail what waits rather than respawn in a loop.
      this.logger?.error({ code, err: failure }, "sandbox: a worker failed to start");
      const error = { message: `the sandbox worker failed to start (${failure?.message ?? `exit code ${code}`})` };
      for (const job of this.queue.splice(0)) job.resolve(failedResult(error));
      return;
    }
    if (slot.current) {
      const oom = (failure as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
      const error: RunError = oom
        ? limitError("memoryBytes", slot.current.job.req.limits)
        : { message: `the sandbox worker exited unexpectedly (${failure?.message ?? `exit code ${code}`})` };
      this.logger?.error({ code, err: failure }, "sandbox: worker exited during a run");
      this.endRun(slot, failedResult(error));
    }
    this.dispatch();
  }

  private endRun(slot: Slot, result: RunResult): void {
    if (!slot.current) return;
    clearTimeout(slot.current.killTimer);
    slot.current.job.resolve({ ...result, durationMs: performance.now() - slot.current.startedAt });
    slot.current = undefined;
  }

  private async retire(slot: Slot, replace = true): Promise<void> {
    if (!this.slots.delete(slot)) return;
    slot.exited = true;
    if (replace) this.replaced++;
    await slot.worker.terminate();
  }

  private post(slot: Slot, msg: ToWorker): void {
    slot.worker.postMessage(msg);
  }
}

async function answerCall(host: Host, call: Parameters<Host>[0]): Promise<HostAnswer> {
  try {
    return { ok: true, value: await host(call) };
  } catch (err) {
    const e = err as { message?: unknown; limit?: unknown };
    const message = typeof e?.message === "string" ? e.message : String(err);
    return isLimitKey(e?.limit) ? { ok: false, message, limit: e.limit } : { ok: false, message };
  }
}

/** Code and params sizes (the caller checks them too; this keeps the workers safe regardless). */
function checkRequest(req: RunRequest, limits: RunRequest["limits"]): RunError | undefined {
  if (typeof req.code !== "string") return { message: "TypeError: code must be a string" };
  if (Buffer.byteLength(req.code, "utf8") > limits.maxCodeBytes) return limitError("maxCodeBytes", limits);
  let params: string | undefined;
  try {
    params = JSON.stringify(req.params ?? null);
  } catch {
    return { message: "TypeError: params are not JSON-serializable" };
  }
  if (Buffer.byteLength(params, "utf8") > limits.maxParamsBytes) return limitError("maxParamsBytes", limits);
  return undefined;
}
