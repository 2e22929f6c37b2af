import crypto from "node:crypto";
import type { Logger } from "pino";
import type { Ctx } from "../context";
import type { Auth } from "../http/auth";
import type { RunResult } from "../../executor/sandbox/types";

/** The error of a failed run as its answer shows it: the message, then the JavaScript stack when it threw. */
export const runErrorText = (r: RunResult): string => (r.error ? (r.error.stack ? `${r.error.message}\n${r.error.stack}` : r.error.message) : "the action failed");

/**
 * Records a run that ran (a refusal before the sandbox is no run) in the run history; resolves with
 * the run's id once the record is committed (the answer waits for it: nothing acknowledged is
 * missing from the history after a crash). The run happened and was charged whatever this does: a
 * failure to record it is logged, never answered (this never rejects).
 */
export async function recordRun(ctx: Ctx, auth: Auth, r: RunResult & { ipfsId: string }, at: { startedAt: number; costCents: number; requestId?: string; log?: Logger }): Promise<string> {
  const id = `run_${crypto.randomUUID()}`;
  const failed = (err: unknown) => (at.log ?? ctx.logger).error({ err: (err as Error).message, cid: r.ipfsId }, "run history: a run could not be recorded");
  try {
    await ctx.runs.record({
      id,
      accountHash: auth.accountHash,
      keyHash: auth.keyHash,
      cid: r.ipfsId,
      status: r.hasError ? "failed" : "success",
      startedAt: at.startedAt,
      durationMs: r.durationMs ?? null,
      costCents: at.costCents,
      logs: r.logs,
      error: r.hasError ? runErrorText(r) : null,
      requestId: at.requestId ?? null,
    });
  } catch (err) {
    failed(err);
  }
  return id;
}
