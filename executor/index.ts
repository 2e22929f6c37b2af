import path from "node:path";
import { keccak256, toUtf8Bytes, ZeroAddress, type JsonRpcProvider } from "ethers";
import type { Logger } from "pino";
import type { AccountConfig } from "../typechain-types";
import { AppError } from "../relayer/errors";
import { computeCid } from "./cid";
import { CodeStore } from "./codeStore";
import { createHost } from "./host";
import { PermissionCache, type Who } from "./permissions";
import { SandboxPool } from "./sandbox/pool";
import type { KeyProvider } from "./keys/provider";
import type { RunLimits, RunResult } from "./sandbox/types";

export type ExecutorOptions = {
  keys: KeyProvider;
  accountConfig: AccountConfig;
  provider: JsonRpcProvider;
  logger: Logger;
  dataDir: string;
  limits: RunLimits;
  workers?: number;
  permissionPollMs: number;
  /** Let actions fetch loopback/private addresses (development and tests only). */
  fetchAllowPrivate?: boolean;
};

export type RunInput = {
  code?: string;
  ipfsId?: string;
  params?: unknown;
  /** Called once the run is permitted, right before it starts (billing refuses it here: 402). */
  beforeRun?: () => Promise<void>;
};

/**
 * Runs actions under the execution flow of spec 1: resolve the code (inline, stored by its CID,
 * or by `ipfsId`), check on chain that the key may run that CID (403 before any key is derived),
 * then run it in the sandbox with a host that re-checks every key request.
 */
export class Executor {
  readonly permissions: PermissionCache;
  readonly codes: CodeStore;
  private readonly pool: SandboxPool;
  private readonly walletCache = new Map<string, { apiKeyHash: bigint; derivationPath: bigint }>();

  constructor(private readonly opts: ExecutorOptions) {
    this.permissions = new PermissionCache(opts.accountConfig, opts.provider, opts.logger, opts.permissionPollMs);
    this.codes = new CodeStore(path.join(opts.dataDir, "actions.sqlite"));
    this.pool = new SandboxPool({ size: opts.workers, logger: opts.logger });
  }

  start(signal: AbortSignal): Promise<void> {
    return this.permissions.start(signal);
  }

  /** The CID of the action sent as `code` (checked against `ipfsId` when both are given) or named by `ipfsId`. */
  async cidOf(input: { code?: string; ipfsId?: string }): Promise<string> {
    const { code, ipfsId } = input;
    if (code === undefined && ipfsId === undefined) throw new AppError(400, "invalid_request", "send the action as `code` or name a stored one with `ipfs_id`");
    if (code === undefined) return ipfsId!;
    const size = Buffer.byteLength(code, "utf8");
    if (size > this.opts.limits.maxCodeBytes) throw new AppError(413, "code_too_large", `the action code is ${size} bytes; at most ${this.opts.limits.maxCodeBytes}`);
    const cid = await computeCid(code);
    if (ipfsId !== undefined && ipfsId !== cid) throw new AppError(400, "invalid_request", `ipfs_id ${ipfsId} does not match the code, whose CID is ${cid}`);
    return cid;
  }

  /** Whether `who` may run action `cid` on its own (a group on which the key has execute lists it). */
  mayRun(who: Who, cid: string): Promise<boolean> {
    return this.permissions.allowed(who, keccak256(toUtf8Bytes(cid)), ZeroAddress);
  }

  async run(who: Who, input: RunInput): Promise<RunResult & { ipfsId: string }> {
    const { limits } = this.opts;
    let code = input.code;
    const cid = await this.cidOf(input);
    const paramsJson = JSON.stringify(input.params ?? {});
    const paramsSize = Buffer.byteLength(paramsJson, "utf8");
    if (paramsSize > limits.maxParamsBytes) throw new AppError(413, "params_too_large", `js_params is ${paramsSize} bytes; at most ${limits.maxParamsBytes}`);

    if (!(await this.mayRun(who, cid))) {
      if (who.isAccountKey && !(await this.opts.accountConfig.getAccount(who.accountHash)).managed) {
        throw new AppError(403, "account_chain_secured", "this account is ChainSecured: its old account key no longer runs actions; use a usage key");
      }
      throw new AppError(403, "not_permitted", `this key may not run action ${cid}: no group on which it has execute lists it`);
    }
    if (code === undefined) {
      code = this.codes.get(cid);
      if (code === undefined) throw new AppError(404, "action_code_not_found", `no code is stored for ${cid}: send it once as \`code\``);
    } else {
      this.codes.put(cid, code);
    }
    await input.beforeRun?.();
    const host = createHost({ keys: this.opts.keys, permissions: this.permissions, accountConfig: this.opts.accountConfig, walletCache: this.walletCache, fetchAllowPrivate: this.opts.fetchAllowPrivate ?? false }, who, cid, limits);
    const result = await this.pool.run({ code, ipfsId: cid, params: input.params ?? {}, limits }, host);
    return { ...result, ipfsId: cid };
  }

  async close(): Promise<void> {
    await this.pool.close();
    this.codes.close();
  }
}
