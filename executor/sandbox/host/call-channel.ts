/**
 * The relayer's end of one run's host calls: each call from the sandbox process is parsed, checked
 * (call-checks.ts) and counted against the run's limits before the Host sees it, and each answer is
 * bounded before it goes back. The arguments are measured on the text (size, number of JSON values)
 * before they are parsed in this process. Never throws: every failure becomes a refusal the action sees.
 */
import { jsonTextValues } from "../../../protocol/json";
import { hostMessageChars, MAX_HOST_CALL_VALUES, MAX_HOST_CALLS_PER_RUN, MAX_HOST_ERROR_BYTES, truncateUtf8 } from "../wire/bounds";
import { isLimitKey, limitMessage } from "../errors";
import { countCall, toHostCall, type CallCounts } from "./call-checks";
import { MAX_MODULES_PER_RUN } from "../imports";
import type { HostAnswer } from "../wire/messages";
import type { Host, RunLimits } from "../types";

const refuse = (message: string, limit?: unknown): HostAnswer => ({
  ok: false,
  message: truncateUtf8(message, MAX_HOST_ERROR_BYTES),
  ...(isLimitKey(limit) ? { limit } : {}),
});

/** What the action sees of a thrown value, whatever it is (reading it may throw too). */
function refusalOf(err: unknown): HostAnswer {
  try {
    const e = err as { message?: unknown; limit?: unknown } | null;
    return refuse(typeof e?.message === "string" ? e.message : String(err), e?.limit);
  } catch {
    return refuse("the host call failed");
  }
}

export class HostChannel {
  private readonly counts: CallCounts = { total: 0, keys: 0, fetches: 0, imports: 0 };

  constructor(
    private readonly host: Host,
    private readonly ipfsId: string,
    private readonly limits: RunLimits,
  ) {}

  /** Answers one call `op(argsJson)`; resolves a bounded answer for every outcome. */
  async answer(op: string, argsJson: string): Promise<HostAnswer> {
    let call;
    try {
      if (argsJson.length > hostMessageChars(this.limits)) return refuse(`${op.slice(0, 64)}: the arguments are too large`);
      // Counted on the text: JSON.parse of `[[],[],...]` would build tens of bytes of this process's heap per character.
      if (jsonTextValues(argsJson, MAX_HOST_CALL_VALUES) > MAX_HOST_CALL_VALUES) return refuse(`${op.slice(0, 64)}: the arguments hold more than ${MAX_HOST_CALL_VALUES} JSON values`);
      const args: unknown = JSON.parse(argsJson);
      if (args === null || typeof args !== "object" || Array.isArray(args)) return refuse("host call arguments must be an object");
      call = toHostCall(op, args as Record<string, unknown>, this.ipfsId, this.limits);
    } catch (err) {
      return refusalOf(err);
    }
    const hit = countCall(call, this.counts, this.limits);
    if (hit === "maxHostCalls") return refuse(`host call limit exceeded: at most ${MAX_HOST_CALLS_PER_RUN} host calls per run`, undefined);
    if (hit === "maxImports") return refuse(`import limit exceeded: at most ${MAX_MODULES_PER_RUN} modules per run`, undefined);
    if (hit) return refuse(limitMessage(hit, this.limits), hit);
    try {
      const json = JSON.stringify((await this.host(call)) ?? null);
      if (json.length > hostMessageChars(this.limits)) return refuse(`${call.op}: the answer is too large`);
      return { ok: true, json };
    } catch (err) {
      return refusalOf(err);
    }
  }
}
