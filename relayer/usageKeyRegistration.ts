/**
 * Registering a usage key that Vesta minted, so that no one who watches the mempool can take or
 * block it: the key hash is reserved for its account by an API payer under a seal
 * (`authorizeUsageApiKey`, which shows keccak256 of the hash, not the hash) before any transaction
 * shows the hash itself; the registration then consumes the reservation, and a copy pointed at
 * another account reverts (`KeyHashInUse`). See AccountConfig's `setUsageApiKey`.
 */
import type { Ctx } from "./context";
import { relayWrite } from "./chain/relay";
import { decodeRevert, revertOf } from "./chain/revert";
import { keyHash, usageKeySeal } from "../protocol/usageKeySeal";
import type { DerivedWallet } from "../executor/keys/provider";

/**
 * Reserves the usage key `usageApiKey` (just minted, never shown) for `account`: one relayed write,
 * charged to the account (for its gas only when it is a step of the registration that follows).
 */
export const authorizeUsageKey = (ctx: Ctx, account: bigint, usageApiKey: string, opts: { stepOf?: string } = {}) =>
  relayWrite(ctx, "authorizeUsageApiKey", [account, usageKeySeal(keyHash(usageApiKey))], opts);

/**
 * Registers a freshly minted usage key through the payers: `setUsageApiKeyArgs` are the arguments
 * of `setUsageApiKey`. It is first simulated: AccountConfig checks the authorization after every
 * other rule, so any other refusal (a group that does not exist, an expiration in the past) is
 * answered before anything is sent or charged; then the reservation, then the registration.
 */
export async function registerMintedUsageKey(ctx: Ctx, account: bigint, usageApiKey: string, setUsageApiKeyArgs: unknown[], owner: { signer?: DerivedWallet } = {}) {
  const contract = ctx.chain.accountConfig;
  const data = contract.interface.encodeFunctionData("setUsageApiKey", setUsageApiKeyArgs as never);
  try {
    await ctx.chain.provider.estimateGas({ to: await contract.getAddress(), data, from: owner.signer?.address ?? ctx.payers.addresses()[0] });
  } catch (err) {
    if (revertOf(contract.interface, err)?.name !== "UsageApiKeyNotAuthorized") throw decodeRevert(contract.interface, err);
  }
  await authorizeUsageKey(ctx, account, usageApiKey, { stepOf: "setUsageApiKey" });
  return relayWrite(ctx, "setUsageApiKey", setUsageApiKeyArgs, owner); // an identity's own account: its wallet registers it
}
