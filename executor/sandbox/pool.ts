/**
 * SandboxPool: runs actions on a pool of worker threads (one run per worker at a time), shares the
 * workers fairly between accounts (fair-queue.ts), answers the workers' host calls through each
 * run's HostChannel, and terminates + replaces a worker that overruns its deadline (the only stop
 * for built-ins that never check the interrupt handler), that reports a possibly corrupt QuickJS
 * module, whose WASM memory grew too large, or that breaks the protocol (messages.ts). Nothing a
 * worker sends can throw past a listener here: a fault fails that one run and retires the worker.
 */
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { RunRefused } from "../errors";
import { boundResult, codeText, failedResult, MAX_CID_CHARS, paramsProblem } from "./bounds";
import { HostChannel } from "./channel";
import { limitError, type RunError } from "./errors";
import { defaultFairShare, FairQueue, type FairShare } from "./fair-queue";
import { readFromWorker, type DoneMessage, type HostAnswer, type ToWorker, type WorkerConfig } from "./messages";
import { DEFAULT_LIMITS, MAX_TIMEOUT_MS, type Host, type RunLimits, type RunOwner, type RunRequest, type RunResult } from "./types";

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
  /** Each account's (and key's) share of the workers and of the queue (see fair-queue.ts). */
  fairShare?: Partial<FairShare>;
};

export type SandboxPoolStats = { workers: number; busy: number; queued: number; started: number; replaced: number };

type Job = { req: RunRequest; host: Host; owner: RunOwner; resolve: (result: RunResult) => void };
type Current = { runId: number; job: Job; channel: HostChannel; killTimer: NodeJS.Timeout; startedAt: number };
type Slot = { worker: Worker; ready: boolean; exited: boolean; current?: Current };

const WORKER_ENTRY = path.join(__dirname, "worker-entry.js");
const MB = 1024 * 1024;

export class SandboxPool {
  private readonly size: number;
  private readonly logger?: Logger;
  private readonly config: WorkerConfig;
  private readonly recycleWasmBytes: number;
  private readonly graceMs: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: FairQueue<Job>;
  private lastRunId = 0;
  private anonymous = 0;
  private started = 0;
  private replaced = 0;
  private closed = false;
  /** Moving average of how long a run holds a worker, for Retry-After. */
  private averageRunMs = 100;

