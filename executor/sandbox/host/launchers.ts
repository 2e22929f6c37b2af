/**
 * How the pool starts a sandbox. `processLauncher` (what the relayer uses) starts a separate OS
 * process that holds nothing of the relayer's:
 *   - an empty environment (no payer keys, Stripe secret, database URL, nor any other variable);
 *   - Node's permission model: it may read its own three files (sandbox-files.ts) and nothing
 *     else, write nothing, start no process or thread, load no addon; no eval in Node's realm;
 *   - when the relayer runs as root, another user (`nobody` by default), so that file modes keep
 *     the data directory (made 0700), the root secret (0600) and a guest-agent socket that others
 *     may not write out of its reach even past the permission model;
 *   - stdin and stdout closed, stderr read by the relayer (bounded), and one socket pair on fd 3
 *     that carries the protocol as bounded frames; no other descriptor is inherited (Node opens
 *     everything close-on-exec);
 *   - a V8 heap limit, besides the WASM memory ceiling of the QuickJS module, and the V8 stack a
 *     worker thread had (deep QuickJS recursion runs on it).
 * `threadLauncher` runs the same code in a worker thread of this process, as the sandbox did
 * before: it exists only as the baseline of `npm run bench` and isolates nothing.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import type { Socket } from "node:net";
import { Worker } from "node:worker_threads";
import { encodeFrame, FrameReader } from "../wire/frames";
import type { SandboxConfig, ToSandbox } from "../wire/messages";
import { sandboxFiles } from "./sandbox-files";

/** How a sandbox ended: exit code or signal, and whether it ran out of (V8) memory. */
export type SandboxExit = { code: number | null; signal: NodeJS.Signals | null; outOfMemory: boolean; detail?: string };

export type SandboxEvents = {
  /** A message, as parsed JSON (not yet checked: the pool reads it with messages.ts). */
  message(raw: unknown): void;
  /** The sandbox broke the framing (a frame past its bound, not JSON): the pool retires it. */
  problem(problem: string): void;
  /** The sandbox is gone (called once). */
  exit(exit: SandboxExit): void;
};

export interface Sandbox {
  /** The OS process id (undefined for a worker thread). */
  readonly pid: number | undefined;
  /** Sends one message; throws when it cannot be sent. */
  send(msg: ToSandbox): void;
  /** Stops it at once (SIGKILL, or terminate); resolves when it is gone. */
  stop(): Promise<void>;
}

/** Starts one sandbox; `frameBytes()` bounds each frame it sends (asked per frame). */
export type SandboxLauncher = (config: { wasmMaxBytes: number }, frameBytes: () => number, events: SandboxEvents) => Sandbox;

/** The user a sandbox process runs as. */
export type SandboxUser = { uid: number; gid: number };

/** `nobody` on Debian, Ubuntu, Alpine and most images. */
export const NOBODY: SandboxUser = { uid: 65534, gid: 65534 };

export type ProcessLauncherOptions = {
  /** The user to run as; default NOBODY when the relayer runs as root, else the relayer's own (it cannot switch). */
  user?: SandboxUser;
  /** V8 heap limit of each process, in MB (default 256). */
  heapMb?: number;
  /** Another script to start the same way (tests: probes and misbehaving sandboxes). */
  entry?: string;
};

/** Bytes of a sandbox's stderr kept for the log and the exit diagnosis. */
const STDERR_TAIL_BYTES = 4096;
/** What the relayer reads of a sandbox's stderr in all. */
const STDERR_MAX_BYTES = 1024 * 1024;
const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|allocation failed/i;

/**
 * V8's stack for a sandbox process, in KB: what a worker thread had (4 MB less V8's margin), so
 * QuickJS recursion (WASM frames on V8's stack) goes as deep as before; only when the process's
 * stack limit (inherited, usually 8 MB) leaves room for it, else V8's default (~1 MB).
 */
const STACK_KB = 3904;
function stackKb(): number | undefined {
  try {
    const soft = /^Max stack size\s+(\S+)/m.exec(fs.readFileSync("/proc/self/limits", "utf8"))?.[1];
    return soft === "unlimited" || Number(soft) >= 2 * STACK_KB * 1024 ? STACK_KB : undefined;
  } catch {
    return undefined;
  }
}

/** The user a sandbox process will run as by default: NOBODY when this process is root, else undefined (its own). */
export const defaultSandboxUser = (): SandboxUser | undefined => (process.getuid?.() === 0 ? NOBODY : undefined);

