/**
 * The executor's domain errors: why a run was refused before it started. The executor knows
 * nothing of HTTP; the edge maps each reason to a status and a stable code in one table
 * (relayer/http/runRefusals.ts), as relayer/chain/revert.ts does for contract errors.
 */
export type RunRefusalReason =
  /** Neither `code` nor `ipfs_id`. */
  | "missing_code"
  /** The code is not well-formed Unicode (a lone surrogate): it has no UTF-8 bytes to hash and run. */
  | "code_not_well_formed"
  | "code_too_large"
  | "params_too_large"
  | "params_too_deep"
  /** js_params that are not JSON (only a caller inside the process can pass those). */
  | "params_invalid"
  /** `ipfs_id` does not name the code sent with it. */
  | "cid_mismatch"
  | "not_permitted"
  /** The account key of a ChainSecured account no longer runs actions. */
  | "account_chain_secured"
  /** Nothing (valid) is stored for that CID. */
  | "code_not_found"
  /** The account's (or key's) share of the sandbox is full, and so is its queue. */
  | "queue_full";

export class RunRefused extends Error {
  constructor(
    readonly reason: RunRefusalReason,
    message: string,
    /** When a retry may succeed (queue_full). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "RunRefused";
  }
}
