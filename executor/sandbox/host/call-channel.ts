/**
 * The relayer's end of one run's host calls: each call from the sandbox process is parsed, checked
 * (call-checks.ts) and counted against the run's limits before the Host sees it, and each answer is
 * bounded before it goes back. The arguments are measured on the text (their operation's own bound,
 * the number of JSON values) before they are parsed in this process, and a call's bulk (a fetch body,
 * an Encrypt message, a Decrypt ciphertext) arrives as bytes, measured and never parsed; an answer's
 * bulk (a fetch answer's body, a long string) goes back as bytes (wire/calls.ts), encoded once.
 * Never throws: every failure becomes a refusal the action sees.
 *
 * At most MAX_OPEN_IO_CALLS fetch, import, Encrypt and Decrypt calls of the run are open at once
 * (the sandbox process queues the others until it has read an answer): `opens` says whether the
 * sandbox kept to it; the pool retires one that does not. A call is open here until its answer has
 * left the relayer (`delivered`, once the answer's frame is written to the sandbox's socket), not
 * until the host answered: a sandbox that reads nothing cannot make the relayer hold more than that
 * many answers by opening new calls as the host answers the old ones (review finding: ~50 MB of
 * 1 MB answers waited unsent for one run).
 *
 * The channel lives as long as its run: `close()` (the pool calls it however the run ends) aborts
 * the signal every host call received, so the requests they make stop with the run, and no call
 * still waiting (e.g. on the key provider, which takes no signal) holds anything of the run.
 */
import { setMaxListeners } from "node:events";
import { jsonTextValues } from "../../../protocol/json";
import { callArgsChars, callBodyBytes, hostMessageChars, IO_OPS, MAX_HOST_CALL_VALUES, MAX_HOST_CALLS_PER_RUN, MAX_HOST_ERROR_BYTES, MAX_OPEN_IO_CALLS, truncateUtf8 } from "../wire/bounds";
import { splitAnswer } from "../wire/calls";
import { isLimitKey, limitMessage } from "../errors";
import { countCall, countExtraFetch, toHostCall, type CallCounts } from "./call-checks";
import { fetchedBytes } from "./fetch";
import { MAX_MODULES_PER_RUN } from "../imports";
import type { WireAnswer } from "../wire/messages";
import type { Host, HostCallContext, RunLimits } from "../types";

const refuse = (message: string, limit?: unknown): WireAnswer => ({
  ok: false,
  message: truncateUtf8(message, MAX_HOST_ERROR_BYTES),
  ...(isLimitKey(limit) ? { limit } : {}),
});

/** What the action sees of a thrown value, whatever it is (reading it may throw too). */
function refusalOf(err: unknown): WireAnswer {
  try {
    const e = err as { message?: unknown; limit?: unknown } | null;
    return refuse(typeof e?.message === "string" ? e.message : String(err), e?.limit);
  } catch {
    return refuse("the host call failed");
  }
}

const RUN_ENDED = "the run has ended";
/** The reason every ended run's signal carries: one Error (making one captures a stack, ~15 us). */
const RUN_ENDED_REASON = new Error(RUN_ENDED);

export class HostChannel {
  private readonly counts: CallCounts = { total: 0, keys: 0, fetches: 0, imports: 0 };
  /** Fetch, import, Encrypt and Decrypt calls received whose answer has not left the relayer yet. */
  private openIo = 0;
  /** Made by the run's first host call (a run that makes none, most of them, costs no AbortController: ~40 us of the event loop a run). */
  private ended?: AbortController;
  private closed = false;
  private readonly context: HostCallContext;

  constructor(
    private readonly host: Host,
    private readonly ipfsId: string,
    private readonly limits: RunLimits,
  ) {
    const channel = this;
    this.context = {
      get signal() {
        return channel.endSignal();
      },
      countFetch: () => countExtraFetch(this.counts, this.limits),
    };
  }

  private endSignal(): AbortSignal {
    if (!this.ended) {
      this.ended = new AbortController();
      // Each call under way listens for the end here, and so does each request it makes (at most 2 a call).
      setMaxListeners(3 * MAX_HOST_CALLS_PER_RUN, this.ended.signal);
      if (this.closed) this.ended.abort(RUN_ENDED_REASON);
    }
    return this.ended.signal;
  }

