/** What `npm start` prints once everything serves. */
import path from "node:path";
import type { BillingConfig } from "../../billing/config";
import type { Deployment } from "../lib/deploy";
import { chainName } from "../../protocol/chains";

/** One line on how billing runs (local mode needs no Stripe keys). */
function billingMode(b: BillingConfig): string {
  if (b.mode === "local") return `local mode (development): each new account gets ${b.freeCreditCents} cents of free credit, top-ups up to ${b.freeCreditCapCents} (Stripe: set STRIPE_SECRET_KEY)`;
  return b.mode === "stripe" ? "Stripe" : "off (nothing is charged)";
}

export type BannerInfo = {
  relayerUrl: string; triggersUrl: string; rpcUrl: string; deployment: Deployment; file: string; dataDir: string;
  billing: BillingConfig; apiKey: string; restarted: boolean;
};

export function banner(i: BannerInfo): string {
  const api = `${i.relayerUrl}/core/v1`;
  const keyLine = i.restarted
    ? "A new account key to try (shown once; the accounts, keys and wallets of earlier runs are kept):"
    : "A first account key to try (shown once):";
  return `
Vesta is running (local development chain: keys and accounts here are for testing only)
  dashboard          ${i.relayerUrl}/dashboard/
  core API           ${api}
  API explorer       ${api}/swagger-ui
  chain JSON-RPC     ${i.rpcUrl}   (chain id ${i.deployment.chainId}; actions: await Lit.Actions.getRpcUrl({ chain: "${chainName(i.deployment.chainId)}" }))
  AccountConfig      ${i.deployment.accountConfig}
  AppAuth            ${i.deployment.appAuth}
  owner / admin payer ${i.deployment.owner}
  API payers         ${i.deployment.apiPayers.join(", ")}
  data directory     ${path.resolve(i.dataDir)}   (the chain's journal, the deployment, the off-chain stores: kept across restarts)
  deployment file    ${path.resolve(i.file)}
  billing            ${billingMode(i.billing)}
  triggers service   ${i.triggersUrl}   (agent guide: ${i.triggersUrl}/SKILL.md)
  attestation        ${i.relayerUrl}/info  (DEVELOPMENT evidence, not from a TEE: npm run verify -- ${i.relayerUrl} --rpc-url ${i.rpcUrl})

${keyLine}
  ${i.apiKey}
  curl -s -H 'X-Api-Key: ${i.apiKey}' ${api}/list_groups

Press Ctrl-C to stop.`;
}
