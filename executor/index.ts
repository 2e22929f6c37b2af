import path from "node:path";
import { ZeroAddress, type JsonRpcProvider } from "ethers";
import type { Logger } from "pino";
import type { IAccountConfig } from "../typechain-types";
import { jsonDeeperThan, tooDeepMessage } from "../protocol/json";
import { actionBytes } from "./code";
import { cidHash, computeCid } from "./cid";
import { CodeStore, DEFAULT_CODE_BYTES_PER_PAYER } from "./codeStore";
import { RunRefused } from "./errors";
import { createHost } from "./host";
import { PermissionCache, type Who } from "./permissions";
import { makePrivateDir } from "./sandbox/host/isolation";
import { defaultSandboxUser, processLauncher, type SandboxUser } from "./sandbox/host/launchers";
import { probeNetwork, type SandboxNetwork } from "./sandbox/host/network";
import { SandboxPool, type RunHooks } from "./sandbox/host/pool";
import { ModuleFetcher, type ImportConfig } from "./sandbox/host/modules";
import { DEFAULT_RPC_GAS_CAP, installRpcGuard } from "./sandbox/host/rpc-guard";
import { paramsProblem } from "./sandbox/wire/bounds";
import type { FairShare } from "./sandbox/host/fair-queue";
import type { KeyProvider } from "./keys/provider";
import { hex32 } from "../protocol/usageKeyShape";
import type { RunLimits, RunResult } from "./sandbox/types";
import { wasmBytesFor } from "./sandbox/wasm-memory";

const NO_RPC_URLS: ReadonlyMap<string, string> = new Map();

export type ExecutorOptions = {
  keys: KeyProvider;
  accountConfig: IAccountConfig;
  provider: JsonRpcProvider;
  logger: Logger;
  dataDir: string;
  /** PostgreSQL for the action code store (every replica reads what any stored); unset: `actions.sqlite` in dataDir. */
  databaseUrl?: string;
  limits: RunLimits;
  /** Sandbox processes (default: the CPU count). */
  workers?: number;
  /** The user of sandbox slot 0; slot i runs as uid + i, gid + i (default: 64000 when the relayer runs as root, else the relayer's own user for all). */
  sandboxUser?: SandboxUser;
  /** The OS memory ceiling of each sandbox process, in MB (default DEFAULT_SANDBOX_MEMORY_MB). */
  sandboxMemoryMb?: number;
  /** The network of each sandbox process (default: a namespace of its own when it can be had, see sandbox/host/network.ts). */
  sandboxNetwork?: SandboxNetwork;
  /** Each account's (and key's) share of the sandbox processes and queue. */
  fairShare?: Partial<FairShare>;
  permissionPollMs: number;
  /** How long a key the chain does not know is answered from memory, at most (see PermissionCache). */
  unknownKeyCacheMs?: number;
  /** Let actions fetch loopback/private addresses (development and tests only). */
  fetchAllowPrivate?: boolean;
  /** The JSON-RPC URL of each chain actions may use, by chain name (Lit.Actions.getRpcUrl; default none). */
  rpcUrls?: ReadonlyMap<string, string>;
  /**
   * What actions may make those URLs do (sandbox/host/rpc-guard.ts): the gas cap (default
   * DEFAULT_RPC_GAS_CAP) and the service's own accounts, whose transactions they may not send.
   * Installed for the process from start() to close().
   */
  rpcGuard?: { gasCap?: number; serviceAccounts: readonly string[] };
  /** The most action code bytes one payer keeps stored (default 256 MB; at least the code limit). */
  codeBytesPerPayer?: number;
  /** Where actions' imports come from, their limits and cache (default: jsDelivr, as Chipotle; see sandbox/host/modules.ts). */
  imports?: Partial<ImportConfig>;
};


/** `headers`: what the action finds in Lit.Headers (the request's x-request-id and x-correlation-id, as Chipotle). */
export type RunInput = { code?: string; ipfsId?: string; params?: unknown; headers?: Record<string, string> };

/**
 * A run checked as far as it can be without its code's CID: who asks, the CID it named (when it
 * named one, already permitted), the code it sent (checked for size and Unicode, not hashed yet),
 * its params as JSON.
 */
export type PreparedRun = {
  who: Who;
  ipfsId?: string;
  inline?: Uint8Array;
  paramsJson: string;
  headers?: Record<string, string>;
};

/**
 * Runs actions under the execution flow of spec 1, in two steps, each refusal as early as it can
 * be and before the work it spares: `prepare` checks what needs no code (the params, the code's
 * size and Unicode, and the permission for a CID the caller named: 403 before any key, hash or
 * read); then, once the caller admitted the run (billing), `execute` holds a place in the payer's
 * fair share of the sandbox (429 before any code is hashed or read), hashes inline code (and
 * checks its permission) or reads stored code by CID, stores inline code (the run is admitted),
 * and runs it (one bounded channel in, one out). Refusals are RunRefused domain errors; the HTTP
 * edge maps them to statuses (relayer/http/runRefusals.ts).
 */
