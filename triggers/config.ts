import { metricsToken, shutdownDeadline } from "../protocol/ops/config";
import { z } from "zod";
import { parseTrustProxy } from "../protocol/trustProxy";
import { bootProblemsMessage, MAX_REPLICAS, replicaProblems, VESTA_MODES, type VestaMode } from "../protocol/mode";
import { readSmtp, type SmtpConfig } from "../protocol/smtp";

import { CHAINS, type ChainName } from "./chains";

export { CHAINS, type ChainName };

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);

const EnvSchema = z.object({
  VESTA_MODE: z.enum(VESTA_MODES, { message: "VESTA_MODE must be development or production" }).default("production"),
  VESTA_REPLICAS: int(1, MAX_REPLICAS).default(1),
  TRIGGERS_HOST: z.string().default("127.0.0.1"),
  TRIGGERS_PORT: int(0, 65535).default(8100),
  TRIGGERS_PUBLIC_URL: z.string().url("TRIGGERS_PUBLIC_URL must be a URL").optional(),
  TRIGGERS_CORE_URL: z.url({ protocol: /^https?$/, error: "TRIGGERS_CORE_URL must be the core service's base URL, e.g. http://127.0.0.1:8000" }),
  TRIGGERS_DASHBOARD_URL: z.url({ protocol: /^https?$/, error: "TRIGGERS_DASHBOARD_URL must be the dashboard's http(s) URL, e.g. http://127.0.0.1:8000/dashboard/" }).optional(),
  TRIGGERS_DATA_DIR: z.string().default(".vesta/triggers"),
  TRIGGERS_SECRET_KEY: z.string().regex(/^(0x)?[0-9a-fA-F]{64}$/, "TRIGGERS_SECRET_KEY must be 32 bytes of hex").optional(),
  TRIGGERS_SECRET_FILE: z.string().optional(),
  TRIGGERS_METRICS_TOKEN: metricsToken("TRIGGERS_METRICS_TOKEN"),
  TRIGGERS_SMTP_URL: z.string().optional(),
  TRIGGERS_EMAIL_FROM: z.string().max(254).optional(),
  TRIGGERS_SHUTDOWN_DEADLINE_MS: shutdownDeadline("TRIGGERS_SHUTDOWN_DEADLINE_MS"),
  TRIGGERS_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  TRIGGERS_WEBHOOK_BODY_LIMIT: z.string().default("32kb"),
  TRIGGERS_MAX_RUN_PARAMS_BYTES: int(1024).default(64 * 1024),
  TRIGGERS_MAX_QUEUED_PER_TRIGGER: int(1).default(100),
  TRIGGERS_RUNS_KEPT_PER_TRIGGER: int(1).default(1000),
  TRIGGERS_MAX_CHAIN_EVENT_PER_USER: int(0).default(10),
  TRIGGERS_MAX_BACKFILL_BLOCKS: int(0).default(100_000),
  TRIGGERS_API_BODY_LIMIT: z.string().default("2mb"),
  TRIGGERS_MAX_JSON_DEPTH: int(2, 1000).default(60),
  TRIGGERS_TRUST_PROXY: z.string().optional(),
  TRIGGERS_MAX_PER_USER: int(1).default(100),
  TRIGGERS_MAX_STORED_RESPONSE_BYTES: int(1024).default(256 * 1024),
  TRIGGERS_LOGIN_RATE_PER_ADDRESS: int(1).default(5),
  TRIGGERS_LOGIN_RATE_PER_IP: int(1).default(20),
  TRIGGERS_LOGIN_RATE_WINDOW_MS: int(1000).default(15 * 60_000),
  TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: int(1).default(60),
  TRIGGERS_WEBHOOK_RATE_PER_IP: int(1).default(120),
  TRIGGERS_RATE_WINDOW_MS: int(100).default(60_000),
  TRIGGERS_SCHEDULER_SCAN_MS: int(10).default(30_000),
  TRIGGERS_CHAIN_POLL_MS: int(10).default(5_000),
  TRIGGERS_CHAIN_MAX_RANGE: int(1).default(2_000),
  TRIGGERS_CONFIRMATIONS: int(0, 1000).default(2),
  TRIGGERS_WORKERS: int(1, 256).default(4),
  TRIGGERS_QUEUE_POLL_MS: int(5).default(500),
  TRIGGERS_RETRY_BASE_MS: int(1).default(1_000),
  TRIGGERS_CORE_TIMEOUT_MS: int(100).default(15 * 60_000 + 30_000),
  TRIGGERS_RPC_TIMEOUT_MS: int(100, 300_000).default(15_000),
  TRIGGERS_RPC_ETHEREUM: z.string().url().optional(),
  TRIGGERS_RPC_BASE: z.string().url().optional(),
  TRIGGERS_RPC_ARBITRUM: z.string().url().optional(),
  TRIGGERS_RPC_BSC: z.string().url().optional(),
  TRIGGERS_RPC_POLYGON: z.string().url().optional(),
  DATABASE_URL: z.string().optional(),
  TRIGGERS_HEARTBEAT_MS: int(50, 600_000).default(10_000),
});

