import path from "node:path";
import fs from "node:fs";
import { getAddress, isHexString, Wallet } from "ethers";
import { z } from "zod";
import { DEFAULT_LIMITS, MAX_TIMEOUT_MS, type RunLimits } from "../executor/sandbox/types";
import { MAX_RUN_MEMORY_MB } from "../executor/sandbox/wasm-memory";
import type { FairShare } from "../executor/sandbox/host/fair-queue";
import { DEFAULT_SANDBOX_MEMORY_MB, defaultSandboxUser, type SandboxUser } from "../executor/sandbox/host/launchers";
import { chooseSandboxNetwork, probeNetwork, SANDBOX_NETWORKS, type SandboxNetwork } from "../executor/sandbox/host/network";
import { defaultSandboxCount } from "../executor/sandbox/host/pool";
import { DEFAULT_CODE_BYTES_PER_PAYER } from "../executor/codeStore";
import { DEFAULT_IMPORT_CONFIG, type ImportConfig } from "../executor/sandbox/host/modules";
import { DEFAULT_RPC_GAS_CAP } from "../executor/sandbox/host/rpc-guard";
import { checkedBase } from "../executor/sandbox/imports";
import { DEFAULT_MAX_JSON_DEPTH } from "../protocol/json";
import { DEFAULT_DOMAIN_NAME } from "../protocol/eip712";
import { DEFAULT_ERC1271 } from "./signed";
import { loadBillingConfig, type BillingConfig } from "../billing/config";
import { productionProblems, VESTA_MODES, type VestaMode } from "./mode";
import { bootProblemsMessage, MAX_REPLICAS, replicaProblems } from "../protocol/mode";
import { parseTrustProxy } from "../protocol/trustProxy";
import { parseExempt } from "./http/authFailures";
import { CHAIN_NAME } from "../protocol/chains";
import { loadIdentityConfig, type IdentityConfig } from "./identity/config";
import { metricsToken, shutdownDeadline } from "../protocol/ops/config";
import { DEFAULT_PAYER_WATCH, type PayerWatch } from "./chain/payerWatch";

const hexKey = z.string().refine((k) => isHexString(k.startsWith("0x") ? k : `0x${k}`, 32), "each payer key must be a 32-byte hex private key");

