/**
 * SandboxPool: runs actions in a pool of sandbox processes (launchers.ts; one run per process at a
 * time), shares them fairly between accounts (fair-queue.ts), answers each run's host calls through
 * its HostChannel in this process (which holds the keys), and stops + replaces a sandbox that
 * overruns its deadline (the only stop for built-ins that never check the interrupt handler), that
 * reports a possibly corrupt QuickJS module, whose WASM memory grew too large, that breaks the
 * protocol (frames.ts, messages.ts), or that dies (killed, crashed, out of memory): the run it held
 * fails with a clear error and the others go on. Nothing a sandbox sends can throw past a handler.
 */
import os from "node:os";
import type { Logger } from "pino";
import { RunRefused } from "../../errors";
import { limitError, type RunError } from "../errors";
import { DEFAULT_LIMITS, MAX_TIMEOUT_MS, type Host, type RunLimits, type RunOwner, type RunRequest, type RunResult } from "../types";
import { boundResult, codeText, failedResult, MAX_CID_CHARS, MAX_HOST_CALLS_PER_RUN, paramsProblem, sandboxFrameBytes } from "../wire/bounds";
import { readFromSandbox, type DoneMessage, type HostAnswer, type ToSandbox } from "../wire/messages";
import { HostChannel } from "./call-channel";
import { defaultFairShare, FairQueue, type FairShare } from "./fair-queue";
import { processLauncher, type Sandbox, type SandboxExit, type SandboxLauncher } from "./launchers";

export type SandboxPoolOptions = {
  /** Sandbox processes (default os.availableParallelism()). */
  size?: number;
  logger?: Logger;
  /** How a sandbox starts (default: processLauncher(), an isolated OS process). */
  launcher?: SandboxLauncher;
  /** Hard ceiling of each sandbox's WASM memory (default 1 GiB); caps memoryBytes in effect. */
  wasmMaxBytes?: number;
  /** A sandbox whose WASM memory grew past this (it never shrinks) is replaced after its run (default 256 MB). */
  recycleWasmBytes?: number;
  /** Time past a run's deadline before its sandbox is killed (default 500 ms). */
  graceMs?: number;
  /** Each account's (and key's) share of the sandboxes and of the queue (see fair-queue.ts). */
  fairShare?: Partial<FairShare>;
};

export type SandboxPoolStats = { sandboxes: number; busy: number; queued: number; started: number; replaced: number };

type Job = { req: RunRequest; host: Host; owner: RunOwner; resolve: (result: RunResult) => void };
type Current = { runId: number; job: Job; channel: HostChannel; killTimer: NodeJS.Timeout; startedAt: number; calls: number };
type Slot = { sandbox: Sandbox; ready: boolean; exited: boolean; current?: Current };

const MB = 1024 * 1024;

export class SandboxPool {
  private readonly size: number;
  private readonly logger?: Logger;
  private readonly launcher: SandboxLauncher;
  private readonly wasmMaxBytes: number;
  private readonly recycleWasmBytes: number;
  private readonly graceMs: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: FairQueue<Job>;
  private lastRunId = 0;
  private anonymous = 0;
  private started = 0;
  private replaced = 0;
  private closed = false;
  /** Moving average of how long a run holds a sandbox, for Retry-After. */
  private averageRunMs = 100;

