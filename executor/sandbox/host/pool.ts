/**
 * SandboxPool: runs actions in a pool of sandbox processes (launchers.ts; one run per process at a
 * time), shares them fairly between accounts (fair-queue.ts), answers each run's host calls through
 * its HostChannel in this process (which holds the keys), and stops + replaces a sandbox that
 * overruns its deadline (the only stop for built-ins that never check the interrupt handler), that
 * reports a possibly corrupt QuickJS module, whose WASM memory grew too large, that breaks the
 * protocol (frames.ts, messages.ts), or that dies (killed, crashed, out of memory): the run it held
 * fails with a clear error and the others go on. Nothing a sandbox sends can throw past a handler.
 * Each sandbox holds a slot index (its user, see launchers.ts) until its process is gone; sandboxes
 * that keep dying are started again after a growing delay (respawn-backoff.ts), not in a loop.
 */
import os from "node:os";
import type { Logger } from "pino";
import { RunRefused } from "../../errors";
import { limitError, type RunError } from "../errors";
import { DEFAULT_LIMITS, MAX_TIMEOUT_MS, type Host, type RunLimits, type RunOwner, type RunRequest, type RunResult } from "../types";
import { wasmBytesFor } from "../wasm-memory";
import { boundResult, codeText, failedResult, MAX_CID_CHARS, MAX_HOST_CALLS_PER_RUN, MAX_OPEN_IO_CALLS, paramsProblem, sandboxFrameBytes } from "../wire/bounds";
import { readFromSandbox, runExtrasProblem, type DoneMessage, type ToSandbox, type WireAnswer } from "../wire/messages";
import { HostChannel } from "./call-channel";
import { defaultFairShare, FairQueue, type FairShare, type QueueBound } from "./fair-queue";
import { processLauncher, type Sandbox, type SandboxExit, type SandboxLauncher } from "./launchers";
import { RespawnBackoff, type BackoffOptions } from "./respawn-backoff";

export type SandboxPoolOptions = {
  /** Sandbox processes (default defaultSandboxCount()). */
  size?: number;
  logger?: Logger;
  /** How a sandbox starts (default: processLauncher(), an isolated OS process). */
  launcher?: SandboxLauncher;
  /**
   * Hard ceiling of each sandbox's WASM memory (default 1 GiB; the build holds at most
   * WASM_LIMIT_BYTES, 2 GiB): a run's memory ceiling never passes it, so it caps memoryBytes in
   * effect. `wasmBytesFor(memoryBytes)` (wasm-memory.ts) is what runs of a memory limit need: the
   * executor gives that of its limits.
   */
  wasmMaxBytes?: number;
  /**
   * A sandbox whose WASM memory grew past this (it never shrinks) and past what its last run needed
   * (wasmBytesFor its memoryBytes: each process grows to that before its first run) is replaced
   * after that run (default 256 MB).
   */
  recycleWasmBytes?: number;
  /** Time past a run's deadline before its sandbox is killed (default 500 ms). */
  graceMs?: number;
  /** Each account's (and key's) share of the sandboxes and of the queue (see fair-queue.ts). */
  fairShare?: Partial<FairShare>;
  /** The delay before starting a sandbox after others died in a row (see respawn-backoff.ts). */
  respawnBackoff?: Partial<BackoffOptions>;
};

/** What the caller of a run hears of it besides its result. */
export type RunHooks = {
  /** The run was handed to a sandbox (it starts now; time spent queued is over). Again if it is handed to another. */
  onStart?: () => void;
  /** The logger of the request the run serves (its ids on each line): the pool's lines about this run go to it. */
  log?: Logger;
};

/** `unsentBytes`: what the relayer holds for its sandboxes that they have not read yet (frames waiting for their sockets). */
export type SandboxPoolStats = { sandboxes: number; busy: number; queued: number; started: number; replaced: number; unsentBytes: number };

