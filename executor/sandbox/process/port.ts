/**
 * The sandbox process's end of its channel to the relayer. In a sandbox process: fd 3, a socket
 * pair the relayer made at spawn, carrying bounded frames (../wire/frames.ts); the configuration
 * is the process's one command-line argument; when the relayer's end closes, the process exits.
 * In a worker thread (the in-process baseline of `npm run bench`, host/launchers.ts): parentPort
 * and workerData. Messages are read by ../wire/messages.ts either way.
 */
import net from "node:net";
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { encodeFrame, FrameReader, MAX_FRAME_BYTES } from "../wire/frames";
import type { FromSandbox, SandboxConfig } from "../wire/messages";

export type HostPort = {
  config: SandboxConfig;
  send(msg: FromSandbox): void;
  onMessage(handler: (raw: unknown) => void): void;
};

/** Exit codes of a sandbox process that stops on its own (the relayer logs them). */
export const EXIT_BAD_CONFIG = 64;
export const EXIT_PROTOCOL = 65;

function readConfig(raw: unknown): SandboxConfig | undefined {
  try {
    const c = (typeof raw === "string" ? JSON.parse(raw) : raw) as Partial<SandboxConfig> | null;
    if (!c || !Number.isSafeInteger(c.wasmMaxBytes) || typeof c.wasmFile !== "string" || typeof c.guestDir !== "string") return undefined;
    return { wasmMaxBytes: c.wasmMaxBytes!, wasmFile: c.wasmFile, guestDir: c.guestDir };
  } catch {
    return undefined;
  }
}

export function openHostPort(): HostPort {
  if (!isMainThread) {
    const port = parentPort!;
    const config = readConfig(workerData);
    if (!config) throw new Error("sandbox: bad configuration");
    return { config, send: (msg) => port.postMessage(msg), onMessage: (handler) => port.on("message", handler) };
  }
  const config = readConfig(process.argv[2]);
  if (!config) process.exit(EXIT_BAD_CONFIG);
  const socket = new net.Socket({ fd: 3, readable: true, writable: true });
  let handler: (raw: unknown) => void = () => undefined;
  // The relayer is trusted to send well-formed frames; a broken one ends this process.
  // Byte fields (the run's code, an answer's bulk) come out of the frame as bytes.
  const reader = new FrameReader(
    () => MAX_FRAME_BYTES,
    (msg) => handler(msg),
    () => process.exit(EXIT_PROTOCOL),
  );
  socket.on("data", (chunk: Buffer) => reader.push(chunk));
  socket.on("close", () => process.exit(0)); // the relayer is gone: nothing more to run for
  socket.on("error", () => undefined); // followed by close
  return { config, send: (msg) => socket.write(encodeFrame(msg)), onMessage: (h) => (handler = h) };
}
