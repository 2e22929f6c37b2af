import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, requiredName, description, groupId, address, hash32, paging, success, boundedList } from "../schemas/common";
import { LIMITS } from "../../protocol/limits";
import { route } from "../http/route";
import { asOwner } from "../http/auth";
import { cachedRead, eventArgs, relayWrite, WRITE_ERRORS } from "../chain/relay";
import { cidHash, cidString } from "../schemas/cid";
import type { Ctx } from "../context";
import type { Auth } from "../http/auth";
import { AppError } from "../errors";
import { accountRecord } from "../../billing/charges";

const members = {
  pkp_ids_permitted: boundedList(address, LIMITS.groupMembers, "pkp_ids_permitted").default([]),
  cid_hashes_permitted: boundedList(hash32, LIMITS.groupMembers, "cid_hashes_permitted").default([]),
};

const AddGroupBody = z
  .object({ group_name: requiredName("group_name"), group_description: description.default(""), ...members })
  .strict()
  .openapi("AddGroupRequest");
const UpdateGroupBody = z
  .object({ group_id: groupId, name: requiredName("name"), description: description.default(""), ...members })
  .strict()
  .openapi("UpdateGroupRequest");
const GroupIdBody = z.object({ group_id: groupId }).strict().openapi("RemoveGroupRequest");
const PkpInGroupBody = z.object({ group_id: groupId, pkp_id: address }).strict().openapi("PkpInGroupRequest");
const AddActionToGroupBody = z.object({ group_id: groupId, action_ipfs_cid: cidString }).strict().openapi("AddActionToGroupRequest");
const RemoveActionFromGroupBody = z.object({ group_id: groupId, hashed_cid: hash32 }).strict().openapi("RemoveActionFromGroupRequest");

/**
 * The account's admin wallet (new_account's `wallet_address`) holds the account: it is never a PKP,
 * and no group lists it, since an action permitted to use a PKP's key would then act as the owner.
 * The contract refuses it too (not a registered wallet); this says why.
 */
async function refuseAdminWallet(ctx: Ctx, auth: Auth, pkps: string[]): Promise<void> {
  if (pkps.length === 0) return;
  const { admin } = await accountRecord(ctx, auth.accountHash);
  if (pkps.includes(admin)) {
    throw new AppError(
      400,
      "admin_wallet_not_a_pkp",
      `${admin} is this account's admin wallet (the wallet_address new_account answered), not a PKP: it owns the account, and an action allowed to use its key would act as the owner. Create a PKP with create_wallet and use that one`,
      { pkp_id: admin },
    );
  }
}

export const ListItem = z.object({ id: z.string(), name: z.string(), description: z.string() }).openapi("ListItem");

export function groupRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/add_group",
    tag: "Groups",
    summary: "Creates a group (group:create; initial PKPs need group:addPkp and CIDs group:manageActions on it).",
    auth: "key",
    body: AddGroupBody,
    errors: [...WRITE_ERRORS, "wallet_not_found", "admin_wallet_not_a_pkp"],
    response: z
      .object({ success: z.literal(true), group_id: z.string().openapi({ description: "The new group's id, a decimal string (as Chipotle answers it); every route takes it as string or number.", example: "1" }) })
      .openapi("AddGroupResponse"),
    handler: async ({ auth, body }) => {
      await refuseAdminWallet(ctx, auth, body.pkp_ids_permitted);
      const receipt = await relayWrite(ctx, "addGroup", [auth.keyHash, body.group_name, body.group_description, body.cid_hashes_permitted, body.pkp_ids_permitted], await asOwner(ctx, auth));
      return { success: true, group_id: BigInt(eventArgs(ctx, receipt, "GroupCreated").groupId).toString() };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/update_group",
    tag: "Groups",
    summary: "Replaces a group's name, description, PKPs and CID hashes.",
    auth: "key",
    body: UpdateGroupBody,
    errors: [...WRITE_ERRORS, "group_not_found", "wallet_not_found", "admin_wallet_not_a_pkp"],
    response: success,
    handler: async ({ auth, body }) => {
      await refuseAdminWallet(ctx, auth, body.pkp_ids_permitted);
      await relayWrite(ctx, "updateGroup", [auth.keyHash, body.group_id, body.name, body.description, body.cid_hashes_permitted, body.pkp_ids_permitted], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/remove_group",
    tag: "Groups",
    summary: "Deletes a group (group:delete).",
    auth: "key",
    body: GroupIdBody,
    errors: [...WRITE_ERRORS, "group_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      await relayWrite(ctx, "removeGroup", [auth.keyHash, body.group_id], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/add_pkp_to_group",
    tag: "Groups",
    summary: "Adds one of the account's PKPs to a group (group:addPkp on it).",
    auth: "key",
    body: PkpInGroupBody,
    errors: [...WRITE_ERRORS, "group_not_found", "wallet_not_found", "admin_wallet_not_a_pkp"],
    response: success,
    handler: async ({ auth, body }) => {
      await refuseAdminWallet(ctx, auth, [body.pkp_id]);
      await relayWrite(ctx, "addPkpToGroup", [auth.keyHash, body.group_id, body.pkp_id], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/remove_pkp_from_group",
    tag: "Groups",
    summary: "Removes a PKP from a group (group:removePkp on it).",
    auth: "key",
    body: PkpInGroupBody,
    errors: [...WRITE_ERRORS, "group_not_found", "wallet_not_in_group"],
    response: success,
    handler: async ({ auth, body }) => {
      await relayWrite(ctx, "removePkpFromGroup", [auth.keyHash, body.group_id, body.pkp_id], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/add_action_to_group",
    tag: "Groups",
    summary: "Lists an action (raw IPFS CID, hashed server-side) in a group (group:manageActions on it).",
    auth: "key",
    body: AddActionToGroupBody,
    errors: [...WRITE_ERRORS, "group_not_found"],
    response: z.object({ success: z.literal(true), hashed_cid: z.string() }),
    handler: async ({ auth, body }) => {
      const h = cidHash(body.action_ipfs_cid);
      await relayWrite(ctx, "addActionToGroup", [auth.keyHash, body.group_id, h], await asOwner(ctx, auth));
      return { success: true, hashed_cid: h };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/remove_action_from_group",
    tag: "Groups",
    summary: "Removes an action (by hashed CID) from a group (group:manageActions on it).",
    auth: "key",
    body: RemoveActionFromGroupBody,
    errors: [...WRITE_ERRORS, "group_not_found", "action_not_in_group"],
    response: success,
    handler: async ({ auth, body }) => {
      await relayWrite(ctx, "removeActionFromGroup", [auth.keyHash, body.group_id, body.hashed_cid], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_groups",
    tag: "Groups",
    summary: "The account's groups.",
    auth: "key",
    query: paging,
    response: z.array(ListItem.extend({ pkp_count: z.number().int(), cid_count: z.number().int() })),
    handler: async ({ auth, query }) => {
      const [items] = await cachedRead(ctx, auth.accountHash, `listGroups:${query.page_number}:${query.page_size}`, (c) => c.listGroups(auth.accountHash, query.page_number, query.page_size));
      return items.map((g) => ({ id: g.id.toString(), name: g.name, description: g.description, pkp_count: Number(g.pkpCount), cid_count: Number(g.cidCount) }));
    },
  });
}
