/**
 * The protocol between SandboxPool (host/, in the relayer) and a sandbox process (process/). Every
 * message is a flat record of strings, numbers, booleans and byte arrays (the code, a call's bulk,
 * an answer's bulk: calls.ts): params, arguments, answers and the response travel as JSON text,
 * never as an object graph of the action's making. Between processes each message is one bounded
 * frame (frames.ts), its byte arrays as bytes. Each side checks what it receives with the readers
 * below and bounds what it sends (bounds.ts).
 */
import { callArgsChars, callBodyBytes, MAX_CID_CHARS, MAX_ERROR_MESSAGE_BYTES, MAX_ERROR_STACK_BYTES, MAX_OP_CHARS } from "./bounds";
import { joinAnswer, type BodyAs } from "./calls";
import { isLimitKey, LIMIT_KEYS } from "../errors";
import { checkedBase, type ImportSource } from "../imports";
import type { RunLimits } from "../types";

/** What a sandbox process is started with (its one command-line argument, as JSON). */
export type SandboxConfig = {
  /** Hard ceiling of the process's WASM memory (WebAssembly.Memory maximum). */
  wasmMaxBytes: number;
  /** The QuickJS WASM file (quickjs-emscripten's release-sync build). */
  wasmFile: string;
  /** The guest modules (guest/*.js). */
  guestDir: string;
};

/** A host call's answer as a run reads it: the JSON the action gets, or a refusal. */
export type HostAnswer = { ok: true; json: string } | { ok: false; message: string; limit?: keyof RunLimits };

/** An answer as it crosses: its bulk (calls.ts splitAnswer) apart as bytes, which the sandbox process puts back (joinAnswer). */
export type WireAnswer = { ok: true; json: string; body?: Uint8Array; bodyAs?: BodyAs } | { ok: false; message: string; limit?: keyof RunLimits };

/**
 * A run: its code and params, and (optional) where its imports come from (`importBase`,
 * `importEntry`: sandbox/imports.ts) and what it finds in Lit.Headers (`headersJson`, a JSON object of strings).
 */
export type RunMessage = {
  type: "run";
  runId: number;
  ipfsId: string;
  code: Uint8Array;
  paramsJson: string;
  limits: RunLimits;
  importBase?: string;
  importEntry?: string;
  headersJson?: string;
};

/** Characters of the run message's import CDN base, its entry suffix, and its headers' JSON. */
const MAX_IMPORT_BASE_CHARS = 1024;
const MAX_IMPORT_ENTRY_CHARS = 64;
const MAX_HEADERS_JSON_CHARS = 4096;
const MAX_HEADERS = 16;

