import { spawn, type ChildProcess } from "node:child_process";
import { stackEnv, type Stack } from "./relayer";
import { freePorts } from "./startProcess";

/** A relayer replica: its URL, and its process (none for the stack's own, in-process relayer). */
export type Replica = { url: string; child?: ChildProcess; out: () => string };

/**
 * A relayer process (relayer/main.ts) beside `stack`'s relayer: the same chain, contract and root
 * secret (one key custody), its own `payerKeys` (registered on chain: deploy the stack with enough)
 * and data directory, its stores in the PostgreSQL at `databaseUrl`; `env` adds settings. Resolves
 * once it listens; stop it with child.kill.
 */
export async function startReplica(stack: Stack, o: { databaseUrl: string; payerKeys: string[]; dataDir: string; env?: Record<string, string> }): Promise<Replica> {
  const [port] = await freePorts(1);
  const env = {
    ...stackEnv({ rpcUrl: stack.rpcUrl, accountConfig: await stack.config.getAddress(), payerKeys: o.payerKeys, dataDir: o.dataDir }),
    ...o.env,
    VESTA_LOCAL_ROOT_SECRET_FILE: stack.relayerConfig.localRootSecretFile!,
    VESTA_PORT: String(port),
    DATABASE_URL: o.databaseUrl,
    VESTA_LOG_LEVEL: "warn",
  };
  const child = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "relayer/main.ts"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => (out += c));
  const end = Date.now() + 90_000;
  while (!out.includes("Vesta relayer:")) {
    if (child.exitCode !== null) throw new Error(`the replica exited (${child.exitCode}):\n${out}`);
    if (Date.now() > end) {
      child.kill("SIGKILL");
      throw new Error(`the replica did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}`, child, out: () => out };
}

/** Stops the replicas' processes (SIGTERM) and waits for them to exit. */
export async function stopReplicas(replicas: Replica[]): Promise<void> {
  const live = replicas.filter((r) => r.child && r.child.exitCode === null && r.child.signalCode === null);
  await Promise.all(live.map((r) => new Promise((resolve) => (r.child!.once("exit", resolve), r.child!.kill("SIGTERM")))));
}
