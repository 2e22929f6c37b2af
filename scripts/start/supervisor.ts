/**
 * `npm start`'s supervisor: the relayer and the triggers service each run in a child process.
 * A child that exits (a crash, an out-of-memory kill, a `kill -9`) is started again on its own,
 * after 1 s, then 2, 4, ... up to 30 s while it keeps failing (back to 1 s once it has served a
 * minute), with one log line saying what happened and one when it is back; the chain (in the
 * supervisor) and the other child keep serving meanwhile. A child that fails its first start
 * fails `npm start` (a bad setting or a port in use: no point in retrying). Children talk to the
 * supervisor over an IPC channel: "ready" with their URL; they stop on SIGTERM and when the
 * channel closes (the supervisor is gone, even after a `kill -9`), and ignore SIGINT (Ctrl-C
 * reaches the whole process group: the supervisor stops them in order).
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { CLOSE_MARGIN_MS } from "./child";

export type Backoff = { firstMs: number; maxMs: number; stableMs: number };
export const DEFAULT_BACKOFF: Backoff = { firstMs: 1_000, maxMs: 30_000, stableMs: 60_000 };
/**
 * `entry`: the child's script, relative to this folder (or absolute). `deadlineMs`: the child's
 * shutdown deadline (its config's); on stop it gets that, plus the child's own margin and as much
 * again, before it is killed.
 */
export type ChildSpec = { name: string; entry: string; env: NodeJS.ProcessEnv; deadlineMs?: number };
type Ready = { type: "ready"; url: string };

export class Supervised {
  private child?: ChildProcess;
  private stopping = false;
  private failures = 0;
  private timer?: NodeJS.Timeout;
  url?: string;

  constructor(
    private readonly spec: ChildSpec,
    private readonly log: (line: string) => void,
    private readonly backoff: Backoff = DEFAULT_BACKOFF,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the child; resolves with its URL once it is ready, rejects if it exits before. */
  start(): Promise<string> {
    return this.spawn(true);
  }

  private spawn(first: boolean): Promise<string> {
    const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", path.resolve(__dirname, this.spec.entry)], {
      env: this.spec.env,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.child = child;
    const started = Date.now();
    if (first) this.log(`started the ${this.spec.name} (pid ${child.pid})`);
    return new Promise((resolve, reject) => {
      let ready = false;
      child.on("message", (m: Ready) => {
        if (m?.type !== "ready" || ready) return;
        ready = true;
        this.url = m.url;
        if (!first) this.log(`the ${this.spec.name} is back (pid ${child.pid}) at ${m.url}`);
        resolve(m.url);
      });
      child.once("error", (err) => this.log(`the ${this.spec.name} could not be started: ${err.message}`));
      child.once("exit", (code, signal) => {
        if (this.child === child) this.child = undefined;
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        if (!ready) reject(new Error(`the ${this.spec.name} ${how} before it was ready`));
        if (this.stopping || (first && !ready)) return;
        if (Date.now() - started >= this.backoff.stableMs) this.failures = 0;
        const delay = Math.min(this.backoff.maxMs, this.backoff.firstMs * 2 ** this.failures++);
        this.log(`the ${this.spec.name} (pid ${child.pid}) ${how}; starting it again in ${delay / 1000} s (restart ${this.failures}); the other parts keep serving`);
        this.timer = setTimeout(() => void this.spawn(false).catch(() => undefined), delay);
      });
    });
  }

  /** Stops the child (SIGTERM: it drains within its deadline; SIGKILL past the grace period) and does not start it again. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const kill = setTimeout(() => child.kill("SIGKILL"), (this.spec.deadlineMs ?? 0) + 2 * CLOSE_MARGIN_MS);
    await exited;
    clearTimeout(kill);
  }
}
