import crypto from "node:crypto";
import type { Logger } from "pino";
import { LocalKeyProvider } from "./local";
import { DstackKeyProvider } from "./dstack";
import { hex32 } from "../../protocol/usageKeyShape";
import { toPrivateKey } from "../../protocol/keys";
import { publicKeyOf } from "../../protocol/ecdsa";

/**
 * Where key material comes from. Keys are derived on demand from a path and live only in memory;
 * nothing derived is ever stored or returned by the API.
 */
export interface KeyProvider {
  readonly kind: "local" | "dstack";
  /** 32 bytes of key material for `path`, the same on every call. */
  deriveSecret(path: string): Promise<Uint8Array>;
}

export type DerivedWallet = { privateKey: string; address: string; /** Uncompressed (0x04...). */ publicKey: string };

/** The public key and address of a secp256k1 private key (one point multiplication for both, native when it can be). */
export function walletOf(privateKey: string): DerivedWallet {
  return { privateKey, ...publicKeyOf(privateKey) };
}

/** Derives the wallet (private key, public key and address) for `path`. */
export async function deriveWallet(keys: KeyProvider, path: string): Promise<DerivedWallet> {
  return walletOf(toPrivateKey(await keys.deriveSecret(path)));
}

/** A fresh random derivation path for a new wallet (a non-zero uint256). */
export function randomDerivationPath(): bigint {
  let p = 0n;
  while (p === 0n) p = BigInt(`0x${crypto.randomBytes(32).toString("hex")}`);
  return p;
}

/** Derivation paths. PKP keys are bound to their owning account, so a path registered under another account yields another key. */
export const paths = {
  accountAdmin: (apiKeyHash: bigint) => `account-admin/${hex32(apiKeyHash)}`,
  pkp: (apiKeyHash: bigint, derivationPath: bigint) => `pkp/${hex32(apiKeyHash)}/${hex32(derivationPath)}`,
  /** The symmetric key of Encrypt/Decrypt for a PKP: separate from its signing key. */
  pkpEncryption: (apiKeyHash: bigint, derivationPath: bigint) => `pkp-encryption/${hex32(apiKeyHash)}/${hex32(derivationPath)}`,
  /** An action's own identity key, from its CID. */
  action: (cid: string) => `action/${cid}`,
  /**
   * The owner wallet of a verified identity (relayer/identity/identity.ts): `identityId` is the
   * SHA-256 (64 hex) of the identity's (method, issuer, subject), computed by the relayer from a
   * verified proof, never taken from a request.
   */
  identityOwner: (identityId: string) => {
    if (!/^[0-9a-f]{64}$/.test(identityId)) throw new Error("an identity id is 64 lower-case hex characters");
    return `identity-owner/${identityId}`;
  },
  /** The relayer's MAC keys for identity sign-in (sessions, e-mail code hashes, OpenID nonces): never a wallet. */
  identityMac: (purpose: "session" | "email-code" | "oidc-nonce" | "method-link") => `identity-mac/${purpose}/v1`,
};

export type KeyProviderOptions = { kind: "local" | "dstack"; localRootSecretFile: string; dstackEndpoint?: string };

export function createKeyProvider(opts: KeyProviderOptions, logger: Logger): KeyProvider {
  return opts.kind === "dstack" ? new DstackKeyProvider(opts.dstackEndpoint) : LocalKeyProvider.open(opts.localRootSecretFile, logger);
}
