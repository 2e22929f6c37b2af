import { ipKeyGenerator } from "express-rate-limit";
import type { Request } from "express";
import { AppError } from "../errors";
import { relayWrite } from "../chain/relay";
import { serialized } from "../chain/ownerSend";
import { hex32 } from "../../protocol/usageKeyShape";
import { notOwner } from "./service";
import type { VerifiedIdentity } from "./identity";
import type { Ctx } from "../context";

export type SignInAnswer = { session_token: string; expires_at: number; api_key_hash: string; admin_wallet_address: string; account_created: boolean };

/**
 * Completes a sign-in whose proof held: the identity's account is created on its first sign-in (a
 * ChainSecured account of its owner wallet, managed = false, sent by that wallet: the service pays
 * its gas, as for new_account), then a session bound to the identity is issued. Two first sign-ins
 * of one identity make one account: they queue here, and across replicas the contract refuses the
 * second (AccountAlreadyExists, read as "it exists"). An identity whose account was handed over
 * gets 403 identity_not_owner and no session.
 */
export async function completeSignIn(ctx: Ctx, req: Request, identity: VerifiedIdentity, names: { name?: string; description?: string }): Promise<SignInAnswer> {
  const { id, wallet, accountHash, epoch } = await ctx.identity.claim(identity); // the identity the method signs into (its own, or the one it was linked to)
  const created = await serialized(`sign-in:${id}`, async () => {
    if (await ctx.chain.accountConfig.accountExists(accountHash)) return false;
    const signer = await ctx.identity.signer(id);
    const client = `client:${ipKeyGenerator(req.ip ?? "unknown")}`; // no account yet: its write takes the asking client's fair share
    try {
      await relayWrite(ctx, "newChainSecuredAccount", [names.name ?? `${identity.method} sign-in`, names.description ?? ""], { signer, owner: { account: client, payer: client, key: "-" } });
    } catch (err) {
      if (err instanceof AppError && err.code === "already_exists" && (await ctx.chain.accountConfig.accountExists(accountHash))) return false;
      throw err;
    }
    (req.log ?? ctx.logger).info({ account: hex32(accountHash), admin: wallet, method: identity.method }, "identity account created");
    return true;
  });
  if ((await ctx.chain.accountConfig.getAccount(accountHash)).adminWalletAddress !== wallet) throw notOwner(accountHash);
  const session = await ctx.identity.sessions.issue(id, identity, epoch);
  return { session_token: session.token, expires_at: session.expiresAt, api_key_hash: hex32(accountHash), admin_wallet_address: wallet, account_created: created };
}
