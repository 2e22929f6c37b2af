import { z } from "zod";
import type { VestaMode } from "../../protocol/mode";

/** One OpenID Connect issuer whose ID tokens sign in: its `iss`, the audiences (client ids) accepted, and its JWKS. */
export type OidcProvider = { issuer: string; audiences: string[]; jwksUri: string; name: string };

export type IdentityConfig = {
  /** Allowed OpenID issuers (VESTA_OIDC_PROVIDERS); empty: OpenID sign-in is off. */
  oidc: OidcProvider[];
  /** How e-mail codes are sent: off, or printed to the log (development only). */
  email: "off" | "log";
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
  VESTA_EMAIL_CODES: z.enum(["off", "log"], { message: "VESTA_EMAIL_CODES must be off or log" }).default("off"),
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
  return {
    config: { oidc, email: e.VESTA_EMAIL_CODES, sessionSeconds: e.VESTA_IDENTITY_SESSION_SECONDS, ratePerMinute: e.VESTA_IDENTITY_RATE_LIMIT, emailCodesPerHour: e.VESTA_EMAIL_CODES_PER_HOUR },
    problems,
  };
}
