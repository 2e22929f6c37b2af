import type { RunRefusalReason, RunRefused } from "../../executor/errors";

/** Each reason the executor refuses a run for → the HTTP answer: status and stable error code. */
const MAP: Record<RunRefusalReason, [number, string]> = {
  missing_code: [400, "invalid_request"],
  code_not_well_formed: [400, "invalid_code"],
  code_too_large: [413, "code_too_large"],
  params_too_large: [413, "params_too_large"],
  params_too_deep: [400, "json_too_deep"],
  params_invalid: [400, "invalid_request"],
  cid_mismatch: [400, "invalid_request"],
  not_permitted: [403, "not_permitted"],
  account_chain_secured: [403, "account_chain_secured"],
  code_not_found: [404, "action_code_not_found"],
  queue_full: [429, "run_queue_full"],
};

/** How the API answers a RunRefused (a 429 carries Retry-After). */
export function runRefusalAnswer(err: RunRefused): { status: number; code: string; headers?: Record<string, string> } {
  const [status, code] = MAP[err.reason];
  return { status, code, ...(err.retryAfterSeconds === undefined ? {} : { headers: { "retry-after": String(err.retryAfterSeconds) } }) };
}
