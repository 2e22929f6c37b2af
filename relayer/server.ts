import { AuthFailureLimit } from "./http/authFailures";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import type { Logger } from "pino";
import { serviceLogger } from "../protocol/ops/logger";
import { createApp } from "./app";
import { connectChain } from "./chain/client";
import { PayerPool } from "./chain/payers";
import { serviceAccounts } from "./chain/serviceAccounts";
import { createKeyProvider } from "../executor/keys/provider";
import { Executor } from "../executor";
import { socketOpenToOthers } from "../executor/sandbox/host/isolation";
import { Billing } from "../billing/service";
import { RunHistory } from "./runs/history";
import { recoveredWriteCost } from "./chain/relay";
import type { RelayerConfig } from "./config";
import type { Ctx } from "./context";
import { NATIVE_SECP256K1 } from "../protocol/ecdsa";
import { chainName } from "../protocol/chains";
import { Identity } from "./identity/service";
import { RelayerMetrics } from "./metrics";
import { Drain } from "../protocol/ops/drain";
import { IdentityStore } from "./identity/store";

/** `close()` stops at once; `close({ deadlineMs })` first lets what is under way finish for up to deadlineMs (SIGTERM: VESTA_SHUTDOWN_DEADLINE_MS). */
export type RunningRelayer = { url: string; ctx: Ctx; close: (opts?: { deadlineMs?: number }) => Promise<void> };

/** Connects to the chain, builds the context and listens. `close` stops everything it started. */
export async function startRelayer(config: RelayerConfig, logger: Logger = serviceLogger(config.logLevel)): Promise<RunningRelayer> {
  const chain = await connectChain(config.rpcUrl, config.accountConfigAddress, config.rpcTimeoutMs);
  const payers = new PayerPool(config.payerKeys, chain.provider, logger, config.txTimeoutMs, config.receiptPollMs, config.writeQueuePerPayer, config.payerWatch);
  const notPayers = [];
  for (const a of payers.addresses()) if (!(await chain.accountConfig.isApiPayer(a))) notPayers.push(a);
  if (notPayers.length) logger.warn({ notPayers }, "some payer keys are not API payers on the contract: their writes will be refused");
  const abort = new AbortController();
  await payers.start(abort.signal); // balances and pending transactions (a payer under VESTA_PAYER_MIN_BALANCE_WEI sits out)
  const keys = createKeyProvider({ kind: config.keyProvider, localRootSecretFile: config.localRootSecretFile, dstackEndpoint: config.dstackEndpoint }, logger);
  const agentSocket = config.dstackEndpoint ?? "/var/run/dstack.sock";
  if (config.keyProvider === "dstack" && socketOpenToOthers(agentSocket)) {
    logger.warn({ socket: agentSocket }, "the dstack guest-agent socket may be written by every user: a sandbox process that escaped QuickJS could ask it for keys; make it 0660 or 0600 for the relayer's user");
  }
  const executor = new Executor({
    keys,
    accountConfig: chain.accountConfig,
    provider: chain.provider,
    logger,
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    limits: config.limits,
    workers: config.sandboxWorkers,
    sandboxUser: config.sandboxUser,
    sandboxMemoryMb: config.sandboxMemoryMb,
    sandboxNetwork: config.sandboxNetwork,
    fairShare: config.fairShare,
    codeBytesPerPayer: config.codeBytesPerPayer,
    permissionPollMs: config.permissionPollMs,
    unknownKeyCacheMs: config.unknownKeyCacheMs,
    fetchAllowPrivate: config.fetchAllowPrivate,
    imports: config.imports,
    // Unset: development gives actions the relayer's own chain (the local chain under npm start); production none.
    rpcUrls: config.actionRpcUrls ?? new Map(config.mode === "development" ? [[chainName(chain.chainId), config.rpcUrl]] : []),
    rpcGuard: { gasCap: config.actionRpcGasCap, serviceAccounts: await serviceAccounts(chain, payers.addresses(), config.attestation.appAuthAddress, logger) },
  });
  await executor.start(abort.signal).catch(async (err) => {
    abort.abort();
    await executor.close(); // its sandbox processes, and the code store if it opened
    chain.provider.destroy();
    throw err;
  });
  const runs = await RunHistory.inDataDir(config.dataDir, config.databaseUrl, config.runHistory).catch(async (err) => {
    abort.abort();
    await executor.close();
    chain.provider.destroy();
    throw err;
  });
  const identityStore = await IdentityStore.inDataDir(config.dataDir, config.databaseUrl).catch(async (err) => {
    await executor.close();
    await runs.close();
    chain.provider.destroy();
    throw err;
  });
  const billing = config.billing.mode === "off" ? undefined : await Billing.open(config.billing, config, logger).catch(async (err) => {
    await identityStore.close();
    await runs.close();
    await executor.close();
    chain.provider.destroy();
    throw err;
  });
  const authFailures = new AuthFailureLimit(config.authFailureRateLimitPerMinute, new Set(config.authFailureExempt));
  runs.start(abort.signal, logger); // and deletes what is past the retention
  identityStore.start(abort.signal); // and deletes what expired
  const identity = new Identity(keys, identityStore, config.identity, `${chain.chainId}:${config.accountConfigAddress}`, logger);
  const metrics = new RelayerMetrics(() => ctx); // read at scrape time only, once ctx exists
  const drain = new Drain();
  const ctx: Ctx = { config, logger, chain, payers, keys, executor, billing, runs, authFailures, identity, metrics, drain, signal: abort.signal };
  billing?.start(abort.signal, (r) => recoveredWriteCost(ctx, r)); // and ends the reservations a stopped process left
  if (!NATIVE_SECP256K1) logger.warn("the secp256k1 native binding did not load: signatures are recovered in JavaScript, about 15x slower (signed requests, key derivation)");
  if (config.mode === "development") logger.warn({ keyProvider: config.keyProvider, billing: config.billing.mode }, "VESTA_MODE=development: development conveniences are on (never run this configuration in production)");
  const app = createApp(ctx);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host);
    s.once("listening", () => resolve(s));
    s.once("error", (err: NodeJS.ErrnoException) =>
      reject(err.code === "EADDRINUSE" ? new Error(`port ${config.port} is in use: set VESTA_PORT to a free port`) : err),
    );
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  logger.info({ url, payers: payers.addresses(), chainId: chain.chainId.toString() }, "relayer listening");
  return {
    url,
    ctx,
    close: async ({ deadlineMs = 0 } = {}) => {
      if (deadlineMs > 0) {
        const finished = await drain.stop(server, deadlineMs); // no new connections or requests; what is under way finishes
        logger.info({ finished, ...drain.inFlight() }, finished ? "stopping: everything under way finished" : "stopping: the deadline passed; what was still under way answered 503 shutting_down");
      }
      abort.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await executor.close(); // a run still in its sandbox ends here (and is settled for the time it ran)
      await drain.settled(5_000); // the runs and writes that ended so bill before the ledger closes
      await billing?.close(); // settles what is pending (bounded); the rest waits in the ledger for the next start
      await runs.close(); // commits the runs recorded last
      await identityStore.close();
      chain.provider.destroy();
    },
  };
}
