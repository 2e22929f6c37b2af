import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../schemas/common";
import { text } from "../../protocol/textSchema";
import { RUN_REFUSAL_CODES } from "../http/runRefusals";
import { statusOf } from "../../protocol/errors";
import { route, type Routes } from "../http/route";
import { actionCode } from "../../executor/code";
import { admitRun, payerOf } from "../../billing/charges";
import { actionCid } from "../schemas/cid";
import type { Ctx } from "../context";
import { recordRun, runErrorText } from "../runs/record";
import { outcomeOf } from "../metrics";

/** Action code: any well-formed text (its UTF-8 bytes are hashed and run); 400 invalid_code otherwise. The executor bounds its size. */
const code = () => text({ kind: "code", errorCode: "invalid_code" });

const RunBody = z
  .object({
    code: code().optional().openapi({
      description:
        "The action: `async function main(params) { ... }`, well-formed Unicode (its UTF-8 bytes are hashed and run), at most VESTA_ACTION_MAX_CODE_BYTES. Stored by its CID once the run is admitted (permitted, paid for, queued), within the payer's VESTA_CODE_STORE_BYTES_PER_PAYER.",
    }),
    ipfs_id: actionCid.optional().openapi({ description: "The CID of code sent before (or to check `code` against), as get_action_ipfs_id answers it." }),
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
    run_id: z.string().openapi({ description: "The run's id in the run history (list_runs)." }),
    duration_ms: z.number().int().nullable().openapi({ description: "How long the action ran, in milliseconds (null when it never started)." }),
    cost_cents: z.number().int().openapi({ description: "What the run was charged, in cents (0 on a node without billing)." }),
  })
  .openapi("RunActionResponse");

const ExecutePermissionBody = z
  .object({
    code: code().optional().openapi({ description: "The action's source: its CID is computed, nothing is stored." }),
    ipfs_id: actionCid.optional().openapi({ description: "The action's CID (or the CID to check `code` against)." }),
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

export function runRoutes(router: Routes, registry: OpenAPIRegistry, ctx: Ctx) {
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
      summary:
        "Runs an action with the key's permissions: {code?, ipfs_id?, js_params?} → {response, logs, has_error}. A run that fails (the action threw, a limit, its sandbox died) answers 422 `action_failed` with the same fields, has_error true and error (message and stack).",
      auth: "key",
      body: RunBody,
      response: RunResponse,
      errors: [...RUN_REFUSAL_CODES, "payment_required", "action_failed"],
      handler: async ({ auth, body, req, res }) => {
        // Each refusal before the work it spares: what needs no code first (403 for a named CID), then
        // credit (402), then a place in the payer's share (429); only then is code hashed or read.
        // Lit.Headers holds this request's ids, as on Chipotle (the X-Request-Id answered, the caller's X-Correlation-Id).
        const headers: Record<string, string> = req.requestId ? { "x-request-id": req.requestId } : {};
        if (req.correlationId) headers["x-correlation-id"] = req.correlationId;
        const run = await ctx.executor.prepare(auth, { code: body.code, ipfsId: body.ipfs_id, params: body.js_params, headers }); // 400/403/413
        const payer = await payerOf(ctx, auth.accountHash);
        // One billing step before the run: reserve its time limit (402 here), settle what it used.
        const charge = await admitRun(ctx, payer, ctx.config.limits.timeoutMs);
        let r: Awaited<ReturnType<typeof ctx.executor.execute>> | undefined;
        const queuedAt = Date.now();
        let startedAt = queuedAt;
        let costCents = 0;
        let runId: string | undefined;
        // Tracked for shutdown: the run and its settlement end before the ledger closes.
        await ctx.drain.track(
          (async () => {
            try {
              // 429 when the payer's share is full, then 400/403/404 for the code, then the run; the reservation
              // records when the run leaves the queue (recovery charges started runs only)
              r = await ctx.executor.execute(run, payer.key, {
                log: req.log,
                onStart: () => {
                  startedAt = Date.now();
                  ctx.metrics.queueWait.observe((startedAt - queuedAt) / 1000);
                  charge.started();
                },
              });
            } catch (err) {
              ctx.metrics.runs.inc({ outcome: outcomeOf(err) });
              throw err;
            } finally {
              // Its debit (undefined duration: never started, or refused: released) and the run's record are
              // committed, side by side, before the answer: a run acknowledged is in the history, whatever happens next.
              costCents = charge.cost(r?.durationMs);
              const [, recorded] = await Promise.all([charge.settle(r?.durationMs), r && recordRun(ctx, auth, r, { startedAt, costCents, requestId: req.requestId, log: req.log })]);
              runId = recorded || undefined;
            }
          })(),
        );
        if (!r) throw new Error("unreachable: a run either resolves or throws");
        ctx.metrics.observeRun(r.hasError ? "action_failed" : "ok", r.durationMs ?? 0);
        const answer = { response: r.response ?? null, logs: r.logs, has_error: r.hasError, ipfs_id: r.ipfsId, run_id: runId, duration_ms: r.durationMs === undefined ? null : Math.round(r.durationMs), cost_cents: costCents };
        if (!r.hasError) return answer;
        // A failed run is a failed request, as on Chipotle (which answers 500; Vesta 422, a client error no client retries as a server fault): the run's answer stays in the body, beside the error body's fields.
        const error = runErrorText(r);
        res.status(statusOf("action_failed"));
        return { ...answer, error, code: "action_failed", message: error };
      },
    });
  }

  for (const path of ["/get_action_ipfs_id", "/get_lit_action_ipfs_id"]) {
    route(router, registry, ctx, {
      method: "post",
      path,
      tag: "Actions",
      summary:
        "The IPFS CID (CIDv0, as `ipfs add` gives) of the action code sent as a JSON string body. Unauthenticated: rate limited per client (VESTA_CID_RATE_LIMIT a minute; VESTA_CID_LARGE_RATE_LIMIT for bodies over 1 MiB) and, for bodies over 1 MiB, over all clients (VESTA_CID_LARGE_TOTAL_RATE_LIMIT).",
      auth: "none",
      body: code().openapi({ description: "The action's JavaScript source, as a JSON string (at most VESTA_ACTION_MAX_CODE_BYTES + 64 KiB of JSON)." }),
      errors: ["invalid_code", "code_too_large", "rate_limited"],
      response: z.string().openapi({ example: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" }),
      handler: async ({ body }) => (await actionCode(body, ctx.config.limits.maxCodeBytes)).cid, // the same checks and bytes as a run
    });
  }
}
