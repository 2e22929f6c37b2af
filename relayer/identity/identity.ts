import crypto from "node:crypto";
import { solidityPackedKeccak256 } from "ethers";
import { deriveWallet, paths, type DerivedWallet, type KeyProvider } from "../../executor/keys/provider";

/** The sign-in methods an identity may come from. */
export const IDENTITY_METHODS = ["oidc", "email", "passkey"] as const;
export type IdentityMethod = (typeof IDENTITY_METHODS)[number];

declare const verified: unique symbol;

/**
 * A user identity proven by one sign-in method: OpenID Connect (issuer = the token's `iss`,
 * subject = its `sub`), e-mail code (issuer "email", subject = the address, lower-cased), passkey
 * (issuer = the relying party id, subject = the credential's user handle). Only the verifiers of
 * this folder make one (the brand): nothing a client sends becomes an identity unverified.
 */
export type VerifiedIdentity = { readonly method: IdentityMethod; readonly issuer: string; readonly subject: string; readonly [verified]: true };

/** Called by a verifier once the method's proof held; nowhere else. */
export const verifiedIdentity = (method: IdentityMethod, issuer: string, subject: string): VerifiedIdentity =>
  ({ method, issuer, subject }) as VerifiedIdentity;

/**
 * The identity's id: SHA-256 of the JSON array [version, method, issuer, subject] (JSON's quoting
 * keeps the three apart: no issuer/subject split yields another's id), 64 hex characters. It names
 * the identity's wallet in the key provider (paths.identityOwner) and its sessions.
 */
export function identityId(i: VerifiedIdentity): string {
  return crypto.createHash("sha256").update(JSON.stringify(["vesta-identity-v1", i.method, i.issuer, i.subject])).digest("hex");
}

/**
 * The identity's owner wallet, derived in the key provider (the TEE in production) from the
 * identity id alone: the same identity always yields the same wallet, two identities never share
 * one, and the key leaves this process only as a signature.
 */
export const identityWallet = (keys: KeyProvider, id: string): Promise<DerivedWallet> => deriveWallet(keys, paths.identityOwner(id));

/** The identity's account: a ChainSecured account of its wallet (keccak256 of the packed address, as newChainSecuredAccount makes it). */
export const identityAccountHash = (wallet: string): bigint => BigInt(solidityPackedKeccak256(["address"], [wallet]));
