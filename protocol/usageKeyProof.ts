/**
 * A usage key is a secp256k1 keypair (spec 1: "an API key is a wallet keypair registered on-chain").
 * Its value, the secret string clients send in `X-Api-Key`, determines its private key; its on-chain
 * identity is keccak256 of its 64-byte public key, so the low 160 bits of that hash are the key's
 * address; and it is registered only with its own EIP-712 signature over (account, key) in
 * AccountConfig's domain (chain id and contract address). A hash read from a pending transaction is
 * therefore useless to anyone but the key's holder: nobody else can register it to another account.
 *
 * Pure (ethers only): the relayer, the dashboard's wallet mode, scripts and tests share it.
 */
import { dataSlice, keccak256, SigningKey, toUtf8Bytes, TypedDataEncoder, type TypedDataField } from "ethers";
import { toPrivateKey } from "./keys";

/** AccountConfig's EIP-712 domain for proofs of possession (plus chainId and verifyingContract). */
export const ACCOUNT_CONFIG_DOMAIN = { name: "Vesta AccountConfig", version: "1" } as const;

export const REGISTER_USAGE_KEY_TYPES: Record<string, TypedDataField[]> = {
  RegisterUsageApiKey: [
    { name: "apiKeyHash", type: "uint256" },
    { name: "usageApiKeyHash", type: "uint256" },
  ],
};

/** The signing key of a usage key, derived from its value (domain-separated from every other key). */
export const usageKeySigningKey = (usageApiKey: string): SigningKey => new SigningKey(toPrivateKey(toUtf8Bytes(`usage-api-key:${usageApiKey}`)));

/** The usage key's on-chain hash: keccak256 of its uncompressed public key without the 0x04 prefix. */
export const usageKeyHash = (usageApiKey: string): bigint => BigInt(keccak256(dataSlice(usageKeySigningKey(usageApiKey).publicKey, 1)));

export type ProofTarget = { chainId: bigint | number; contract: string; apiKeyHash: bigint };

/** The digest a usage key signs to be registered to `apiKeyHash` (AccountConfig.usageApiKeyProofDigest). */
export const usageKeyProofDigest = (t: ProofTarget, usageApiKeyHash: bigint): string =>
  TypedDataEncoder.hash({ ...ACCOUNT_CONFIG_DOMAIN, chainId: t.chainId, verifyingContract: t.contract }, REGISTER_USAGE_KEY_TYPES, {
    apiKeyHash: t.apiKeyHash,
    usageApiKeyHash,
  });

/** The proof of possession `setUsageApiKey` needs to register `usageApiKey` to `t.apiKeyHash`. */
export function usageKeyProof(usageApiKey: string, t: ProofTarget): string {
  return usageKeySigningKey(usageApiKey).sign(usageKeyProofDigest(t, usageKeyHash(usageApiKey))).serialized;
}