type Job = { req: RunRequest; host: Host; owner: RunOwner; hooks: RunHooks; resolve: (result: RunResult) => void };
/** A run's place in the fair queue (SandboxPool.admit): run it once, or release it. */
export type Place = { run(req: RunRequest, host: Host, hooks?: RunHooks): Promise<RunResult>; release(): void };
type Current = { runId: number; job: Job; channel: HostChannel; killTimer: NodeJS.Timeout; startedAt: number; calls: number };
/** `lastLog`: the logger of the run the sandbox ended last (what it reports after that run, e.g. "poisoned", is about that run). */
type Slot = { index: number; sandbox: Sandbox; ready: boolean; exited: boolean; current?: Current; lastLog?: Logger };

const MB = 1024 * 1024;

/** The fewest sandbox processes by default, whatever the CPU count. */
export const MIN_DEFAULT_SANDBOXES = 4;
/**
 * Sandbox processes by default: one per CPU, and at least MIN_DEFAULT_SANDBOXES. A sandbox waits
 * for the relayer's event loop between two runs (it reads the result, settles, hands over the next
 * run): on a machine of 1 or 2 CPUs, as many sandboxes as CPUs sat idle for most of that time while
 * the CPUs had room (issue 18: hello-world runs over HTTP went from ~0.38 to ~0.45 of a bare
 * endpoint's rate with 4 sandboxes instead of 2 on 2 CPUs). Past a few CPUs the event loop is the
 * limit and one per CPU is plenty.
 */
export const defaultSandboxCount = (): number => Math.max(MIN_DEFAULT_SANDBOXES, os.availableParallelism());

export class SandboxPool {
  private readonly size: number;
  private readonly logger?: Logger;
  private readonly launcher: SandboxLauncher;
  private readonly wasmMaxBytes: number;
  private readonly recycleWasmBytes: number;
  private readonly graceMs: number;
  private readonly slots = new Set<Slot>();
  /** Slot indexes of sandboxes whose process is not gone yet (a retired one keeps its index until it exits). */
  private readonly indexes = new Set<number>();
  private readonly backoff: RespawnBackoff;
  private readonly queue: FairQueue<Job>;
  private lastRunId = 0;
  private anonymous = 0;
  private started = 0;
  private replaced = 0;
  private closed = false;
  /** Moving average of how long a run holds a sandbox, for Retry-After. */
  private averageRunMs = 100;