const EnvSchema = z
  .object({
    VESTA_MODE: z.enum(VESTA_MODES, { message: "VESTA_MODE must be development or production" }).default("production"),
    VESTA_RPC_URL: z.string().url("VESTA_RPC_URL must be a URL").optional(),
    VESTA_ACCOUNT_CONFIG_ADDRESS: z.string().optional(),
    VESTA_DEPLOYMENT_FILE: z.string().optional(),
    VESTA_PAYER_KEYS: z.string().optional(),
    VESTA_HOST: z.string().default("127.0.0.1"),
    VESTA_PORT: z.coerce.number().int("VESTA_PORT must be an integer").min(0).max(65535).default(8000),
    VESTA_KEY_PROVIDER: z.enum(["local", "dstack"], { message: "VESTA_KEY_PROVIDER must be local or dstack" }).optional(),
    VESTA_LOCAL_ROOT_SECRET_FILE: z.string().default(".vesta/root-secret"),
    VESTA_DSTACK_ENDPOINT: z.string().optional(),
    VESTA_BODY_LIMIT: z.string().default("256kb"),
    VESTA_MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(1000).default(DEFAULT_MAX_JSON_DEPTH),
    VESTA_TX_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
    VESTA_RECEIPT_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(100),
    VESTA_RPC_TIMEOUT_MS: z.coerce.number().int().min(100, "VESTA_RPC_TIMEOUT_MS must be >= 100").max(300_000, "VESTA_RPC_TIMEOUT_MS is at most 300000").default(15_000),
    VESTA_NEW_ACCOUNT_RATE_LIMIT: z.coerce.number().int().min(1).default(30),
    VESTA_SIGNATURE_RATE_LIMIT: z.coerce.number().int().min(1).default(60),
    VESTA_AUTH_FAILURE_RATE_LIMIT: z.coerce.number().int().min(1).default(60),
    VESTA_AUTH_FAILURE_EXEMPT: z.string().default(""),
    VESTA_UNKNOWN_KEY_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
    VESTA_CID_RATE_LIMIT: z.coerce.number().int().min(1).default(60),
    VESTA_CID_LARGE_RATE_LIMIT: z.coerce.number().int().min(1).default(6),
    VESTA_CID_LARGE_TOTAL_RATE_LIMIT: z.coerce.number().int().min(1).default(30),
    VESTA_ACTION_CODE_RATE_LIMIT: z.coerce.number().int().min(1).default(120),
    VESTA_AUDIT_RATE_LIMIT: z.coerce.number().int().min(1).default(30),
    VESTA_AUDIT_TOTAL_RATE_LIMIT: z.coerce.number().int().min(1).default(600),
    VESTA_TRUST_PROXY: z.string().optional(),
    VESTA_ERC1271_GAS_LIMIT: z.coerce.number().int().min(30_000, "VESTA_ERC1271_GAS_LIMIT must be >= 30000").max(10_000_000, "VESTA_ERC1271_GAS_LIMIT is at most 10000000").default(DEFAULT_ERC1271.gasLimit),
    VESTA_ERC1271_TIMEOUT_MS: z.coerce.number().int().min(100, "VESTA_ERC1271_TIMEOUT_MS must be >= 100").max(30_000, "VESTA_ERC1271_TIMEOUT_MS is at most 30000").default(DEFAULT_ERC1271.timeoutMs),
    VESTA_DATA_DIR: z.string().default(".vesta"),
    DATABASE_URL: z.string().min(1).optional(),
    VESTA_REPLICAS: z.coerce.number().int("VESTA_REPLICAS must be a whole number").min(1, "VESTA_REPLICAS must be at least 1").max(MAX_REPLICAS, `VESTA_REPLICAS is at most ${MAX_REPLICAS}`).default(1),
    VESTA_EIP712_DOMAIN_NAME: z.string().min(1).max(128).default(DEFAULT_DOMAIN_NAME),
    VESTA_ACTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(MAX_TIMEOUT_MS, `VESTA_ACTION_TIMEOUT_MS is at most ${MAX_TIMEOUT_MS} (15 min)`).default(DEFAULT_LIMITS.timeoutMs),
    VESTA_ACTION_MEMORY_MB: z.coerce
      .number()
      .int()
      .min(8)
      .max(MAX_RUN_MEMORY_MB, `VESTA_ACTION_MEMORY_MB is at most ${MAX_RUN_MEMORY_MB}: a run's WASM memory (1.5 times it, plus 32 MB) must fit the 2 GiB the sandbox's QuickJS build can hold`)
      .default(DEFAULT_LIMITS.memoryBytes / 1024 / 1024),
    VESTA_ACTION_MAX_FETCHES: z.coerce.number().int().min(0).max(10_000).default(DEFAULT_LIMITS.maxFetches),
    VESTA_ACTION_MAX_RESPONSE_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_LIMITS.maxResponseBytes),
    VESTA_ACTION_MAX_LOG_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_LIMITS.maxLogBytes),
    VESTA_ACTION_MAX_KEY_REQUESTS: z.coerce.number().int().min(0).max(10_000).default(DEFAULT_LIMITS.maxKeyRequests),
    VESTA_ACTION_MAX_PARAMS_BYTES: z.coerce.number().int().min(2).default(DEFAULT_LIMITS.maxParamsBytes),
    VESTA_ACTION_MAX_CODE_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_LIMITS.maxCodeBytes),
    VESTA_ACTION_MAX_FETCH_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_LIMITS.maxFetchBytes),
    VESTA_ACTION_RPC_URLS: z.string().optional(),
    VESTA_ACTION_RPC_GAS_CAP: z.coerce
      .number()
      .int("VESTA_ACTION_RPC_GAS_CAP must be a whole number")
      .min(21_000, "VESTA_ACTION_RPC_GAS_CAP must be at least 21000")
      .max(1_000_000_000, "VESTA_ACTION_RPC_GAS_CAP is at most 1000000000")
      .default(DEFAULT_RPC_GAS_CAP),
    VESTA_ACTION_FETCH_PRIVATE: z.enum(["true", "false"], { message: "VESTA_ACTION_FETCH_PRIVATE must be true or false" }).default("false"),
    VESTA_IMPORT_CDN_URL: z.string().max(1024).default(DEFAULT_IMPORT_CONFIG.source.base),
    VESTA_IMPORT_CDN_ENTRY: z
      .string()
      .max(64)
      .regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?$/, 'VESTA_IMPORT_CDN_ENTRY must be "" or a path starting with "/"')
      .default(DEFAULT_IMPORT_CONFIG.source.entry),
    // An answer carries a module as base64: at most 8 MiB fits the largest host answer (wire/bounds.ts).
    VESTA_IMPORT_MAX_MODULE_BYTES: z.coerce.number().int().min(1024).max(8 * 1024 * 1024).default(DEFAULT_IMPORT_CONFIG.maxModuleBytes),
    // The modules of a run live in its sandbox process's V8 heap (256 MB) while it runs.
    VESTA_IMPORT_MAX_RUN_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_IMPORT_CONFIG.maxRunBytes),
    VESTA_IMPORT_CACHE_BYTES: z.coerce.number().int().min(0).max(16 * 1024 * 1024 * 1024).default(DEFAULT_IMPORT_CONFIG.cacheBytes),
    VESTA_IMPORT_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_IMPORT_CONFIG.cacheEntries),
    VESTA_SANDBOX_WORKERS: z.coerce.number().int().min(1).max(256).optional(),
    VESTA_SANDBOX_UID: z.coerce.number().int().min(1, "VESTA_SANDBOX_UID must not be 0 (root)").max(4_294_967_294).optional(),
    VESTA_SANDBOX_GID: z.coerce.number().int().min(1, "VESTA_SANDBOX_GID must not be 0 (root)").max(4_294_967_294).optional(),
    VESTA_SANDBOX_MEMORY_MB: z.coerce.number().int().min(1).max(1_048_576).optional(),
    VESTA_SANDBOX_NETWORK: z.enum(SANDBOX_NETWORKS, { message: "VESTA_SANDBOX_NETWORK must be isolated or shared" }).optional(),
    VESTA_RUNS_PER_PAYER: z.coerce.number().int().min(1).max(256).optional(),
    VESTA_RUNS_PER_ACCOUNT: z.coerce.number().int().min(1).max(256).optional(),
    VESTA_RUNS_PER_KEY: z.coerce.number().int().min(1).max(256).optional(),
    VESTA_RUN_QUEUE_PER_PAYER: z.coerce.number().int().min(0).max(100_000).default(64),
    VESTA_RUN_QUEUE_PER_ACCOUNT: z.coerce.number().int().min(0).max(100_000).optional(),
    VESTA_RUN_QUEUE_MAX: z.coerce.number().int().min(0).max(1_000_000).default(1024),
    VESTA_WRITE_QUEUE_PER_PAYER: z.coerce.number().int().min(0).max(100_000).default(64),
    VESTA_RUN_HISTORY_DAYS: z.coerce.number().int("VESTA_RUN_HISTORY_DAYS must be an integer").min(0).max(3650, "VESTA_RUN_HISTORY_DAYS is at most 3650").default(30),
    VESTA_RUN_HISTORY_PER_ACCOUNT: z.coerce.number().int("VESTA_RUN_HISTORY_PER_ACCOUNT must be an integer").min(1).max(1_000_000, "VESTA_RUN_HISTORY_PER_ACCOUNT is at most 1000000").default(10_000),
    VESTA_CODE_STORE_BYTES_PER_PAYER: z.coerce.number().int().min(1024).default(DEFAULT_CODE_BYTES_PER_PAYER),
    VESTA_PERMISSION_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
    VESTA_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    VESTA_ATTESTATION_SOURCE: z.enum(["development", "dstack"], { message: "VESTA_ATTESTATION_SOURCE must be development or dstack" }).optional(),
    VESTA_APP_AUTH_ADDRESS: z.string().optional(),
    VESTA_ATTESTATION_DOMAIN: z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/, "VESTA_ATTESTATION_DOMAIN must be a domain name").default("localhost"),
    VESTA_EVIDENCE_DIR: z.string().default("/evidences"),
    VESTA_DASHBOARD_DIR: z.string().optional(),
    VESTA_TRIGGERS_URL: z.string().url("VESTA_TRIGGERS_URL must be a URL (the triggers service, for the dashboard)").optional(),
    VESTA_METRICS_TOKEN: metricsToken("VESTA_METRICS_TOKEN"),
    VESTA_SHUTDOWN_DEADLINE_MS: shutdownDeadline("VESTA_SHUTDOWN_DEADLINE_MS"),
    VESTA_PAYER_MIN_BALANCE_WEI: z.string().regex(/^[0-9]{1,40}$/, "VESTA_PAYER_MIN_BALANCE_WEI must be a whole number of wei").default(DEFAULT_PAYER_WATCH.minBalanceWei.toString()),
    VESTA_PAYER_CHECK_MS: z.coerce.number().int().min(1000, "VESTA_PAYER_CHECK_MS must be >= 1000").max(3_600_000).default(DEFAULT_PAYER_WATCH.checkMs),
    VESTA_TX_REPLACE_MS: z.coerce.number().int().min(1000, "VESTA_TX_REPLACE_MS must be >= 1000").max(3_600_000).default(DEFAULT_PAYER_WATCH.replaceAfterMs),
    VESTA_TX_FEE_BUMP_PERCENT: z.coerce.number().int().min(10, "VESTA_TX_FEE_BUMP_PERCENT must be >= 10 (nodes refuse smaller raises)").max(1000).default(DEFAULT_PAYER_WATCH.feeBumpPercent),
    VESTA_EXPLORER_URL: z
      .string()
      .url("VESTA_EXPLORER_URL must be a URL (the chain's block explorer, e.g. https://basescan.org)")
      .refine((u) => /^https?:\/\//.test(u), "VESTA_EXPLORER_URL must be an http(s) URL")
      .optional(),
    VESTA_AUDIT_FROM_BLOCK: z.coerce.number({ message: "VESTA_AUDIT_FROM_BLOCK must be a block number" }).int("VESTA_AUDIT_FROM_BLOCK must be a block number").min(0, "VESTA_AUDIT_FROM_BLOCK must be a block number").default(0),
    VESTA_COMMIT: z.string().regex(/^[0-9A-Za-z._-]{1,64}$/, "VESTA_COMMIT must be a commit id or version tag (letters, digits, . _ -; at most 64)").default("unknown"),
  })
  .passthrough();

