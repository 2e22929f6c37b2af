import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import type { Logger } from "pino";
import { z, hash32, success } from "../schemas/common";
import { route } from "../http/route";
import { relayWrite, WRITE_ERRORS } from "../chain/relay";
import { revertOf } from "../chain/revert";
import { newSecretKey } from "./accounts";
import { ownUsageKeyHash, updateFields, updateUsageKey } from "./usageKeys";
import { registerMintedUsageKey } from "../usageKeyRegistration";
import { keyHash } from "../../protocol/usageKeySeal";
import { hex32 } from "../../protocol/usageKeyShape";
import { asOwner, type Auth } from "../http/auth";
import type { Ctx } from "../context";

/**
 * The owner's hold on usage keys it cannot name by value (spec 1's routes take the key itself, which
 * the owner may have lost or never seen): the same update and removal by the key's hash, as
 * list_api_keys shows it (`api_key_hash`), and rotation. Account key only; a hash that is not a usage
 * key of the caller's account (another account's, a removed one, the account key) is 404 and
 * nothing is written. The contract takes these writes by hash already: nothing new on chain.
 */
const apiKeyHash = hash32.openapi({ description: "keccak256 of the usage key, 0x and 64 hex digits: list_api_keys' api_key_hash." });
const ByHash = z.object({ api_key_hash: apiKeyHash }).strict();
const UpdateByHash = z.object({ api_key_hash: apiKeyHash, ...updateFields }).strict().openapi("UpdateUsageApiKeyByHashRequest");

/** The ids of `ids` that still name a group of the account ([0], all groups, as it is): a deleted group grants nothing, and may not be granted. */
async function existingGroups(ctx: Ctx, account: bigint, ids: readonly bigint[]): Promise<bigint[]> {
  const kept: bigint[] = [];
  for (const id of ids) {
    if (id === 0n) kept.push(id);
    else
      try {
        await ctx.chain.accountConfig.getGroup(account, id);
        kept.push(id);
      } catch (err) {
        if (revertOf(ctx.chain.accountConfig.interface, err)?.name !== "GroupNotFound") throw err;
      }
  }
  return kept;
}

/**
 * Mints a usage key with the permissions, name, description, expiration and balance of the
 * caller's usage key `old`, then removes `old`. When the removal fails, the new key is removed
 * again (it was never shown) and the failure is answered: the old key is never left beside a
 * replacement nobody holds.
 */
async function rotate(ctx: Ctx, auth: Auth, old: bigint, log: Logger): Promise<{ key: string; hash: bigint }> {
  const k = await ctx.chain.accountConfig.getUsageApiKey(old);
  const p = k.permissions;
  const lists = [];
  for (const l of [p.manageIpfsIdsInGroups, p.addPkpToGroups, p.removePkpFromGroups, p.executeInGroups]) lists.push(await existingGroups(ctx, auth.accountHash, l));
  const key = newSecretKey();
  const hash = keyHash(key);
  const owner = await asOwner(ctx, auth); // an identity session's writes are signed by its wallet
  await registerMintedUsageKey(ctx, auth.accountHash, key, [auth.accountHash, hash, k.expiration, k.balance, k.name, k.description, p.canCreateGroups, p.canDeleteGroups, p.canCreatePkps, ...lists], owner);
  try {
    await relayWrite(ctx, "removeUsageApiKey", [auth.accountHash, old], owner);
  } catch (err) {
    await relayWrite(ctx, "removeUsageApiKey", [auth.accountHash, hash], owner).catch((undo: Error) =>
      log.error({ err: undo.message, key_hash: hex32(hash) }, "rotate_usage_api_key: the replacement (never shown) could not be removed after the old key's removal failed"),
    );
    throw err;
  }
  return { key, hash };
}

export function usageKeyByHashRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/update_usage_api_key_by_hash",
    tag: "Usage keys",
    summary: "update_usage_api_key for a usage key named by its hash (list_api_keys' api_key_hash) instead of its value.",
    auth: "account",
    body: UpdateByHash,
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      const { api_key_hash, ...change } = body;
      await updateUsageKey(ctx, auth, await ownUsageKeyHash(ctx, auth, BigInt(api_key_hash)), change);
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/remove_usage_api_key_by_hash",
    tag: "Usage keys",
    summary: "Revokes a usage key named by its hash (list_api_keys' api_key_hash), at once: the owner can revoke a key whose value it does not have.",
    auth: "account",
    body: ByHash.openapi("RemoveUsageApiKeyByHashRequest"),
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      const h = await ownUsageKeyHash(ctx, auth, BigInt(body.api_key_hash));
      await relayWrite(ctx, "removeUsageApiKey", [auth.accountHash, h], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/rotate_usage_api_key",
    tag: "Usage keys",
    summary:
      "Replaces a usage key (named by its hash): mints a new key with the same permissions, name, description, expiration and balance (grants on groups deleted since are dropped), then revokes the old one. The new key's value is answered once.",
    auth: "account",
    body: ByHash.openapi("RotateUsageApiKeyRequest"),
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: z
      .object({ success: z.literal(true), usage_api_key: z.string(), api_key_hash: z.string(), replaced_api_key_hash: z.string() })
      .openapi("RotateUsageApiKeyResponse"),
    handler: async ({ auth, body, req }) => {
      const old = await ownUsageKeyHash(ctx, auth, BigInt(body.api_key_hash));
      const { key, hash } = await rotate(ctx, auth, old, req.log ?? ctx.logger);
      return { success: true, usage_api_key: key, api_key_hash: hex32(hash), replaced_api_key_hash: hex32(old) };
    },
  });
}
