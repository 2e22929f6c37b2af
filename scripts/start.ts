/**
 * `npm start`: the whole service on one machine with embedded defaults: a local Hardhat (EDR)
 * chain served over JSON-RPC, AccountConfig and AppAuth deployed through Ignition with a pool of
 * API payers (written to `.vesta/deployment.json`), and the relayer (core HTTP API) on top, with a
 * first account created through it. Stops cleanly on Ctrl-C / SIGTERM.
 *
 * `npm start` is VESTA_MODE=development (local key provider, development evidence, local billing with
 * free credit unless Stripe keys are given); it refuses VESTA_MODE=production.
 *
 * Environment (all optional; the relayer's own variables apply too, see the README):
 *   VESTA_CHAIN_HOST   interface the JSON-RPC server binds (default 127.0.0.1)
 *   VESTA_CHAIN_PORT   its port (default 8545)
 *   VESTA_PAYER_COUNT  number of API payer wallets, taken from the local chain's accounts 1..N (default 4)
 *   VESTA_DATA_DIR     where the deployment file is written (default .vesta)
 */
import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { TASK_NODE_CREATE_SERVER } from "hardhat/builtin-tasks/task-names";
import { HDNodeWallet } from "ethers";
import { deployVesta } from "./lib/deploy";
import { readStartEnv } from "./lib/env";
import { loadConfig } from "../relayer/config";
import { startRelayer } from "../relayer/server";
import type { BillingConfig } from "../billing/config";
import { devComposeHash } from "../attestation/development";
import { loadTriggersConfig } from "../triggers/config";
import { startTriggers } from "../triggers/server";
import { chainName } from "../protocol/chains";

/** The private keys of the local chain's accounts `from`..`from+count-1` (its well-known test mnemonic). */
function localKeys(from: number, count: number): string[] {
  const accounts = hre.network.config.accounts as { mnemonic: string; path: string };
  return Array.from({ length: count }, (_, i) => HDNodeWallet.fromPhrase(accounts.mnemonic, undefined, `${accounts.path}/${from + i}`).privateKey);
}

/** One line on how billing runs (local mode needs no Stripe keys). */
function billingMode(b: BillingConfig): string {
  if (b.mode === "local") return `local mode (development): each new account gets ${b.freeCreditCents} cents of free credit, top-ups up to ${b.freeCreditCapCents} (Stripe: set STRIPE_SECRET_KEY)`;
  return b.mode === "stripe" ? "Stripe" : "off (nothing is charged)";
}

async function main() {
  const env = readStartEnv(process.env);
  if (process.env.VESTA_MODE && process.env.VESTA_MODE !== "development") {
    throw new Error(`npm start runs a local development chain and keys: VESTA_MODE must be development (or unset), not ${process.env.VESTA_MODE}. Production: npm run relayer with a production configuration (README, "Environment variables")`);
  }
  if (hre.network.name !== "hardhat") throw new Error(`npm start runs its own chain; got --network ${hre.network.name}`);

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
  // The development attestation evidence is allowed from the start, so `npm run verify` can pass its governance checks.
  const deployment = await deployVesta(hre, { owner, adminApiPayer: owner, apiPayers: payers, composeHashes: [`0x${devComposeHash()}`] });
  fs.mkdirSync(env.dataDir, { recursive: true });
  const file = path.join(env.dataDir, "deployment.json");
  fs.writeFileSync(file, JSON.stringify({ rpcUrl, ...deployment }, null, 2) + "\n");

  console.log("Vesta: starting the relayer ...");
  const relayer = await startRelayer(
    loadConfig({
      VESTA_LOG_LEVEL: "warn",
      VESTA_LOCAL_ROOT_SECRET_FILE: path.join(env.dataDir, "root-secret"),
      ...process.env,
      VESTA_MODE: "development",
      VESTA_RPC_URL: rpcUrl,
      VESTA_ACCOUNT_CONFIG_ADDRESS: deployment.accountConfig,
      VESTA_APP_AUTH_ADDRESS: deployment.appAuth,
      VESTA_PAYER_KEYS: localKeys(1, env.payerCount).join(","),
    }),
  );
  const api = `${relayer.url}/core/v1`;
  const created = await fetch(`${api}/new_account`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ account_name: "first account", account_description: "created by npm start" }),
  });
  if (!created.ok) throw new Error(`creating the first account failed: ${created.status} ${await created.text()}`);
  const first = (await created.json()) as { api_key: string; wallet_address: string };

  console.log("Vesta: starting the triggers service ...");
  // The local chain serves chain-event triggers as `ethereum`; sign-in links are printed here (local mode).
  const triggersEnv = { TRIGGERS_LOG_LEVEL: "warn", TRIGGERS_DATA_DIR: path.join(env.dataDir, "triggers"), TRIGGERS_RPC_ETHEREUM: rpcUrl, ...process.env, TRIGGERS_CORE_URL: relayer.url };
  const mailer = (email: string, link: string) => console.log(`Vesta triggers: sign-in link for ${email}: ${link}`);
  const triggers = await startTriggers(loadTriggersConfig(triggersEnv), { mailer }).catch((err: Error) => {
    if (process.env.TRIGGERS_PORT || !/in use/.test(err.message)) throw err;
    return startTriggers(loadTriggersConfig({ ...triggersEnv, TRIGGERS_PORT: "0" }), { mailer }); // 8100 taken: any free port
  });
  relayer.ctx.config.dashboard.triggersUrl ??= triggers.url; // the dashboard approves this service's clients

  console.log(`
Vesta is running (local development chain: keys and accounts here are for testing only)
  dashboard          ${relayer.url}/dashboard/
  core API           ${api}
  API explorer       ${api}/swagger-ui
  chain JSON-RPC     ${rpcUrl}   (chain id ${deployment.chainId}; actions: await Lit.Actions.getRpcUrl({ chain: "${chainName(deployment.chainId)}" }))
  AccountConfig      ${deployment.accountConfig}
  AppAuth            ${deployment.appAuth}
  owner / admin payer ${owner}
  API payers         ${payers.join(", ")}
  deployment file    ${path.resolve(file)}
  billing            ${billingMode(relayer.ctx.config.billing)}
  triggers service   ${triggers.url}   (agent guide: ${triggers.url}/SKILL.md)
  attestation        ${relayer.url}/info  (DEVELOPMENT evidence, not from a TEE: npm run verify -- ${relayer.url} --rpc-url ${rpcUrl})

A first account key to try (shown once):
  ${first.api_key}
  curl -s -H 'X-Api-Key: ${first.api_key}' ${api}/list_groups

Press Ctrl-C to stop.`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  console.log("Vesta: stopping ...");
  await triggers.close();
  await relayer.close();
  await server.close();
}

main().catch((err) => {
  console.error(`Vesta failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
