/**
 * Every error code Vesta's HTTP APIs answer (the core /core/v1 API and the triggers service), with
 * its one HTTP status and what it means. AppError takes only a code listed here, with this status
 * (a type error otherwise), and the OpenAPI document lists each route's codes by status from this
 * table: a code, its status and its documentation cannot drift apart.
 *
 * Pure data: the dashboard may bundle it.
 */
export const ERROR_CODES = {
  // 400: the request is malformed
  invalid_request: { status: 400, meaning: "A field, query parameter or body is missing, malformed or out of range; the message names each problem." },
  json_too_deep: { status: 400, meaning: "A JSON input (body, js_params, webhook body) nests arrays or objects deeper than the limit." },
  invalid_text: { status: 400, meaning: "A string is not well-formed Unicode (a lone UTF-16 surrogate such as \\ud800, which has no UTF-8 encoding), or a name holds control characters (descriptions may hold tab and line breaks only); the message names the field." },
  invalid_code: { status: 400, meaning: "The action code is not well-formed Unicode (it has no single UTF-8 encoding to hash and run)." },
  invalid_typed_data: { status: 400, meaning: "A signed request's EIP-712 envelope (typed_data) is malformed, too large, stale, for another chain or for another purpose." },
  invalid_signed_message: { status: 400, meaning: "A signed request's text message (Chipotle's signed-text form) is malformed, too large, stale, for another chain or for another purpose." },
  invalid_webhook_signature: { status: 400, meaning: "The payment provider's webhook signature is missing or does not hold." },
  admin_wallet_not_a_pkp: { status: 400, meaning: "The address is the account's admin wallet, which is never a PKP: a group may not list it (an action could act as the owner)." },
  account_key_not_allowed: { status: 400, meaning: "Triggers: an account key was given where a scoped usage key is required." },
  invalid_usage_key: { status: 400, meaning: "Triggers: the usage key is unknown, revoked or expired on the core service." },
  invalid_action: { status: 400, meaning: "Triggers: the core service refused to check the trigger's action." },
  approval_mismatch: { status: 400, meaning: "Triggers: the approval's challenge and client name are not those of one authorization link (its ticket does not match them); nothing was approved." },
  // 401: who is calling is not established
  invalid_metrics_token: { status: 401, meaning: "GET /metrics: the Authorization header does not carry the metrics token (VESTA_METRICS_TOKEN / TRIGGERS_METRICS_TOKEN)." },
  invalid_api_key: { status: 401, meaning: "No key, or an unknown, revoked, expired or malformed key (X-Api-Key or Authorization: Bearer)." },
  invalid_signature: { status: 401, meaning: "The signature does not prove the stated address (ECDSA recovery, or the contract's ERC-1271 answer)." },
  invalid_wallet_auth: { status: 401, meaning: "The X-Wallet-Auth header does not prove an admin wallet of the account." },
  invalid_login_link: { status: 401, meaning: "Triggers: the sign-in link is unknown, used or expired." },
  invalid_session: { status: 401, meaning: "The identity session token is expired, altered, malformed or another node's: sign in again." },
  invalid_id_token: { status: 401, meaning: "The OpenID Connect ID token does not hold: unknown issuer, another audience, expired, bad signature or algorithm; the message says which." },
  invalid_nonce: { status: 401, meaning: "The ID token's nonce is missing, not one this node issued, expired, or used already (a nonce signs in once)." },
  invalid_email_code: { status: 401, meaning: "The e-mail code is wrong, expired or used, or was sent to another address." },
  invalid_passkey: { status: 401, meaning: "The passkey response does not hold: its challenge was not issued here (or expired, or was used), the credential is not registered, or the signature, origin or relying party does not match; the message says which." },
  passkey_cloned: { status: 401, meaning: "The passkey's signature counter did not move forward: the credential may have been cloned. Nothing was changed." },
  stale_session: { status: 401, meaning: "Linking or unlinking a sign-in method needs a fresh authentication: sign in again (the session is older than allowed)." },
  // 402: not paid for
  payment_required: { status: 402, meaning: "The balance, less the credit held by work under way, does not cover the operation; nothing was done." },
  // 403: known caller, not allowed
  forbidden: { status: 403, meaning: "The request is not allowed from here (e.g. a page of another origin)." },
  owner_only: { status: 403, meaning: "Only the account key (or the admin wallet) may do this; a usage key cannot." },
  missing_scope: { status: 403, meaning: "The key lacks the permission (scope) this write needs on that group; details name the scope and group." },
  not_permitted: { status: 403, meaning: "The key may not run this action: no group on which it has execute lists the CID." },
  account_chain_secured: { status: 403, meaning: "The account is ChainSecured: its admin writes come from the admin wallet, and its old account key pays for nothing." },
  not_account_admin: { status: 403, meaning: "The signer is not the admin wallet of the account named." },
  not_pending_admin: { status: 403, meaning: "Only the proposed admin wallet can accept the account, from its own address." },
  method_unlinked: { status: 403, meaning: "This sign-in method was unlinked from its identity: it signs into nothing until it is linked again." },
  identity_not_owner: { status: 403, meaning: "The signed-in identity's wallet is no longer the account's admin (the account was handed over): it signs nothing for it." },
  payment_intent_not_yours: { status: 403, meaning: "The payment intent belongs to another account." },
  usage_key_not_permitted: { status: 403, meaning: "Triggers: the usage key may not execute the trigger's action." },
  // 404: no such thing
  not_found: { status: 404, meaning: "No such endpoint." },
  method_not_linked: { status: 404, meaning: "That sign-in method is not linked to the session's identity." },
  account_not_found: { status: 404, meaning: "No such account." },
  group_not_found: { status: 404, meaning: "No such group in this account." },
  wallet_not_found: { status: 404, meaning: "No such wallet (PKP) registered to this account." },
  wallet_not_in_group: { status: 404, meaning: "The wallet is not in that group." },
  action_not_found: { status: 404, meaning: "No such action registered to this account." },
  action_not_in_group: { status: 404, meaning: "The action is not in that group." },
  action_code_not_found: { status: 404, meaning: "No code is stored for that IPFS id: send the code once with `code`." },
  usage_key_not_found: { status: 404, meaning: "No such usage key in this account." },
  billing_not_configured: { status: 404, meaning: "Billing is off on this node." },
  identity_method_off: { status: 404, meaning: "This sign-in method (OpenID Connect, e-mail code, passkey) is not configured on this node." },
  stripe_not_configured: { status: 404, meaning: "Card payments are not available on this node (local billing)." },
  free_credit_unavailable: { status: 404, meaning: "Free credit exists only on a development node with local billing." },
  payment_intent_not_found: { status: 404, meaning: "The payment provider knows no such payment intent." },
  trigger_not_found: { status: 404, meaning: "Triggers: no such trigger of this user." },
  run_not_found: { status: 404, meaning: "Triggers: no such run of this user." },
  token_not_found: { status: 404, meaning: "Triggers: no such client token of this user." },
  // 409: the state does not allow it
  method_taken: { status: 409, meaning: "This sign-in method already signs into another identity: it cannot be linked to this one." },
  last_method: { status: 409, meaning: "This is the identity's only sign-in method: link another before unlinking it." },
  already_exists: { status: 409, meaning: "The thing exists already (account, key, wallet, group member, action)." },
  already_chain_secured: { status: 409, meaning: "The account is ChainSecured already; conversion happens once." },
  write_rejected: { status: 409, meaning: "The contract rejected the write (the state changed meanwhile); nothing changed." },
  signature_used: { status: 409, meaning: "This single-use signature (ConvertAccount, AddUsageApiKey) has been used already." },
  free_credit_capped: { status: 409, meaning: "The balance would pass the free-credit cap." },
  payment_currency_mismatch: { status: 409, meaning: "The payment's currency is not the billing currency." },
  payment_not_succeeded: { status: 409, meaning: "The payment intent has not succeeded (yet)." },
  trigger_disabled: { status: 409, meaning: "Triggers: the trigger is disabled." },
  trigger_quota_exceeded: { status: 409, meaning: "Triggers: the user has as many triggers as allowed." },
  // 413: too large
  body_too_large: { status: 413, meaning: "The request body is larger than the limit." },
  code_too_large: { status: 413, meaning: "The action code is larger than the code limit." },
  params_too_large: { status: 413, meaning: "js_params is larger than the params limit." },
  write_too_large: { status: 413, meaning: "The write needs more gas than one transaction may use; nothing was sent." },
  // 415: wrong media type
  unsupported_media_type: { status: 415, meaning: "The body is not sent as JSON (Content-Type: application/json)." },
  unsupported_encoding: { status: 415, meaning: "The body's content or character encoding is not supported." },
  // 422: the action ran and failed
  action_failed: {
    status: 422,
    meaning:
      "The action ran and failed: it threw, ended at one of its limits, or its sandbox died (Chipotle answers 500; Vesta a 4xx, which clients do not retry as a server fault). The body keeps the run's answer beside the error: `response`, `logs`, `has_error: true`, `ipfs_id`; `error` holds the message and the JavaScript stack. The run may have acted (sent a transaction, fetched) before it failed: do not retry it blindly.",
  },
  // 429: slow down
  rate_limited: { status: 429, meaning: "Too many requests of this kind from this address; Retry-After says when to try again." },
  too_many_attempts: { status: 429, meaning: "The e-mail code took as many wrong guesses as allowed and is void: ask for a new one." },
  run_queue_full: { status: 429, meaning: "The share of the sandbox of the account (or of its payer) and its queue are full; Retry-After says when to try again." },
  write_queue_full: { status: 429, meaning: "The relayed writes of this account, or billed to its payer, fill their share of the service's payer wallets and its queue (or the service's queue is full); nothing was sent; Retry-After says when to try again." },
  trigger_queue_full: { status: 429, meaning: "Triggers: the trigger has as many runs waiting as allowed; Retry-After says when to try again." },
  // 5xx: our side
  internal_error: { status: 500, meaning: "The service failed; it has been logged, and nothing about it is shown." },
  chain_unavailable: { status: 503, meaning: "The chain's RPC node did not answer (down, refused, timed out, rate limited, or no gas price): nothing was read or sent; Retry-After says when to try again." },
  payer_not_authorized: { status: 503, meaning: "The service's payer is not authorized on the contract; the operator has been told." },
  payment_provider_unavailable: { status: 503, meaning: "The payment provider failed; nothing was done." },
  attestation_unavailable: { status: 503, meaning: "The attestation source (the TEE's guest agent) did not answer." },
  dashboard_not_built: { status: 503, meaning: "The dashboard is not built on this node." },
  mail_unavailable: { status: 503, meaning: "The mail server did not take the sign-in code (relayer) or sign-in link (triggers service); none is pending, try again shortly." },
  identity_busy: { status: 503, meaning: "The node holds as many pending sign-ins (codes, used nonces) as it keeps; nothing was done, try again shortly." },
  issuer_unavailable: { status: 503, meaning: "The OpenID issuer's key set (JWKS) could not be fetched; nothing was done, try again." },
  core_unavailable: { status: 503, meaning: "Triggers: the core service could not answer now; nothing was saved." },
  payers_unfunded: { status: 503, meaning: "Every payer wallet of the service is under its minimum balance (VESTA_PAYER_MIN_BALANCE_WEI): nothing was sent; the operator has been warned; Retry-After says when to try again." },
  shutting_down: { status: 503, meaning: "The service is stopping (SIGTERM) and took no new work: nothing was done; retry on another replica or once it is back." },
  interrupted: { status: 503, meaning: "The service stopped (its shutdown deadline passed) while this request was under way: part of its work may have been done (an action may have had effects and is charged the seconds it ran; a write may still land); check its outcome before retrying." },
  chain_timeout: { status: 504, meaning: "The transaction was not mined in time; it may still land." },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The one status of `code`. */
export type StatusOf<C extends ErrorCode> = (typeof ERROR_CODES)[C]["status"];

/** The status of `code`, from the catalogue. */
export const statusOf = <C extends ErrorCode>(code: C): StatusOf<C> => ERROR_CODES[code].status;

export const isErrorCode = (code: string): code is ErrorCode => Object.prototype.hasOwnProperty.call(ERROR_CODES, code);