/** Where `/info`, `/attestation` and `/evidences/` come from (see attestation/routes.ts). */
export type AttestationConfig = {
  /** "dstack": the TEE's guest agent and the ingress's evidence files; "development": made up, no TEE. */
  source: "development" | "dstack";
  /** The AppAuth contract; its address without 0x is the app id of the development evidence. */
  appAuthAddress?: string;
  /** Domain of the development evidence's self-signed certificate. */
  domain: string;
  /** Where the ingress writes the evidence files (dstack source). */
  evidenceDir: string;
};

export type RelayerConfig = {
  /** GET /metrics needs `Authorization: Bearer <this>`; unset: /metrics is not exposed (404). */
  metricsToken?: string;
  /** On SIGTERM, how long requests, runs and writes under way get to finish (then 503 shutting_down). */
  shutdownDeadlineMs: number;
  /** Payer balance threshold, pending-transaction replacement (relayer/chain/payerWatch.ts). */
  payerWatch: PayerWatch;
  /** development | production (see relayer/mode.ts): production refuses every development convenience at boot. */
  mode: VestaMode;
  rpcUrl: string;
  accountConfigAddress: string;
  payerKeys: string[];
  host: string;
  port: number;
  keyProvider: "local" | "dstack";
  localRootSecretFile: string;
  dstackEndpoint?: string;
  bodyLimit: string;
  /** Deepest nesting of any JSON input (request bodies, js_params) and of a run's response. */
  maxJsonDepth: number;
  txTimeoutMs: number;
  receiptPollMs: number;
  /** Longest wait for one JSON-RPC answer (then 503 chain_unavailable). */
  rpcTimeoutMs: number;
  newAccountRateLimitPerMinute: number;
  /** Per client address and minute, on every route that checks a signature (EIP-712 / ERC-1271). */
  signatureRateLimitPerMinute: number;
  /** Per client address and minute: failed authentications (and lookups of keys not known yet) before 429. */
  authFailureRateLimitPerMinute: number;
  /** Client addresses without that budget (a service that presents many users' keys: the triggers service). */
  authFailureExempt: string[];
  /** How long a key the chain does not know (or knows as revoked or expired) is answered 401 without asking again, unless an event names it. */
  unknownKeyCacheMs: number;
  /** Per client address and minute, on get_action_ipfs_id (unauthenticated hashing): any body, and bodies over 1 MiB. */
  cidRateLimitPerMinute: number;
  cidLargeRateLimitPerMinute: number;
  /** The same for bodies over 1 MiB from all clients together. */
  cidLargeTotalPerMinute: number;
  /** Per client address and minute, on get_action_code (unauthenticated reads of stored code). */
  codeReadRateLimitPerMinute: number;
  /** list_audit_events pages a minute per client, and for all clients together (each page up to 50 log queries, and a block and a transaction read per entry). */
  auditRateLimitPerMinute: number;
  auditTotalRateLimitPerMinute: number;
  /** Express `trust proxy`: which proxies may name the client in X-Forwarded-For (false: none). */
  trustProxy: false | number | string;
  /** Bounds of an ERC-1271 isValidSignature call into a contract the caller chose. */
  erc1271: { gasLimit: number; timeoutMs: number };
  logLevel: string;
  dataDir: string;
  /** PostgreSQL for the off-chain stores (storage/); unset: SQLite files in dataDir. */
  databaseUrl?: string;
  /** VESTA_REPLICAS: processes of this service in the deployment (more than one needs databaseUrl). */
  replicas: number;
  eip712DomainName: string;
  limits: RunLimits;
  sandboxWorkers?: number;
  /** The user of sandbox slot 0 (slot i runs as uid + i, gid + i; set when the relayer runs as root; see executor/sandbox/host/launchers.ts). */
  sandboxUser?: SandboxUser;
  /** The OS memory ceiling (RLIMIT_DATA) of each sandbox process, in MB. */
  sandboxMemoryMb: number;
  /** The network of each sandbox process: an empty namespace of its own, or the relayer's (see executor/sandbox/host/network.ts). */
  sandboxNetwork: SandboxNetwork;
  /** Each payer's (account's, key's) share of the sandbox: runs at a time, runs waiting (see executor/sandbox/host/fair-queue.ts). */
  fairShare: Partial<FairShare>;
  /** Run history (relayer/runs/history.ts): how long a run is kept (ms; 0 = none recorded), and the most kept per account. */
  runHistory: { retentionMs: number; perAccount: number };
  /** The most action code one payer keeps stored (executor/codeStore.ts). */
  codeBytesPerPayer: number;
  /** Relayed writes one billing payer may keep waiting for the payer wallets (relayer/chain/payers.ts). */
  writeQueuePerPayer: number;
  permissionPollMs: number;
  fetchAllowPrivate: boolean;
  /** Actions' imports: the CDN, the bytes of a module and of a run, the shared cache (executor/sandbox/host/modules.ts). */
  imports: ImportConfig;
  /**
   * The JSON-RPC URL of each chain actions may use, by chain name (VESTA_ACTION_RPC_URLS); undefined
   * when unset: then development gives actions the relayer's own chain, production none.
   */
  actionRpcUrls?: ReadonlyMap<string, string>;
  /** The most gas an action's eth_call / eth_estimateGas to those URLs executes, and the largest gas limit of a transaction it sends there. */
  actionRpcGasCap: number;
  attestation: AttestationConfig;
  billing: BillingConfig;
  /** Identity sign-in (OpenID Connect, e-mail codes) and its sessions (relayer/identity). */
  identity: IdentityConfig;
  /** The built dashboard (served at /dashboard/), and the triggers service it approves clients of. */
  dashboard: { dir: string; triggersUrl?: string; explorerUrl?: string };
  /** The first block the audit log (list_audit_events) scans: the contract's deployment block. */
  auditFromBlock: number;
  /** The commit the service was built from (VESTA_COMMIT), for GET /core/v1/version. */
  commit: string;
};

