import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import type { Stack } from "./relayer";
import { freePorts } from "./startProcess";

export type ServiceProcess = { child: ChildProcess; out: () => string; exited: Promise<number | null>; url: string; dataDir: string; port: number };

/** `script` (relayer/main.ts or triggers/main.ts: what `npm run relayer|triggers` runs) as its own process, once its output shows `ready`. */
export async function spawnService(script: string, env: Record<string, string>, ready: string, port: number, dataDir: string): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  child.stdout!.on("data", (c) => (text += c));
  child.stderr!.on("data", (c) => (text += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const end = Date.now() + 90_000;
  while (!text.includes(ready)) {
    if (child.exitCode !== null) throw new Error(`${script} exited:\n${text}`);
    if (Date.now() > end) throw new Error(`${script} did not start:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, out: () => text, exited, url: `http://127.0.0.1:${port}`, dataDir, port };
}

/** The relayer as its own process on the stack's chain and contract (its payers), with a data dir of its own. */
export async function spawnRelayer(stack: Stack, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const [port] = await freePorts(1);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-relayer-proc-"));
  const base = {
    VESTA_MODE: "development",
    VESTA_RPC_URL: stack.rpcUrl,
    VESTA_ACCOUNT_CONFIG_ADDRESS: stack.relayerConfig.accountConfigAddress,
    VESTA_PAYER_KEYS: stack.relayerConfig.payerKeys.join(","),
    VESTA_PORT: String(port),
    VESTA_DATA_DIR: dataDir,
    VESTA_LOCAL_ROOT_SECRET_FILE: path.join(dataDir, "root-secret"),
    VESTA_SANDBOX_WORKERS: "1",
    VESTA_ACTION_FETCH_PRIVATE: "true",
    VESTA_BILLING: "local",
    VESTA_FREE_CREDIT_CENTS: "100000",
    VESTA_GAS_TOKEN_PRICE_CENTS: "0",
    VESTA_LOG_LEVEL: "info",
  };
  return spawnService("relayer/main.ts", { ...base, ...env }, "relayer listening", port, dataDir);
}
