import { getAddress, SigningKey, ZeroAddress } from "ethers";
import { cidHash as hashOfCid } from "./cid";
import type { IAccountConfig } from "../typechain-types";
import { deriveWallet, paths, type DerivedWallet, type KeyProvider } from "./keys/provider";
import { encrypt, decrypt } from "./encryption";
import { hostFetch } from "./sandbox/host/fetch";
import { rpcUrlKey } from "./sandbox/host/rpc-urls";
import { rpcTurns } from "./sandbox/host/rpc-slots";
import type { ModuleFetcher } from "./sandbox/host/modules";
import type { PermissionCache, Who } from "./permissions";
import type { Host, HostCall, HostCallContext, RunLimits } from "./sandbox/types";
import { chainOutage } from "../protocol/chainErrors";

export type HostDeps = {
  keys: KeyProvider;
  permissions: PermissionCache;
  accountConfig: IAccountConfig;
  /** An account's wallet registrations never change: their lookups are cached for good (key: account/address). */
  walletCache: Map<string, { apiKeyHash: bigint; derivationPath: bigint }>;
  /** Let actions fetch loopback/private addresses (development and tests only). */
  fetchAllowPrivate: boolean;
  /** The modules of actions' imports, from the import CDN (shared by every run). */
  modules: ModuleFetcher;
  /** The JSON-RPC URL of each chain actions may use, by chain name (Lit.Actions.getRpcUrl; fetchable even when private). */
  rpcUrls: ReadonlyMap<string, string>;
};

/** A refusal the action sees as a rejected promise with this message. */
class Refused extends Error {}

/**
 * The host side of one run of action `cid` by `who`: answers the sandbox's calls, which the pool
 * has already checked and counted against the run's limits (every key-deriving call against
 * maxKeyRequests). Every key request re-checks the on-chain permission (a group on which the key
 * has execute lists both the CID and the PKP; the account key may use its own PKPs), then derives
 * the key; a wallet whose registration does not match its derivation is refused. Derivations are
 * cached for the run, so asking twice never derives twice.
 */