  /** The run ended: every host call's requests are aborted, and what is still waiting is answered (unseen) at once. */
  close(): void {
    this.closed = true;
    this.ended?.abort(RUN_ENDED_REASON);
  }

  /** The host's answer to `call`, or a refusal as soon as the run ends (whatever the host still does). */
  private ask(call: Parameters<Host>[0]): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error(RUN_ENDED));
    const signal = this.endSignal();
    let onEnd!: () => void;
    const end = new Promise<never>((_, reject) => (onEnd = () => reject(new Error(RUN_ENDED))));
    signal.addEventListener("abort", onEnd, { once: true });
    return Promise.race([this.host(call, this.context), end]).finally(() => signal.removeEventListener("abort", onEnd));
  }

  /**
   * Whether a call of `op` may be opened now: false when it would be one more fetch, import, Encrypt
   * or Decrypt call than MAX_OPEN_IO_CALLS under way at once (a sandbox process never sends that).
   */
  opens(op: string): boolean {
    return !IO_OPS.has(op) || this.openIo < MAX_OPEN_IO_CALLS;
  }

  /**
   * Answers one call `op(argsJson)`, its bulk `body` as bytes (wire/calls.ts); resolves a bounded
   * answer for every outcome. An I/O call is open (counted against MAX_OPEN_IO_CALLS) from now
   * until `delivered(op)` says its answer left the relayer.
   */
  answer(op: string, argsJson: string, body?: Uint8Array): Promise<WireAnswer> {
    if (IO_OPS.has(op)) this.openIo++;
    return this.answerOf(op, argsJson, body);
  }

  /** The answer to a call of `op` has left the relayer (written to the sandbox's socket, dropped, or the run ended): an I/O call is no longer open. */
  delivered(op: string): void {
    if (IO_OPS.has(op)) this.openIo--;
  }

  private async answerOf(op: string, argsJson: string, body: Uint8Array | undefined): Promise<WireAnswer> {
    let call;
    try {
      // The operation's own bounds, on the lengths alone: nothing larger than its largest legitimate call is read.
      if (argsJson.length > callArgsChars(op)) return refuse(`${op.slice(0, 64)}: the arguments are too large`);
      if (body !== undefined && body.byteLength > callBodyBytes(op, this.limits)) return refuse(`${op.slice(0, 64)}: the arguments are too large`);
      // Counted on the text: JSON.parse of `[[],[],...]` would build tens of bytes of this process's heap per character.
      if (jsonTextValues(argsJson, MAX_HOST_CALL_VALUES) > MAX_HOST_CALL_VALUES) return refuse(`${op.slice(0, 64)}: the arguments hold more than ${MAX_HOST_CALL_VALUES} JSON values`);
      const args: unknown = JSON.parse(argsJson);
      if (args === null || typeof args !== "object" || Array.isArray(args)) return refuse("host call arguments must be an object");
      call = toHostCall(op, args as Record<string, unknown>, this.ipfsId, this.limits, body);
    } catch (err) {
      return refusalOf(err);
    }
    const hit = countCall(call, this.counts, this.limits);
    if (hit === "maxHostCalls") return refuse(`host call limit exceeded: at most ${MAX_HOST_CALLS_PER_RUN} host calls per run`, undefined);
    if (hit === "maxImports") return refuse(`import limit exceeded: at most ${MAX_MODULES_PER_RUN} modules per run`, undefined);
    if (hit) return refuse(limitMessage(hit, this.limits), hit);
    try {
      const value = (await this.ask(call)) ?? null;
      // A fetch answer's body and a long string cross as their bytes; the rest as JSON (escaped once, here).
      const split = splitAnswer(call.op, value, call.op === "fetch" ? fetchedBytes(value) : undefined);
      const size = split ? split.json.length + split.body.length : undefined;
      const json = split ? split.json : JSON.stringify(value);
      if ((size ?? json.length) > hostMessageChars(this.limits)) return refuse(`${call.op}: the answer is too large`);
      return split ? { ok: true, ...split } : { ok: true, json };
    } catch (err) {
      return refusalOf(err);
    }
  }
}
