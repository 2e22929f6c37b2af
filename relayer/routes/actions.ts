import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, name, description, groupId, hash32, paging, success } from "../schemas/common";
import { route } from "../http/route";
import { asOwner } from "../http/auth";
import { cachedRead, relayWrite, WRITE_ERRORS } from "../chain/relay";
import { cidHash, cidString } from "../schemas/cid";
import { ListItem } from "./groups";
import type { Ctx } from "../context";
import { hex32 } from "../../protocol/usageKeyShape";

const AddActionBody = z.object({ action_ipfs_cid: cidString, name: name.default(""), description: description.default("") }).strict().openapi("AddActionRequest");
const HashedBody = z.object({ hashed_cid: hash32 }).strict().openapi("DeleteActionRequest");
const MetadataBody = z.object({ hashed_cid: hash32, name, description: description.default("") }).strict().openapi("UpdateActionMetadataRequest");
const ActionItem = ListItem.extend({ hashed_cid: z.string() }).openapi("ActionItem");


export function actionRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/add_action",
    tag: "Actions",
    summary: "Registers action metadata for a raw IPFS CID (hashed server-side).",
    auth: "key",
    body: AddActionBody,
    errors: WRITE_ERRORS,
    response: z.object({ success: z.literal(true), hashed_cid: z.string() }),
    handler: async ({ auth, body }) => {
      const h = cidHash(body.action_ipfs_cid);
      await relayWrite(ctx, "addAction", [auth.keyHash, body.name, body.description, h], await asOwner(ctx, auth));
      return { success: true, hashed_cid: h };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/delete_action",
    tag: "Actions",
    summary: "Deletes an action's metadata from the account (groups listing the CID are unchanged).",
    auth: "key",
    body: HashedBody,
    errors: [...WRITE_ERRORS, "action_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      await relayWrite(ctx, "removeAction", [auth.keyHash, body.hashed_cid], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "post",
    path: "/update_action_metadata",
    tag: "Actions",
    summary: "Changes an action's name and description.",
    auth: "key",
    body: MetadataBody,
    errors: [...WRITE_ERRORS, "action_not_found"],
    response: success,
    handler: async ({ auth, body }) => {
      await relayWrite(ctx, "updateActionMetadata", [auth.keyHash, body.hashed_cid, 0n, body.name, body.description], await asOwner(ctx, auth));
      return { success: true };
    },
  });

  route(router, registry, ctx, {
    method: "get",
    path: "/list_actions",
    tag: "Actions",
    summary: "With group_id: the actions in that group; without: the account's registered actions.",
    auth: "key",
    query: paging.extend({ group_id: groupId.optional() }),
    errors: ["group_not_found"],
    response: z.array(ActionItem),
    handler: async ({ auth, query }) => {
      const [items] = await cachedRead(ctx, auth.accountHash, `listActions:${query.group_id ?? "all"}:${query.page_number}:${query.page_size}`, (c) =>
        query.group_id === undefined
          ? c.listActions(auth.accountHash, query.page_number, query.page_size)
          : c.listActionsInGroup(auth.accountHash, query.group_id, query.page_number, query.page_size),
      );
      return items.map((a) => ({ id: hex32(a.cidHash), hashed_cid: hex32(a.cidHash), name: a.name, description: a.description }));
    },
  });
}
