import type nodemailer from "nodemailer";
import type { Logger } from "pino";
import type { CodeMailer } from "./emailCodes";
import type { IdentityConfig } from "./config";
import { smtpTransport } from "../../protocol/smtp";

/** The text of a sign-in code mail. */
export const codeMail = (code: string, minutes: number) => ({
  subject: `Your Vesta sign-in code: ${code}`,
  text: `Your Vesta sign-in code is ${code}.\n\nIt is valid for ${minutes} minutes and signs in once. If you did not ask for it, ignore this mail: nobody can sign in without the code.\n`,
});

/**
 * The mailer of e-mail codes: with VESTA_EMAIL_CODES=smtp, nodemailer's SMTP transport to
 * VESTA_SMTP_URL (the code goes to the mailbox only; the log says a code was sent, never which);
 * with log (development only), the code printed to the log as the triggers service prints its
 * sign-in links. `transport` replaces the SMTP transport (tests: nodemailer's stream transport).
 */
export function codeMailer(config: IdentityConfig, ttlMinutes: number, logger: Logger, transport?: nodemailer.Transporter): CodeMailer | undefined {
  if (config.email === "log") {
    return (email, code, log = logger) => log.info({ email }, `sign-in code for ${email}: ${code} (development mailer: VESTA_EMAIL_CODES=log)`);
  }
  if (config.email !== "smtp" || !config.smtp) return undefined;
  const smtp = config.smtp;
  const t = transport ?? smtpTransport(smtp);
  return async (email, code, log = logger) => {
    const info = await t.sendMail({ from: smtp.from, to: email, ...codeMail(code, ttlMinutes) });
    log.info({ messageId: info.messageId }, "sign-in code sent by e-mail");
  };
}
