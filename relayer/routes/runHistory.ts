import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z, hash32, token } from "../schemas/common";
import { actionCid } from "../schemas/cid";
import { route } from "../http/route";
import { AppError } from "../errors";
import { hex32 } from "../../protocol/usageKeyShape";
import { RUN_ERROR_BYTES, RUN_LOG_BYTES } from "../runs/history";
import type { Ctx } from "../context";

/** The most runs one list_runs page answers. */
export const MAX_RUNS_PAGE = 100;

const ListRunsQuery = z
  .object({
    key_hash: hash32.optional().openapi({ description: "Only the runs of this key: keccak256 of the key, as list_api_keys' api_key_hash. A usage key may name only itself." }),
    ipfs_id: actionCid.optional().openapi({ description: "Only the runs of this action (its CID as the run answered it)." }),
    status: z.enum(["success", "failed"]).optional(),
    cursor: token(16, "cursor")
      .regex(/^[1-9]\d{0,14}$/, "cursor must be the next_cursor of the page before")
      .transform(Number)
      .optional()
      .openapi({ type: "string", description: "The next_cursor of the page before; omitted = the newest runs." }),
    limit: z.coerce.number().int("limit must be an integer").min(1, `limit must be from 1 to ${MAX_RUNS_PAGE}`).max(MAX_RUNS_PAGE, `limit must be from 1 to ${MAX_RUNS_PAGE}`).default(20),
  })
  .strict();

const RunItem = z
  .object({
    run_id: z.string(),
    key_hash: z.string().openapi({ description: "keccak256 of the key that ran it (never the key)." }),
    ipfs_id: z.string().openapi({ description: "The action's CID." }),
    status: z.enum(["success", "failed"]),
    started_at: z.string().openapi({ description: "When the run left the queue for a sandbox (ISO 8601)." }),
    duration_ms: z.number().int().nullable().openapi({ description: "The time it held a sandbox." }),
    cost_cents: z.number().int().openapi({ description: "What it was charged (0 when billing is off)." }),
    logs: z.string().openapi({ description: `Its console output, the first ${RUN_LOG_BYTES / 1024} KiB.` }),
    logs_truncated: z.boolean(),
    error: z.string().nullable().openapi({ description: `When failed: the error with its JavaScript stack, the first ${RUN_ERROR_BYTES / 1024} KiB.` }),
    request_id: z.string().nullable().openapi({ description: "The X-Request-Id the run's request was answered with." }),
  })
  .openapi("RunItem");

export function runHistoryRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "get",
    path: "/list_runs",
    tag: "Actions",
    summary:
      "The account's action runs (every lit_action that ran: dashboard, API, triggers), newest first, a page at a time (`next_cursor`). The account key sees every key's runs; a usage key sees only its own (403 owner_only when key_hash names another). No params, response or key is stored; runs are kept VESTA_RUN_HISTORY_DAYS, at most VESTA_RUN_HISTORY_PER_ACCOUNT per account.",
    auth: "key",
    query: ListRunsQuery,
    errors: ["owner_only"],
    response: z.object({ runs: z.array(RunItem), next_cursor: z.string().nullable() }).openapi("ListRunsResponse"),
    handler: async ({ auth, query }) => {
      const own = hex32(auth.keyHash);
      if (!auth.isAccountKey && query.key_hash !== undefined && query.key_hash !== own) {
        throw new AppError(403, "owner_only", "a usage key sees only its own runs: only the account key may read other keys' runs");
      }
      return ctx.runs.list(auth.accountHash, {
        keyHash: auth.isAccountKey ? query.key_hash : own,
        cid: query.ipfs_id,
        status: query.status,
        cursor: query.cursor,
        limit: query.limit,
      });
    },
  });
}
