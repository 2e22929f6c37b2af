/**
 * How the pool starts a sandbox. `processLauncher` (what the relayer uses) starts a separate OS
 * process that holds nothing of the relayer's:
 *   - an empty environment (no payer keys, Stripe secret, database URL, nor any other variable);
 *   - Node's permission model: it may read its own three files (sandbox-files.ts) and nothing
 *     else, write nothing, start no process or thread, load no addon; no eval in Node's realm;
 *   - when the relayer runs as root, a user of its own per slot of the pool (`user.uid + slot`,
 *     `user.gid + slot`), so that file modes keep the data directory (made 0700), the root secret
 *     (0600) and a guest-agent socket that others may not write out of its reach even past the
 *     permission model, and no sandbox may signal or ptrace another (no two live ones share a uid);
 *   - an OS memory ceiling (RLIMIT_DATA, set by `/bin/sh`'s `ulimit -d` before it execs Node): every
 *     allocation of the process (V8 heap, buffers, WASM memory) counts, so one that no other bound
 *     caught fails (or kills that process) instead of taking the host's memory. RLIMIT_AS would not
 *     do: V8 and WASM reserve tens of GB of address space they never use;
 *   - its own empty network namespace when the platform allows it (network.ts: `unshare --net`
 *     first in the exec chain, which then switches to the slot's user): no route to any address,
 *     no abstract unix socket of the host's; Node's permission model has no network control;
 *   - stdin and stdout closed, stderr read by the relayer (bounded), and one socket pair on fd 3
 *     that carries the protocol as bounded frames; no other descriptor is inherited (Node opens
 *     everything close-on-exec). The relayer writes to it no faster than the process reads
 *     (FrameWriter: while the socket's buffer is full, frames wait for 'drain'), and what it holds
 *     unread for a run is bounded by the calls the run may have open (wire/bounds.ts MAX_OPEN_IO_CALLS),
 *     each counted open until its answer has left the relayer;
 *   - a V8 heap limit, besides the WASM memory ceiling of the QuickJS module, and the V8 stack a
 *     worker thread had (deep QuickJS recursion runs on it).
 * `threadLauncher` runs the same code in a worker thread of this process, as the sandbox did
 * before: it exists only as the baseline of `npm run bench` and isolates nothing.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import type { Socket } from "node:net";
import { Worker } from "node:worker_threads";
import { FrameReader, FrameWriter } from "../wire/frames";
import type { SandboxConfig, ToSandbox } from "../wire/messages";
import { networkCommand, probeNetwork, type SandboxNetwork } from "./network";
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
  /**
   * Sends one message (in order, as the sandbox reads: nothing is written past its socket's buffer
   * until it drains); throws when it cannot be sent. `written` is called once the message has left
   * the relayer (its bytes handed to the OS, or dropped unread): what a run's open I/O calls are
   * counted by (call-channel.ts).
   */
  send(msg: ToSandbox, written?: () => void): void;
  /** Bytes the relayer holds for this sandbox that it has not read yet (frames waiting, or in the socket's buffer). */
  readonly unsentBytes?: number;
  /** Stops it at once (SIGKILL, or terminate); resolves when it is gone. */
  stop(): Promise<void>;
}

/**
 * Starts one sandbox; `slot` is its index in the pool (0 .. size - 1; no two live sandboxes share
 * one), `frameBytes()` bounds each frame it sends (asked per frame).
 */
export type SandboxLauncher = (config: { wasmMaxBytes: number; slot: number }, frameBytes: () => number, events: SandboxEvents) => Sandbox;

/** The user a sandbox process runs as. */
export type SandboxUser = { uid: number; gid: number };

/**
 * The user and group of slot 0 when the relayer runs as root: slot `i` runs as 64000 + i. In the
 * range most distributions leave unassigned (60000-64999), below 65536 so that a container whose
 * user namespace maps 0-65535 can switch to it, and no one's `nobody` (65534).
 */
export const FIRST_SANDBOX_USER: SandboxUser = { uid: 64000, gid: 64000 };

/** The user of sandbox `slot`: `first` shifted by the slot, uid and gid alike. */
export const slotUser = (first: SandboxUser, slot: number): SandboxUser => ({ uid: first.uid + slot, gid: first.gid + slot });