export class Executor {
  readonly permissions: PermissionCache;
  /** The action code store: opened by start(). */
  codes!: CodeStore;
  private readonly pool: SandboxPool;
  private readonly walletCache = new Map<string, { apiKeyHash: bigint; derivationPath: bigint }>();
  private readonly modules: ModuleFetcher;
  private uninstallRpcGuard?: () => void;

  constructor(private readonly opts: ExecutorOptions) {
    makePrivateDir(opts.dataDir, opts.logger);
    this.permissions = new PermissionCache(opts.accountConfig, opts.provider, opts.logger, opts.permissionPollMs, undefined, opts.unknownKeyCacheMs);
    const user = opts.sandboxUser ?? defaultSandboxUser();
    if (!user) opts.logger.warn({ uid: process.getuid?.() }, "the relayer does not run as root: sandbox processes run as its own user, kept from its files by Node's permission model only (see Security model in the README)");
    const network = opts.sandboxNetwork ?? probeNetwork(process.env.PATH, user);
    if (network.mode === "shared") {
      const why = network.unavailable ?? "VESTA_SANDBOX_NETWORK=shared";
      opts.logger.warn({ reason: why }, "sandbox processes share the relayer's network: code that escaped QuickJS could open sockets past the fetch egress policy (see Security model in the README)");
    }
    this.modules = new ModuleFetcher(opts.imports, { allowPrivateNetworks: opts.fetchAllowPrivate ?? false });
    this.pool = new SandboxPool({
      size: opts.workers,
      logger: opts.logger,
      fairShare: opts.fairShare,
      // Each process's WASM maximum holds what a run of the configured memory limit grows to (a fixed 1 GiB failed every run past ~670 MB).
      wasmMaxBytes: wasmBytesFor(opts.limits.memoryBytes),
      launcher: processLauncher({ user, memoryMb: opts.sandboxMemoryMb, network }),
    });
  }

  /** Opens the action code store (migrating it), then follows the chain's permission events until `signal`. */
  async start(signal: AbortSignal): Promise<void> {
    const { opts } = this;
    this.codes = await CodeStore.open(
      { databaseUrl: opts.databaseUrl, sqliteFile: path.join(opts.dataDir, "actions.sqlite") },
      {
        bytesPerPayer: Math.max(opts.codeBytesPerPayer ?? DEFAULT_CODE_BYTES_PER_PAYER, opts.limits.maxCodeBytes),
        onMismatch: (cid, problem) => opts.logger.error({ cid, problem }, "action code store: a stored action does not match its CID; treating it as missing"),
        onUndecided: (cid, problem) =>
          opts.logger.warn({ cid, problem }, "action code store: could not decide whether evicted code still has an owner; its row stays until a payer stores and evicts it again"),
      },
    );
    const guard = opts.rpcGuard;
    this.uninstallRpcGuard = installRpcGuard({ gasCap: guard?.gasCap ?? DEFAULT_RPC_GAS_CAP, serviceAccounts: () => guard?.serviceAccounts ?? [] });
    await this.permissions.start(signal);
  }

  /** The CID of the action sent as `code` (checked against `ipfsId` when both are given) or named by `ipfsId`; stores and runs nothing. */
  async cidOf(input: { code?: string; ipfsId?: string }): Promise<string> {
    if (input.code === undefined) return this.named(input.ipfsId);
    return this.cidOfInline(actionBytes(input.code, this.opts.limits.maxCodeBytes), input.ipfsId);
  }

  /** Whether `who` may run action `cid` on its own (a group on which the key has execute lists it). */
  mayRun(who: Who, cid: string): Promise<boolean> {
    return this.permissions.allowed(who, cidHash(cid), ZeroAddress);
  }

  /** Checks everything a run needs that needs no code's CID (see the class); throws RunRefused. */
  async prepare(who: Who, input: RunInput): Promise<PreparedRun> {
    if (input.code === undefined) this.named(input.ipfsId); // missing_code when there is neither
    const inline = input.code === undefined ? undefined : actionBytes(input.code, this.opts.limits.maxCodeBytes);
    const paramsJson = this.paramsJson(input.params);
    if (input.ipfsId !== undefined) await this.permit(who, input.ipfsId);
    return { who, ipfsId: input.ipfsId, inline, paramsJson, ...(input.headers ? { headers: input.headers } : {}) };
  }

