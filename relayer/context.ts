import type { Logger } from "pino";
import type { RelayerConfig } from "./config";
import type { Chain } from "./chain/client";
import type { PayerPool } from "./chain/payers";
import type { KeyProvider } from "../executor/keys/provider";
import type { Executor } from "../executor";
import type { Billing } from "../billing/service";
import type { AuthFailureLimit } from "./http/authFailures";
import type { RunHistory } from "./runs/history";
import type { Identity } from "./identity/service";
import type { RelayerMetrics } from "./metrics";
import type { Drain } from "../protocol/ops/drain";

/** What every route and service receives. */
export type Ctx = {
  config: RelayerConfig;
  logger: Logger;
  chain: Chain;
  payers: PayerPool;
  keys: KeyProvider;
  executor: Executor;
  /** Credits and charges; absent when billing is off. */
  billing?: Billing;
  /** Every action run's record, per account (list_runs). */
  runs: RunHistory;
  /** Per client address: failed authentications, and lookups of keys not known yet. */
  authFailures: AuthFailureLimit;
  /** Identity sign-in (OpenID Connect, e-mail codes) and the sessions of identity-owned accounts. */
  identity: Identity;
  /** Prometheus metrics (GET /metrics). */
  metrics: RelayerMetrics;
  /** Graceful shutdown: requests, runs and writes under way (protocol/ops/drain.ts). */
  drain: Drain;
  signal: AbortSignal;
};
