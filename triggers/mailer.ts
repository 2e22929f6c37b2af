/**
 * The mailer of sign-in links (magic links). With TRIGGERS_SMTP_URL: nodemailer's SMTP transport
 * (protocol/smtp.ts, shared with the relayer's e-mail codes); the link goes to the mailbox only and
 * the log says a link was sent, never the link (whoever holds it signs in). Without (development
 * only: production refuses to boot without it), the link is printed to the log.
 */
import type nodemailer from "nodemailer";
import type { Logger } from "pino";
import { smtpTransport } from "../protocol/smtp";
import type { TriggersConfig } from "./config";
import type { Mailer } from "./context";

/** The text of a sign-in link mail. */
export const linkMail = (link: string, minutes: number) => ({
  subject: "Sign in to Vesta triggers",
  text: `Open this link to sign in to Vesta triggers:\n\n${link}\n\nIt is valid for ${minutes} minutes and signs in once. If you did not ask for it, ignore this mail: nobody can sign in without the link.\n`,
});

/** `transport` replaces the SMTP transport (tests). */
export function linkMailer(config: Pick<TriggersConfig, "smtp">, ttlMinutes: number, logger: Logger, transport?: nodemailer.Transporter): Mailer {
  const smtp = config.smtp;
  if (!smtp) return (email, link, log = logger) => log.info({ email, link }, `sign-in link for ${email}: ${link} (development: no TRIGGERS_SMTP_URL)`);
  const t = transport ?? smtpTransport(smtp);
  return async (email, link, log = logger) => {
    const info = await t.sendMail({ from: smtp.from, to: email, ...linkMail(link, ttlMinutes) });
    log.info({ messageId: info.messageId }, "sign-in link sent by e-mail");
  };
}
