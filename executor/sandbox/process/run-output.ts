/** The observable output of one run, inside the sandbox process: bounded logs, the response, errors read from QuickJS. */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten";
import { boundError, MAX_ERROR_MESSAGE_BYTES, truncateUtf8, type WireResult } from "../wire/bounds";
import { limitError, type RunError } from "../errors";
import type { RunLimits } from "../types";
import { exactString } from "./guest-bindings";

/** console output, capped at maxLogBytes: each entry (a console call) ends with "\n", as on Chipotle. */
export class LogBuffer {
  private text_ = "";
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Appends an entry and its newline; false (and a truncated entry) when the cap is reached. */
  append(line: string): boolean {
    const room = this.maxBytes - this.bytes;
    const size = line.length + 1 > room ? room + 1 : Buffer.byteLength(line, "utf8") + 1; // longer than the room in characters is too long in bytes
    if (size <= room) {
      this.text_ += `${line}\n`;
      this.bytes += size;
      return true;
    }
    if (room > 0) this.text_ += truncateUtf8(line, room);
    this.bytes = this.maxBytes;
    return false;
  }

  text(): string {
    return this.text_;
  }
}

/** A string property of a guest object (getters may run; failures read as undefined), cut to the error cap. */
export function readString(ctx: QuickJSContext, obj: QuickJSHandle, key: string): string | undefined {
  try {
    const h = ctx.getProp(obj, key);
    try {
      return ctx.typeof(h) === "string" ? truncateUtf8(exactString(ctx, h), MAX_ERROR_MESSAGE_BYTES) : undefined;
    } finally {
      h.dispose();
    }
  } catch {
    return undefined;
  }
}

/** A QuickJS stack without the frames of the sandbox's own scripts (vesta:track, vesta:timers, ...). */
export function actionStack(stack: string): string {
  return stack
    .split("\n")
    .filter((line) => !line.includes("(vesta:"))
    .join("\n");
}

/**
 * Globals Chipotle's Deno has that cannot exist in QuickJS (no WASM engine, no threads, no storage,
 * no Deno namespace), and Node's: reading one is QuickJS's ReferenceError, to which the run's error
 * adds why (README: "What the sandbox does not have").
 */
const ABSENT: Record<string, string> = {
  WebAssembly: "QuickJS has no WebAssembly engine",
  Deno: "actions run in QuickJS, not Deno: there is no Deno namespace",
  Worker: "QuickJS has no threads",
  SharedWorker: "QuickJS has no threads",
  localStorage: "the sandbox keeps nothing between runs",
  sessionStorage: "the sandbox keeps nothing between runs",
  indexedDB: "the sandbox keeps nothing between runs",
  caches: "the sandbox keeps nothing between runs",
  Blob: "the sandbox has no streams or files: use strings and Uint8Array",
  FormData: "the sandbox has no streams or files: use URLSearchParams or JSON",
  ReadableStream: "the sandbox has no streams: fetch bodies are read whole",
  WritableStream: "the sandbox has no streams: fetch bodies are read whole",
  TransformStream: "the sandbox has no streams: fetch bodies are read whole",
  TextEncoderStream: "the sandbox has no streams: use TextEncoder on whole strings",
  TextDecoderStream: "the sandbox has no streams: use TextDecoder (with stream: true for pieces)",
  CompressionStream: "the sandbox has no streams and no compression",
  DecompressionStream: "the sandbox has no streams and no compression",
  File: "the sandbox has no files or blobs: use strings and Uint8Array",
  FileReader: "the sandbox has no files or blobs: use strings and Uint8Array",
  URLPattern: "not provided: match URL's parts (new URL(...).pathname) with a RegExp",
  MessageChannel: "a run is one context on one thread: there is no other end to message",
  MessagePort: "a run is one context on one thread: there is no other end to message",
  BroadcastChannel: "a run is one context on one thread: there is no other end to message",
  Atomics: "QuickJS has no threads to share memory with (SharedArrayBuffer exists, Atomics does not)",
  reportError: "the global scope has no error event: throw the error (it ends the run) or console.error it",
  addEventListener: "the global scope is not an EventTarget (no load, unload or error events): use an EventTarget of your own",
  removeEventListener: "the global scope is not an EventTarget (no load, unload or error events): use an EventTarget of your own",
  dispatchEvent: "the global scope is not an EventTarget (no load, unload or error events): use an EventTarget of your own",
  WebSocket: "the sandbox speaks HTTP through fetch only",
  require: "actions are not Node modules",
  process: "actions are not Node programs",
  Buffer: "actions are not Node programs: use Uint8Array, TextEncoder and atob/btoa",
};
const ABSENT_REFERENCE = /^'?([A-Za-z]+)'? is not defined$/;

/** A ReferenceError's message, with why the global is absent when it is one Chipotle or Node has. */
function explained(name: string, message: string): string {
  const m = name === "ReferenceError" ? ABSENT_REFERENCE.exec(message) : null;
  const why = m && Object.prototype.hasOwnProperty.call(ABSENT, m[1]) ? ABSENT[m[1]] : undefined;
  return why ? `${message} (${m![1]} does not exist in Vesta's sandbox: ${why})` : message;
}

/** What the action threw (an Error, or any value) as a RunError; QuickJS OOM maps to memoryBytes. */
export function describeThrown(ctx: QuickJSContext, thrown: QuickJSHandle, limits: RunLimits): RunError {
  const type = ctx.typeof(thrown);
  if (type === "object") {
    const name = readString(ctx, thrown, "name") ?? "Error";
    const message = readString(ctx, thrown, "message");
    if (name === "InternalError" && message === "out of memory") return limitError("memoryBytes", limits);
    if (message !== undefined) return boundError({ message: `${name}: ${explained(name, message)}`, stack: actionStack(readString(ctx, thrown, "stack") ?? "") });
  }
  let shown = type;
  try {
    const value: unknown = type === "string" ? ctx.getString(thrown) : ctx.dump(thrown);
    shown = truncateUtf8(JSON.stringify(value) ?? String(value), MAX_ERROR_MESSAGE_BYTES);
  } catch {
    /* keep the type name */
  }
  return boundError({ message: `Uncaught ${shown}` });
}

/** What the sandbox process sends back: the response JSON (setResponse's or main's) within maxResponseBytes, the logs, the error. */
export function buildResult(logs: LogBuffer, limits: RunLimits, responseJson: string | undefined, error?: RunError): WireResult {
  if (responseJson !== undefined && (responseJson.length > limits.maxResponseBytes || Buffer.byteLength(responseJson, "utf8") > limits.maxResponseBytes)) {
    error = error ?? limitError("maxResponseBytes", limits);
    responseJson = undefined;
  }
  // A run that succeeded without a response answers "" (Chipotle's response when nothing was set); a failed one null.
  return { responseJson: responseJson ?? (error ? null : '""'), logs: logs.text(), ...(error ? { error: boundError(error) } : {}) };
}
