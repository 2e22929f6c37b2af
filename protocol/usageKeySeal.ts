/**
 * Usage-key identities (spec 1, rule 6): a key's on-chain hash is keccak256 of the key's UTF-8
 * bytes, for account keys and usage keys alike; it is what `list_api_keys` shows as `api_key_hash`
 * and what Chipotle's clients compute. A key Vesta mints is reserved for its account before that
 * hash is public: an API payer authorizes its seal, keccak256(abi.encode(hash)), which
 * `setUsageApiKey` then consumes (AccountConfig.authorizeUsageApiKey), so nobody who sees the
 * registration in the mempool can register the hash to another account first.
 *
 * Pure (ethers only): the relayer, the dashboard's wallet mode, scripts and tests share it.
 */
import { AbiCoder, keccak256, toUtf8Bytes } from "ethers";

/** The on-chain hash of a key (account key or usage key): keccak256 of its UTF-8 bytes. */
export const keyHash = (key: string): bigint => BigInt(keccak256(toUtf8Bytes(key)));

/** The seal an API payer authorizes for a usage key hash (AccountConfig.usageApiKeySeal). */
export const usageKeySeal = (usageApiKeyHash: bigint): string => keccak256(AbiCoder.defaultAbiCoder().encode(["uint256"], [usageApiKeyHash]));
