/**
 * `npm start`: the whole service on one machine with embedded defaults. This process (the
 * supervisor) runs a local Hardhat (EDR) chain served over JSON-RPC, durable in the data
 * directory (scripts/start/chain.ts: a journal of every block, replayed at the next start), deploys
 * AccountConfig and AppAuth through Ignition on the first start (written to
 * `<data dir>/deployment.json`), and runs the relayer (core HTTP API) and the triggers service as
 * child processes, each started again on its own if it stops (scripts/start/supervisor.ts). It
 * creates an account through the relayer and prints its key. Stops cleanly on Ctrl-C / SIGTERM: each
 * child drains (the runs and writes under way get VESTA_SHUTDOWN_DEADLINE_MS /
 * TRIGGERS_SHUTDOWN_DEADLINE_MS to finish, billing is flushed), then the chain stops; exit code 0.
 *
 * `npm start` is VESTA_MODE=development (local key provider, development evidence, local billing with
 * free credit unless Stripe keys are given); it refuses VESTA_MODE=production.
 *
 * Environment (all optional; the relayer's and the triggers service's own variables apply too, see the README):
 *   VESTA_CHAIN_HOST   interface the JSON-RPC server binds (default 127.0.0.1)
 *   VESTA_CHAIN_PORT   its port (default 8545)
 *   VESTA_CHAIN_ALLOWED_ORIGINS  web origins besides wallets' whose pages may use it (default none; scripts/start/portPolicy.ts)
 *   VESTA_PAYER_COUNT  number of API payer wallets, random keys of the data directory (default 4; first start only)
 *   VESTA_DATA_DIR     the data directory: chain journal, deployment file, off-chain stores (default .vesta)
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { readStartEnv } from "./lib/env";
import { openDurableChain, type DurableChain } from "./start/chain";
import { createChainServer } from "./start/rpcServer";
import { writeFileAtomic } from "./start/dataDir";
import { deployOrReuse } from "./start/deployment";
import { childEnvs } from "./start/childEnv";
import { Supervised } from "./start/supervisor";
import { banner } from "./start/banner";

const log = (line: string) => console.log(`Vesta: ${line}`);

async function main() {
  const env = readStartEnv(process.env);
  if (process.env.VESTA_MODE && process.env.VESTA_MODE !== "development") {
    throw new Error(`npm start runs a local development chain and keys: VESTA_MODE must be development (or unset), not ${process.env.VESTA_MODE}. Production: npm run relayer with a production configuration (README, "Environment variables")`);
  }
  if (hre.network.name !== "hardhat") throw new Error(`npm start runs its own chain; got --network ${hre.network.name}`);
  fs.mkdirSync(env.dataDir, { recursive: true });

  const stops: Array<() => Promise<void>> = []; // in the order they run
  const stopAll = async () => {
    for (const stop of stops.splice(0)) await stop().catch((err: Error) => log(`stopping: ${err.message}`));
  };
  try {
    log(`starting a local chain on ${path.resolve(env.dataDir)} ...`);
    const chain: DurableChain = await openDurableChain(hre, env.dataDir, log);
    stops.push(() => chain.close());
    const r = chain.replayed;
    if (r) log(`replayed the chain journal: ${r.blocks} blocks in ${(r.ms / 1000).toFixed(1)} s${r.resent ? ` (${r.resent} pending transactions sent again)` : ""}`);
    // The port serves what wallets and tools need, never state edits (scripts/start/portPolicy.ts); this process uses chain.provider itself.
    const server = createChainServer({ hostname: env.chainHost, port: env.chainPort, chain: chain.provider, allowedOrigins: env.chainAllowedOrigins });
    await server.listen().catch((err: NodeJS.ErrnoException) => {
      throw err.code === "EADDRINUSE" ? new Error(`port ${env.chainPort} is in use: set VESTA_CHAIN_PORT to a free port`) : err;
    });
    stops.unshift(() => server.close());
    const rpcUrl = `http://${env.chainHost}:${env.chainPort}`;

    if (!chain.deployment) log("deploying contracts through Ignition ...");
    const { deployment, keys } = await deployOrReuse(hre, chain, env, log);
    const file = path.join(env.dataDir, "deployment.json");
    writeFileAtomic(file, JSON.stringify({ rpcUrl, ...deployment }, null, 2) + "\n");

    const envs = await childEnvs(process.env, { dataDir: env.dataDir, rpcUrl, deployment, payerKeys: keys.payers });
    const relayer = new Supervised({ name: "relayer", entry: "relayerChild.ts", env: envs.relayer, deadlineMs: envs.deadlines.relayer }, log);
    const triggers = new Supervised({ name: "triggers service", entry: "triggersChild.ts", env: envs.triggers, deadlineMs: envs.deadlines.triggers }, log);
    // Stopping goes in order: the triggers service first (its runs under way still reach the relayer),
    // then the relayer (its runs and writes still reach the chain), then the chain.
    stops.unshift(() => relayer.stop());
    stops.unshift(() => triggers.stop());
    // Side by side: the triggers service needs the relayer only when it runs something.
    log("starting the relayer and the triggers service ...");
    await Promise.all([relayer.start(), triggers.start()]);

    const api = `${envs.relayerUrl}/core/v1`;
    const created = await fetch(`${api}/new_account`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ account_name: r ? "account of a restart" : "first account", account_description: "created by npm start" }),
    });
    if (!created.ok) throw new Error(`creating an account failed: ${created.status} ${await created.text()}`);
    const { api_key } = (await created.json()) as { api_key: string };
    console.log(banner({ relayerUrl: envs.relayerUrl, triggersUrl: envs.triggersUrl, rpcUrl, deployment, file, dataDir: env.dataDir, billing: envs.billing, apiKey: api_key, restarted: Boolean(r) }));

    await new Promise<void>((resolve) => {
      let signalled = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (signalled) return log(`${signal} again: still stopping (what is under way gets until the shutdown deadline; kill -9 to stop at once)`);
        signalled = true;
        resolve();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    });
    log("stopping ..."); // each child drains within its shutdown deadline
  } finally {
    await stopAll();
  }
}

main().catch((err) => {
  console.error(`Vesta failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
