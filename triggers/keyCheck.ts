import { createVestaClient } from "../client";
import { AppError, appError, type ErrorCode } from "../protocol/errors";
import type { TriggersCtx } from "./context";

/** Longest wait for the core's answer to a key check (a chain read, not a run). */
const CHECK_TIMEOUT_MS = 30_000;

/** The core's verdict on a trigger's key and action; `transient` when the core could not answer. */
export type KeyVerdict = { ok: true; cid: string } | { ok: false; error: AppError } | { transient: string };

const refused = (code: ErrorCode, message: string): KeyVerdict => ({ ok: false, error: appError(code, message) });

/**
 * Spec 3: a trigger runs with a scoped usage key of the core service permitted to execute its
 * action. Asks the core, with that key, through POST /core/v1/check_execute_permission (no run, no
 * side effect): an account key, an unknown or revoked key, or a usage key that may not execute the
 * action's CID is refused.
 */
export async function checkTriggerKey(ctx: TriggersCtx, usageKey: string, code: string): Promise<KeyVerdict> {
  const core = createVestaClient({ baseUrl: ctx.config.coreUrl, apiKey: usageKey });
  let res;
  try {
    res = await core.POST("/core/v1/check_execute_permission", {
      body: { code },
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(Math.min(CHECK_TIMEOUT_MS, ctx.config.coreTimeoutMs))]),
    });
  } catch (err) {
    return { transient: `the core service could not be reached to check the usage key: ${(err as Error).message}` };
  }
  const { status } = res.response;
  if (res.data) {
    if (res.data.key_kind !== "usage") {
      return refused("account_key_not_allowed", "usage_api_key is an account key: a trigger runs with a scoped usage key permitted to execute its action (mint one in the dashboard or with /core/v1/add_usage_api_key)");
    }
    if (!res.data.can_execute) {
      return refused("usage_key_not_permitted", `this usage key may not execute action ${res.data.ipfs_id}: no group on which it has execute lists it`);
    }
    return { ok: true, cid: res.data.ipfs_id };
  }
  if (status === 401) return refused("invalid_usage_key", "usage_api_key is not a key of the core service (unknown, revoked or expired)");
  const body = res.error as { error?: string; code?: string; message?: string } | undefined;
  const said = `${status} ${body?.code ?? "error"}: ${body?.error ?? body?.message ?? ""}`.slice(0, 2000);
  if (status >= 500 || status === 429) return { transient: `the core service could not check the usage key now (${said})` };
  return refused("invalid_action", `the core service refused to check this action: ${said}`);
}

/** The verdict for a save (create or PATCH): throws the refusal, or 503 when the core cannot answer now. */
export async function requirePermittedKey(ctx: TriggersCtx, usageKey: string, code: string): Promise<void> {
  const verdict = await checkTriggerKey(ctx, usageKey, code);
  if ("transient" in verdict) throw new AppError(503, "core_unavailable", `${verdict.transient}; nothing was saved, try again`);
  if (!verdict.ok) throw verdict.error;
}