/** The command line of a sandbox process (Node's flags, the entry, its configuration). */
export function sandboxArgs(entry: string, config: SandboxConfig, heapMb: number): string[] {
  const stack = stackKb();
  const readable = [entry, config.wasmFile, config.guestDir];
  return [
    "--experimental-permission",
    ...readable.map((file) => `--allow-fs-read=${file}`),
    "--no-addons",
    "--disallow-code-generation-from-strings",
    `--max-old-space-size=${heapMb}`,
    ...(stack ? [`--stack-size=${stack}`] : []),
    "--no-warnings", // the permission model's ExperimentalWarning, on every start
    entry,
    JSON.stringify(config),
  ];
}

export function processLauncher(opts: ProcessLauncherOptions = {}): SandboxLauncher {
  const user = opts.user ?? defaultSandboxUser();
  const heapMb = opts.heapMb ?? 256;
  const files = sandboxFiles(); // built now (at the relayer's start), not on the first run's path
  return ({ wasmMaxBytes }, frameBytes, events) => {
    const config: SandboxConfig = { wasmMaxBytes, wasmFile: files.wasmFile, guestDir: files.guestDir };
    const child = spawn(process.execPath, sandboxArgs(opts.entry ?? files.entry, config, heapMb), {
      env: {},
      cwd: "/",
      stdio: ["ignore", "ignore", "pipe", "pipe"],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    let ended = false;
    let stderr = "";
    const end = (exit: SandboxExit) => {
      if (ended) return;
      ended = true;
      events.exit(exit);
    };
    const channel = child.stdio[3] as Socket;
    // A booting sandbox keeps the relayer alive until its first message (a run may be waiting for
    // it); then only a run in flight does, through its kill timer.
    let booting = true;
    const message = (msg: unknown) => {
      if (booting) {
        booting = false;
        child.unref();
        channel.unref();
        (child.stderr as unknown as Socket).unref();
      }
      events.message(msg);
    };
    const reader = new FrameReader(frameBytes, message, (problem) => {
      channel.destroy();
      events.problem(problem);
    });
    channel.on("data", (chunk: Buffer) => reader.push(chunk));
    channel.on("error", () => undefined); // the process's end closed: its exit follows
    child.stderr!.setEncoding("utf8");
    let stderrBytes = 0;
    child.stderr!.on("data", (text: string) => {
      stderr = (stderr + text).slice(-STDERR_TAIL_BYTES);
      // Past this a sandbox is flooding: stop reading (its writes fail; it harms only itself).
      if ((stderrBytes += text.length) > STDERR_MAX_BYTES) child.stderr!.destroy();
    });
    child.stderr!.on("error", () => undefined); // the process is gone: its exit follows
    child.on("error", (err) => {
      if (child.pid === undefined) end({ code: null, signal: null, outOfMemory: false, detail: err.message }); // it never started
    });
    child.on("close", (code, signal) => end({ code, signal, outOfMemory: OUT_OF_MEMORY.test(stderr), ...(stderr.trim() ? { detail: stderr.trim() } : {}) }));
    return {
      pid: child.pid,
      send: (msg) => void channel.write(encodeFrame(msg)),
      stop: () =>
        new Promise<void>((resolve) => {
          if (ended || child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("close", () => resolve());
          // Waited for: the relayer stays alive until the process is gone (close() awaits this).
          child.ref();
          channel.ref();
          (child.stderr as unknown as Socket).ref();
          child.kill("SIGKILL");
        }),
    };
  };
}

/** The in-process baseline for benchmarks: the same sandbox code in a worker thread of this process (no isolation). */
export function threadLauncher(): SandboxLauncher {
  const files = sandboxFiles();
  return ({ wasmMaxBytes }, _frameBytes, events) => {
    const config: SandboxConfig = { wasmMaxBytes, wasmFile: files.wasmFile, guestDir: files.guestDir };
    const worker = new Worker(files.entry, { workerData: config, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: 256 } });
    worker.unref();
    let failure: (Error & { code?: string }) | undefined;
    worker.on("message", events.message);
    worker.on("messageerror", () => events.problem("a message could not be read"));
    worker.on("error", (err) => (failure = err));
    worker.on("exit", (code) => events.exit({ code, signal: null, outOfMemory: failure?.code === "ERR_WORKER_OUT_OF_MEMORY", ...(failure ? { detail: failure.message } : {}) }));
    return {
      pid: undefined,
      send: (msg) => worker.postMessage(msg),
      stop: () => worker.terminate().then(() => undefined, () => undefined),
    };
  };
}
