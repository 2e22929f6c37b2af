import { z } from "zod";
import type { VestaMode } from "../../protocol/mode";
import { readSmtp, type SmtpConfig } from "../../protocol/smtp";
import type { PasskeyConfig } from "./passkeys";

/** One OpenID Connect issuer whose ID tokens sign in: its `iss`, the audiences (client ids) accepted, and its JWKS. */
export type OidcProvider = { issuer: string; audiences: string[]; jwksUri: string; name: string };

export type IdentityConfig = {
  /** Allowed OpenID issuers (VESTA_OIDC_PROVIDERS); empty: OpenID sign-in is off. */
  oidc: OidcProvider[];
  /** How e-mail codes are sent: off, printed to the log (development only), or by SMTP (VESTA_SMTP_URL). */
  email: "off" | "log" | "smtp";
  /** SMTP: the server's URL (smtp:// or smtps://, credentials in it) and the From address. */
  smtp?: SmtpConfig;
  /** Passkeys: the relying party id and the page origins allowed (VESTA_PASSKEY_RP_ID, VESTA_PASSKEY_ORIGINS); unset: off. */
  passkey?: PasskeyConfig;
  /** Lifetime of a session after a sign-in (VESTA_IDENTITY_SESSION_SECONDS). */
  sessionSeconds: number;
  /** Per client address and minute: every sign-in request (nonce, code, token, code check). */
  ratePerMinute: number;
  /** Codes sent to one mailbox per hour. */
  emailCodesPerHour: number;
};

const Provider = z
  .object({
    issuer: z.string().url().max(512),
    audiences: z.array(z.string().min(1).max(512)).min(1).max(32),
    jwks_uri: z.string().url().max(1024),
    name: z.string().min(1).max(64).optional(),
  })
  .strict();

const Env = z.object({
  VESTA_OIDC_PROVIDERS: z.string().optional(),
  VESTA_EMAIL_CODES: z.enum(["off", "log", "smtp"], { message: "VESTA_EMAIL_CODES must be off, log or smtp" }).default("off"),
  VESTA_SMTP_URL: z.string().optional(),
  VESTA_EMAIL_FROM: z.string().max(254).optional(),
  VESTA_PASSKEY_RP_ID: z.string().optional(),
  VESTA_PASSKEY_ORIGINS: z.string().optional(),
  VESTA_PASSKEY_RP_NAME: z.string().min(1).max(64).default("Vesta"),
  VESTA_IDENTITY_SESSION_SECONDS: z.coerce.number().int().min(60, "VESTA_IDENTITY_SESSION_SECONDS must be >= 60").max(3600, "VESTA_IDENTITY_SESSION_SECONDS is at most 3600 (a session is a fresh authentication)").default(900),
  VESTA_IDENTITY_RATE_LIMIT: z.coerce.number().int().min(1).default(20),
  VESTA_EMAIL_CODES_PER_HOUR: z.coerce.number().int().min(1).max(100).default(5),
});

/** Reads the identity sign-in variables; problems are listed, not thrown (loadConfig reports them all). */
export function loadIdentityConfig(env: NodeJS.ProcessEnv, mode: VestaMode): { config: IdentityConfig; problems: string[] } {
  const problems: string[] = [];
  const parsed = Env.safeParse(env);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  const e = parsed.success ? parsed.data : Env.parse({});
  let oidc: OidcProvider[] = [];
  if (e.VESTA_OIDC_PROVIDERS?.trim()) {
    let raw: unknown;
    try {
      raw = JSON.parse(e.VESTA_OIDC_PROVIDERS);
    } catch {
      raw = undefined;
    }
    const list = z.array(Provider).min(1).max(32).safeParse(raw);
    if (!list.success) {
      problems.push('VESTA_OIDC_PROVIDERS: a JSON array of {"issuer", "audiences": [...], "jwks_uri", "name"?} (' + list.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") + ")");
    } else {
      oidc = list.data.map((p) => ({ issuer: p.issuer, audiences: p.audiences, jwksUri: p.jwks_uri, name: p.name ?? new URL(p.issuer).host }));
      if (new Set(oidc.map((p) => p.issuer)).size !== oidc.length) problems.push("VESTA_OIDC_PROVIDERS: an issuer is listed twice");
      if (mode === "production") {
        for (const p of oidc) if (!p.jwksUri.startsWith("https:")) problems.push(`VESTA_OIDC_PROVIDERS: production fetches the JWKS of ${p.issuer} over https only`);
      }
    }
  }
  if (mode === "production" && e.VESTA_EMAIL_CODES === "log") problems.push("VESTA_EMAIL_CODES=log: codes printed to the log exist only with VESTA_MODE=development");
  const smtp = smtpConfig(e, mode, problems);
  const passkey = passkeyConfig(e, mode, problems);
  return {
    config: { oidc, email: e.VESTA_EMAIL_CODES, smtp, passkey, sessionSeconds: e.VESTA_IDENTITY_SESSION_SECONDS, ratePerMinute: e.VESTA_IDENTITY_RATE_LIMIT, emailCodesPerHour: e.VESTA_EMAIL_CODES_PER_HOUR },
    problems,
  };
}

function smtpConfig(e: z.infer<typeof Env>, mode: VestaMode, problems: string[]): IdentityConfig["smtp"] {
  if (e.VESTA_EMAIL_CODES !== "smtp") return undefined;
  return readSmtp({ url: e.VESTA_SMTP_URL, from: e.VESTA_EMAIL_FROM }, { url: "VESTA_SMTP_URL", from: "VESTA_EMAIL_FROM", needs: "VESTA_EMAIL_CODES=smtp", purpose: "codes" }, mode, problems);
}

function passkeyConfig(e: z.infer<typeof Env>, mode: VestaMode, problems: string[]): PasskeyConfig | undefined {
  const rpId = e.VESTA_PASSKEY_RP_ID?.trim();
  if (!rpId) {
    if (e.VESTA_PASSKEY_ORIGINS?.trim()) problems.push("VESTA_PASSKEY_ORIGINS is set without VESTA_PASSKEY_RP_ID (passkeys stay off)");
    return undefined;
  }
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(rpId) || /(^|\.)\d+$/.test(rpId)) {
    problems.push("VESTA_PASSKEY_RP_ID: a lower-case domain name (the site's, e.g. example.com), not a URL or an IP address");
    return undefined;
  }
  const origins = (e.VESTA_PASSKEY_ORIGINS ?? "").split(",").map((o) => o.trim()).filter(Boolean);
  if (origins.length === 0) problems.push("VESTA_PASSKEY_ORIGINS: the origins of the pages that use passkeys, comma-separated (e.g. https://app.example.com)");
  for (const o of origins) {
    let u: URL | undefined;
    try {
      u = new URL(o);
    } catch {
      u = undefined;
    }
    if (!u || u.origin !== o) problems.push(`VESTA_PASSKEY_ORIGINS: ${JSON.stringify(o)} is not an origin (scheme://host[:port], no path)`);
    else if (u.hostname !== rpId && !u.hostname.endsWith(`.${rpId}`)) problems.push(`VESTA_PASSKEY_ORIGINS: ${o} is not on ${rpId} or a subdomain of it`);
    else if (mode === "production" && u.protocol !== "https:") problems.push(`VESTA_PASSKEY_ORIGINS: production takes https origins only (${o})`);
  }
  return { rpId, origins, rpName: e.VESTA_PASSKEY_RP_NAME };
}