  constructor(opts: SandboxPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? defaultSandboxCount()));
    this.logger = opts.logger;
    this.launcher = opts.launcher ?? processLauncher();
    this.wasmMaxBytes = opts.wasmMaxBytes ?? 1024 * MB;
    this.recycleWasmBytes = opts.recycleWasmBytes ?? 256 * MB;
    this.graceMs = opts.graceMs ?? 500;
    this.queue = new FairQueue(defaultFairShare(this.size, opts.fairShare));
    this.backoff = new RespawnBackoff(opts.respawnBackoff, () => this.dispatch(), () => this.queue.length > 0);
  }

  get fairShare(): FairShare {
    return this.queue.share;
  }

  /**
   * Runs one action for `owner`. Resolves a RunResult for every action outcome (limits and
   * malformed requests included); rejects when the pool is closed, and with RunRefused
   * ("queue_full") when the owner's share and queue are full.
   */
  run(req: RunRequest, host: Host, owner: RunOwner = this.nobody(), hooks: RunHooks = {}): Promise<RunResult> {
    let place: Place;
    try {
      place = this.admit(owner);
    } catch (err) {
      return Promise.reject(err);
    }
    return place.run(req, host, hooks);
  }

  /**
   * Holds a place in the fair queue for one run of `owner`, before anything is done for that run:
   * throws RunRefused("queue_full") when the owner's (its payer's, its account's) share and queue are
   * full, and an Error when the pool is closed. The place is the run's until `run` (once) or `release`.
   */
  admit(owner: RunOwner = this.nobody()): Place {
    if (this.closed) throw new Error("SandboxPool is closed");
    const hold = this.queue.hold(owner);
    if (typeof hold === "string") throw this.queueFull(owner, hold);
    return {
      run: (req, host, hooks = {}) => {
        if (hold.state !== "held") return Promise.reject(new Error("SandboxPool: this place was used or released"));
        if (this.closed) {
          this.queue.release(hold);
          return Promise.reject(new Error("SandboxPool is closed"));
        }
        const limits: RunLimits = { ...DEFAULT_LIMITS, ...req.limits, timeoutMs: Math.min(req.limits?.timeoutMs ?? DEFAULT_LIMITS.timeoutMs, MAX_TIMEOUT_MS) };
        const problem = requestProblem(req, limits);
        if (problem) {
          this.queue.release(hold);
          return Promise.resolve(failedResult(problem, limits));
        }
        return new Promise((resolve) => {
          this.queue.enqueue(hold, { req: { ...req, limits }, host, owner, hooks, resolve });
          this.dispatch();
        });
      },
      release: () => this.queue.release(hold),
    };
  }

  stats(): SandboxPoolStats {
    const busy = [...this.slots].filter((s) => s.current).length;
    let unsentBytes = 0;
    for (const s of this.slots) unsentBytes += s.sandbox.unsentBytes ?? 0;
    return { sandboxes: this.slots.size, busy, queued: this.queue.waiting, started: this.started, replaced: this.replaced, unsentBytes };
  }

  /** Who holds the sandboxes now and who waits for one: one owner per run (metrics break them down by account class). */
  occupancy(): { running: RunOwner[]; waiting: RunOwner[] } {
    return { running: [...this.slots].flatMap((s) => (s.current ? [s.current.job.owner] : [])), waiting: this.queue.waitingOwners() };
  }

  /** The live sandbox processes (none for thread sandboxes), and whether each holds a run. */
  processes(): { pid: number; busy: boolean }[] {
    return [...this.slots].flatMap((s) => (s.sandbox.pid === undefined || s.exited ? [] : [{ pid: s.sandbox.pid, busy: s.current !== undefined }]));
  }

  /** Ends queued and running runs with an error result and stops the sandboxes; later run() calls reject. */
  async close(): Promise<void> {
    this.closed = true;
    this.backoff.stop();
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

  private queueFull(owner: RunOwner, bound: QueueBound): RunRefused {
    const share = this.queue.share;
    const waiting =
      bound === "account" ? this.queue.queuedFor(owner, "account") / share.perAccount : bound === "payer" ? this.queue.queuedFor(owner, "payer") / share.perPayer : this.queue.length / this.size;
    const retryAfter = Math.min(60, Math.max(1, Math.ceil(((waiting + 1) * this.averageRunMs) / 1000)));
    const message =
      bound === "account"
        ? `this account already has ${share.perAccount} run(s) in the sandbox and ${share.queuePerAccount} waiting (its share); retry in ${retryAfter} s`
        : bound === "payer"
          ? `the accounts billed to this payer already have ${share.perPayer} run(s) in the sandbox and ${share.queuePerPayer} waiting (their share); retry in ${retryAfter} s`
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
    let available = 0;
    for (const s of this.slots) if (!s.exited && (!s.ready || !s.current)) available++;
    while (available < this.queue.waiting + 1 && this.slots.size < this.size) {
      if (!this.backoff.mayStart() || !this.spawn()) break;
      available++;
    }
  }

  /** The lowest slot index no live process holds, or undefined (one is still exiting: its exit dispatches again). */
  private freeIndex(): number | undefined {
    for (let i = 0; i < this.size; i++) if (!this.indexes.has(i)) return i;
    return undefined;
  }

  private spawn(): boolean {
    const index = this.freeIndex();
    if (index === undefined) return false;
    const slot = { index, ready: false, exited: false } as Slot;
    this.indexes.add(index);
    try {
      slot.sandbox = this.launcher({ wasmMaxBytes: this.wasmMaxBytes, slot: index }, () => sandboxFrameBytes(slot.current?.job.req.limits), {
        message: (msg) => this.guard(slot, () => this.onMessage(slot, msg)),
        problem: (problem) => this.guard(slot, () => this.fault(slot, `the sandbox broke the protocol (${problem})`)),
        exit: (exit) => this.guard(slot, () => this.onExit(slot, exit)),
      });
    } catch (err) {
      this.indexes.delete(index);
      this.logger?.error({ err }, "sandbox: cannot start a sandbox");
      if (this.slots.size === 0) this.failQueued(`the sandbox failed to start (${(err as Error).message})`);
      return false;
    }
    this.slots.add(slot);
    this.started++;
    return true;
  }

  /** Where a line about the slot goes: to the logger of the request its run serves, if any. */
  private logOf(slot: Slot): Logger | undefined {
    return slot.current?.job.hooks.log ?? this.logger;
  }

  /** Runs a handler of a sandbox event; a throw fails that sandbox's run instead of the relayer. */
  private guard(slot: Slot, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logOf(slot)?.error({ err }, "sandbox: handling a sandbox event failed");
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
    try {
      job.hooks.onStart?.();
    } catch (err) {
      this.logOf(slot)?.error({ err }, "sandbox: a run's start hook failed");
    }
    this.post(slot, {
      type: "run",
      runId,
      ipfsId: req.ipfsId,
      code: req.code,
      paramsJson: req.paramsJson,
      limits: req.limits,
      ...(req.imports ? { importBase: req.imports.base, importEntry: req.imports.entry } : {}),
      ...(req.headers ? { headersJson: JSON.stringify(req.headers) } : {}),
    });
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
      // It also keeps at most MAX_OPEN_IO_CALLS fetch/import/Encrypt/Decrypt calls open, sending the next when one is answered:
      // the relayer so holds at most that many of a run's large requests and answers, read or not.
      if (!current.channel.opens(msg.op)) return this.fault(slot, `the sandbox opened more than ${MAX_OPEN_IO_CALLS} fetch, import, Encrypt or Decrypt calls at once`);
      const { runId, callId, op } = msg;
      const { channel } = current;
      // The call stays open until its answer has left the relayer (written to the socket, not merely
      // queued for it): what a sandbox that reads nothing can make the relayer hold is so bounded.
      const delivered = () => channel.delivered(op);
      const reply = (answer: WireAnswer) =>
        this.guard(slot, () => {
          if (slot.current?.runId === runId) this.post(slot, { type: "answer", runId, callId, ...answer }, delivered);
          else delivered();
        });
      channel.answer(op, msg.argsJson, msg.body).then(reply, () => reply({ ok: false, message: "the host call failed" }));
      return;
    }
    this.onDone(slot, msg);
  }

  private onDone(slot: Slot, msg: DoneMessage): void {
    const limits = slot.current!.job.req.limits;
    const log = this.logOf(slot);
    this.backoff.succeeded();
    this.endRun(slot, boundResult(msg, limits));
    if (msg.poisoned || msg.wasmBytes > Math.max(this.recycleWasmBytes, wasmBytesFor(limits.memoryBytes))) {
      log?.info({ wasmBytes: msg.wasmBytes, poisoned: msg.poisoned, diagnostic: msg.diagnostic }, "sandbox: replacing a sandbox");
      void this.retire(slot);
    }
    this.dispatch();
  }

  /**
   * The sandbox will run nothing more; a run already sent to it never started there: queue it again.
   * It says so right after the run it ended last (its cleanup after that run failed): the line goes
   * to that run's request, not to the run handed to it meanwhile.
   */
  private onPoisoned(slot: Slot, diagnostic?: string): void {
    (slot.lastLog ?? this.logger)?.info({ diagnostic }, "sandbox: replacing a sandbox whose QuickJS module may be damaged (a run's handles or its copy could not be put back)");
    const current = slot.current;
    if (current) {
      clearTimeout(current.killTimer);
      current.channel.close();
      slot.current = undefined;
      this.queue.requeue(current.job);
    }
    void this.retire(slot);
    this.dispatch();
  }

  /** The sandbox broke the protocol (or a handler failed): its run fails, the sandbox is replaced. */
  private fault(slot: Slot, message: string): void {
    this.logOf(slot)?.error({ message, pid: slot.sandbox.pid }, "sandbox: retiring a sandbox after a protocol fault");
    if (!slot.exited) this.crashed();
    this.endRun(slot, { message });
    void this.retire(slot);
    this.dispatch();
  }

  /** The hard stop: the run passed its deadline plus the grace period without answering. */
  private kill(slot: Slot, runId: number): void {
    if (slot.current?.runId !== runId) return;
    const limits = slot.current.job.req.limits;
    this.logOf(slot)?.warn({ timeoutMs: limits.timeoutMs, pid: slot.sandbox.pid }, "sandbox: killing a sandbox that overran its deadline");
    const error = limitError("timeoutMs", limits);
    this.endRun(slot, { ...error, message: `${error.message}; the sandbox was killed` });
    void this.retire(slot);
    this.dispatch();
  }

  private onExit(slot: Slot, exit: SandboxExit): void {
    const retired = slot.exited;
    slot.exited = true;
    this.slots.delete(slot);
    this.indexes.delete(slot.index); // its user is free: the process is gone
    if (retired) return this.dispatch(); // stopped by the pool, its run already ended
    this.crashed();
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
      this.logOf(slot)?.error({ ...exit, pid: slot.sandbox.pid }, "sandbox: a sandbox ended during a run");
      this.endRun(slot, error);
    } else {
      this.logger?.warn({ ...exit, pid: slot.sandbox.pid }, "sandbox: an idle sandbox ended; replacing it");
    }
    this.dispatch();
  }

  /** A sandbox died or broke the protocol: the next ones start after a growing delay while this goes on. */
  private crashed(): void {
    const { crashes, delayMs } = this.backoff.crashed();
    if (delayMs > 0) this.logger?.warn({ crashes, delayMs }, `sandbox: ${crashes} sandboxes ended in a row without a run completing; the next one starts in ${delayMs} ms`);
  }

  private failQueued(message: string): void {
    for (const job of this.queue.drain()) job.resolve(failedResult({ message }, job.req.limits));
  }

  /**
   * Ends the slot's run with `outcome` (a bounded result, or an error of the pool's own). Every way
   * a run ends comes here (its result, a fault, its deadline, its sandbox dying, the pool closing),
   * and so does its channel's end: the requests its host calls started (fetches, module downloads)
   * are aborted now, not when they time out.
   */
  private endRun(slot: Slot, outcome: RunResult | RunError): void {
    const current = slot.current;
    if (!current) return;
    slot.current = undefined;
    slot.lastLog = current.job.hooks.log;
    clearTimeout(current.killTimer);
    current.channel.close();
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

  /** Sends to the sandbox (`written`: once it has left the relayer); a message that cannot be sent is a fault of that run, never a throw. */
  private post(slot: Slot, msg: ToSandbox, written?: () => void): void {
    try {
      slot.sandbox.send(msg, written);
    } catch (err) {
      this.fault(slot, `the sandbox could not send the run its message (${(err as Error).message})`);
    }
  }
}

/** Why a request may not reach a sandbox (code, params, CID, import source, headers), or undefined. */
function requestProblem(req: RunRequest, limits: RunLimits): RunError | undefined {
  if (typeof req.ipfsId !== "string" || req.ipfsId.length === 0 || req.ipfsId.length > MAX_CID_CHARS) return { message: "TypeError: ipfsId must be a CID" };
  const code = codeText(req.code, limits);
  if ("problem" in code) return code.problem;
  const extras = runExtrasProblem(req.imports, req.headers);
  if (extras) return { message: `TypeError: ${extras}` };
  return paramsProblem(req.paramsJson, limits);
}
