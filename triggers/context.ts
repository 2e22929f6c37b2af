import type { Logger } from "pino";
import type { JsonRpcProvider } from "ethers";
import type { ChainName, TriggersConfig } from "./config";
import type { Store } from "./store/types";
import type { TriggersMetrics } from "./metrics";

/** Sends a magic login link; in local mode it is printed to the log. */
/** Sends a sign-in link; `log`: the logger of the request that asked (its ids on the mailer's line). */
export type Mailer = (email: string, link: string, log?: Logger) => void | Promise<void>;

export type TriggersCtx = {
  config: TriggersConfig;
  logger: Logger;
  store: Store;
  signal: AbortSignal;
  secretKey: Buffer;
  /** The clock; tests drive it. */
  now: () => number;
  mailer: Mailer;
  providers: Partial<Record<ChainName, JsonRpcProvider>>;
  /** Wakes the run workers (called after each enqueue). */
  wake: () => void;
  publicUrl: () => string;
  /** Prometheus metrics (GET /metrics). */
  metrics: TriggersMetrics;
};
