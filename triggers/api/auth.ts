import crypto from "node:crypto";
import express, { Router, type Request, type RequestHandler } from "express";
import { ipKeyGenerator, rateLimit } from "express-rate-limit";
import { z } from "zod";
import { AppError, forbidden, notFound, unauthorized } from "../../protocol/errors";
import { jsonBody } from "../../protocol/jsonBody";
import { parseOrThrow } from "../../protocol/validate";
import { text } from "../../protocol/textSchema";
import { challengeOf, newId, randomToken } from "../crypto";
import type { TriggersCtx } from "../context";
import type { User } from "../store/types";
import { mailboxOf } from "../../protocol/mailbox";

const SESSION_COOKIE = "vesta_triggers_session";
export const LINK_TTL_MS = 15 * 60_000;
const SESSION_TTL_MS = 7 * 24 * 3600_000;
const challenge = text({ kind: "label", maxChars: 64 }).regex(/^[A-Za-z0-9_-]{43}$/, "challenge must be base64url(sha256(token)): 43 characters");
/** An authorization request, as the client's link carries it: the token's challenge and the client's name. */
const Approval = z.object({ challenge, name: text({ kind: "label", maxChars: 100 }).optional() });
type Approval = z.infer<typeof Approval>;
/** An approval: the request plus the ticket this service issued for exactly that challenge and name (ticketOf). */
const Approve = Approval.extend({ ticket: text({ kind: "label", maxChars: 64 }) });
type Approve = z.infer<typeof Approve>;
/** The routes the dashboard calls from its own origin, with the session cookie. */
const DASHBOARD_PATHS = ["/api/session", "/api/authorize", "/auth/login"];

