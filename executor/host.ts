import { computeAddress, getAddress, keccak256, SigningKey, toUtf8Bytes, ZeroAddress } from "ethers";
import type { AccountConfig } from "../typechain-types";
import { deriveWallet, paths, type KeyProvider } from "./keys/provider";
import { encrypt, decrypt } from "./encryption";
import { hostFetch } from "./sandbox/fetch";
import type { PermissionCache, Who } from "./permissions";
import type { Host, HostCall, RunLimits } from "./sandbox/types";

export type HostDeps = {
  keys: KeyProvider;
  permissions: PermissionCache;
  accountConfig: AccountConfig;
  /** An account's wallet registrations never change: their lookups are cached for good (key: account/address). */
  walletCache: Map<string, { apiKeyHash: bigint; derivationPath: bigint }>;
  /** Let actions fetch loopback/private addresses (development and tests only). */
  fetchAllowPrivate: boolean;
};

/** A refusal the action sees as a rejected promise with this message. */
class Refused extends Error {}

/**
 * The host side of one run of action `cid` by `who`: answers the sandbox's calls. Every key
 * request re-checks the on-chain permission (a group on which the key has execute lists both the
 * CID and the PKP; the account key may use its own PKPs), then derives the key; a wallet whose
 * registration does not match its derivation is refused.
 */
export function createHost(deps: HostDeps, who: Who, cid: string, limits: RunLimits): Host {
  const cidHash = keccak256(toUtf8Bytes(cid));
  const deadline = Date.now() + limits.timeoutMs;
  let keyRequests = 0;
  let fetches = 0;

  const countKeyRequest = () => {
    if (++keyRequests > limits.maxKeyRequests) throw new Refused(`key request limit reached (${limits.maxKeyRequests} per run)`);
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
    const derived = await deriveWallet(deps.keys, paths.pkp(w.apiKeyHash, w.derivationPath));
    if (derived.address !== w.pkp) throw new Refused(`wallet ${w.pkp} is not a wallet this service derived; refusing its key`);
    return { ...w, privateKey: derived.privateKey };
  };

  const pkpKey = async (pkpId: unknown) => (await checkedWallet(pkpId)).privateKey;

  const encryptionKey = async (pkpId: unknown) => {
    const w = await checkedWallet(pkpId);
    return deps.keys.deriveSecret(paths.pkpEncryption(w.apiKeyHash, w.derivationPath));
  };

  const actionWallet = (ipfsId: unknown) => {
    if (typeof ipfsId !== "string" || ipfsId.length === 0 || ipfsId.length > 128) throw new Refused("ipfsId must be an IPFS CID string");
    return deriveWallet(deps.keys, paths.action(ipfsId));
  };

  return async (call: HostCall) => {
    switch (call.op) {
      case "getPrivateKey":
        countKeyRequest();
        return pkpKey(call.pkpId);
      case "getLitActionPrivateKey":
        countKeyRequest();
        return (await actionWallet(cid)).privateKey;
      case "getLitActionPublicKey": {
        const { privateKey } = await actionWallet(call.ipfsId);
        return new SigningKey(privateKey).publicKey;
      }
      case "getLitActionWalletAddress": {
        const { privateKey } = await actionWallet(call.ipfsId);
        return computeAddress(privateKey);
      }
      case "encrypt":
        countKeyRequest();
        if (typeof call.message !== "string") throw new Refused("message must be a string");
        return encrypt(await encryptionKey(call.pkpId), call.message);
      case "decrypt":
        countKeyRequest();
        if (typeof call.ciphertext !== "string") throw new Refused("ciphertext must be a string");
        try {
          return decrypt(await encryptionKey(call.pkpId), call.ciphertext);
        } catch (err) {
          throw new Refused((err as Error).message);
        }
      case "fetch":
        if (++fetches > limits.maxFetches) throw new Refused(`fetch limit reached (${limits.maxFetches} per run)`);
        return hostFetch(call, limits, { deadline, allowPrivateNetworks: deps.fetchAllowPrivate });
      default:
        throw new Refused(`unknown host operation ${(call as { op: string }).op}`);
    }
  };
}
