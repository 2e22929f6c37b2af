import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, name, description, uint64, uint256, paging, success, boundedList } from "../schemas/common";
import { LIMITS } from "../../protocol/limits";
import { route } from "../http/route";
import { MAX_KEY_LENGTH } from "../http/auth";
import { cachedRead, relayWrite, WRITE_ERRORS } from "../chain/relay";
import { notFound } from "../errors";
import { newSecretKey } from "./accounts";
import type { Ctx } from "../context";
import type { Auth } from "../http/auth";
import { toContractPermissions, toRestUsageKey } from "../../protocol/usageKeyShape";
import { usageKeyHash, usageKeyProof } from "../../protocol/usageKeyProof";

/** A usage key's value in a body (the API names keys by value; the hash is derived from it). */
const usageKeyValue = z.string().min(1, "usage_api_key must not be empty").max(MAX_KEY_LENGTH, `usage_api_key: at most ${MAX_KEY_LENGTH} characters`);

const groupList = (what: string) =>
  boundedList(uint64(`${what} entry`), LIMITS.permissionGroups, what)
    .default([])
    .openapi({ type: "array", items: { type: "integer" }, description: `Group ids; [0] = all groups, [] = none.` });

/** The permission set of spec 1; omitted fields take their defaults (false, []). */
const permissionFields = {
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
  balance: uint256("balance").default(0n).openapi({ type: "integer" }),
};

const AddBody = z.object(permissionFields).strict().openapi("AddUsageApiKeyRequest");
/**
 * Update: the permission fields are replaced (omitted ones reset to their defaults, per spec 1);
 * name, description, expiration and balance are not permissions and keep their current values when
 * omitted (an omitted expiration must never turn an expiring key into one that never expires).
 */
const UpdateBody = z
  .object({
    usage_api_key: usageKeyValue,
    ...permissionFields,
    name: name.optional(),
    description: description.optional(),
    expiration: uint64("expiration").optional().openapi({ type: "integer", description: "Unix seconds; 0 = never; omitted = unchanged." }),
    balance: uint256("balance").optional().openapi({ type: "integer", description: "Omitted = unchanged." }),
  })
  .strict()
  .openapi("UpdateUsageApiKeyRequest");
const MetadataBody = z
  .object({ usage_api_key: usageKeyValue, name, description: description.default("") })
  .strict()
  .openapi("UpdateUsageApiKeyMetadataRequest");
const RemoveBody = z.object({ usage_api_key: usageKeyValue }).strict().openapi("RemoveUsageApiKeyRequest");

const UsageKeyItem = z
  .object({
    id: z.string().openapi({ description: "keccak256 of the usage key (never the key itself)" }),
    name: z.string(),
    description: z.string(),
    expiration: z.number().int(),
    balance: z.string(),
    can_create_groups: z.boolean(),
    can_delete_groups: z.boolean(),
    can_create_pkps: z.boolean(),
    manage_ipfs_ids_in_groups: z.array(z.number().int()),
    add_pkp_to_groups: z.array(z.number().int()),
    remove_pkp_from_groups: z.array(z.number().int()),
    execute_in_groups: z.array(z.number().int()),
  })
  .openapi("UsageApiKeyItem");

type PermissionInput = z.output<typeof AddBody>;

/** Adds or replaces `usageApiKey` of the caller's account, with the key's proof of possession (needed when it is new). */
const setKey = (ctx: Ctx, auth: Auth, usageApiKey: string, b: PermissionInput) => {
  const proof = usageKeyProof(usageApiKey, { chainId: ctx.chain.chainId, contract: ctx.config.accountConfigAddress, apiKeyHash: auth.accountHash });
  return relayWrite(ctx, "setUsageApiKey", [auth.accountHash, usageKeyHash(usageApiKey), b.expiration, b.balance, b.name, b.description, toContractPermissions(b), proof]);
};

/** The hash of a usage key of the caller's account, or 404. */
async function ownUsageKey(ctx: Ctx, auth: Auth, usageApiKey: string): Promise<bigint> {
  const h = usageKeyHash(usageApiKey);
  const [account, isAccountKey] = await ctx.chain.accountConfig.resolveApiKey(h);
  if (account !== auth.accountHash || isAccountKey) throw notFound("usage_key_not_found", "no such usage key in this account");
  return h;
}

export function usageKeyRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/add_usage_api_key",
    tag: "Usage keys",
    summary: "Creates a usage key with its permission set; its value is returned once.",
    auth: "account",
    body: AddBody,
    errors: WRITE_ERRORS,
    response: z.object({ success: z.literal(true), usage_api_key: z.string() }),
    handler: async ({ auth, body }) => {
      const key = newSecretKey();
      await setKey(ctx, auth, key, body);
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
      const h = await ownUsageKey(ctx, auth, body.usage_api_key);
      const current = await ctx.chain.accountConfig.getUsageApiKey(h);
      await setKey(ctx, auth, body.usage_api_key, {
        ...body,
        name: body.name ?? current.name,
        description: body.description ?? current.description,
        expiration: body.expiration ?? current.expiration,
        balance: body.balance ?? current.balance,
      });
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
      await relayWrite(ctx, "updateUsageApiKeyMetadata", [auth.accountHash, h, body.name, body.description]);
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
      await relayWrite(ctx, "removeUsageApiKey", [auth.accountHash, h]);
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_api_keys",
    tag: "Usage keys",
    summary: "The account's usage keys: hash, metadata and full permission set (never the key).",
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