export type TriggersConfig = {
  /** VESTA_MODE (protocol/mode.ts); production is the default. */
  mode: VestaMode;
  /** VESTA_REPLICAS: triggers processes in the deployment (more than one needs databaseUrl and TRIGGERS_SECRET_KEY). */
  replicas: number;
  host: string;
  port: number;
  publicUrl?: string;
  coreUrl: string;
  /** The web dashboard (a directory URL ending in "/"): its origin may call the session and approval endpoints. */
  dashboardUrl: string;
  dataDir: string;
  secretKeyHex?: string;
  secretFile: string;
  logLevel: string;
  /**
   * Sign-in links go by e-mail through this SMTP server (TRIGGERS_SMTP_URL, TRIGGERS_EMAIL_FROM);
   * required in production. Unset (development only): links are printed to the log.
   */
  smtp?: SmtpConfig;
  /** GET /metrics needs `Authorization: Bearer <this>`; unset: /metrics is not exposed (404). */
  metricsToken?: string;
  /** On SIGTERM, how long requests and runs under way get to finish. */
  shutdownDeadlineMs: number;
  webhookBodyLimit: string;
  /** Largest body of the /api routes (a trigger with its action code). */
  apiBodyLimit: string;
  /** Deepest nesting of any JSON input (webhook bodies, default_params, config): a run's js_params are 2 levels deeper. */
  maxJsonDepth: number;
  /** Express's `trust proxy`: which proxies may name the client in X-Forwarded-For (false: nobody). */
  trustProxy: false | number | string;
  /** Triggers one user may have. */
  maxTriggersPerUser: number;
  /** Largest response stored for a run (as JSON); a larger one is stored cut, and says so. */
  maxStoredResponseBytes: number;
  /** A run's params as JSON (what the core receives as js_params): larger webhook events are refused at the edge (413). */
  maxRunParamsBytes: number;
  /** Runs of one trigger waiting at once: a webhook call past it answers 429. */
  maxQueuedPerTrigger: number;
  /** Finished runs kept per trigger (the oldest are deleted). */
  runsKeptPerTrigger: number;
  /** Chain-event triggers per user (each polls a chain). */
  maxChainEventPerUser: number;
  /** How far back a chain-event trigger's start_block may be, in blocks. */
  maxBackfillBlocks: number;
  /** Login mails per address and per client address, per window. */
  loginRatePerAddress: number;
  loginRatePerIp: number;
  loginRateWindowMs: number;
  ratePerTrigger: number;
  ratePerIp: number;
  rateWindowMs: number;
  schedulerScanMs: number;
  chainPollMs: number;
  chainMaxRange: number;
  confirmations: number;
  workers: number;
  queuePollMs: number;
  retryBaseMs: number;
  coreTimeoutMs: number;
  rpc: Partial<Record<ChainName, string>>;
  /** Longest wait for one JSON-RPC answer of a chain (then 503 chain_unavailable, or the next poll). */
  rpcTimeoutMs: number;
  databaseUrl?: string;
  /**
   * PostgreSQL: how often each process says it is alive; a run claimed by a process not heard from
   * for three of these is failed as interrupted (by any process, checked as often).
   */
  heartbeatMs: number;
};