  constructor(opts: SandboxPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? os.availableParallelism()));
    this.logger = opts.logger;
    this.config = { wasmMaxBytes: opts.wasmMaxBytes ?? 1024 * MB };
    this.recycleWasmBytes = opts.recycleWasmBytes ?? 256 * MB;
    this.graceMs = opts.graceMs ?? 500;
    this.queue = new FairQueue(defaultFairShare(this.size, opts.fairShare));
  }

  get fairShare(): FairShare {
    return this.queue.share;
  }

  /**
   * Runs one action for `owner`. Resolves a RunResult for every action outcome (limits and
   * malformed requests included); rejects when the pool is closed, and with RunRefused
   * ("queue_full") when the owner's share and queue are full.
   */
  run(req: RunRequest, host: Host, owner: RunOwner = this.nobody()): Promise<RunResult> {
    if (this.closed) return Promise.reject(new Error("SandboxPool is closed"));
    const limits: RunLimits = { ...DEFAULT_LIMITS, ...req.limits, timeoutMs: Math.min(req.limits?.timeoutMs ?? DEFAULT_LIMITS.timeoutMs, MAX_TIMEOUT_MS) };
    const problem = requestProblem(req, limits);
    if (problem) return Promise.resolve(failedResult(problem, limits));
    return new Promise((resolve, reject) => {
      const verdict = this.queue.offer({ req: { ...req, limits }, host, owner, resolve });
      if (verdict !== "ok") return reject(this.queueFull(owner, verdict));
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
    for (const job of this.queue.drain()) job.resolve(failedResult({ message: "the sandbox pool was closed before the run started" }, job.req.limits));
    const exits = [...this.slots].map((slot) => {
      this.endRun(slot, { message: "the sandbox pool was closed during the run" });
      return this.retire(slot, false);
    });
    await Promise.all(exits);
  }

  /** A run started without an owner (tests, benches) shares with no one: it gets an owner of its own. */
  private nobody(): RunOwner {
    return { account: `-${++this.anonymous}`, key: "-" };
  }

  private queueFull(owner: RunOwner, bound: "account" | "total"): RunRefused {
    const share = this.queue.share;
    const waiting = bound === "account" ? this.queue.queuedFor(owner.account) / share.perAccount : this.queue.length / this.size;
    const retryAfter = Math.min(60, Math.max(1, Math.ceil(((waiting + 1) * this.averageRunMs) / 1000)));
    const message =
      bound === "account"
        ? `this account already has ${share.perAccount} run(s) in the sandbox and ${share.queuePerAccount} waiting (its share); retry in ${retryAfter} s`
        : `the sandbox queue is full (${share.queueTotal} runs waiting); retry in ${retryAfter} s`;
    return new RunRefused("queue_full", message, retryAfter);
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (!slot.ready || slot.current || slot.exited) continue;
      const job = this.queue.take();
      if (!job) break;
      this.assign(slot, job);
    }
    // Start workers for what is still queued, plus one spare: a run of another account must not wait
    // for a worker to boot while one account's runs hold the others (each takes a job once it is ready).
    let available = [...this.slots].filter((s) => !s.exited && (!s.ready || !s.current)).length;
    while (available < this.queue.length + 1 && this.slots.size < this.size) {
      if (!this.spawn()) break;
      available++;
    }
  }

  private spawn(): boolean {
    let worker: Worker;
    try {
      worker = new Worker(WORKER_ENTRY, { workerData: this.config, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    } catch (err) {
      this.logger?.error({ err }, "sandbox: cannot start a worker");
      if (this.slots.size === 0) this.failQueued(`the sandbox worker failed to start (${(err as Error).message})`);
      return false;
    }
    worker.unref(); // a running job keeps the process alive through its kill timer
    const slot: Slot = { worker, ready: false, exited: false };
    this.slots.add(slot);
    this.started++;
    let failure: Error | undefined;
    worker.on("message", (msg: unknown) => this.guard(slot, () => this.onMessage(slot, msg)));
    worker.on("messageerror", () => this.guard(slot, () => this.fault(slot, "a message could not be read")));
    worker.on("error", (err) => (failure = err));
    worker.on("exit", (code) => this.guard(slot, () => this.onExit(slot, code, failure)));
    return true;
  }

  /** Runs a handler of a worker event; a throw fails that worker's run instead of the process. */
  private guard(slot: Slot, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger?.error({ err }, "sandbox: handling a worker event failed");
      try {
        this.fault(slot, `the sandbox failed: ${(err as Error)?.message ?? String(err)}`);
      } catch {
        /* nothing more can be done for this worker */
      }
    }
  }

  private assign(slot: Slot, job: Job): void {
    const runId = ++this.lastRunId;
    const { req } = job;
    const killTimer = setTimeout(() => this.guard(slot, () => this.kill(slot, runId)), req.limits.timeoutMs + this.graceMs);
    slot.current = { runId, job, channel: new HostChannel(job.host, req.ipfsId, req.limits), killTimer, startedAt: performance.now() };
    this.post(slot, { type: "run", runId, ipfsId: req.ipfsId, code: req.code, paramsJson: req.paramsJson, limits: req.limits });
  }

  private onMessage(slot: Slot, raw: unknown): void {
    if (slot.exited) return; // a retired worker's last words
    const current = slot.current;
    const { type, runId } = (raw ?? {}) as { type?: unknown; runId?: unknown };
    if ((type === "call" || type === "done") && (!current || current.runId !== runId)) return; // late message of a run that already ended
    const msg = readFromWorker(raw, current?.job.req.limits);
    if (!msg) return this.fault(slot, "the sandbox worker sent a malformed message");
    if (msg.type === "ready") {
      slot.ready = true;
      return this.dispatch();
    }
    if (msg.type === "poisoned") return this.onPoisoned(slot, msg.diagnostic);
    if (!current) return;
    if (msg.type === "call") {
      const { runId, callId } = msg;
      const reply = (answer: HostAnswer) =>
        this.guard(slot, () => {
          if (slot.current?.runId === runId) this.post(slot, { type: "answer", runId, callId, ...answer });
        });
      current.channel.answer(msg.op, msg.argsJson).then(reply, () => reply({ ok: false, message: "the host call failed" }));
      return;
    }
    this.onDone(slot, msg);
  }

  private onDone(slot: Slot, msg: DoneMessage): void {
    const limits = slot.current!.job.req.limits;
    this.endRun(slot, boundResult(msg, limits));
    if (msg.poisoned || msg.wasmBytes > this.recycleWasmBytes) {
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
      this.queue.requeue(current.job);
    }
    void this.retire(slot);
    this.dispatch();
  }

  /** The worker broke the protocol (or a handler failed): its run fails, the worker is replaced. */
  private fault(slot: Slot, message: string): void {
    this.logger?.error({ message }, "sandbox: retiring a worker after a protocol fault");
    this.endRun(slot, { message });
    void this.retire(slot);
    this.dispatch();
  }

  /** The hard stop: the run passed its deadline plus the grace period without answering. */
  private kill(slot: Slot, runId: number): void {
    if (slot.current?.runId !== runId) return;
    const limits = slot.current.job.req.limits;
    this.logger?.warn({ timeoutMs: limits.timeoutMs }, "sandbox: terminating a worker that overran its deadline");
    const error = limitError("timeoutMs", limits);
    this.endRun(slot, { ...error, message: `${error.message}; the sandbox worker was terminated` });
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
      this.failQueued(`the sandbox worker failed to start (${failure?.message ?? `exit code ${code}`})`);
      return;
    }
    if (slot.current) {
      const oom = (failure as { code?: string } | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY";
      const error: RunError = oom ? limitError("memoryBytes", slot.current.job.req.limits) : { message: `the sandbox worker exited unexpectedly (${failure?.message ?? `exit code ${code}`})` };
      this.logger?.error({ code, err: failure }, "sandbox: worker exited during a run");
      this.endRun(slot, error);
    }
    this.dispatch();
  }

  private failQueued(message: string): void {
    for (const job of this.queue.drain()) job.resolve(failedResult({ message }, job.req.limits));
  }

  /** Ends the slot's run with `outcome` (a bounded result, or an error of the pool's own). */
  private endRun(slot: Slot, outcome: RunResult | RunError): void {
    const current = slot.current;
    if (!current) return;
    slot.current = undefined;
    clearTimeout(current.killTimer);
    this.queue.finished(current.job);
    const durationMs = performance.now() - current.startedAt;
    this.averageRunMs = 0.9 * this.averageRunMs + 0.1 * durationMs;
    const result = "logs" in outcome ? outcome : failedResult(outcome, current.job.req.limits);
    current.job.resolve({ ...result, durationMs });
  }

  private async retire(slot: Slot, replace = true): Promise<void> {
    if (!this.slots.delete(slot)) return;
    slot.exited = true;
    if (replace) this.replaced++;
    await slot.worker.terminate().catch(() => undefined);
  }

  /** Sends to the worker; a message that cannot be sent is a fault of that run, never a throw. */
  private post(slot: Slot, msg: ToWorker): void {
    try {
      slot.worker.postMessage(msg);
    } catch (err) {
      this.fault(slot, `the sandbox could not send the run its message (${(err as Error).message})`);
    }
  }
}

/** Why a request may not reach a worker (code, params, CID), or undefined. */
function requestProblem(req: RunRequest, limits: RunLimits): RunError | undefined {
  if (typeof req.ipfsId !== "string" || req.ipfsId.length === 0 || req.ipfsId.length > MAX_CID_CHARS) return { message: "TypeError: ipfsId must be a CID" };
  const code = codeText(req.code, limits);
  if ("problem" in code) return code.problem;
  return paramsProblem(req.paramsJson, limits);
}
