import fs from "node:fs";
import path from "node:path";
import express, { type Express } from "express";
import { AppError } from "./errors";
import type { Ctx } from "./context";

/**
 * The web dashboard: the files `npm run build` puts in dist/dashboard, served at /dashboard/ with a
 * strict Content-Security-Policy (own scripts only, plus Stripe.js for card payments, which Stripe
 * requires to be loaded from js.stripe.com), and its settings at /dashboard/config.json.
 * `/` redirects to it. Settings are read per request: `npm start` learns the triggers service's
 * URL only after the relayer is up.
 */
export function dashboardRoutes(app: Express, ctx: Ctx) {
  const csp = () => {
    const triggersUrl = ctx.config.dashboard.triggersUrl;
    // The configured OpenID issuers: the sign-in view reads each one's discovery document (its authorization endpoint).
    const issuers = [...new Set(ctx.config.identity.oidc.map((p) => new URL(p.issuer).origin))].map((o) => ` ${o}`).join("");
    return [
      "default-src 'self'",
      "script-src 'self' https://js.stripe.com",
      "style-src 'self' 'unsafe-inline'", // Stripe Elements styles its mount point
      `connect-src 'self' https://api.stripe.com${triggersUrl ? ` ${new URL(triggersUrl).origin}` : ""}${issuers}`,
      "frame-src https://js.stripe.com https://hooks.stripe.com",
      "img-src 'self' data: https://*.stripe.com",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'self'",
    ].join("; ");
  };

  app.get("/", (_req, res) => res.redirect(302, "/dashboard/"));
  app.use("/dashboard", (_req, res, next) => {
    res.set({ "Content-Security-Policy": csp(), "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff" });
    next();
  });
  app.get("/dashboard/config.json", (_req, res) => {
    res.json({
      triggers_url: ctx.config.dashboard.triggersUrl ?? null,
      explorer_url: ctx.config.dashboard.explorerUrl ?? null,
      eip712_domain_name: ctx.config.eip712DomainName,
      billing: !ctx.billing ? "off" : ctx.billing.payments ? "stripe" : "local",
    });
  });
  app.get("/dashboard/", (req, res, next) => {
    // Routing is not strict: /dashboard lands here too, and needs the slash for relative asset URLs.
    if (!req.path.endsWith("/")) return res.redirect(301, "/dashboard/");
    const index = path.join(ctx.config.dashboard.dir, "index.html");
    if (!fs.existsSync(index)) return next(new AppError(503, "dashboard_not_built", `the dashboard is not built (no ${index}): run npm run build`));
    res.set("Cache-Control", "no-cache").sendFile(index);
  });
  // The README the dashboard links to (its guides), as text.
  app.get("/dashboard/README.md", (_req, res, next) => {
    const file = path.join(ctx.config.dashboard.dir, "README.md");
    if (!fs.existsSync(file)) return next(new AppError(503, "dashboard_not_built", `the dashboard is not built (no ${file}): run npm run build`));
    res.set({ "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-cache" }).sendFile(file);
  });
  // Hashed file names: cached for good.
  app.use("/dashboard/assets", express.static(path.join(ctx.config.dashboard.dir, "assets"), { immutable: true, maxAge: "365d", index: false, fallthrough: true }));
}
