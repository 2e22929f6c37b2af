import type { RunRefusalReason, RunRefused } from "../../executor/errors";
import type { ErrorCode } from "../../protocol/errors";

/** Each reason the executor refuses a run for → the stable error code the API answers (its status is the catalogue's). */
const MAP: Record<RunRefusalReason, ErrorCode> = {
  missing_code: "invalid_request",
  code_not_well_formed: "invalid_code",
  code_too_large: "code_too_large",
  params_too_large: "params_too_large",
  params_too_deep: "json_too_deep",
  params_invalid: "invalid_request",
  cid_mismatch: "invalid_request",
  not_permitted: "not_permitted",
  account_chain_secured: "account_chain_secured",
  code_not_found: "action_code_not_found",
  queue_full: "run_queue_full",
};

/** How the API answers a RunRefused (a 429 carries Retry-After). */
export function runRefusalAnswer(err: RunRefused): { code: ErrorCode; headers?: Record<string, string> } {
  return { code: MAP[err.reason], ...(err.retryAfterSeconds === undefined ? {} : { headers: { "retry-after": String(err.retryAfterSeconds) } }) };
}

/** Every code a run refusal may answer (for the OpenAPI document). */
export const RUN_REFUSAL_CODES: ErrorCode[] = [...new Set(Object.values(MAP))];
