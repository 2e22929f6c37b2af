import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, name, description, uint64, uintString, paging, success, boundedList, token } from "../schemas/common";
import { LIMITS } from "../../protocol/limits";
import { route } from "../http/route";
import { asOwner } from "../http/auth";
import { MAX_KEY_LENGTH } from "../http/auth";
import { cachedRead, relayWrite, WRITE_ERRORS } from "../chain/relay";
import { notFound } from "../errors";
import { newSecretKey } from "./accounts";
import type { Ctx } from "../context";
import type { Auth } from "../http/auth";
import { toPermissionArgs, toRestUsageKey } from "../../protocol/usageKeyShape";
import { keyHash } from "../../protocol/usageKeySeal";
import { registerMintedUsageKey } from "../usageKeyRegistration";

/** A usage key's value in a body (the API names keys by value; the hash is derived from it). */
const usageKeyValue = token(MAX_KEY_LENGTH, "usage_api_key", 1);

const groupList = (what: string) =>
  boundedList(uint64(`${what} entry`), LIMITS.permissionGroups, what)
    .default([])
    .openapi({ type: "array", items: { type: "integer" }, description: `Group ids; [0] = all groups, [] = none.` });

/** A balance: `list_api_keys` shows it as a JSON number (Chipotle's type), so it stays exact there. */
const safeUint = (what: string) => uintString(BigInt(Number.MAX_SAFE_INTEGER), what);

/** The permission set of spec 1; omitted fields take their defaults (false, []). */
export const permissionFields = {
  name: name.default(""),
  description: description.default(""),
  can_create_groups: z.boolean().default(false),
  can_delete_groups: z.boolean().default(false),
  can_create_pkps: z.boolean().default(false),
  manage_ipfs_ids_in_groups: groupList("manage_ipfs_ids_in_groups"),
  add_pkp_to_groups: groupList("add_pkp_to_groups"),
  remove_pkp_from_groups: groupList("remove_pkp_from_groups"),
  execute_in_groups: groupList("execute_in_groups"),
  expiration: uint64("expiration").default(0n).openapi({ type: "integer", description: "Unix seconds; 0 = never expires." }),
  balance: safeUint("balance").default(0n).openapi({ type: "integer", description: "Stored on chain and listed as a JSON number (so at most 2^53 - 1)." }),
};

const AddBody = z.object(permissionFields).strict().openapi("AddUsageApiKeyRequest");
/**
 * Update: the permission fields are replaced (omitted ones reset to their defaults, per spec 1);
 * name, description, expiration and balance are not permissions and keep their current values when
 * omitted (an omitted expiration must never turn an expiring key into one that never expires).
 */
export const updateFields = {
  ...permissionFields,
  name: name.optional(),
  description: description.optional(),
  expiration: uint64("expiration").optional().openapi({ type: "integer", description: "Unix seconds; 0 = never; omitted = unchanged." }),
  balance: safeUint("balance").optional().openapi({ type: "integer", description: "Omitted = unchanged." }),
};
const UpdateBody = z
  .object({ usage_api_key: usageKeyValue, ...updateFields })
  .strict()
  .openapi("UpdateUsageApiKeyRequest");
/** What update_usage_api_key changes, whichever way the key is named. */
export type UpdateInput = Omit<z.output<typeof UpdateBody>, "usage_api_key">;
const MetadataBody = z
  .object({ usage_api_key: usageKeyValue, name, description: description.default("") })
  .strict()
  .openapi("UpdateUsageApiKeyMetadataRequest");
const RemoveBody = z.object({ usage_api_key: usageKeyValue }).strict().openapi("RemoveUsageApiKeyRequest");

const groupIds = (what: string) => z.array(z.number().int()).openapi({ description: what });
export const UsageKeyItem = z
  .object({
    id: z.string().openapi({ description: "keccak256 of the usage key (never the key itself); the same as api_key_hash" }),
    api_key_hash: z.string().openapi({ description: "keccak256 of the usage key's UTF-8 bytes, 0x-prefixed (what Chipotle's SDK matches on)" }),
    name: z.string(),
    description: z.string(),
    expiration: z.string().openapi({ description: "Unix seconds as a decimal string; \"0\" = never." }),
    balance: z.number().int(),
    can_create_groups: z.boolean(),
    can_delete_groups: z.boolean(),
    can_create_pkps: z.boolean(),
    can_manage_ipfs_ids_in_groups: groupIds("Chipotle's name for manage_ipfs_ids_in_groups"),
    can_add_pkp_to_groups: groupIds("Chipotle's name for add_pkp_to_groups"),
    can_remove_pkp_from_groups: groupIds("Chipotle's name for remove_pkp_from_groups"),
    can_execute_in_groups: groupIds("Chipotle's name for execute_in_groups"),
    manage_ipfs_ids_in_groups: groupIds("Group ids where the key may add or remove actions; [0] = all."),
    add_pkp_to_groups: groupIds("Group ids where the key may add wallets; [0] = all."),
    remove_pkp_from_groups: groupIds("Group ids where the key may remove wallets; [0] = all."),
    execute_in_groups: groupIds("Group ids where the key may run actions; [0] = all."),
  })
  .openapi("UsageApiKeyItem");

