import { Router } from "express";
import { z } from "zod";
import { AppError, notFound } from "../../protocol/errors";
import { jsonBody } from "../../protocol/jsonBody";
import { parseOrThrow } from "../../protocol/validate";
import { jsonDeeperThan, MAX_STORED_JSON_DEPTH } from "../../protocol/json";
import { text } from "../../protocol/textSchema";
import { newId, open, seal } from "../crypto";
import { requirePermittedKey } from "../keyCheck";
import type { TriggersCtx } from "../context";
import { prepareKind } from "../kinds";
import type { RunRow, TriggerRow } from "../store/types";
import { dashboardCors, requireUser } from "./auth";
import { keyHash } from "../../protocol/usageKeySeal";
import { hex32 } from "../../protocol/usageKeyShape";

/** A trigger's name, and the usage key it runs with: one line of well-formed text (400 invalid_text). */
const label = (max: number) => text({ kind: "label", min: 1, maxChars: max });
/**
 * Action code: well-formed Unicode, as the core demands of code it hashes and runs (400 invalid_code),
 * and no NUL, which PostgreSQL text cannot hold.
 */
const actionCode = text({ kind: "code", min: 1, maxChars: 1024 * 1024, errorCode: "invalid_code" }).refine((s) => !s.includes("\u0000"), "must not hold NUL characters (the trigger store cannot keep them)");
const Create = z.strictObject({
  name: label(200),
  kind: z.enum(["webhook", "schedule", "chain_event"]),
  action_code: actionCode,
  default_params: z.record(z.string(), z.unknown()).default({}),
  usage_api_key: label(500),
  config: z.record(z.string(), z.unknown()).default({}),
  enabled: z.boolean().default(true),
});
const Patch = z.strictObject({
  name: label(200).optional(),
  action_code: actionCode.optional(),
  default_params: z.record(z.string(), z.unknown()).optional(),
  usage_api_key: label(500).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  enabled: z.boolean().optional(),
});
const Page = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20), offset: z.coerce.number().int().min(0).default(0) });

const iso = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

/** A stored value as the API shows it: one nested too deeply to serialize (stored by an older version) is described instead. */
const shown = (v: unknown) => (jsonDeeperThan(v, MAX_STORED_JSON_DEPTH) ? { unavailable: "nested too deeply to show" } : v);

/**
 * The public form of a trigger: never the usage key, only its on-chain hash (what list_api_keys shows),
 * so an owner sees which key a trigger runs with and is warned before removing it.
 */
export const triggerJson = (ctx: TriggersCtx, t: TriggerRow) => ({
  id: t.id,
  name: t.name,
  kind: t.kind,
  enabled: t.enabled,
  usage_api_key_hash: hex32(keyHash(open(ctx.secretKey, t.usageKeySealed))),
  action_code: t.actionCode,
  default_params: shown(t.defaultParams),
  config: shown(t.config),
  ...(t.kind === "webhook" ? { webhook_url: `${ctx.publicUrl()}/webhook/${t.id}` } : {}),
  ...(t.kind === "chain_event" ? { next_block: t.state.next_block } : {}),
  created_at: iso(t.createdAt),
  updated_at: iso(t.updatedAt),
});
export const runJson = (r: RunRow) => ({
  id: r.id,
  trigger_id: r.triggerId,
  status: r.status,
  params: shown(r.params),
  attempts: r.attempts,
  response: shown(r.response),
  error: r.error,
  created_at: iso(r.createdAt),
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
});

