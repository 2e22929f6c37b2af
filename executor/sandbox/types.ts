/**
 * The contract between the sandbox (QuickJS in worker threads) and its host (the main thread,
 * which holds permissions and key material). The sandbox never derives keys nor checks
 * permissions itself: every privileged operation is a HostCall answered by the host.
 */
import { DEFAULT_MAX_JSON_DEPTH } from "../../protocol/json";
import type { ImportSource } from "./imports";

/** Limits of one run; each one, when hit, ends the run with `hasError: true` and a clear message. */
export type RunLimits = {
  /** QuickJS heap limit and WASM memory ceiling (default 64 MB). */
  memoryBytes: number;
  /** Wall-clock deadline of the run (default 30 s, at most 15 min). */
  timeoutMs: number;
  /** Outbound fetches per run (default 50). */
  maxFetches: number;
  /** Serialized response size (default 100 KB). */
  maxResponseBytes: number;
  /** Total size of captured logs (default 100 KB). */
  maxLogBytes: number;
  /** Key requests per run: getPrivateKey, getLitActionPrivateKey, Encrypt, Decrypt (default 10). */
  maxKeyRequests: number;
  /** Serialized js_params size (default 64 KB). */
  maxParamsBytes: number;
  /** Code size (default 16 MB). */
  maxCodeBytes: number;
  /** Largest body of one fetch answer (default 1 MB). */
  maxFetchBytes: number;
  /** Nesting of js_params and of the response, as JSON (default 64 levels). */
  maxJsonDepth: number;
};

export const DEFAULT_LIMITS: RunLimits = {
  memoryBytes: 64 * 1024 * 1024,
  timeoutMs: 30_000,
  maxFetches: 50,
  maxResponseBytes: 100 * 1024,
  maxLogBytes: 100 * 1024,
  maxKeyRequests: 10,
  maxParamsBytes: 64 * 1024,
  maxCodeBytes: 16 * 1024 * 1024,
  maxFetchBytes: 1024 * 1024,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
};

export const MAX_TIMEOUT_MS = 15 * 60 * 1000;

export type RunRequest = {
  /**
   * The action source as the UTF-8 bytes its CID was computed from: `async function main(params)
   * { ... }` (or code that calls setResponse). These exact bytes are what QuickJS parses.
   */
  code: Uint8Array;
  /** The action's CID (its identity; used by getLitActionPrivateKey and friends). */
  ipfsId: string;
  /** js_params as JSON text (checked against maxParamsBytes and maxJsonDepth). */
  paramsJson: string;
  limits: RunLimits;
  /** Where the action's `import`s come from (without it, an action that imports fails with a clear error). */
  imports?: ImportSource;
  /** What the action finds in `Lit.Headers` (Chipotle: the request's x-request-id and x-correlation-id). */
  headers?: Record<string, string>;
};

/**
 * Whose run it is, for the fair share of the sandbox (per payer, per account, per key). `payer` is
 * who is billed for the account (billing/charges.ts payerOf); without one the account pays for itself.
 */
export type RunOwner = { readonly payer?: string; readonly account: string; readonly key: string };

export type RunResult = {
  /** The value returned by main() or set by setResponse (setResponse wins), JSON-compatible. */
  response: unknown;
  /** console.log/info/warn/error lines, joined with "\n". */
  logs: string;
  hasError: boolean;
  /** When hasError: what went wrong, with the JavaScript stack when the action threw. */
  error?: { message: string; stack?: string; limit?: keyof RunLimits };
  /** Time the run held a worker (absent when it never started, e.g. refused before it was queued). */
  durationMs?: number;
};

/**
 * Privileged operations the sandbox asks the host for (answered asynchronously; inside the action
 * they are promises). The pool checks each call's shape and counts it against the run's limits
 * (host/call-checks.ts) before the Host sees it; the host re-checks permissions on every call.
 */
export type HostCall =
  | { op: "getPrivateKey"; pkpId: string }
  | { op: "getLitActionPrivateKey" }
  | { op: "getLitActionPublicKey"; ipfsId: string }
  | { op: "getLitActionWalletAddress"; ipfsId: string }
  | { op: "encrypt"; pkpId: string; message: string }
  | { op: "decrypt"; pkpId: string; ciphertext: string }
  | { op: "fetch"; url: string; method: string; headers: Record<string, string>; body?: string; bodyBase64?: string }
  /** A module of the action's import graph: `url` on the import CDN, `integrity` the pins the imports state. */
  | { op: "import"; url: string; integrity: string[] }
  /** The JSON-RPC URL the deployment gives actions for `chain` (Lit.Actions.getRpcUrl). */
  | { op: "getRpcUrl"; chain: string };

/** A fetch answer: the body as text (`body`) when it is UTF-8, else as base64 (`bodyBase64`): exactly one of them, the same bytes either way. */
export type FetchAnswer = { status: number; statusText: string; headers: Record<string, string>; body?: string; bodyBase64?: string };

/** An import answer: the module's URL, its SHA-384 (sha384-<base64>), its bytes as base64. */
export type ModuleAnswer = { url: string; hash: string; base64: string };

/** What the pool hands the Host with each call of a run (host/call-channel.ts). */
export type HostCallContext = {
  /**
   * Aborted when the run ends, however it ends (its result, a failure, its deadline, its sandbox
   * killed, the pool closed): every network request made for the call stops then, nothing of a
   * run outlives it.
   */
  signal: AbortSignal;
  /**
   * Counts one more request of the call against the run's maxFetches (a redirect hop that sends
   * the body again); false, and nothing counted, when the run has none left.
   */
  countFetch(): boolean;
};

/** The host side of one run: answers HostCalls or throws an Error whose message the action sees. */
export type Host = (call: HostCall, context: HostCallContext) => Promise<unknown>;