  constructor(opts: SandboxPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? os.availableParallelism()));
    this.logger = opts.logger;
    this.launcher = opts.launcher ?? processLauncher();
    this.wasmMaxBytes = opts.wasmMaxBytes ?? 1024 * MB;
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
    return { sandboxes: this.slots.size, busy, queued: this.queue.length, started: this.started, replaced: this.replaced };
  }

  /** The live sandbox processes (none for thread sandboxes), and whether each holds a run. */
  processes(): { pid: number; busy: boolean }[] {
    return [...this.slots].flatMap((s) => (s.sandbox.pid === undefined || s.exited ? [] : [{ pid: s.sandbox.pid, busy: s.current !== undefined }]));
  }

  /** Ends queued and running runs with an error result and stops the sandboxes; later run() calls reject. */
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
    // Start sandboxes for what is still queued, plus one spare: a run of another account must not wait
    // for a sandbox to boot while one account's runs hold the others (each takes a job once it is ready).
    let available = [...this.slots].filter((s) => !s.exited && (!s.ready || !s.current)).length;
    while (available < this.queue.length + 1 && this.slots.size < this.size) {
      if (!this.spawn()) break;
      available++;
    }
  }

  private spawn(): boolean {
    const slot = { ready: false, exited: false } as Slot;
    try {
      slot.sandbox = this.launcher({ wasmMaxBytes: this.wasmMaxBytes }, () => sandboxFrameBytes(slot.current?.job.req.limits), {
        message: (msg) => this.guard(slot, () => this.onMessage(slot, msg)),
        problem: (problem) => this.guard(slot, () => this.fault(slot, `the sandbox broke the protocol (${problem})`)),
        exit: (exit) => this.guard(slot, () => this.onExit(slot, exit)),
      });
    } catch (err) {
      this.logger?.error({ err }, "sandbox: cannot start a sandbox");
      if (this.slots.size === 0) this.failQueued(`the sandbox failed to start (${(err as Error).message})`);
      return false;
    }
    this.slots.add(slot);
    this.started++;
    return true;
  }

  /** Runs a handler of a sandbox event; a throw fails that sandbox's run instead of the relayer. */
  private guard(slot: Slot, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger?.error({ err }, "sandbox: handling a sandbox event failed");
      try {
        this.fault(slot, `the sandbox failed: ${(err as Error)?.message ?? String(err)}`);
      } catch {
        /* nothing more can be done for this sandbox */
      }
    }
  }

  private assign(slot: Slot, job: Job): void {
    const runId = ++this.lastRunId;
    const { req } = job;
    const killTimer = setTimeout(() => this.guard(slot, () => this.kill(slot, runId)), req.limits.timeoutMs + this.graceMs);
    slot.current = { runId, job, channel: new HostChannel(job.host, req.ipfsId, req.limits), killTimer, startedAt: performance.now(), calls: 0 };
    this.post(slot, { type: "run", runId, ipfsId: req.ipfsId, code: req.code, paramsJson: req.paramsJson, limits: req.limits });
  }

  private onMessage(slot: Slot, raw: unknown): void {
    if (slot.exited) return; // a retired sandbox's last words
    const current = slot.current;
    const { type, runId } = (raw ?? {}) as { type?: unknown; runId?: unknown };
    // Every way a run ends without "done" retires its sandbox: a live one speaks of its own run only.
    if ((type === "call" || type === "done") && (!current || current.runId !== runId)) return this.fault(slot, "the sandbox sent a message for a run it does not hold");
    const msg = readFromSandbox(raw, current?.job.req.limits);
    if (!msg) return this.fault(slot, "the sandbox sent a malformed message");
    if (msg.type === "ready") {
      if (slot.ready) return this.fault(slot, "the sandbox said it was ready twice");
      slot.ready = true;
      return this.dispatch();
    }
    if (msg.type === "poisoned") return this.onPoisoned(slot, msg.diagnostic);
    if (!current) return;
    if (msg.type === "call") {
      // The sandbox itself stops at MAX_HOST_CALLS_PER_RUN (run.ts): more is a flood, not a run.
      if (++current.calls > MAX_HOST_CALLS_PER_RUN) return this.fault(slot, `the sandbox sent more than ${MAX_HOST_CALLS_PER_RUN} host calls in one run`);
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
      this.logger?.info({ wasmBytes: msg.wasmBytes, poisoned: msg.poisoned, diagnostic: msg.diagnostic }, "sandbox: replacing a sandbox");
      void this.retire(slot);
    }
    this.dispatch();
  }

  /** The sandbox will run nothing more; a run already sent to it never started there: queue it again. */
  private onPoisoned(slot: Slot, diagnostic?: string): void {
    this.logger?.info({ diagnostic }, "sandbox: replacing a sandbox whose QuickJS runtime could not be freed");
    const current = slot.current;
    if (current) {
      clearTimeout(current.killTimer);
      slot.current = undefined;
      this.queue.requeue(current.job);
    }
    void this.retire(slot);
    this.dispatch();
  }

  /** The sandbox broke the protocol (or a handler failed): its run fails, the sandbox is replaced. */
  private fault(slot: Slot, message: string): void {
    this.logger?.error({ message, pid: slot.sandbox.pid }, "sandbox: retiring a sandbox after a protocol fault");
    this.endRun(slot, { message });
    void this.retire(slot);
    this.dispatch();
  }

  /** The hard stop: the run passed its deadline plus the grace period without answering. */
  private kill(slot: Slot, runId: number): void {
    if (slot.current?.runId !== runId) return;
    const limits = slot.current.job.req.limits;
    this.logger?.warn({ timeoutMs: limits.timeoutMs, pid: slot.sandbox.pid }, "sandbox: killing a sandbox that overran its deadline");
    const error = limitError("timeoutMs", limits);
    this.endRun(slot, { ...error, message: `${error.message}; the sandbox was killed` });
    void this.retire(slot);
    this.dispatch();
  }

  private onExit(slot: Slot, exit: SandboxExit): void {
    const retired = slot.exited;
    slot.exited = true;
    this.slots.delete(slot);
    if (retired) return this.dispatch(); // stopped by the pool, its run already ended
    const how = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
    if (!slot.ready) {
      // It never started (e.g. its code failed to load): fail what waits rather than respawn in a loop.
      this.logger?.error({ ...exit }, "sandbox: a sandbox failed to start");
      const lines = exit.detail?.split("\n") ?? [];
      this.failQueued(`the sandbox failed to start (${(lines.find((line) => /^\w*Error\b/.test(line)) ?? lines[0] ?? how).slice(0, 300)})`);
      return;
    }
    this.replaced++;
    if (slot.current) {
      const limits = slot.current.job.req.limits;
      const error: RunError = exit.outOfMemory ? limitError("memoryBytes", limits) : { message: `the sandbox process ended during the run (${how}); the run did not complete` };
      this.logger?.error({ ...exit, pid: slot.sandbox.pid }, "sandbox: a sandbox ended during a run");
      this.endRun(slot, error);
    } else {
      this.logger?.warn({ ...exit, pid: slot.sandbox.pid }, "sandbox: an idle sandbox ended; replacing it");
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
    await slot.sandbox.stop().catch(() => undefined);
  }

  /** Sends to the sandbox; a message that cannot be sent is a fault of that run, never a throw. */
  private post(slot: Slot, msg: ToSandbox): void {
    try {
      slot.sandbox.send(msg);
    } catch (err) {
      this.fault(slot, `the sandbox could not send the run its message (${(err as Error).message})`);
    }
  }
}

/** Why a request may not reach a sandbox (code, params, CID), or undefined. */
function requestProblem(req: RunRequest, limits: RunLimits): RunError | undefined {
  if (typeof req.ipfsId !== "string" || req.ipfsId.length === 0 || req.ipfsId.length > MAX_CID_CHARS) return { message: "TypeError: ipfsId must be a CID" };
  const code = codeText(req.code, limits);
  if ("problem" in code) return code.problem;
  return paramsProblem(req.paramsJson, limits);
}