declare module "express-serve-static-core" {
  interface Request {
    user?: User;
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto"><h1>${esc(title)}</h1>${body}</body></html>`;

/** A cookie's value; one that is not valid percent-encoding is kept as sent (it names no session: 401, never a 500). */
function cookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    const raw = v.join("=");
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}

const sessionUser = (ctx: TriggersCtx, req: Request) => {
  const s = cookie(req, SESSION_COOKIE);
  return s ? ctx.store.sessionUser(challengeOf(s), ctx.now()) : Promise.resolve(undefined);
};
/** CSRF token for the approval form: bound to the session. */
const csrfOf = (ctx: TriggersCtx, req: Request) => crypto.createHmac("sha256", ctx.secretKey).update(`csrf:${cookie(req, SESSION_COOKIE)}`).digest("base64url");

/**
 * The ticket of one authorization link: binds its challenge to the client name shown beside it. The
 * approval page (and the dashboard link it gives) carries it, and an approval must send it back, so a
 * page that mixes the challenge of one link with the name of another is refused instead of approving
 * one client's token under another's name.
 */
const ticketOf = (ctx: TriggersCtx, q: Approval) =>
  crypto.createHmac("sha256", ctx.secretKey).update(`approval:${q.challenge}\n${q.name ?? ""}`).digest("base64url");

/** Constant-time equality of a sent secret with the expected one (lengths in bytes: a non-ASCII guess of the right length is refused, not thrown on). */
function sameSecret(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

const urlOf = (s: string, base?: URL) => (URL.canParse(s, base) ? new URL(s, base) : undefined);

/** Where a login may return to: a path on this service, or a page under the dashboard URL; anything else ("//host", "/\host", another site) → "/". */
function safeNext(ctx: TriggersCtx, next: unknown): string {
  if (typeof next !== "string") return "/";
  const self = new URL(ctx.publicUrl());
  if (next.startsWith("/") && urlOf(next, self)?.origin === self.origin) return next;
  const target = urlOf(next);
  const dashboard = new URL(ctx.config.dashboardUrl);
  return target?.origin === dashboard.origin && target.pathname.startsWith(dashboard.pathname) ? target.href : "/";
}

/** The approval page in the dashboard, for the same request. */
const dashboardLink = (ctx: TriggersCtx, q: Approval) =>
  `${ctx.config.dashboardUrl}#/triggers/authorize?challenge=${encodeURIComponent(q.challenge)}&name=${encodeURIComponent(q.name ?? "")}&ticket=${ticketOf(ctx, q)}&triggers=${encodeURIComponent(ctx.publicUrl())}`;

/** CORS for the dashboard's origin only, with credentials (the session cookie); answers its preflights for `methods`. */
export const dashboardCors = (dashboardOrigin: string, methods = "GET, POST"): RequestHandler => (req, res, next) => {
  res.vary("Origin");
  if (req.headers.origin !== dashboardOrigin) return next();
  res.set({ "Access-Control-Allow-Origin": dashboardOrigin, "Access-Control-Allow-Credentials": "true" });
  if (req.method !== "OPTIONS") return next();
  res.set({ "Access-Control-Allow-Methods": methods, "Access-Control-Allow-Headers": "content-type", "Access-Control-Max-Age": "600" }).status(204).end();
};

/** Why a cookie-authenticated write is refused, if it is: not from a page of this service or of the dashboard (Origin), or (`json`) its body not JSON. */
function untrustedWrite(ctx: TriggersCtx, dashboardOrigin: string, req: Request, json: boolean): AppError | undefined {
  if (json && !/^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "")) {
    return new AppError(415, "unsupported_media_type", "send a JSON body with Content-Type: application/json");
  }
  const self = new URL(ctx.publicUrl()).origin;
  if (req.headers.origin !== self && req.headers.origin !== dashboardOrigin) {
    return forbidden(`only pages of ${self} or ${dashboardOrigin} may call this endpoint (Origin header)`);
  }
  return undefined;
}

/**
 * CSRF guard of a cookie-authenticated JSON endpoint: a JSON body (which a cross-site form cannot send)
 * from a page of this service or of the dashboard (the Origin header).
 */
const jsonFromTrustedOrigin = (ctx: TriggersCtx, dashboardOrigin: string): RequestHandler => (req, _res, next) => next(untrustedWrite(ctx, dashboardOrigin, req, true));

/**
 * Approves the token whose challenge is `q.challenge` for `user`, under the name its link carried:
 * 400 approval_mismatch when the ticket is not that link's, 409 when the challenge was used before. Answers the token's name.
 */
async function approve(ctx: TriggersCtx, user: User, q: Approve): Promise<string> {
  if (!sameSecret(q.ticket, ticketOf(ctx, q))) {
    throw new AppError(400, "approval_mismatch", "this challenge and client name are not those of one authorization link: open the client's link again and approve what it shows");
  }
  const name = q.name || "client";
  const added = await ctx.store.addToken({ id: newId("tok"), userId: user.id, challenge: q.challenge, name, createdAt: ctx.now(), revokedAt: null });
  if (!added) throw new AppError(409, "already_exists", "this challenge was already used; generate a new token");
  return name;
}

const BEARER_REQUIRED = "a bearer token is required: Authorization: Bearer <token> (see /SKILL.md for the handshake)";

/** Bearer token → req.user; 401 when missing, unknown, unapproved or revoked. */
export const requireBearer = (ctx: TriggersCtx): RequestHandler => async (req, _res, next) => {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (!m) return next(unauthorized(BEARER_REQUIRED));
  const t = await ctx.store.tokenByChallenge(challengeOf(m[1]));
  if (!t || t.revokedAt) return next(unauthorized("the bearer token is unknown, not yet approved, or revoked"));
  req.user = await ctx.store.userById(t.userId);
  next();
};

/**
 * The triggers API for agents (bearer token) and for the web dashboard (its session cookie, sent by
 * the browser with credentials from the dashboard's origin). A cookie rides along on any request to
 * this service, so a cookie-authenticated write must prove it comes from a page of this service or of
 * the dashboard (its Origin header, which a page cannot forge), and a body must be JSON (which a
 * cross-site form cannot send): the CSRF guard of /api/authorize.
 */
export const requireUser = (ctx: TriggersCtx): RequestHandler => {
  const bearer = requireBearer(ctx);
  const dashboardOrigin = new URL(ctx.config.dashboardUrl).origin;
  return async (req, res, next) => {
    if (req.headers.authorization !== undefined || cookie(req, SESSION_COOKIE) === undefined) return bearer(req, res, next);
    const user = await sessionUser(ctx, req);
    if (!user) return next(unauthorized(`the dashboard session is unknown or expired (sign in again), or send ${BEARER_REQUIRED}`));
    // DELETE carries no body: its Origin alone is checked.
    const refused = req.method === "GET" || req.method === "HEAD" ? undefined : untrustedWrite(ctx, dashboardOrigin, req, req.method !== "DELETE");
    if (refused) return next(refused);
    req.user = user;
    next();
  };
};

// `next`: any well-formed text (a control character in it is no reason to refuse a login): safeNext sends what is not ours to "/".
const Login = z.object({ email: text({ kind: "label", maxChars: 320 }).email(), next: text({ kind: "code", maxChars: 2000 }).optional() });

export { mailboxOf };

/**
 * Limits on sign-in mails (each request sends one): per client address (each process's memory),
 * and per mailbox (so nobody can flood a mailbox from many addresses; in the store, so replicas
 * share it). 429 with Retry-After.
 */
function loginLimits(ctx: TriggersCtx): RequestHandler[] {
  const limited = (what: string) => (_req: unknown, _res: unknown, next: (e: unknown) => void) =>
    next(new AppError(429, "rate_limited", `too many sign-in links requested ${what}; try again later`));
  const common = { windowMs: ctx.config.loginRateWindowMs, standardHeaders: "draft-7" as const, legacyHeaders: false, validate: { xForwardedForHeader: false } };
  const perIp = rateLimit({ ...common, limit: ctx.config.loginRatePerIp, keyGenerator: (req) => ipKeyGenerator(req.ip ?? "unknown"), handler: limited("from this address") });
  const emailOf = (req: Request) => {
    const parsed = Login.safeParse(req.body);
    return parsed.success ? mailboxOf(parsed.data.email) : undefined;
  };
  const perAddress: RequestHandler = (req, _res, next) => {
    const mailbox = emailOf(req);
    if (mailbox === undefined) return next(); // refused as bad input, and sends nothing
    ctx.store.spendLoginMail(mailbox, ctx.config.loginRatePerAddress, ctx.config.loginRateWindowMs, ctx.now()).then(
      (wait) =>
        wait === undefined ? next() : next(new AppError(429, "rate_limited", "too many sign-in links requested for this e-mail address; try again later", undefined, { "retry-after": String(wait) })),
      next,
    );
  };
  return [perIp, perAddress];
}

/** Magic-link login, the approval page of the handshake (and its JSON form for the dashboard), and token listing/revocation. */
export function authRoutes(ctx: TriggersCtx): Router {
  const r = Router();
  const form = express.urlencoded({ extended: false, limit: "8kb" });
  const json = jsonBody({ limit: "8kb", maxDepth: ctx.config.maxJsonDepth });
  const [perIp, perAddress] = loginLimits(ctx);
  const dashboardOrigin = new URL(ctx.config.dashboardUrl).origin;
  const cors = dashboardCors(dashboardOrigin);

  r.options(DASHBOARD_PATHS, cors);

  r.get("/auth/login", (req, res) => {
    const next = typeof req.query.next === "string" ? req.query.next : "/";
    res.type("html").send(page("Sign in", `<form method="post" action="/auth/login"><input type="hidden" name="next" value="${esc(next)}">
      <label>E-mail <input name="email" type="email" required></label> <button>Send me a sign-in link</button></form>`));
  });
  r.post("/auth/login", cors, perIp, form, ...json, perAddress, async (req, res) => {
    const b = parseOrThrow(Login, req.body, "body");
    const next = safeNext(ctx, b.next);
    const token = randomToken();
    await ctx.store.putMagicLink(challengeOf(token), b.email.toLowerCase(), ctx.now() + LINK_TTL_MS);
    const link = `${ctx.publicUrl()}/auth/magic?token=${token}&next=${encodeURIComponent(next)}`;
    await Promise.resolve().then(() => ctx.mailer(b.email.toLowerCase(), link, req.log)).catch(async (err: unknown) => {
      await ctx.store.useMagicLink(challengeOf(token), ctx.now()); // a link nobody received is void
      req.log?.warn({ err: err instanceof Error ? err.message : String(err) }, "the sign-in link could not be mailed");
      throw new AppError(503, "mail_unavailable", "the sign-in link could not be sent (the mail server did not take it); try again shortly");
    });
    if (req.is("application/json")) return void res.status(202).json({ sent: true });
    res.type("html").send(page("Check your e-mail", "<p>A sign-in link is on its way (in local development without TRIGGERS_SMTP_URL it is printed in the service's log).</p>"));
  });
  r.get("/auth/magic", async (req, res) => {
    const token = typeof req.query.token === "string" ? req.query.token : "";
    const email = token ? await ctx.store.useMagicLink(challengeOf(token), ctx.now()) : undefined;
    if (!email) throw new AppError(401, "invalid_login_link", "this sign-in link is unknown, used or expired; ask for a new one at /auth/login");
    const user = (await ctx.store.userByEmail(email, true))!;
    const session = randomToken();
    await ctx.store.putSession(challengeOf(session), user.id, ctx.now() + SESSION_TTL_MS);
    res.cookie(SESSION_COOKIE, session, { httpOnly: true, sameSite: "lax", maxAge: SESSION_TTL_MS, path: "/" });
    res.redirect(303, safeNext(ctx, req.query.next));
  });

  r.get("/authorize", async (req, res) => {
    const q = parseOrThrow(Approval, req.query, "query");
    const user = await sessionUser(ctx, req);
    if (!user) return res.redirect(303, `/auth/login?next=${encodeURIComponent(req.originalUrl)}`);
    res.type("html").send(
      page("Authorize a client", `<p>Signed in as <b>${esc(user.email)}</b>. A client${q.name ? ` named <b>${esc(q.name)}</b>` : ""} asks for a token to manage your triggers.</p>
      <p>Challenge: <code>${esc(q.challenge)}</code></p>
      <form method="post" action="/authorize"><input type="hidden" name="challenge" value="${esc(q.challenge)}"><input type="hidden" name="name" value="${esc(q.name ?? "")}"><input type="hidden" name="ticket" value="${ticketOf(ctx, q)}">
      <input type="hidden" name="csrf" value="${csrfOf(ctx, req)}"><button>Approve</button></form>
      <p><a href="${esc(dashboardLink(ctx, q))}">Approve in the dashboard</a></p>`),
    );
  });
  r.post("/authorize", form, async (req, res) => {
    const b = parseOrThrow(Approve.extend({ csrf: text({ kind: "label", maxChars: 128 }) }), req.body, "body");
    const user = await sessionUser(ctx, req);
    if (!user) throw unauthorized("sign in first: open /auth/login");
    if (!sameSecret(b.csrf, csrfOf(ctx, req))) throw new AppError(403, "forbidden", "the approval form is stale; reload it");
    await approve(ctx, user, b);
    res.type("html").send(page("Approved", "<p>The client is authorized. You can close this page.</p>"));
  });

  r.get("/api/session", cors, async (req, res) => {
    const user = await sessionUser(ctx, req);
    if (!user) throw unauthorized("not signed in: sign in at /auth/login");
    res.json({ user_id: user.id, email: user.email });
  });
  r.post("/api/authorize", cors, jsonFromTrustedOrigin(ctx, dashboardOrigin), ...json, async (req, res) => {
    const b = parseOrThrow(Approve, req.body, "body");
    const user = await sessionUser(ctx, req);
    if (!user) throw unauthorized("not signed in: sign in at /auth/login");
    res.json({ success: true, name: await approve(ctx, user, b) });
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