/**
 * VESTA_ACTION_RPC_URLS: `chain=url` pairs separated by commas (e.g. `base=https://mainnet.base.org,local=http://127.0.0.1:8545`;
 * empty: none). A problem as a string; undefined when unset.
 */
function parseActionRpcUrls(value: string | undefined): ReadonlyMap<string, string> | string | undefined {
  if (value === undefined) return undefined;
  const urls = new Map<string, string>();
  for (const entry of value.split(",").map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf("=");
    const name = entry.slice(0, Math.max(0, at)).trim();
    const url = entry.slice(at + 1).trim();
    if (!CHAIN_NAME.test(name)) return `VESTA_ACTION_RPC_URLS: ${JSON.stringify(entry.slice(0, 80))} is not chain=url (a chain name is lower case letters, digits and dashes)`;
    if (urls.has(name)) return `VESTA_ACTION_RPC_URLS: chain ${name} is listed twice`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return `VESTA_ACTION_RPC_URLS: the URL of ${name} is not a URL`;
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return `VESTA_ACTION_RPC_URLS: the URL of ${name} must be http or https`;
    urls.set(name, url);
  }
  return urls;
}

/**
 * Reads the relayer's configuration from the environment. Contract address and RPC URL come from
 * the variables or from a deployment file written by `npm start` / `npm run deploy`. Throws one
 * error that lists every problem.
 */
