/**
 * SMTP mail, shared by the relayer's identity codes (VESTA_SMTP_URL, VESTA_EMAIL_FROM) and the
 * triggers service's sign-in links (TRIGGERS_SMTP_URL, TRIGGERS_EMAIL_FROM): one way to read the
 * settings (production sends over TLS only) and one nodemailer transport.
 */
import nodemailer from "nodemailer";
import { z } from "zod";
import type { VestaMode } from "./mode";

/** The server's URL (smtp:// or smtps://, credentials in it) and the From address. */
export type SmtpConfig = { url: string; from: string };

/**
 * Reads an SMTP URL and From address (variables `names.url`, `names.from`; `purpose`: what the
 * mails carry, for the messages); problems are pushed to `problems`, not thrown.
 */
export function readSmtp(raw: { url?: string; from?: string }, names: { url: string; from: string; needs: string; purpose: string }, mode: VestaMode, problems: string[]): SmtpConfig | undefined {
  let url: URL | undefined;
  try {
    url = new URL(raw.url ?? "");
  } catch {
    url = undefined;
  }
  if (!url || !["smtp:", "smtps:"].includes(url.protocol)) {
    problems.push(`${names.url}: ${names.needs} needs the SMTP server's URL, smtp://user:password@host:587 or smtps://user:password@host:465`);
    return undefined;
  }
  if (mode === "production" && url.protocol === "smtp:" && url.searchParams.get("requireTLS") !== "true") {
    problems.push(`${names.url}: production sends ${names.purpose} over TLS only: smtps://, or smtp:// with ?requireTLS=true (STARTTLS)`);
  }
  const from = raw.from ?? "";
  if (!z.string().email().safeParse(from.replace(/^.*<(.+)>\s*$/, "$1")).success) problems.push(`${names.from}: the From address of the ${names.purpose}, e.g. "Vesta <no-reply@example.com>"`);
  return { url: url.toString(), from };
}

/** A nodemailer transport to the configured server. */
export const smtpTransport = (smtp: SmtpConfig): nodemailer.Transporter => nodemailer.createTransport(smtp.url, { from: smtp.from });