type PermissionInput = z.output<typeof AddBody>;

/** The arguments of `setUsageApiKey` (Chipotle's signature) for the usage key `usageKeyHash` of the caller's account. */
export const setArgs = (auth: Auth, usageKeyHash: bigint, b: PermissionInput) => [
  auth.accountHash,
  usageKeyHash,
  b.expiration,
  b.balance,
  b.name,
  b.description,
  ...toPermissionArgs(b),
];

/**
 * `h` when it is the hash of a usage key registered to the caller's account (not removed), else 404
 * (another account's key, the account key, a removed or unknown key: all alike, nothing told).
 */
export async function ownUsageKeyHash(ctx: Ctx, auth: Auth, h: bigint): Promise<bigint> {
  const [account, isAccountKey] = await ctx.chain.accountConfig.resolveApiKey(h);
  if (account !== auth.accountHash || isAccountKey) throw notFound("usage_key_not_found", "no such usage key in this account");
  return h;
}

/** The hash of the usage key `usageApiKey` of the caller's account, or 404. */
const ownUsageKey = (ctx: Ctx, auth: Auth, usageApiKey: string) => ownUsageKeyHash(ctx, auth, keyHash(usageApiKey));

/** Replaces the permission set of the caller's usage key `h`; name, description, expiration and balance keep their values when omitted. */
export async function updateUsageKey(ctx: Ctx, auth: Auth, h: bigint, body: UpdateInput): Promise<void> {
  const current = await ctx.chain.accountConfig.getUsageApiKey(h);
  await relayWrite(ctx, "setUsageApiKey", setArgs(auth, h, {
    ...body,
    name: body.name ?? current.name,
    description: body.description ?? current.description,
    expiration: body.expiration ?? current.expiration,
    balance: body.balance ?? current.balance,
  }), await asOwner(ctx, auth));
}

export function usageKeyRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/add_usage_api_key",
    tag: "Usage keys",
    summary:
      "Creates a usage key with its permission set; its value is returned once. Two relayed writes: the key is reserved for the account under a seal, then registered (nobody watching the chain can take or block it).",
    auth: "account",
    body: AddBody,
    errors: WRITE_ERRORS,
    response: z.object({ success: z.literal(true), usage_api_key: z.string() }),
    handler: async ({ auth, body }) => {
      const key = newSecretKey();
      await registerMintedUsageKey(ctx, auth.accountHash, key, setArgs(auth, keyHash(key), body), await asOwner(ctx, auth));
      return { success: true, usage_api_key: key };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/update_usage_api_key",
    tag: "Usage keys",
    summary: "Replaces the whole permission set of a usage key (omitted fields reset to their defaults).",
    auth: "account",
    body: UpdateBody,
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      const { usage_api_key, ...change } = body;
      await updateUsageKey(ctx, auth, await ownUsageKey(ctx, auth, usage_api_key), change);
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/update_usage_api_key_metadata",
    tag: "Usage keys",
    summary: "Changes only the name and description of a usage key.",
    auth: "account",
    body: MetadataBody,
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      const h = await ownUsageKey(ctx, auth, body.usage_api_key);
      await relayWrite(ctx, "updateUsageApiKeyMetadata", [auth.accountHash, h, body.name, body.description], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/remove_usage_api_key",
    tag: "Usage keys",
    summary: "Revokes a usage key at once.",
    auth: "account",
    body: RemoveBody,
    errors: [...WRITE_ERRORS, "usage_key_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      const h = await ownUsageKey(ctx, auth, body.usage_api_key);
      await relayWrite(ctx, "removeUsageApiKey", [auth.accountHash, h], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_api_keys",
    tag: "Usage keys",
    summary: "The account's usage keys: hash (keccak256 of the key), metadata and full permission set (never the key); Chipotle's fields and spec 1's.",
    auth: "account",
    query: paging,
    response: z.array(UsageKeyItem),
    handler: async ({ auth, query }) => {
      const [items] = await cachedRead(ctx, auth.accountHash, `listUsageApiKeys:${query.page_number}:${query.page_size}`, (c) =>
        c.listUsageApiKeys(auth.accountHash, query.page_number, query.page_size),
      );
      return items.map(toRestUsageKey);
    },
  });
}