export function triggerRoutes(ctx: TriggersCtx): Router {
  const r = Router();
  // The web dashboard manages triggers from its origin with the session cookie (requireUser's CSRF guard).
  const cors = dashboardCors(new URL(ctx.config.dashboardUrl).origin, "GET, POST, PATCH, DELETE");
  r.use("/api/triggers", cors, requireUser(ctx), jsonBody({ limit: ctx.config.apiBodyLimit, maxDepth: ctx.config.maxJsonDepth }));
  r.use("/api/runs", cors, requireUser(ctx));
  const own = async (userId: string, id: string) => {
    const t = await ctx.store.getTrigger(id);
    if (!t || t.userId !== userId) throw notFound("trigger_not_found", `no trigger ${id}`);
    return t;
  };

  r.post("/api/triggers", async (req, res) => {
    const b = parseOrThrow(Create, req.body, "body");
    // Each chain-event trigger polls a chain: fewer of them per user than the overall quota. Refused
    // here before the chain and the core are asked; the insert counts again, in the user's turn.
    const chainEventFull = () =>
      new AppError(409, "trigger_quota_exceeded", `you have ${ctx.config.maxChainEventPerUser} chain-event triggers, the most one user may have (TRIGGERS_MAX_CHAIN_EVENT_PER_USER); delete one first`);
    if (b.kind === "chain_event" && (await ctx.store.listTriggers(req.user!.id)).filter((t) => t.kind === "chain_event").length >= ctx.config.maxChainEventPerUser) throw chainEventFull();
    const { config, state } = await prepareKind(ctx, b.kind, b.config);
    await requirePermittedKey(ctx, b.usage_api_key, b.action_code);
    const now = ctx.now();
    const t: TriggerRow = {
      id: newId("trg"),
      userId: req.user!.id,
      name: b.name,
      kind: b.kind,
      enabled: b.enabled,
      actionCode: b.action_code,
      defaultParams: b.default_params,
      usageKeySealed: seal(ctx.secretKey, b.usage_api_key),
      config,
      state,
      createdAt: now,
      updatedAt: now,
    };
    const inserted = await ctx.store.insertTrigger(t, { perUser: ctx.config.maxTriggersPerUser, ...(b.kind === "chain_event" ? { ofKind: ctx.config.maxChainEventPerUser } : {}) });
    if (inserted === "kind") throw chainEventFull();
    if (inserted === "user") {
      throw new AppError(409, "trigger_quota_exceeded", `you have ${ctx.config.maxTriggersPerUser} triggers, the most one user may have; delete one first`);
    }
    res.status(201).json(triggerJson(ctx, t));
  });
  r.get("/api/triggers", async (req, res) => void res.json((await ctx.store.listTriggers(req.user!.id)).map((t) => triggerJson(ctx, t))));
  r.get("/api/triggers/:id", async (req, res) => void res.json(triggerJson(ctx, await own(req.user!.id, String(req.params.id)))));
  r.patch("/api/triggers/:id", async (req, res) => {
    const t = await own(req.user!.id, String(req.params.id));
    const b = parseOrThrow(Patch, req.body, "body");
    // The key and the action it runs are checked together whenever either changes.
    if (b.usage_api_key !== undefined || b.action_code !== undefined) {
      await requirePermittedKey(ctx, b.usage_api_key ?? open(ctx.secretKey, t.usageKeySealed), b.action_code ?? t.actionCode);
    }
    if (b.config !== undefined) {
      const p = await prepareKind(ctx, t.kind, b.config);
      t.config = p.config;
      if (t.kind === "chain_event" && b.config.start_block === undefined) p.state = t.state; // keep the cursor
      t.state = t.kind === "schedule" ? t.state : p.state;
    }
    if (b.enabled === true && !t.enabled && t.kind === "schedule") t.state = { ...t.state, last_checked: ctx.now() }; // no catch-up for disabled time
    if (b.name !== undefined) t.name = b.name;
    if (b.enabled !== undefined) t.enabled = b.enabled;
    if (b.action_code !== undefined) t.actionCode = b.action_code;
    if (b.default_params !== undefined) t.defaultParams = b.default_params;
    if (b.usage_api_key !== undefined) t.usageKeySealed = seal(ctx.secretKey, b.usage_api_key);
    t.updatedAt = ctx.now();
    await ctx.store.updateTrigger(t);
    res.json(triggerJson(ctx, t));
  });
  r.delete("/api/triggers/:id", async (req, res) => {
    const t = await own(req.user!.id, String(req.params.id));
    await ctx.store.deleteTrigger(t.id);
    res.json({ success: true, id: t.id });
  });
  r.get("/api/triggers/:id/runs", async (req, res) => {
    const t = await own(req.user!.id, String(req.params.id));
    const q = parseOrThrow(Page, req.query, "query");
    const { runs, total } = await ctx.store.listRuns(t.id, q.limit, q.offset);
    res.json({ runs: runs.map(runJson), total, limit: q.limit, offset: q.offset });
  });
  r.get("/api/runs/:id", async (req, res) => {
    const run = await ctx.store.getRun(String(req.params.id));
    if (!run) throw notFound("run_not_found", "no such run");
    await own(req.user!.id, run.triggerId).catch(() => {
      throw notFound("run_not_found", "no such run");
    });
    res.json(runJson(run));
  });
  return r;
}