export function createHost(deps: HostDeps, who: Who, cid: string, limits: RunLimits): Host {
  const cidHash = hashOfCid(cid);
  const deadline = Date.now() + limits.timeoutMs;
  const cache = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, make: () => Promise<T>): Promise<T> => {
    if (!cache.has(key)) cache.set(key, make());
    return cache.get(key) as Promise<T>;
  };
  const derive = (path: string) => once<DerivedWallet>(`wallet:${path}`, () => deriveWallet(deps.keys, path));
  const importModule = deps.modules.forRun(deadline);
  const rpcUrls = [...deps.rpcUrls.values()];
  const rpcKeys = new Set(rpcUrls.map(rpcUrlKey));
  /** A fetch of one of the RPC URLs waits its turn: at most RPC_IN_FLIGHT_PER_RUN of the run's under way (sandbox/host/rpc-slots.ts). */
  const chainTurn = rpcTurns();
  const toRpcUrl = (url: string) => {
    try {
      return rpcKeys.has(rpcUrlKey(url));
    } catch {
      return false; // not a URL: hostFetch refuses it
    }
  };

  /** The registration of `pkpId` by the running key's account (the only one a permitted group can list), after the permission check. */
  const permittedWallet = async (pkpId: unknown) => {
    let pkp: string;
    try {
      pkp = getAddress(String(pkpId));
    } catch {
      throw new Refused(`pkpId must be a wallet address, got ${JSON.stringify(pkpId)}`);
    }
    if (pkp === ZeroAddress || !(await deps.permissions.allowed(who, cidHash, pkp))) {
      throw new Refused(`this key may not use wallet ${pkp} with action ${cid}: no group on which it has execute lists both`);
    }
    const cacheKey = `${who.accountHash}/${pkp}`;
    let reg = deps.walletCache.get(cacheKey);
    if (!reg) {
      const view = await deps.accountConfig.getWallet(who.accountHash, pkp);
      reg = { apiKeyHash: who.accountHash, derivationPath: view.derivationPath };
      deps.walletCache.set(cacheKey, reg);
    }
    return { pkp, ...reg };
  };

  /** The permitted wallet with its derived key, checked against its registration. */
  const checkedWallet = async (pkpId: unknown) => {
    const w = await permittedWallet(pkpId);
    const wallet = await derive(paths.pkp(w.apiKeyHash, w.derivationPath));
    if (wallet.address !== w.pkp) throw new Refused(`wallet ${w.pkp} is not a wallet this service derived; refusing its key`);
    return { ...w, privateKey: wallet.privateKey };
  };

  const pkpKey = async (pkpId: unknown) => (await checkedWallet(pkpId)).privateKey;

  const encryptionKey = async (pkpId: unknown) => {
    const w = await checkedWallet(pkpId);
    const path = paths.pkpEncryption(w.apiKeyHash, w.derivationPath);
    return once(`secret:${path}`, () => deps.keys.deriveSecret(path));
  };

  const actionWallet = (ipfsId: unknown) => {
    if (typeof ipfsId !== "string" || ipfsId.length === 0 || ipfsId.length > 128) throw new Refused("ipfsId must be an IPFS CID string");
    return derive(paths.action(ipfsId));
  };

  // `context.signal` aborts when the run ends: the fetches and module downloads of its calls stop with it.
  // (Key derivations and chain reads take no signal; the pool stops waiting for them when the run ends,
  // and they end on their own timeouts: the key provider's, VESTA_RPC_TIMEOUT_MS.)
  const answer = async (call: HostCall, context: HostCallContext) => {
    switch (call.op) {
      case "getPrivateKey":
        return pkpKey(call.pkpId);
      case "getLitActionPrivateKey":
        return (await actionWallet(cid)).privateKey;
      case "getLitActionPublicKey":
        // Chipotle's format: 0x + the 33-byte compressed SEC1 key.
        return SigningKey.computePublicKey((await actionWallet(call.ipfsId)).publicKey, true);
      case "getLitActionWalletAddress":
        // Chipotle's format: 0x + 40 lowercase hex digits (not the checksummed form).
        return (await actionWallet(call.ipfsId)).address.toLowerCase();
      case "encrypt":
        if (typeof call.message !== "string") throw new Refused("message must be a string");
        return encrypt(await encryptionKey(call.pkpId), call.message);
      case "decrypt":
        if (typeof call.ciphertext !== "string") throw new Refused("ciphertext must be a string");
        try {
          return decrypt(await encryptionKey(call.pkpId), call.ciphertext);
        } catch (err) {
          throw new Refused((err as Error).message);
        }
      case "getRpcUrl": {
        const url = deps.rpcUrls.get(call.chain);
        if (url === undefined) throw new Refused(`no RPC URL for chain ${JSON.stringify(call.chain)} on this deployment (it has: ${[...deps.rpcUrls.keys()].join(", ") || "none"})`);
        return url;
      }
      case "fetch": {
        const go = () => hostFetch(call, limits, { deadline, allowPrivateNetworks: deps.fetchAllowPrivate, rpcUrls, signal: context.signal, countFetch: context.countFetch });
        return toRpcUrl(call.url) ? chainTurn(go, context.signal) : go();
      }
      case "import":
        return importModule(call.url, call.integrity, context.signal);
      default:
        throw new Refused(`unknown host operation ${(call as { op: string }).op}`);
    }
  };
  // A chain lookup that met an RPC failure is refused as such: the node's error (its URL, which may hold an API key) never reaches the action.
  return (call: HostCall, context: HostCallContext) =>
    answer(call, context).catch((err: unknown) => {
      throw chainOutage(err) ? new Refused("the chain's RPC node did not answer; try again") : err;
    });
}