export function loadConfig(env: NodeJS.ProcessEnv): RelayerConfig {
  const parsed = EnvSchema.safeParse(env);
  const problems: string[] = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  // Report every bad variable, and keep checking the rest with the bad ones set aside.
  const rest = { ...env };
  const bad = new Set(parsed.success ? [] : parsed.error.issues.map((i) => String(i.path[0])));
  for (const name of bad) delete rest[name];
  const e = parsed.success ? parsed.data : EnvSchema.parse(rest);

  let deployment: { rpcUrl?: string; accountConfig?: string; appAuth?: string } = {};
  if (e.VESTA_DEPLOYMENT_FILE) {
    try {
      deployment = JSON.parse(fs.readFileSync(e.VESTA_DEPLOYMENT_FILE, "utf8"));
    } catch (err) {
      problems.push(`VESTA_DEPLOYMENT_FILE: cannot read ${e.VESTA_DEPLOYMENT_FILE} (${(err as Error).message})`);
    }
  }
  const rpcUrl = e.VESTA_RPC_URL ?? deployment.rpcUrl;
  if (!rpcUrl && !bad.has("VESTA_RPC_URL")) problems.push("VESTA_RPC_URL: required (or VESTA_DEPLOYMENT_FILE with rpcUrl)");
  let accountConfigAddress = "";
  const rawAddress = e.VESTA_ACCOUNT_CONFIG_ADDRESS ?? deployment.accountConfig;
  try {
    accountConfigAddress = getAddress(rawAddress ?? "");
  } catch {
    problems.push("VESTA_ACCOUNT_CONFIG_ADDRESS: required, a 0x address (or VESTA_DEPLOYMENT_FILE with accountConfig)");
  }
  const payerKeys = (e.VESTA_PAYER_KEYS ?? "").split(",").map((k) => k.trim()).filter(Boolean);
  if (payerKeys.length === 0) problems.push("VESTA_PAYER_KEYS: at least one payer private key (comma-separated hex)");
  for (const [i, k] of payerKeys.entries()) {
    if (!hexKey.safeParse(k).success) problems.push(`VESTA_PAYER_KEYS: entry ${i + 1} is not a 32-byte hex private key`);
  }
  if (new Set(payerKeys.map((k) => (isHexString(k.startsWith("0x") ? k : `0x${k}`, 32) ? new Wallet(k).address : k))).size !== payerKeys.length) {
    problems.push("VESTA_PAYER_KEYS: the same payer key is listed twice (each payer needs its own nonce queue)");
  }
  const mode = e.VESTA_MODE;
  const keyProvider = e.VESTA_KEY_PROVIDER ?? (mode === "production" ? "dstack" : "local");
  const attestationSource = e.VESTA_ATTESTATION_SOURCE ?? (keyProvider === "dstack" ? "dstack" : "development");
  const dstackUser = keyProvider === "dstack" ? "VESTA_KEY_PROVIDER" : attestationSource === "dstack" ? "VESTA_ATTESTATION_SOURCE" : undefined;
  if (dstackUser && !e.VESTA_DSTACK_ENDPOINT && !fs.existsSync("/var/run/dstack.sock")) {
    problems.push(`${dstackUser}=dstack: no /var/run/dstack.sock and no VESTA_DSTACK_ENDPOINT`);
  }
  let appAuthAddress: string | undefined;
  const rawAppAuth = e.VESTA_APP_AUTH_ADDRESS ?? deployment.appAuth;
  try {
    appAuthAddress = rawAppAuth ? getAddress(rawAppAuth) : undefined;
  } catch {
    problems.push("VESTA_APP_AUTH_ADDRESS: must be a 0x address (the AppAuth contract)");
  }
  const trustProxy = parseTrustProxy(e.VESTA_TRUST_PROXY);
  if (trustProxy.problem) problems.push(trustProxy.problem);
  const authFailureExempt = parseExempt(e.VESTA_AUTH_FAILURE_EXEMPT);
  if (authFailureExempt.problem) problems.push(authFailureExempt.problem);
  const nobody = defaultSandboxUser(); // set when the relayer runs as root
  const sandboxUser = nobody && { uid: e.VESTA_SANDBOX_UID ?? nobody.uid, gid: e.VESTA_SANDBOX_GID ?? nobody.gid };
  if (!sandboxUser && (e.VESTA_SANDBOX_UID !== undefined || e.VESTA_SANDBOX_GID !== undefined)) {
    problems.push("VESTA_SANDBOX_UID / VESTA_SANDBOX_GID: only a relayer running as root can start its sandbox processes as another user");
  }
  const workers = e.VESTA_SANDBOX_WORKERS ?? defaultSandboxCount();
  for (const [name, id] of [["VESTA_SANDBOX_UID", sandboxUser?.uid], ["VESTA_SANDBOX_GID", sandboxUser?.gid]] as const) {
    // Sandbox i runs as id + i: the whole range must be valid ids.
    if (id !== undefined && id + workers - 1 > 4_294_967_294) problems.push(`${name}: ${id} + ${workers} sandbox processes passes the largest id (4294967294)`);
  }
  // Room for a run's WASM memory (1.5 x its memory + 16 MB), the V8 heap (256 MB) and Node itself.
  const leastSandboxMb = 2 * e.VESTA_ACTION_MEMORY_MB + 512;
  const sandboxMemoryMb = e.VESTA_SANDBOX_MEMORY_MB ?? Math.max(DEFAULT_SANDBOX_MEMORY_MB, leastSandboxMb);
  if (sandboxMemoryMb < leastSandboxMb) problems.push(`VESTA_SANDBOX_MEMORY_MB must be at least ${leastSandboxMb} (twice VESTA_ACTION_MEMORY_MB, plus 512 MB for the V8 heap and Node)`);
  const network = chooseSandboxNetwork(e.VESTA_SANDBOX_NETWORK, mode === "production", () => probeNetwork(env.PATH, sandboxUser));
  if (network.problem) problems.push(network.problem);
  const fetchAllowPrivate = e.VESTA_ACTION_FETCH_PRIVATE === "true";
  let importBase = DEFAULT_IMPORT_CONFIG.source.base;
  try {
    importBase = checkedBase(e.VESTA_IMPORT_CDN_URL);
    if (mode === "production" && !importBase.startsWith("https:")) problems.push("VESTA_IMPORT_CDN_URL: production fetches modules over https only");
  } catch (err) {
    problems.push(`VESTA_IMPORT_CDN_URL: ${(err as Error).message}`);
  }
  const actionRpcUrls = parseActionRpcUrls(e.VESTA_ACTION_RPC_URLS);
  if (typeof actionRpcUrls === "string") problems.push(actionRpcUrls);
  if (mode === "production") problems.push(...productionProblems({ keyProvider, attestationSource, fetchAllowPrivate }));
  const billing = loadBillingConfig(env, mode);
  problems.push(...billing.problems);
  const identity = loadIdentityConfig(env, mode);
  problems.push(...identity.problems);
  problems.push(...replicaProblems(e.VESTA_REPLICAS, e.DATABASE_URL));
  if (problems.length) throw new Error(bootProblemsMessage("relayer", mode, Boolean(env.VESTA_MODE), problems));
  return {
    mode,
    rpcUrl: rpcUrl!,
    accountConfigAddress,
    payerKeys: payerKeys.map((k) => (k.startsWith("0x") ? k : `0x${k}`)),
    host: e.VESTA_HOST,
    port: e.VESTA_PORT,
    keyProvider,
    localRootSecretFile: e.VESTA_LOCAL_ROOT_SECRET_FILE,
    dstackEndpoint: e.VESTA_DSTACK_ENDPOINT,
    bodyLimit: e.VESTA_BODY_LIMIT,
    maxJsonDepth: e.VESTA_MAX_JSON_DEPTH,
    txTimeoutMs: e.VESTA_TX_TIMEOUT_MS,
    receiptPollMs: e.VESTA_RECEIPT_POLL_MS,
    rpcTimeoutMs: e.VESTA_RPC_TIMEOUT_MS,
    newAccountRateLimitPerMinute: e.VESTA_NEW_ACCOUNT_RATE_LIMIT,
    signatureRateLimitPerMinute: e.VESTA_SIGNATURE_RATE_LIMIT,
    authFailureRateLimitPerMinute: e.VESTA_AUTH_FAILURE_RATE_LIMIT,
    authFailureExempt: authFailureExempt.value,
    unknownKeyCacheMs: e.VESTA_UNKNOWN_KEY_CACHE_MS,
    cidRateLimitPerMinute: e.VESTA_CID_RATE_LIMIT,
    cidLargeRateLimitPerMinute: e.VESTA_CID_LARGE_RATE_LIMIT,
    cidLargeTotalPerMinute: e.VESTA_CID_LARGE_TOTAL_RATE_LIMIT,
    codeReadRateLimitPerMinute: e.VESTA_ACTION_CODE_RATE_LIMIT,
    auditRateLimitPerMinute: e.VESTA_AUDIT_RATE_LIMIT,
    auditTotalRateLimitPerMinute: e.VESTA_AUDIT_TOTAL_RATE_LIMIT,
    trustProxy: trustProxy.value,
    erc1271: { gasLimit: e.VESTA_ERC1271_GAS_LIMIT, timeoutMs: e.VESTA_ERC1271_TIMEOUT_MS },
    logLevel: e.VESTA_LOG_LEVEL,
    dataDir: e.VESTA_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    replicas: e.VESTA_REPLICAS,
    eip712DomainName: e.VESTA_EIP712_DOMAIN_NAME,
    limits: {
      memoryBytes: e.VESTA_ACTION_MEMORY_MB * 1024 * 1024,
      timeoutMs: e.VESTA_ACTION_TIMEOUT_MS,
      maxFetches: e.VESTA_ACTION_MAX_FETCHES,
      maxResponseBytes: e.VESTA_ACTION_MAX_RESPONSE_BYTES,
      maxLogBytes: e.VESTA_ACTION_MAX_LOG_BYTES,
      maxKeyRequests: e.VESTA_ACTION_MAX_KEY_REQUESTS,
      maxParamsBytes: e.VESTA_ACTION_MAX_PARAMS_BYTES,
      maxCodeBytes: e.VESTA_ACTION_MAX_CODE_BYTES,
      maxFetchBytes: e.VESTA_ACTION_MAX_FETCH_BYTES,
      maxJsonDepth: e.VESTA_MAX_JSON_DEPTH,
    },
    sandboxWorkers: e.VESTA_SANDBOX_WORKERS,
    sandboxUser,
    sandboxMemoryMb,
    sandboxNetwork: network.network,
    fairShare: {
      perPayer: e.VESTA_RUNS_PER_PAYER,
      perAccount: e.VESTA_RUNS_PER_ACCOUNT,
      perKey: e.VESTA_RUNS_PER_KEY,
      queuePerPayer: e.VESTA_RUN_QUEUE_PER_PAYER,
      queuePerAccount: e.VESTA_RUN_QUEUE_PER_ACCOUNT,
      queueTotal: e.VESTA_RUN_QUEUE_MAX,
    },
    runHistory: { retentionMs: e.VESTA_RUN_HISTORY_DAYS * 24 * 3600_000, perAccount: e.VESTA_RUN_HISTORY_PER_ACCOUNT },
    codeBytesPerPayer: e.VESTA_CODE_STORE_BYTES_PER_PAYER,
    writeQueuePerPayer: e.VESTA_WRITE_QUEUE_PER_PAYER,
    permissionPollMs: e.VESTA_PERMISSION_POLL_MS,
    fetchAllowPrivate,
    imports: {
      source: { base: importBase, entry: e.VESTA_IMPORT_CDN_ENTRY },
      maxModuleBytes: e.VESTA_IMPORT_MAX_MODULE_BYTES,
      maxRunBytes: e.VESTA_IMPORT_MAX_RUN_BYTES,
      cacheBytes: e.VESTA_IMPORT_CACHE_BYTES,
      cacheEntries: e.VESTA_IMPORT_CACHE_ENTRIES,
    },
    actionRpcUrls: typeof actionRpcUrls === "string" ? undefined : actionRpcUrls,
    actionRpcGasCap: e.VESTA_ACTION_RPC_GAS_CAP,
    attestation: { source: attestationSource, appAuthAddress, domain: e.VESTA_ATTESTATION_DOMAIN, evidenceDir: e.VESTA_EVIDENCE_DIR },
    billing: billing.config,
    identity: identity.config,
    dashboard: { dir: e.VESTA_DASHBOARD_DIR ?? DEFAULT_DASHBOARD_DIR, triggersUrl: e.VESTA_TRIGGERS_URL?.replace(/\/+$/, ""), explorerUrl: e.VESTA_EXPLORER_URL?.replace(/\/+$/, "") },
    auditFromBlock: e.VESTA_AUDIT_FROM_BLOCK,
    commit: e.VESTA_COMMIT,
    metricsToken: e.VESTA_METRICS_TOKEN,
    shutdownDeadlineMs: e.VESTA_SHUTDOWN_DEADLINE_MS,
    payerWatch: { minBalanceWei: BigInt(e.VESTA_PAYER_MIN_BALANCE_WEI), checkMs: e.VESTA_PAYER_CHECK_MS, replaceAfterMs: e.VESTA_TX_REPLACE_MS, feeBumpPercent: e.VESTA_TX_FEE_BUMP_PERCENT },
  };
}

/** Where `npm run build` puts the dashboard. */
export const DEFAULT_DASHBOARD_DIR = path.join(__dirname, "..", "dist", "dashboard");
