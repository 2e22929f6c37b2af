import crypto from "node:crypto";
import express, { Router, type Request, type RequestHandler } from "express";
import { z } from "zod";
import { AppError, notFound, unauthorized } from "../../relayer/errors";
import { parseOrThrow } from "../../relayer/http/validate";
import { challengeOf, newId, randomToken } from "../crypto";
import type { TriggersCtx } from "../context";
import type { User } from "../store/types";

const SESSION_COOKIE = "vesta_triggers_session";
const LINK_TTL_MS = 15 * 60_000;
const SESSION_TTL_MS = 7 * 24 * 3600_000;
const challenge = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "challenge must be base64url(sha256(token)): 43 characters");

declare module "express-serve-static-core" {
  interface Request {
    user?: User;
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto"><h1>${esc(title)}</h1>${body}</body></html>`;

function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

const sessionUser = (ctx: TriggersCtx, req: Request) => {
  const s = cookie(req, SESSION_COOKIE);
  return s ? ctx.store.sessionUser(challengeOf(s), ctx.now()) : Promise.resolve(undefined);
};
/** CSRF token for the approval form: bound to the session. */
const csrfOf = (ctx: TriggersCtx, req: Request) => crypto.createHmac("sha256", ctx.secretKey).update(`csrf:${cookie(req, SESSION_COOKIE)}`).digest("base64url");

/** Bearer token → req.user; 401 when missing, unknown, unapproved or revoked. */
export const requireBearer = (ctx: TriggersCtx): RequestHandler => async (req, _res, next) => {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (!m) return next(unauthorized("a bearer token is required: Authorization: Bearer <token> (see /SKILL.md for the handshake)"));
  const t = await ctx.store.tokenByChallenge(challengeOf(m[1]));
  if (!t || t.revokedAt) return next(unauthorized("the bearer token is unknown, not yet approved, or revoked"));
  req.user = await ctx.store.userById(t.userId);
  next();
};

/** Magic-link login, the approval page of the handshake, and token listing/revocation. */
export function authRoutes(ctx: TriggersCtx): Router {
  const r = Router();
  const form = express.urlencoded({ extended: false, limit: "8kb" });
  const json = express.json({ limit: "8kb" });

  r.get("/auth/login", (req, res) => {
    const next = typeof req.query.next === "string" ? req.query.next : "/";
    res.type("html").send(page("Sign in", `<form method="post" action="/auth/login"><input type="hidden" name="next" value="${esc(next)}">
      <label>E-mail <input name="email" type="email" required></label> <button>Send me a sign-in link</button></form>`));
  });
  r.post("/auth/login", form, json, async (req, res) => {
    const b = parseOrThrow(z.object({ email: z.string().email().max(320), next: z.string().max(2000).optional() }), req.body, "body");
    const next = b.next?.startsWith("/") && !b.next.startsWith("//") ? b.next : "/";
    const token = randomToken();
    await ctx.store.putMagicLink(challengeOf(token), b.email.toLowerCase(), ctx.now() + LINK_TTL_MS);
    const link = `${ctx.publicUrl()}/auth/magic?token=${token}&next=${encodeURIComponent(next)}`;
    await ctx.mailer(b.email.toLowerCase(), link);
    if (req.is("application/json")) return void res.status(202).json({ sent: true });
    res.type("html").send(page("Check your e-mail", "<p>A sign-in link is on its way (in local mode it is printed in the service's log).</p>"));
  });
  r.get("/auth/magic", async (req, res) => {
    const token = typeof req.query.token === "string" ? req.query.token : "";
    const email = token ? await ctx.store.useMagicLink(challengeOf(token), ctx.now()) : undefined;
    if (!email) throw new AppError(401, "invalid_login_link", "this sign-in link is unknown, used or expired; ask for a new one at /auth/login");
    const user = (await ctx.store.userByEmail(email, true))!;
    const session = randomToken();
    await ctx.store.putSession(challengeOf(session), user.id, ctx.now() + SESSION_TTL_MS);
    res.cookie(SESSION_COOKIE, session, { httpOnly: true, sameSite: "lax", maxAge: SESSION_TTL_MS, path: "/" });
    const next = typeof req.query.next === "string" && req.query.next.startsWith("/") && !req.query.next.startsWith("//") ? req.query.next : "/";
    res.redirect(303, next);
  });

  r.get("/authorize", async (req, res) => {
    const q = parseOrThrow(z.object({ challenge, name: z.string().max(100).optional() }), req.query, "query");
    const user = await sessionUser(ctx, req);
    if (!user) return res.redirect(303, `/auth/login?next=${encodeURIComponent(req.originalUrl)}`);
    res.type("html").send(
      page("Authorize a client", `<p>Signed in as <b>${esc(user.email)}</b>. A client${q.name ? ` named <b>${esc(q.name)}</b>` : ""} asks for a token to manage your triggers.</p>
      <p>Challenge: <code>${esc(q.challenge)}</code></p>
      <form method="post" action="/authorize"><input type="hidden" name="challenge" value="${esc(q.challenge)}"><input type="hidden" name="name" value="${esc(q.name ?? "")}">
      <input type="hidden" name="csrf" value="${csrfOf(ctx, req)}"><button>Approve</button></form>`),
    );
  });
  r.post("/authorize", form, async (req, res) => {
    const b = parseOrThrow(z.object({ challenge, name: z.string().max(100).optional(), csrf: z.string() }), req.body, "body");
    const user = await sessionUser(ctx, req);
    if (!user) throw unauthorized("sign in first: open /auth/login");
    const expected = csrfOf(ctx, req);
    if (b.csrf.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(b.csrf), Buffer.from(expected))) throw new AppError(403, "forbidden", "the approval form is stale; reload it");
    const added = await ctx.store.addToken({ id: newId("tok"), userId: user.id, challenge: b.challenge, name: b.name || "client", createdAt: ctx.now(), revokedAt: null });
    if (!added) throw new AppError(409, "already_exists", "this challenge was already used; generate a new token");
    res.type("html").send(page("Approved", "<p>The client is authorized. You can close this page.</p>"));
  });

  r.get("/api/me", requireBearer(ctx), (req, res) => void res.json({ user_id: req.user!.id, email: req.user!.email }));
  r.get("/api/tokens", requireBearer(ctx), async (req, res) => {
    const tokens = await ctx.store.listTokens(req.user!.id);
    res.json(tokens.map((t) => ({ id: t.id, name: t.name, created_at: new Date(t.createdAt).toISOString(), revoked: t.revokedAt !== null })));
  });
  r.delete("/api/tokens/:id", requireBearer(ctx), async (req, res) => {
    if (!(await ctx.store.revokeToken(req.user!.id, String(req.params.id), ctx.now()))) throw notFound("token_not_found", "no such active token");
    res.json({ success: true });
  });
  return r;
}