/** `url` without query or fragment, its path ending in "/" (so that it is a prefix of the pages under it). */
function directoryUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname.replace(/\/?$/, "/")}`;
}

/**
 * The mail transport of sign-in links. A magic link is the only way a user signs in (to approve a
 * client), and whoever reads it signs in as that user: production sends it by SMTP over TLS and
 * refuses to boot without a transport; development prints it to the log unless SMTP is set.
 */
function smtpSettings(e: z.infer<typeof EnvSchema>, problems: string[]): SmtpConfig | undefined {
  if (!e.TRIGGERS_SMTP_URL && e.VESTA_MODE === "development") {
    if (e.TRIGGERS_EMAIL_FROM) problems.push("TRIGGERS_EMAIL_FROM is set without TRIGGERS_SMTP_URL (sign-in links would be printed to the log)");
    return undefined;
  }
  const needs = e.VESTA_MODE === "production" ? "production (sign-in links go by e-mail, never to the log)" : "sending sign-in links by e-mail";
  return readSmtp({ url: e.TRIGGERS_SMTP_URL, from: e.TRIGGERS_EMAIL_FROM }, { url: "TRIGGERS_SMTP_URL", from: "TRIGGERS_EMAIL_FROM", needs, purpose: "sign-in links" }, e.VESTA_MODE, problems);
}

/** Reads the environment; a bad one throws one message listing every problem. */
export function loadTriggersConfig(env: Record<string, string | undefined> = process.env): TriggersConfig {
  const r = EnvSchema.safeParse(env);
  const mode: VestaMode = env.VESTA_MODE === "development" ? "development" : "production";
  if (!r.success) throw new Error(bootProblemsMessage("triggers", mode, Boolean(env.VESTA_MODE), r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`)));
  const e = r.data;
  const trustProxy = parseTrustProxy(e.TRIGGERS_TRUST_PROXY, "TRIGGERS_TRUST_PROXY");
  const problems = [...(trustProxy.problem ? [trustProxy.problem] : []), ...replicaProblems(e.VESTA_REPLICAS, e.DATABASE_URL)];
  if (e.VESTA_REPLICAS > 1 && !e.TRIGGERS_SECRET_KEY) {
    problems.push(`TRIGGERS_SECRET_KEY: required with VESTA_REPLICAS=${e.VESTA_REPLICAS} (every replica must open the usage keys any of them sealed; a key file is per process)`);
  }
  if (e.VESTA_MODE === "production" && !e.TRIGGERS_PUBLIC_URL?.startsWith("https://")) {
    problems.push("TRIGGERS_PUBLIC_URL: production needs the service's public https URL (webhook and sign-in links are built from it)");
  }
  const smtp = smtpSettings(e, problems);
  if (problems.length) throw new Error(bootProblemsMessage("triggers", e.VESTA_MODE, Boolean(env.VESTA_MODE), problems));
  const rpc: Partial<Record<ChainName, string>> = {};
  for (const c of CHAINS) {
    const url = e[`TRIGGERS_RPC_${c.toUpperCase()}` as keyof typeof e] as string | undefined;
    if (url) rpc[c] = url;
  }
  return {
    mode: e.VESTA_MODE,
    replicas: e.VESTA_REPLICAS,
    host: e.TRIGGERS_HOST,
    port: e.TRIGGERS_PORT,
    publicUrl: e.TRIGGERS_PUBLIC_URL?.replace(/\/$/, ""),
    coreUrl: e.TRIGGERS_CORE_URL.replace(/\/$/, "").replace(/\/core\/v1$/, ""),
    dashboardUrl: directoryUrl(e.TRIGGERS_DASHBOARD_URL ?? `${new URL(e.TRIGGERS_CORE_URL).origin}/dashboard/`),
    dataDir: e.TRIGGERS_DATA_DIR,
    secretKeyHex: e.TRIGGERS_SECRET_KEY?.replace(/^0x/, ""),
    secretFile: e.TRIGGERS_SECRET_FILE ?? `${e.TRIGGERS_DATA_DIR}/secret-key`,
    logLevel: e.TRIGGERS_LOG_LEVEL,
    smtp,
    metricsToken: e.TRIGGERS_METRICS_TOKEN,
    shutdownDeadlineMs: e.TRIGGERS_SHUTDOWN_DEADLINE_MS,
    webhookBodyLimit: e.TRIGGERS_WEBHOOK_BODY_LIMIT,
    apiBodyLimit: e.TRIGGERS_API_BODY_LIMIT,
    maxJsonDepth: e.TRIGGERS_MAX_JSON_DEPTH,
    trustProxy: trustProxy.value,
    maxTriggersPerUser: e.TRIGGERS_MAX_PER_USER,
    maxStoredResponseBytes: e.TRIGGERS_MAX_STORED_RESPONSE_BYTES,
    maxRunParamsBytes: e.TRIGGERS_MAX_RUN_PARAMS_BYTES,
    maxQueuedPerTrigger: e.TRIGGERS_MAX_QUEUED_PER_TRIGGER,
    runsKeptPerTrigger: e.TRIGGERS_RUNS_KEPT_PER_TRIGGER,
    maxChainEventPerUser: e.TRIGGERS_MAX_CHAIN_EVENT_PER_USER,
    maxBackfillBlocks: e.TRIGGERS_MAX_BACKFILL_BLOCKS,
    loginRatePerAddress: e.TRIGGERS_LOGIN_RATE_PER_ADDRESS,
    loginRatePerIp: e.TRIGGERS_LOGIN_RATE_PER_IP,
    loginRateWindowMs: e.TRIGGERS_LOGIN_RATE_WINDOW_MS,
    ratePerTrigger: e.TRIGGERS_WEBHOOK_RATE_PER_TRIGGER,
    ratePerIp: e.TRIGGERS_WEBHOOK_RATE_PER_IP,
    rateWindowMs: e.TRIGGERS_RATE_WINDOW_MS,
    schedulerScanMs: e.TRIGGERS_SCHEDULER_SCAN_MS,
    chainPollMs: e.TRIGGERS_CHAIN_POLL_MS,
    chainMaxRange: e.TRIGGERS_CHAIN_MAX_RANGE,
    confirmations: e.TRIGGERS_CONFIRMATIONS,
    workers: e.TRIGGERS_WORKERS,
    queuePollMs: e.TRIGGERS_QUEUE_POLL_MS,
    retryBaseMs: e.TRIGGERS_RETRY_BASE_MS,
    coreTimeoutMs: e.TRIGGERS_CORE_TIMEOUT_MS,
    rpc,
    rpcTimeoutMs: e.TRIGGERS_RPC_TIMEOUT_MS,
    databaseUrl: e.DATABASE_URL,
    heartbeatMs: e.TRIGGERS_HEARTBEAT_MS,
  };
}
