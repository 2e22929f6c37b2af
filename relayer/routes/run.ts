import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Router } from "express";
import { z } from "../schemas/common";
import { RUN_REFUSAL_CODES } from "../http/runRefusals";
import { route } from "../http/route";
import { actionCode } from "../../executor/code";
import { admitRun } from "../../billing/charges";
import type { Ctx } from "../context";

const RunBody = z
  .object({
    code: z.string().optional().openapi({
      description: "The action: `async function main(params) { ... }`, well-formed Unicode (its UTF-8 bytes are hashed and run), at most VESTA_ACTION_MAX_CODE_BYTES. Stored by its CID.",
    }),
    ipfs_id: z.string().max(128).optional().openapi({ description: "The CID of code sent before (or to check `code` against)." }),
    js_params: z.unknown().optional().openapi({ description: "Passed to main(params); at most VESTA_ACTION_MAX_PARAMS_BYTES (64 KB) as JSON, nested at most VESTA_MAX_JSON_DEPTH (64) deep." }),
  })
  .strict()
  .openapi("RunActionRequest");

const RunResponse = z
  .object({
    response: z.unknown(),
    logs: z.string(),
    has_error: z.boolean(),
    error: z.string().optional().openapi({ description: "What went wrong, with the JavaScript stack when the action threw (only when has_error)." }),
    ipfs_id: z.string(),
  })
  .openapi("RunActionResponse");

const ExecutePermissionBody = z
  .object({
    code: z.string().optional().openapi({ description: "The action's source: its CID is computed, nothing is stored." }),
    ipfs_id: z.string().max(128).optional().openapi({ description: "The action's CID (or the CID to check `code` against)." }),
  })
  .strict()
  .openapi("ExecutePermissionRequest");

const ExecutePermissionResponse = z
  .object({
    key_kind: z.enum(["account", "usage"]).openapi({ description: "Whether the presented key is the account key or a usage key." }),
    ipfs_id: z.string().openapi({ description: "The action's CID." }),
    can_execute: z.boolean().openapi({ description: "Whether this key may run the action: a group on which it has execute lists the CID." }),
  })
  .openapi("ExecutePermissionResponse");

export function runRoutes(router: Router, registry: OpenAPIRegistry, ctx: Ctx) {
  route(router, registry, ctx, {
    method: "post",
    path: "/check_execute_permission",
    tag: "Actions",
    summary: "Whether the presented key is a usage key and may run an action ({code} or {ipfs_id}); runs, stores and charges nothing, and tells nothing of other keys or accounts.",
    auth: "key",
    body: ExecutePermissionBody,
    errors: ["invalid_code", "code_too_large"],
    response: ExecutePermissionResponse,
    handler: async ({ auth, body }) => {
      const cid = await ctx.executor.cidOf({ code: body.code, ipfsId: body.ipfs_id });
      return { key_kind: auth.isAccountKey ? "account" : "usage", ipfs_id: cid, can_execute: await ctx.executor.mayRun(auth, cid) };
    },
  });

  for (const path of ["/lit_action", "/run_action"]) {
    route(router, registry, ctx, {
      method: "post",
      path,
      tag: "Actions",
      summary: "Runs an action with the key's permissions: {code?, ipfs_id?, js_params?} → {response, logs, has_error}.",
      auth: "key",
      body: RunBody,
      response: RunResponse,
      errors: [...RUN_REFUSAL_CODES, "payment_required"],
      handler: async ({ auth, body }) => {
        const run = await ctx.executor.prepare(auth, { code: body.code, ipfsId: body.ipfs_id, params: body.js_params }); // 400/403/404/413
        // One billing step between the permission check and the run: reserve its time limit (402 here), settle what it used.
        const charge = await admitRun(ctx, auth.accountHash, ctx.config.limits.timeoutMs);
        let r: Awaited<ReturnType<typeof ctx.executor.execute>> | undefined;
        try {
          r = await ctx.executor.execute(run); // 429 when the account's share is full
        } finally {
          charge.settle(r?.durationMs); // undefined (never started, or refused): the reservation is released
        }
        return {
          response: r.response ?? null,
          logs: r.logs,
          has_error: r.hasError,
          ...(r.hasError && r.error ? { error: r.error.stack ? `${r.error.message}\n${r.error.stack}` : r.error.message } : {}),
          ipfs_id: r.ipfsId,
        };
      },
    });
  }

  for (const path of ["/get_action_ipfs_id", "/get_lit_action_ipfs_id"]) {
    route(router, registry, ctx, {
      method: "post",
      path,
      tag: "Actions",
      summary: "The IPFS CID (CIDv0, as `ipfs add` gives) of the action code sent as a JSON string body.",
      auth: "none",
      body: z.string().openapi({ description: "The action's JavaScript source, as a JSON string." }),
      errors: ["invalid_code", "code_too_large"],
      response: z.string().openapi({ example: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" }),
      handler: async ({ body }) => (await actionCode(body, ctx.config.limits.maxCodeBytes)).cid, // the same checks and bytes as a run
    });
  }
}
