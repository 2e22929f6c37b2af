/**
 * `npm start`: the whole service on one machine with embedded defaults.
 * Now: a local Hardhat (EDR) chain served over JSON-RPC, AccountConfig and AppAuth deployed
 * through Ignition with a pool of API payers, and the addresses printed and written to
 * `.vesta/deployment.json`. Stops cleanly on Ctrl-C / SIGTERM.
 *
 * Environment (all optional):
 *   VESTA_CHAIN_HOST   interface the JSON-RPC server binds (default 127.0.0.1)
 *   VESTA_CHAIN_PORT   its port (default 8545)
 *   VESTA_PAYER_COUNT  number of API payer wallets, taken from the local chain's accounts 1..N (default 4)
 *   VESTA_DATA_DIR     where the deployment file is written (default .vesta)
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import { deployVesta } from "./lib/deploy";
import { readStartEnv } from "./lib/env";

async function main() {
  const env = readStartEnv(process.env);
  if (hre.network.name !== "hardhat") throw new Error(`npm start runs its own chain; got --network ${hre.network.name}`);

  console.log("Vesta: compiling contracts ...");
  await hre.run("compile", { quiet: true });
  console.log("Vesta: starting a local chain ...");
  const server = await hre.run(TASK_NODE_CREATE_SERVER, { hostname: env.chainHost, port: env.chainPort, provider: hre.network.provider });
  try {
    await server.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new Error(`port ${env.chainPort} is in use: set VESTA_CHAIN_PORT to a free port`);
    throw err;
  }
  const rpcUrl = `http://${env.chainHost}:${env.chainPort}`;

  const signers = await hre.ethers.getSigners();
  if (env.payerCount > signers.length - 1) throw new Error(`VESTA_PAYER_COUNT must be at most ${signers.length - 1}`);
  const owner = await signers[0].getAddress();
  const payers = await Promise.all(signers.slice(1, 1 + env.payerCount).map((s) => s.getAddress()));

  console.log("Vesta: deploying contracts through Ignition ...");
  const deployment = await deployVesta(hre, { owner, adminApiPayer: owner, apiPayers: payers });
  fs.mkdirSync(env.dataDir, { recursive: true });
  const file = path.join(env.dataDir, "deployment.json");
  fs.writeFileSync(file, JSON.stringify({ rpcUrl, ...deployment }, null, 2) + "\n");

  console.log(`
Vesta is running (local development chain: keys and accounts here are for testing only)
  chain JSON-RPC     ${rpcUrl}   (chain id ${deployment.chainId})
  AccountConfig      ${deployment.accountConfig}
  AppAuth            ${deployment.appAuth}
  owner / admin payer ${owner}
  API payers         ${payers.join(", ")}
  deployment file    ${path.resolve(file)}
Press Ctrl-C to stop.`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  console.log("Vesta: stopping ...");
  await server.close();
}

main().catch((err) => {
  console.error(`Vesta failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