/** Why a run's import source or headers cannot travel in a run message (the pool checks before sending), or undefined. */
export function runExtrasProblem(imports: ImportSource | undefined, headers: Record<string, string> | undefined): string | undefined {
  if (imports) {
    try {
      checkedBase(imports.base);
    } catch (err) {
      return (err as Error).message;
    }
    if (imports.base.length > MAX_IMPORT_BASE_CHARS || !/^(\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?$/.test(imports.entry) || imports.entry.length > MAX_IMPORT_ENTRY_CHARS) {
      return `the import CDN base is at most ${MAX_IMPORT_BASE_CHARS} characters and its entry "" or a path of at most ${MAX_IMPORT_ENTRY_CHARS}`;
    }
  }
  if (headers) {
    const entries = Object.entries(headers);
    if (entries.length > MAX_HEADERS || !entries.every(([, v]) => typeof v === "string") || JSON.stringify(headers).length > MAX_HEADERS_JSON_CHARS) {
      return `the run's headers are at most ${MAX_HEADERS} strings, ${MAX_HEADERS_JSON_CHARS} characters of JSON`;
    }
  }
  return undefined;
}

export type ToSandbox = RunMessage | ({ type: "answer"; runId: number; callId: number } & WireAnswer);
/** A message from the pool as the sandbox process reads it: an answer's bulk back in its JSON. */
export type ReadToSandbox = RunMessage | ({ type: "answer"; runId: number; callId: number } & HostAnswer);

/** The end of a run, as the sandbox process reports it (bounded by bounds.ts before it is sent). */
export type DoneMessage = {
  type: "done";
  runId: number;
  responseJson: string | null;
  logs: string;
  error?: { message: string; stack?: string; limit?: keyof RunLimits };
  /** Size of the process's WASM memory after the run (it never shrinks). */
  wasmBytes: number;
  /** The QuickJS module may be corrupt (a WASM trap or a failed dispose): replace the process. */
  poisoned: boolean;
  /** What QuickJS printed to stderr during the run, if anything. */
  diagnostic?: string;
};

export type FromSandbox =
  | { type: "ready" }
  /** `body`: the call's bulk as bytes (calls.ts splitCall), its arguments without it. */
  | { type: "call"; runId: number; callId: number; op: string; argsJson: string; body?: Uint8Array }
  | DoneMessage
  /** Freeing the last run's runtime failed after its result was sent: replace this process. */
  | { type: "poisoned"; diagnostic?: string };

const DIAGNOSTIC_CHARS = 500;

const record = (m: unknown): Record<string, unknown> | undefined => (m !== null && typeof m === "object" && !Array.isArray(m) ? (m as Record<string, unknown>) : undefined);
const id = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
const str = (v: unknown, max: number): v is string => typeof v === "string" && v.length <= max;
const optionalStr = (v: unknown, max: number) => v === undefined || str(v, max);

/** A message from a sandbox process, checked (against the run's limits for calls and results), or undefined. */
export function readFromSandbox(raw: unknown, limits: RunLimits | undefined): FromSandbox | undefined {
  const m = record(raw);
  if (!m) return undefined;
  switch (m.type) {
    case "ready":
      return { type: "ready" };
    case "poisoned":
      return { type: "poisoned", ...(str(m.diagnostic, DIAGNOSTIC_CHARS) ? { diagnostic: m.diagnostic } : {}) };
    case "call": {
      // Each operation's own bounds, on the lengths (the arguments are parsed later, the bytes never).
      if (!limits || !id(m.runId) || !id(m.callId) || !str(m.op, MAX_OP_CHARS) || !str(m.argsJson, callArgsChars(m.op))) return undefined;
      const maxBody = callBodyBytes(m.op, limits);
      if (m.body !== undefined && !(maxBody > 0 && m.body instanceof Uint8Array && m.body.byteLength <= maxBody)) return undefined;
      return { type: "call", runId: m.runId, callId: m.callId, op: m.op, argsJson: m.argsJson, ...(m.body !== undefined ? { body: m.body as Uint8Array } : {}) };
    }
    case "done": {
      if (!limits || !id(m.runId) || typeof m.wasmBytes !== "number" || typeof m.poisoned !== "boolean") return undefined;
      // Sizes are cut by boundResult; here only shapes, and lengths far past any cap, are refused.
      if (!(m.responseJson === null || str(m.responseJson, limits.maxResponseBytes))) return undefined;
      if (!str(m.logs, limits.maxLogBytes) || !optionalStr(m.diagnostic, DIAGNOSTIC_CHARS)) return undefined;
      const e = m.error === undefined ? undefined : record(m.error);
      if (m.error !== undefined && (!e || !str(e.message, MAX_ERROR_MESSAGE_BYTES) || !optionalStr(e.stack, MAX_ERROR_STACK_BYTES) || !(e.limit === undefined || isLimitKey(e.limit)))) return undefined;
      return {
        type: "done",
        runId: m.runId,
        responseJson: m.responseJson,
        logs: m.logs,
        ...(e ? { error: { message: e.message as string, ...(e.stack ? { stack: e.stack as string } : {}), ...(e.limit ? { limit: e.limit as keyof RunLimits } : {}) } } : {}),
        wasmBytes: m.wasmBytes,
        poisoned: m.poisoned,
        ...(m.diagnostic ? { diagnostic: m.diagnostic as string } : {}),
      };
    }
    default:
      return undefined;
  }
}

function readLimits(v: unknown): RunLimits | undefined {
  const l = record(v);
  if (!l) return undefined;
  for (const k of LIMIT_KEYS) if (!Number.isSafeInteger(l[k]) || (l[k] as number) < 0) return undefined;
  return Object.fromEntries(LIMIT_KEYS.map((k) => [k, l[k]])) as RunLimits;
}

const BODY_AS: ReadonlySet<unknown> = new Set(["text", "base64", "string"]);

/** A message from the pool, checked (an answer's bulk put back in its JSON), or undefined. */
export function readToSandbox(raw: unknown): ReadToSandbox | undefined {
  const m = record(raw);
  if (!m || !id(m.runId)) return undefined;
  if (m.type === "run") {
    const limits = readLimits(m.limits);
    if (!limits || !str(m.ipfsId, MAX_CID_CHARS) || !(m.code instanceof Uint8Array) || typeof m.paramsJson !== "string") return undefined;
    if (!optionalStr(m.importBase, MAX_IMPORT_BASE_CHARS) || !optionalStr(m.importEntry, MAX_IMPORT_ENTRY_CHARS) || !optionalStr(m.headersJson, MAX_HEADERS_JSON_CHARS)) return undefined;
    if ((m.importBase === undefined) !== (m.importEntry === undefined)) return undefined;
    return {
      type: "run",
      runId: m.runId,
      ipfsId: m.ipfsId,
      code: m.code,
      paramsJson: m.paramsJson,
      limits,
      ...(m.importBase !== undefined ? { importBase: m.importBase as string, importEntry: m.importEntry as string } : {}),
      ...(m.headersJson !== undefined ? { headersJson: m.headersJson as string } : {}),
    };
  }
  if (m.type === "answer" && id(m.callId)) {
    if (m.ok === true && typeof m.json === "string" && m.body === undefined && m.bodyAs === undefined) return { type: "answer", runId: m.runId, callId: m.callId, ok: true, json: m.json };
    if (m.ok === true && typeof m.json === "string" && m.body instanceof Uint8Array && BODY_AS.has(m.bodyAs)) {
      const json = joinAnswer(m.json, m.body, m.bodyAs as BodyAs);
      return json === undefined ? undefined : { type: "answer", runId: m.runId, callId: m.callId, ok: true, json };
    }
    if (m.ok === false && typeof m.message === "string") {
      return { type: "answer", runId: m.runId, callId: m.callId, ok: false, message: m.message, ...(isLimitKey(m.limit) ? { limit: m.limit } : {}) };
    }
  }
  return undefined;
}