  /**
   * Runs a prepared (and admitted) run in its payer's fair share of the sandbox. Resolves a
   * RunResult for every outcome of the action; throws RunRefused: queue_full when the share and
   * queue are full (before anything else), then cid_mismatch / not_permitted for inline code, or
   * code_not_found for a CID with no stored code. `hooks.onStart` is called when the run leaves the
   * queue for a sandbox (billing records it: a run that never started is never charged).
   */
  async execute(run: PreparedRun, payer: string, hooks: RunHooks = {}): Promise<RunResult & { ipfsId: string }> {
    const { limits } = this.opts;
    const owner = { payer, account: hex32(run.who.accountHash), key: hex32(run.who.keyHash) };
    const place = this.pool.admit(owner); // 429 before any code is hashed or read
    try {
      let cid: string;
      let code: Uint8Array | undefined;
      if (run.inline) {
        cid = await this.cidOfInline(run.inline, run.ipfsId);
        if (run.ipfsId === undefined) await this.permit(run.who, cid);
        code = run.inline;
        await this.codes.put(cid, code, payer); // permitted, paid for and queued: stored
      } else {
        cid = run.ipfsId!;
        code = await this.codes.get(cid);
        if (code === undefined) throw new RunRefused("code_not_found", `no code is stored for ${cid}: send it once as \`code\``);
        await this.codes.touch(cid, payer);
      }
      const host = createHost(
        { keys: this.opts.keys, permissions: this.permissions, accountConfig: this.opts.accountConfig, walletCache: this.walletCache, fetchAllowPrivate: this.opts.fetchAllowPrivate ?? false, modules: this.modules, rpcUrls: this.opts.rpcUrls ?? NO_RPC_URLS },
        run.who,
        cid,
        limits,
      );
      const request = { code, ipfsId: cid, paramsJson: run.paramsJson, limits, imports: this.modules.config.source, ...(run.headers ? { headers: run.headers } : {}) };
      const result = await place.run(request, host, hooks);
      return { ...result, ipfsId: cid };
    } finally {
      place.release(); // a run that never reached the queue gives its place back (no-op once it did)
    }
  }

  /** The CID `ipfsId` names (refused when there is neither code nor CID). */
  private named(ipfsId: string | undefined): string {
    if (ipfsId === undefined) throw new RunRefused("missing_code", "send the action as `code` or name a stored one with `ipfs_id`");
    return ipfsId;
  }

  /** The CID of inline code's checked bytes, which must be `ipfsId` when the caller named one. */
  private async cidOfInline(bytes: Uint8Array, ipfsId: string | undefined): Promise<string> {
    const cid = await computeCid(bytes);
    if (ipfsId !== undefined && ipfsId !== cid) throw new RunRefused("cid_mismatch", `ipfs_id ${ipfsId} does not match the code, whose CID is ${cid}`);
    return cid;
  }

  /** 403 unless `who` may run `cid`. */
  private async permit(who: Who, cid: string): Promise<void> {
    if (await this.mayRun(who, cid)) return;
    if (who.isAccountKey && !(await this.opts.accountConfig.getAccount(who.accountHash)).managed) {
      throw new RunRefused("account_chain_secured", "this account is ChainSecured: its old account key no longer runs actions; use a usage key");
    }
    throw new RunRefused("not_permitted", `this key may not run action ${cid}: no group on which it has execute lists it`);
  }

  /**
   * js_params as JSON text, within maxJsonDepth (measured before anything recurses into them) and
   * then the sandbox's own rules for params (bounds.ts), so a request the pool would refuse never
   * gets this far.
   */
  private paramsJson(params: unknown): string {
    const { limits } = this.opts;
    if (jsonDeeperThan(params, limits.maxJsonDepth)) throw new RunRefused("params_too_deep", tooDeepMessage("js_params", limits.maxJsonDepth));
    let json: string | undefined;
    try {
      json = JSON.stringify(params ?? {});
    } catch {
      json = undefined; // a BigInt or a cycle: only possible for callers inside the process
    }
    const problem = json === undefined ? { message: "js_params is not JSON" } : paramsProblem(json, limits);
    if (problem) throw new RunRefused(problem.limit === "maxParamsBytes" ? "params_too_large" : problem.limit === "maxJsonDepth" ? "params_too_deep" : "params_invalid", problem.message);
    return json!;
  }

  /** The sandbox's load, for health checks and metrics: processes, those running, runs waiting, and how many may wait in all. */
  sandboxLoad(): { queued: number; queueLimit: number; busy: number; sandboxes: number } {
    const { queued, busy, sandboxes } = this.pool.stats();
    return { queued, busy, sandboxes, queueLimit: this.pool.fairShare.queueTotal };
  }

  /**
   * Runs in the sandboxes and runs waiting for one, counted by `classOf` their payer (the `payer`
   * given to execute): every class of `classes` is answered, 0 when it has none.
   */
  sandboxLoadBy<C extends string>(classes: readonly C[], classOf: (payer: string) => C): Record<C, { busy: number; queued: number }> {
    const by = Object.fromEntries(classes.map((c) => [c, { busy: 0, queued: 0 }])) as Record<C, { busy: number; queued: number }>;
    const { running, waiting } = this.pool.occupancy();
    for (const o of running) by[classOf(o.payer ?? o.account)].busy++;
    for (const o of waiting) by[classOf(o.payer ?? o.account)].queued++;
    return by;
  }

  async close(): Promise<void> {
    this.uninstallRpcGuard?.();
    await this.pool.close();
    await this.codes?.close();
  }
}
