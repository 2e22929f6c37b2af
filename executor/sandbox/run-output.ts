/** The observable output of one run: bounded logs, the response, and errors read from QuickJS. */
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten";
import { limitError, type RunError } from "./errors";
import type { RunLimits, RunResult } from "./types";

const MAX_ERROR_CHARS = 4096;

export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  return Buffer.from(text, "utf8").subarray(0, Math.max(0, maxBytes)).toString("utf8").replace(/\uFFFD$/, "");
}

/** console output, capped at maxLogBytes (lines joined with "\n"). */
export class LogBuffer {
  private readonly lines: string[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Appends a line; false (and a truncated line) when the cap is reached. */
  append(line: string): boolean {
    const separator = this.lines.length > 0 ? 1 : 0;
    const size = Buffer.byteLength(line, "utf8") + separator;
    if (this.bytes + size <= this.maxBytes) {
      this.lines.push(line);
      this.bytes += size;
      return true;
    }
    const room = this.maxBytes - this.bytes - separator;
    if (room > 0) this.lines.push(truncateUtf8(line, room));
    this.bytes = this.maxBytes;
    return false;
  }

  /** The logs, with the run's error (message + stack) appended as the last lines. */
  text(error?: RunError): string {
    const tail = error ? [error.stack ? `${error.message}\n${error.stack.trimEnd()}` : error.message] : [];
    return [...this.lines, ...tail].join("\n");
  }
}

/** A string property of a guest object (getters may run; failures read as undefined). */
export function readString(ctx: QuickJSContext, obj: QuickJSHandle, key: string): string | undefined {
  try {
    const h = ctx.getProp(obj, key);
    try {
      return ctx.typeof(h) === "string" ? ctx.getString(h).slice(0, MAX_ERROR_CHARS) : undefined;
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
    .join("\n")
    .slice(0, MAX_ERROR_CHARS);
}

/** What the action threw (an Error, or any value) as a RunError; QuickJS OOM maps to memoryBytes. */
export function describeThrown(ctx: QuickJSContext, thrown: QuickJSHandle, limits: RunLimits): RunError {
  const type = ctx.typeof(thrown);
  if (type === "object") {
    const name = readString(ctx, thrown, "name") ?? "Error";
    const message = readString(ctx, thrown, "message");
    if (name === "InternalError" && message === "out of memory") return limitError("memoryBytes", limits);
    if (message !== undefined) {
      const stack = actionStack(readString(ctx, thrown, "stack") ?? "");
      return { message: `${name}: ${message}`, ...(stack ? { stack } : {}) };
    }
  }
  let shown = type;
  try {
    const value: unknown = type === "string" ? ctx.getString(thrown) : ctx.dump(thrown);
    shown = (JSON.stringify(value) ?? String(value)).slice(0, MAX_ERROR_CHARS);
  } catch {
    /* keep the type name */
  }
  return { message: `Uncaught ${shown}` };
}

/** Builds the RunResult from the response JSON (setResponse's or main's) and the error, if any. */
export function buildResult(logs: LogBuffer, limits: RunLimits, responseJson: string | undefined, error?: RunError): RunResult {
  if (responseJson !== undefined && Buffer.byteLength(responseJson, "utf8") > limits.maxResponseBytes) {
    error = error ?? limitError("maxResponseBytes", limits);
    responseJson = undefined;
  }
  let response: unknown = null;
  try {
    if (responseJson !== undefined) response = JSON.parse(responseJson);
  } catch {
    error = error ?? { message: "TypeError: the response is not valid JSON" };
  }
  return error ? { response, logs: logs.text(error), hasError: true, error } : { response, logs: logs.text(), hasError: false };
}
