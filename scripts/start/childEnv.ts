/**
 * The environments of `npm start`'s two children. Ports are fixed before the first start (a free
 * one is chosen when asked for 0, or when the triggers service's default 8100 is taken), so that a
 * child started again comes back where the other parts expect it.
 */
import path from "node:path";
import { loadConfig } from "../../relayer/config";
import { loadTriggersConfig } from "../../triggers/config";
import type { BillingConfig } from "../../billing/config";
import type { Deployment } from "../lib/deploy";
import { probePort } from "./ports";

/** `deadlines`: each child's shutdown deadline (ms), from its own configuration. */
export type ChildEnvs = { relayer: NodeJS.ProcessEnv; triggers: NodeJS.ProcessEnv; relayerUrl: string; triggersUrl: string; billing: BillingConfig; deadlines: { relayer: number; triggers: number } };
type Chain = { dataDir: string; rpcUrl: string; deployment: Deployment; payerKeys: string[] };

export async function childEnvs(base: NodeJS.ProcessEnv, c: Chain): Promise<ChildEnvs> {
  const relayer: NodeJS.ProcessEnv = {
    VESTA_LOG_LEVEL: "warn",
    VESTA_LOCAL_ROOT_SECRET_FILE: path.join(c.dataDir, "root-secret"),
    ...base,
    VESTA_DATA_DIR: c.dataDir,
    VESTA_MODE: "development",
    VESTA_RPC_URL: c.rpcUrl,
    VESTA_ACCOUNT_CONFIG_ADDRESS: c.deployment.accountConfig,
    VESTA_APP_AUTH_ADDRESS: c.deployment.appAuth,
    VESTA_PAYER_KEYS: c.payerKeys.join(","),
  };
  const rc = loadConfig(relayer); // a bad setting stops npm start here, with the relayer's own message
  const relayerPort = rc.port || (await probePort(rc.host, 0))!;
  relayer.VESTA_PORT = String(relayerPort);
  const relayerUrl = `http://${rc.host}:${relayerPort}`;

  // The local chain serves chain-event triggers as `ethereum`.
  const triggers: NodeJS.ProcessEnv = { TRIGGERS_LOG_LEVEL: "warn", TRIGGERS_DATA_DIR: path.join(c.dataDir, "triggers"), TRIGGERS_RPC_ETHEREUM: c.rpcUrl, ...base, VESTA_MODE: "development", TRIGGERS_CORE_URL: relayerUrl };
  const tc = loadTriggersConfig(triggers);
  // 8100 (the default) taken: any free port; a port set explicitly is used as is (the child says if it is in use).
  const triggersPort = base.TRIGGERS_PORT && tc.port ? tc.port : ((tc.port && (await probePort(tc.host, tc.port))) || (await probePort(tc.host, 0))!);
  triggers.TRIGGERS_PORT = String(triggersPort);
  const triggersUrl = `http://${tc.host}:${triggersPort}`;
  relayer.VESTA_TRIGGERS_URL ??= triggersUrl; // the dashboard approves this service's clients
  return { relayer, triggers, relayerUrl, triggersUrl, billing: rc.billing, deadlines: { relayer: rc.shutdownDeadlineMs, triggers: tc.shutdownDeadlineMs } };
}
