import { createVestaClient } from "../client";
import { jsonDeeperThan, MAX_STORED_JSON_DEPTH } from "../protocol/json";
import { truncateUtf8 } from "../protocol/text";
import { open } from "./crypto";
import type { TriggersCtx } from "./context";
import { checkTriggerKey } from "./keyCheck";
import type { RunRow } from "./store/types";

export const MAX_RETRIES = 3;

type Outcome = { status: "success" | "failed"; response: unknown; error: string | null } | { transient: string };

/** Bytes of a run's error that are stored. */
const MAX_STORED_ERROR_BYTES = 16 * 1024;

/** openapi-fetch hands an error body over parsed when it is JSON, else as text (undefined when empty). */
const textOf = (body: unknown) => (body === undefined ? "" : typeof body === "string" ? body : safeJson(body));

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return String(v);
  }
}

function jsonOrText(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const errorText = (e: string) => truncateUtf8(e, MAX_STORED_ERROR_BYTES);

/**
 * What is stored for a run's answer: the core's answer as it came when it fits the cap (and the
 * JSON nesting limit), else a note of what was cut and its first bytes as text.
 */
export function storedResponse(ctx: TriggersCtx, body: unknown, text: string): unknown {
  const max = ctx.config.maxStoredResponseBytes;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= max && !jsonDeeperThan(body, MAX_STORED_JSON_DEPTH)) return body;
  return { truncated: true, bytes, preview: truncateUtf8(text, max - 256) };
}

/** One call to the core service, exactly as an outside client: POST /core/v1/lit_action with the usage key. */
async function callCore(ctx: TriggersCtx, code: string, params: Record<string, unknown>, usageKey: string): Promise<Outcome> {
  // A run whose params cannot be sent (stored by an older version, too deep for any serializer) fails once, with the reason.
  if (jsonDeeperThan(params, ctx.config.maxJsonDepth + 2)) {
    return { status: "failed", response: null, error: `the run's params cannot be sent: they are nested more than ${ctx.config.maxJsonDepth + 2} levels deep` };
  }
  const core = createVestaClient({ baseUrl: ctx.config.coreUrl, apiKey: usageKey });
  let res;
  try {
    // As text: a 2xx body that is not JSON is kept as the response rather than failing the call.
    res = await core.POST("/core/v1/lit_action", {
      body: { code, js_params: params },
      parseAs: "text",
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.config.coreTimeoutMs)]),
    });
  } catch (err) {
    return { transient: `the core service could not be reached: ${(err as Error).message}` };
  }
  const { status } = res.response;
  const failedRun = res.error as { has_error?: unknown; error?: unknown } | undefined;
  // The action ran and failed (422 action_failed, as on Chipotle): final, with its stack; never retried (it may have acted).
  if (failedRun && typeof failedRun === "object" && failedRun.has_error === true) {
    return { status: "failed", response: storedResponse(ctx, failedRun, textOf(failedRun)), error: errorText(String(failedRun.error ?? "the action failed")) };
  }
  if (status >= 500) return { transient: `core answered ${status}: ${textOf(res.error).slice(0, 2000)}` };
  if (status >= 400) {
    const body = res.error as any;
    const msg = typeof body === "object" && body ? `${body.code ?? "error"}: ${body.error ?? body.message ?? ""}` : textOf(body);
    return { status: "failed", response: storedResponse(ctx, body ?? "", textOf(body)), error: errorText(`core answered ${status} ${msg}`) };
  }
  const text = res.data ?? "";
  const body = jsonOrText(text);
  const response = storedResponse(ctx, body, text);
  if (body?.has_error) return { status: "failed", response, error: errorText(String(body.error ?? "the action failed")) };
  return { status: "success", response, error: null };
}

/**
 * One attempt: the key is checked with the core first (spec 3: a usage key permitted to execute the
 * action; an account key or a permission since removed fails the run, not retried), then the run.
 */
async function attemptRun(ctx: TriggersCtx, code: string, params: Record<string, unknown>, usageKey: string): Promise<Outcome> {
  const key = await checkTriggerKey(ctx, usageKey, code);
  if ("transient" in key) return key;
  if (!key.ok) return { status: "failed", response: null, error: `not run: ${key.error.message}` };
  return callCore(ctx, code, params, usageKey);
}

/** Waits `ms`, or until aborted or `wake` is called; leaves no listener behind. */
export function pause(ms: number, signal: AbortSignal, onWake?: (fn: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    onWake?.(done);
  });
}

/** Executes one claimed run: up to 3 retries with exponential backoff on transient 5xx, none on 4xx or a refused key. */
export async function execute(ctx: TriggersCtx, run: RunRow): Promise<void> {
  const trigger = await ctx.store.getTrigger(run.triggerId);
  if (!trigger) return ctx.store.finish(run.id, "failed", null, "the trigger was deleted", ctx.now());
  const usageKey = open(ctx.secretKey, trigger.usageKeySealed);
  const started = Date.now();
  const finish = (status: "success" | "failed", response: unknown, error: string | null) => {
    ctx.metrics.observeRun(trigger.kind, status, Date.now() - started);
    return ctx.store.finish(run.id, status, response, error, ctx.now());
  };
  for (let attempt = 1; ; attempt++) {
    await ctx.store.noteAttempt(run.id, attempt);
    const out = await attemptRun(ctx, trigger.actionCode, run.params, usageKey);
    if (ctx.signal.aborted) return; // stopping: the run stays `running` and is failed as interrupted at the next start
    if ("status" in out) return finish(out.status, out.response, out.error);
    if (attempt > MAX_RETRIES) return finish("failed", null, `${out.transient} (gave up after ${MAX_RETRIES} retries)`);
    ctx.logger.warn({ run: run.id, attempt, err: out.transient }, "transient core failure; retrying");
    await pause(ctx.config.retryBaseMs * 2 ** (attempt - 1), ctx.signal);
    if (ctx.signal.aborted) return;
  }
}

/** `workers` loops claiming queued runs; each sleeps `queuePollMs` when idle or until woken. Stops on ctx.signal. */
export function startWorkers(ctx: TriggersCtx): { wake: () => void; idle: () => Promise<void>; drain: () => Promise<void> } {
  const waiters = new Set<() => void>();
  let draining = false; // shutting down: finish the runs under way, claim no more
  const wake = () => {
    for (const w of waiters) w();
    waiters.clear();
  };
  const loop = async () => {
    while (!ctx.signal.aborted && !draining) {
      const run = await ctx.store.claim(ctx.now()).catch((err) => (ctx.logger.error({ err }, "claiming a run failed"), undefined));
      if (run) {
        try {
          await execute(ctx, run);
        } catch (err) {
          ctx.logger.error({ err, run: run.id }, "run failed unexpectedly");
          if (!ctx.signal.aborted) await ctx.store.finish(run.id, "failed", null, `internal error: ${(err as Error).message}`, ctx.now()).catch(() => {});
        }
        // Retention: the trigger keeps its newest finished runs only.
        await ctx.store.pruneRuns(run.triggerId, ctx.config.runsKeptPerTrigger).catch((err) => ctx.logger.warn({ err, trigger: run.triggerId }, "pruning old runs failed"));
        continue;
      }
      await pause(ctx.config.queuePollMs, ctx.signal, (done) => waiters.add(done));
    }
  };
  const loops = Array.from({ length: ctx.config.workers }, loop);
  return {
    wake,
    idle: async () => {
      wake();
      await Promise.allSettled(loops);
    },
    drain: async () => {
      draining = true;
      wake();
      await Promise.allSettled(loops);
    },
  };
}
