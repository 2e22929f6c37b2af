import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { probePort } from "../../scripts/start/ports";

/** `count` distinct free loopback ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add((await probePort("127.0.0.1", 0))!);
  return [...ports];
}

/** Resolves once nothing listens on `port` any more (a stopped child has let it go). */
export async function portFreed(port: number, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => (s.destroy(), resolve(true)));
      s.once("error", () => resolve(false));
    });
    if (!open) return;
    if (Date.now() > end) throw new Error(`port ${port} still in use after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type VestaProcess = {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr, its children's too). */
  out: () => string;
  /** Waits until the output after character `from` holds `marker`; fails with the output if it exits first. */
  waitFor: (marker: string | RegExp, ms: number, from?: number) => Promise<string>;
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
};

/** What `npm start` runs, without npm in between, so that signals reach the script itself. */
export function spawnStart(env: Record<string, string>): VestaProcess {
  const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "scripts/start.ts"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout!.on("data", (c) => (text += c));
  child.stderr!.on("data", (c) => (text += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    out: () => text,
    waitFor: async (marker, ms, from = 0) => {
      const end = Date.now() + ms;
      const seen = () => (typeof marker === "string" ? text.slice(from).includes(marker) : marker.test(text.slice(from)));
      while (!seen()) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`npm start exited (${child.exitCode ?? child.signalCode}) before "${marker}":\n${text}`);
        if (Date.now() > end) throw new Error(`no "${marker}" within ${ms} ms:\n${text}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return text;
    },
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