/** Default OS memory ceiling of a sandbox process, in MB: room for the WASM ceiling (1 GiB), the V8 heap (256 MB) and Node itself. */
export const DEFAULT_SANDBOX_MEMORY_MB = 2048;
/** What a sandbox process needs besides its WASM memory, in MB: the V8 heap (256 MB) and Node itself. */
const BESIDES_WASM_MB = 512;

export type ProcessLauncherOptions = {
  /** The user of slot 0 (slot i: slotUser(user, i)); default FIRST_SANDBOX_USER when the relayer runs as root, else the relayer's own (it cannot switch). */
  user?: SandboxUser;
  /** V8 heap limit of each process, in MB (default 256). */
  heapMb?: number;
  /** OS memory ceiling (RLIMIT_DATA) of each process, in MB (default DEFAULT_SANDBOX_MEMORY_MB, or more when the process's WASM maximum needs it). */
  memoryMb?: number;
  /** Another script to start the same way (tests: probes and misbehaving sandboxes). */
  entry?: string;
  /** The network of each process (network.ts); default: a namespace of its own when `probeNetwork` finds it can be had, else the relayer's. */
  network?: SandboxNetwork;
};

/** Bytes of a sandbox's stderr kept for the log and the exit diagnosis. */
const STDERR_TAIL_BYTES = 4096;
/** What the relayer reads of a sandbox's stderr in all. */
const STDERR_MAX_BYTES = 1024 * 1024;
/** What Node, V8 and the C++ runtime print when the V8 heap or the OS memory ceiling is reached. */
const OUT_OF_MEMORY = /out of memory|Reached heap limit|allocation failed|bad_alloc|Cannot allocate memory/i;

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

/** The user of slot 0 by default: FIRST_SANDBOX_USER when this process is root, else undefined (its own). */
export const defaultSandboxUser = (): SandboxUser | undefined => (process.getuid?.() === 0 ? FIRST_SANDBOX_USER : undefined);

/**
 * The command that starts a sandbox process under a memory ceiling: `/bin/sh` sets RLIMIT_DATA
 * (`ulimit -d`, in KB; soft and hard, so the process cannot raise it) and execs Node in its place
 * (same pid, same empty environment), or fails with its own message when the limit cannot be set.
 */
export function ceilingCommand(memoryMb: number, node: string, args: string[]): { file: string; args: string[] } {
  // dash exports PWD to what it execs: unset, the environment stays empty.
  return { file: "/bin/sh", args: ["-c", 'unset PWD; ulimit -d "$0" && exec "$@"', String(memoryMb * 1024), node, ...args] };
}

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
  const first = opts.user ?? defaultSandboxUser();
  const heapMb = opts.heapMb ?? 256;
  const network = opts.network ?? probeNetwork(process.env.PATH, first);
  const files = sandboxFiles(); // built now (at the relayer's start), not on the first run's path
  return ({ wasmMaxBytes, slot }, frameBytes, events) => {
    const config: SandboxConfig = { wasmMaxBytes, wasmFile: files.wasmFile, guestDir: files.guestDir };
    const memoryMb = opts.memoryMb ?? Math.max(DEFAULT_SANDBOX_MEMORY_MB, Math.ceil(wasmMaxBytes / (1024 * 1024)) + BESIDES_WASM_MB);
    const user = first && slotUser(first, slot);
    // unshare (isolated network) switches to the user itself, after it made the namespace; else spawn does.
    const command = networkCommand(network, user, ceilingCommand(memoryMb, process.execPath, sandboxArgs(opts.entry ?? files.entry, config, heapMb)));
    const child = spawn(command.file, command.args, {
      env: {},
      cwd: "/",
      stdio: ["ignore", "ignore", "pipe", "pipe"],
      // A process group of its own: a terminal's Ctrl-C (SIGINT to the foreground group) must not kill
      // the runs under way; the relayer ends its sandboxes itself when it stops, and a sandbox exits
      // when the relayer's end of its channel closes (even after a kill -9 of the relayer).
      detached: true,
      ...(command.user ? { uid: command.user.uid, gid: command.user.gid } : {}),
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
    const writer = new FrameWriter(channel);
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
      send: (msg, written) => writer.send(msg, msg.runId, msg.type === "run", written),
      get unsentBytes() {
        return writer.unsentBytes;
      },
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
      send: (msg, written) => {
        try {
          worker.postMessage(msg); // copied at once: nothing of it waits on this side
        } finally {
          written?.();
        }
      },
      stop: () => worker.terminate().then(() => undefined, () => undefined),
    };
  };
}
