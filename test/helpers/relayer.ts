import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import hre, { ethers, ignition } from "hardhat";
import { HDNodeWallet, keccak256, toUtf8Bytes } from "ethers";
import { computeCid } from "../../executor/cid";
import pino, { type Logger } from "pino";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import AccountConfigModule from "../../ignition/modules/AccountConfig";
import { loadConfig, type RelayerConfig } from "../../relayer/config";
import { startRelayer, type RunningRelayer } from "../../relayer/server";
import type { AccountConfig } from "./accountConfig";

/** Private keys of the in-process chain's accounts (its well-known test mnemonic). */
export function chainKeys(from: number, count: number): string[] {
  const a = hre.network.config.accounts as { mnemonic: string; path: string };
  return Array.from({ length: count }, (_, i) => HDNodeWallet.fromPhrase(a.mnemonic, undefined, `${a.path}/${from + i}`).privateKey);
}

export type Stack = {
  rpcUrl: string;
  config: AccountConfig;
  relayer: RunningRelayer;
  api: string;
  relayerConfig: RelayerConfig;
  /** Starts another relayer on the same chain and contract (e.g. after `restart`). */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * The relayer environment of startStack (also for relayer processes started beside it, e.g.
 * replicas): development mode on the chain at `rpcUrl`, its data and root secret in `dataDir`.
 */
export function stackEnv(p: { rpcUrl: string; accountConfig: string; payerKeys: string[]; dataDir: string }): Record<string, string> {
  return {
    VESTA_MODE: "development", // local keys, development evidence, local billing; production is tested by loadConfig tests
    VESTA_RPC_URL: p.rpcUrl,
    VESTA_ACCOUNT_CONFIG_ADDRESS: p.accountConfig,
    VESTA_PAYER_KEYS: p.payerKeys.join(","),
    VESTA_PORT: "0",
    VESTA_LOCAL_ROOT_SECRET_FILE: path.join(p.dataDir, "root-secret"),
    VESTA_DATA_DIR: p.dataDir,
    VESTA_PERMISSION_POLL_MS: "100",
    VESTA_SANDBOX_WORKERS: "2",
    VESTA_ACTION_FETCH_PRIVATE: "true", // test servers live on 127.0.0.1
    VESTA_NEW_ACCOUNT_RATE_LIMIT: "10000",
    VESTA_SIGNATURE_RATE_LIMIT: "10000", // the limit's own tests set theirs
    VESTA_AUTH_FAILURE_RATE_LIMIT: "10000",
    VESTA_IDENTITY_RATE_LIMIT: "10000",
    VESTA_CID_RATE_LIMIT: "10000",
    VESTA_CID_LARGE_RATE_LIMIT: "10000",
    VESTA_CID_LARGE_TOTAL_RATE_LIMIT: "10000",
    // Billing in local mode with credit no test exhausts; billing tests pass the Stripe double's env (see stripeDouble.ts).
    VESTA_BILLING: "local",
    VESTA_FREE_CREDIT_CENTS: "1000000000",
    VESTA_FREE_CREDIT_CAP_CENTS: "2000000000", // top-ups stay possible above that credit (the cap's own tests set theirs)
    // Writes cost their fixed price only (the local chain's gas priced at 0); gas-pricing tests set VESTA_GAS_TOKEN_PRICE_CENTS.
    VESTA_GAS_TOKEN_PRICE_CENTS: "0",
  };
}

/**
 * The real stack over loopback: the in-process Hardhat chain served over JSON-RPC, AccountConfig
 * deployed through Ignition with `payerCount` payers (accounts 1..N), and the relayer on a free port.
 * Tests that use it must not revert chain snapshots under it (no loadFixture in the same file).
 */
export async function startStack(opts: { payerCount?: number; env?: Record<string, string>; logger?: Logger } = {}): Promise<Stack> {
  const payerCount = opts.payerCount ?? 4;
  const server = await hre.run(TASK_NODE_CREATE_SERVER, { hostname: "127.0.0.1", port: 0, provider: hre.network.provider });
  const { port } = await server.listen();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const [owner] = await ethers.getSigners();
  const payerKeys = chainKeys(1, payerCount);
  const payerAddresses = payerKeys.map((k) => new ethers.Wallet(k).address);
  const { accountConfig } = await ignition.deploy(AccountConfigModule, {
    parameters: { AccountConfigModule: { owner: owner.address, adminApiPayer: owner.address, apiPayers: payerAddresses } },
  });
  const config = accountConfig as unknown as AccountConfig;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-relayer-"));
  const relayerConfig = loadConfig({ ...stackEnv({ rpcUrl, accountConfig: await config.getAddress(), payerKeys, dataDir }), ...opts.env });
  const logger = opts.logger ?? pino({ level: process.env.VESTA_TEST_LOG_LEVEL ?? "silent" });
  const stack: Stack = {
    rpcUrl,
    config,
    relayerConfig,
    relayer: await startRelayer(relayerConfig, logger),
    api: "",
    restart: async () => {
      await stack.relayer.close();
      stack.relayer = await startRelayer(relayerConfig, logger);
      stack.api = `${stack.relayer.url}/core/v1`;
    },
    stop: async () => {
      await stack.relayer.close();
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  stack.api = `${stack.relayer.url}/core/v1`;
  return stack;
}

export type Reply<T = any> = { status: number; body: T };

/** One HTTP call to the API: JSON in, JSON out. */
export async function call<T = any>(
  stack: Stack,
  method: "GET" | "POST",
  pathAndQuery: string,
  opts: { key?: string; bearer?: boolean; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers[opts.bearer ? "authorization" : "x-api-key"] = opts.bearer ? `Bearer ${opts.key}` : opts.key;
  if (opts.body !== undefined || opts.rawBody !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${stack.api}${pathAndQuery}`, {
    method,
    headers,
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: body as T };
}

/** Creates an account through the API and returns its key and admin wallet. */
export async function newAccount(stack: Stack, name = "test account"): Promise<{ apiKey: string; wallet: string }> {
  const r = await call(stack, "POST", "/new_account", { body: { account_name: name } });
  if (r.status !== 200) throw new Error(`new_account: ${r.status} ${JSON.stringify(r.body)}`);
  return { apiKey: r.body.api_key, wallet: r.body.wallet_address };
}

/** A usage key with execute on a new group listing the CIDs of `codes` (made with the account key `apiKey`). */
export async function usageKeyFor(stack: Stack, apiKey: string, codes: string[]): Promise<{ usageKey: string; groupId: string }> {
  const cids = await Promise.all(codes.map((c) => computeCid(c)));
  const g = await call(stack, "POST", "/add_group", {
    key: apiKey,
    body: { group_name: "triggers", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: cids.map((c) => keccak256(toUtf8Bytes(c))) },
  });
  if (g.status !== 200) throw new Error(`add_group: ${JSON.stringify(g.body)}`);
  const k = await call(stack, "POST", "/add_usage_api_key", { key: apiKey, body: { name: "triggers", execute_in_groups: [g.body.group_id] } });
  if (k.status !== 200) throw new Error(`add_usage_api_key: ${JSON.stringify(k.body)}`);
  return { usageKey: k.body.usage_api_key as string, groupId: g.body.group_id };
}
