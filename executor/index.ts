import path from "node:path";
import { keccak256, toUtf8Bytes, ZeroAddress, type JsonRpcProvider } from "ethers";
import type { Logger } from "pino";
import type { IAccountConfig } from "../typechain-types";
import { jsonDeeperThan, tooDeepMessage } from "../protocol/json";
import { actionCode } from "./code";
import { CodeStore } from "./codeStore";
import { RunRefused } from "./errors";
import { createHost } from "./host";
import { PermissionCache, type Who } from "./permissions";
import { makePrivateDir } from "./sandbox/host/isolation";
import { defaultSandboxUser, processLauncher, type SandboxUser } from "./sandbox/host/launchers";
import { SandboxPool } from "./sandbox/host/pool";
import { paramsProblem } from "./sandbox/wire/bounds";
import type { FairShare } from "./sandbox/host/fair-queue";
import type { KeyProvider } from "./keys/provider";
import { hex32 } from "../protocol/usageKeyShape";
import type { RunLimits, RunResult } from "./sandbox/types";

export type ExecutorOptions = {
  keys: KeyProvider;
  accountConfig: IAccountConfig;
  provider: JsonRpcProvider;
  logger: Logger;
  dataDir: string;
  limits: RunLimits;
  /** Sandbox processes (default: the CPU count). */
  workers?: number;
  /** The user sandbox processes run as (default: nobody when the relayer runs as root, else the relayer's own). */
  sandboxUser?: SandboxUser;
  /** Each account's (and key's) share of the sandbox processes and queue. */
  fairShare?: Partial<FairShare>;
  permissionPollMs: number;
  /** How long a key the chain does not know is answered from memory, at most (see PermissionCache). */
  unknownKeyCacheMs?: number;
  /** Let actions fetch loopback/private addresses (development and tests only). */
  fetchAllowPrivate?: boolean;
};

export type RunInput = { code?: string; ipfsId?: string; params?: unknown };

/** A run that may start: its code (the bytes its CID names), its CID, its params as JSON, and who asked. */
export type PreparedRun = {
  who: Who;
  cid: string;
  code: Uint8Array;
  paramsJson: string;
  /** The code came inline and is stored by its CID once the run is admitted. */
  store: boolean;
};

/**
 * Runs actions under the execution flow of spec 1, in two steps with one home for each limit:
 * `prepare` (the code by CID and the CID check, the params, the on-chain permission: 403 before
 * any key is derived), then, once the caller admitted the run (billing), `execute` (the fair
 * queue, then the sandbox: one bounded channel in, one out). Refusals are RunRefused domain
 * errors; the HTTP edge maps them to statuses (relayer/http/runRefusals.ts).
 */
export class Executor {
  readonly permissions: PermissionCache;
  readonly codes: CodeStore;
  private readonly pool: SandboxPool;
  private readonly walletCache = new Map<string, { apiKeyHash: bigint; derivationPath: bigint }>();

  constructor(private readonly opts: ExecutorOptions) {
    makePrivateDir(opts.dataDir, opts.logger);
    this.permissions = new PermissionCache(opts.accountConfig, opts.provider, opts.logger, opts.permissionPollMs, undefined, opts.unknownKeyCacheMs);
    this.codes = new CodeStore(path.join(opts.dataDir, "actions.sqlite"), (cid, problem) =>
      opts.logger.error({ cid, problem }, "action code store: a stored action does not match its CID; treating it as missing"),
    );
    const user = opts.sandboxUser ?? defaultSandboxUser();
    if (!user) opts.logger.warn({ uid: process.getuid?.() }, "the relayer does not run as root: sandbox processes run as its own user, kept from its files by Node's permission model only (see Security model in the README)");
    this.pool = new SandboxPool({ size: opts.workers, logger: opts.logger, fairShare: opts.fairShare, launcher: processLauncher({ user }) });
  }

  start(signal: AbortSignal): Promise<void> {
    return this.permissions.start(signal);
  }

  /** The action sent as `code` (with its CID, checked against `ipfsId` when both are given), or the CID `ipfsId` names. */
  private async identify(input: { code?: string; ipfsId?: string }): Promise<{ cid: string; inline?: { bytes: Uint8Array } }> {
    if (input.code === undefined && input.ipfsId === undefined) throw new RunRefused("missing_code", "send the action as `code` or name a stored one with `ipfs_id`");
    if (input.code === undefined) return { cid: input.ipfsId! };
    const inline = await actionCode(input.code, this.opts.limits.maxCodeBytes);
    if (input.ipfsId !== undefined && input.ipfsId !== inline.cid) {
      throw new RunRefused("cid_mismatch", `ipfs_id ${input.ipfsId} does not match the code, whose CID is ${inline.cid}`);
    }
    return { cid: inline.cid, inline };
  }

  /** The CID of the action sent as `code` (checked against `ipfsId` when both are given) or named by `ipfsId`; stores and runs nothing. */
  async cidOf(input: { code?: string; ipfsId?: string }): Promise<string> {
    return (await this.identify(input)).cid;
  }

  /** Whether `who` may run action `cid` on its own (a group on which the key has execute lists it). */
  mayRun(who: Who, cid: string): Promise<boolean> {
    return this.permissions.allowed(who, keccak256(toUtf8Bytes(cid)), ZeroAddress);
  }

  /** Checks everything a run needs before it is admitted; throws RunRefused. */
  async prepare(who: Who, input: RunInput): Promise<PreparedRun> {
    const { cid, inline } = await this.identify(input);
    const paramsJson = this.paramsJson(input.params);
    if (!(await this.mayRun(who, cid))) {
      if (who.isAccountKey && !(await this.opts.accountConfig.getAccount(who.accountHash)).managed) {
        throw new RunRefused("account_chain_secured", "this account is ChainSecured: its old account key no longer runs actions; use a usage key");
      }
      throw new RunRefused("not_permitted", `this key may not run action ${cid}: no group on which it has execute lists it`);
    }
    const code = inline?.bytes ?? (await this.codes.get(cid));
    if (code === undefined) throw new RunRefused("code_not_found", `no code is stored for ${cid}: send it once as \`code\``);
    return { who, cid, code, paramsJson, store: inline !== undefined };
  }

  /**
   * Runs a prepared (and admitted) run in the sandbox, in its account's fair share. Resolves a
   * RunResult for every outcome of the action; throws RunRefused("queue_full") when the account's
   * share and queue are full.
   */
  async execute(run: PreparedRun): Promise<RunResult & { ipfsId: string }> {
    const { limits } = this.opts;
    if (run.store) this.codes.put(run.cid, run.code);
    const host = createHost(
      { keys: this.opts.keys, permissions: this.permissions, accountConfig: this.opts.accountConfig, walletCache: this.walletCache, fetchAllowPrivate: this.opts.fetchAllowPrivate ?? false },
      run.who,
      run.cid,
      limits,
    );
    const owner = { account: hex32(run.who.accountHash), key: hex32(run.who.keyHash) };
    const result = await this.pool.run({ code: run.code, ipfsId: run.cid, paramsJson: run.paramsJson, limits }, host, owner);
    return { ...result, ipfsId: run.cid };
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

  /** The sandbox's load, for health checks: runs waiting, and how many may wait in all. */
  sandboxLoad(): { queued: number; queueLimit: number; busy: number } {
    const { queued, busy } = this.pool.stats();
    return { queued, busy, queueLimit: this.pool.fairShare.queueTotal };
  }

  async close(): Promise<void> {
    await this.pool.close();
    this.codes.close();
  }
}
