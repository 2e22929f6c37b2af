import express, { Router } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import { AppError, notFound } from "../../protocol/errors";
import { jsonDeeperThan, tooDeepMessage } from "../../protocol/json";
import { decodeUtf8 } from "../../protocol/text";
import { firstMalformedString, wellFormedJson } from "../../protocol/textSchema";
import { newId } from "../crypto";
import type { TriggersCtx } from "../context";

/** Headers never handed to the action: they carry the caller's secrets. */
export const STRIPPED_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "x-api-key"]);

const limited = (what: string) => (_req: unknown, _res: unknown, next: (e: unknown) => void) =>
  next(new AppError(429, "rate_limited", `too many webhook calls ${what}; retry later`));

/** Public POST /webhook/<id>: any body (JSON or text), 202 with the run id. */
export function webhookRoutes(ctx: TriggersCtx): Router {
  const r = Router();
  const perIp = rateLimit({
    windowMs: ctx.config.rateWindowMs,
    limit: ctx.config.ratePerIp,
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? "unknown"),
    handler: limited("from this address"),
    validate: { xForwardedForHeader: false }, // ignored on purpose unless TRIGGERS_TRUST_PROXY names the proxy
  });
  const perTrigger = rateLimit({
    windowMs: ctx.config.rateWindowMs,
    limit: ctx.config.ratePerTrigger,
    keyGenerator: (req) => `trigger:${req.params.id}`,
    handler: limited("for this trigger"),
    validate: false,
  });
  r.post("/webhook/:id", perIp, perTrigger, express.raw({ type: () => true, limit: ctx.config.webhookBodyLimit }), async (req, res) => {
    const t = await ctx.store.getTrigger(String(req.params.id));
    if (!t || t.kind !== "webhook") throw notFound("trigger_not_found", `no webhook trigger ${req.params.id}`);
    if (!t.enabled) throw new AppError(409, "trigger_disabled", "this trigger is disabled");
    const bytes = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    // event_raw carries the exact bytes: as text when they are valid UTF-8, otherwise as base64.
    const text = decodeUtf8(bytes);
    const raw = text ?? bytes.toString("base64");
    const encoding = text === undefined ? "base64" : "utf8";
    let event: unknown = raw;
    if (text && (req.is("application/json") || req.is("+json") || /^\s*[[{"]/.test(text))) {
      try {
        event = JSON.parse(raw);
      } catch {
        if (req.is("application/json")) throw new AppError(400, "invalid_request", "the request body is not valid JSON");
      }
      // The event reaches the action 2 levels deeper (js_params.event): measured before anything walks it.
      if (jsonDeeperThan(event, ctx.config.maxJsonDepth)) throw new AppError(400, "json_too_deep", tooDeepMessage("the JSON body", ctx.config.maxJsonDepth));
      // A sender's "\ud800" (a lone surrogate) has no UTF-8 form the core would take: the event shows U+FFFD, event_raw keeps the exact text.
      if (firstMalformedString(event)) event = wellFormedJson(event);
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !STRIPPED_HEADERS.has(k.toLowerCase())));
    const id = newId("run");
    const params = { ...t.defaultParams, event, event_raw: raw, event_raw_encoding: encoding, headers };
    // What the core would refuse is refused here, before anything is stored (the event travels twice: parsed and raw).
    const size = Buffer.byteLength(JSON.stringify(params), "utf8");
    if (size > ctx.config.maxRunParamsBytes) {
      throw new AppError(413, "params_too_large", `this call would give the action ${size} bytes of params (the event, its raw bytes, the headers and the default params); at most ${ctx.config.maxRunParamsBytes}`);
    }
    if (!(await ctx.store.enqueueBounded(t.id, { id, params }, ctx.now(), ctx.config.maxQueuedPerTrigger))) {
      res.set("Retry-After", "30");
      throw new AppError(429, "trigger_queue_full", `this trigger has ${ctx.config.maxQueuedPerTrigger} runs waiting already; retry later`);
    }
    ctx.wake();
    res.status(202).json({ run_id: id, status: "queued" });
  });
  return r;
}
