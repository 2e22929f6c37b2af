import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, token } from "../schemas/common";
import { route } from "../http/route";
import { auditPage } from "../audit/events";
import type { Ctx } from "../context";

/** The most entries one list_audit_events page answers (each costs a block and a transaction read). */
export const MAX_AUDIT_PAGE = 50;

const Query = z
  .object({
    cursor: token(40, "cursor")
      .regex(/^\d{1,15}:\d{1,9}$/, "cursor must be the next_cursor of the page before")
      .transform((c) => {
        const [block, index] = c.split(":").map(Number);
        return { block, index };
      })
      .optional()
      .openapi({ type: "string", description: "The next_cursor of the page before; omitted = the newest entries." }),
    limit: z.coerce
      .number({ message: `limit must be from 1 to ${MAX_AUDIT_PAGE}` })
      .int(`limit must be from 1 to ${MAX_AUDIT_PAGE}`)
      .min(1, `limit must be from 1 to ${MAX_AUDIT_PAGE}`)
      .max(MAX_AUDIT_PAGE, `limit must be from 1 to ${MAX_AUDIT_PAGE}`)
      .default(20),
  })
  .strict();

const Entry = z
  .object({
    event: z.string().openapi({ description: "The contract event: GroupCreated, UsageApiKeySet, ActionAdded, …", example: "GroupCreated" }),
    args: z.record(z.string(), z.union([z.string(), z.boolean()])).openapi({ description: "The event's fields (hashes as 0x + 64 hex, numbers as decimal strings), but the account's hash and the actor's." }),
    actor_key_hash: z.string().nullable().openapi({ description: "The key that acted (keccak256 of it), for events that record one." }),
    sender: z.string().openapi({ description: "The address that sent the transaction: the service's payer for a managed account, the admin wallet when it writes itself." }),
    tx_hash: z.string(),
    block_number: z.number().int(),
    log_index: z.number().int(),
    time: z.string().openapi({ description: "The block's time (ISO 8601)." }),
  })
  .openapi("AuditEntry");

export function auditRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/list_audit_events",
    tag: "Accounts",
    summary:
      "The account's administrative history from the AccountConfig contract's events (who, what, when, transaction hash), newest first, a page at a time (next_cursor). The owner only (account key). Scans from VESTA_AUDIT_FROM_BLOCK; rate limited per client (VESTA_AUDIT_RATE_LIMIT a minute) and for all clients (VESTA_AUDIT_TOTAL_RATE_LIMIT); a page that found nothing in its scan bound answers an empty page with a next_cursor to go on.",
    auth: "account",
    query: Query,
    errors: ["rate_limited"],
    response: z.object({ events: z.array(Entry), next_cursor: z.string().nullable() }).openapi("ListAuditEventsResponse"),
    handler: async ({ auth, query }) => auditPage(ctx.chain, auth.accountHash, { limit: query.limit, cursor: query.cursor, fromBlock: ctx.config.auditFromBlock }),
  });
}
