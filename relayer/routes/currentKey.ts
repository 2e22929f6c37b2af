import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z } from "../schemas/common";
import { route } from "../http/route";
import { cachedRead } from "../chain/relay";
import { hex32, toRestUsageKey } from "../../protocol/usageKeyShape";
import { UsageKeyItem } from "./usageKeys";
import type { Ctx } from "../context";

const CurrentKey = z
  .object({
    key_kind: z.enum(["account", "usage"]).openapi({ description: "The account key (or the account's wallet, or an identity session) or a usage key." }),
    api_key_hash: z.string().openapi({ description: "keccak256 of the presented key (for a wallet or an identity session: the account's hash)." }),
    usage_api_key: UsageKeyItem.optional().openapi({ description: "For a usage key: its own name, description, expiration and permissions, as list_api_keys shows them to the owner." }),
  })
  .openapi("CurrentApiKeyResponse");

/**
 * Who is calling: the dashboard, signed in with a usage key, shows only what that key may do and
 * names it. A key learns only its own record (what it could find out by trying), never another's.
 */
export function currentKeyRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/get_current_api_key",
    tag: "Usage keys",
    summary: "The presented key: account or usage key, its hash, and for a usage key its own name and permissions (the key itself is never answered).",
    auth: "key",
    query: z.object({}).strict(),
    response: CurrentKey,
    handler: async ({ auth }) => {
      if (auth.isAccountKey) return { key_kind: "account" as const, api_key_hash: hex32(auth.keyHash) };
      const k = await cachedRead(ctx, auth.accountHash, `getUsageApiKey:${auth.keyHash}`, (c) => c.getUsageApiKey(auth.keyHash));
      return { key_kind: "usage" as const, api_key_hash: hex32(auth.keyHash), usage_api_key: toRestUsageKey(k) };
    },
  });
}
