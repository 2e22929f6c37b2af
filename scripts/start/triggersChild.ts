/**
 * The triggers service under `npm start`'s supervisor. Sign-in links go by e-mail when
 * TRIGGERS_SMTP_URL is set; otherwise they are printed (local development, no mail).
 */
import { loadTriggersConfig } from "../../triggers/config";
import { startTriggers } from "../../triggers/server";
import { runChild } from "./child";

const printed = (email: string, link: string) => console.log(`Vesta triggers: sign-in link for ${email}: ${link}`);
runChild("triggers service", async () => {
  const config = loadTriggersConfig(process.env);
  return { ...(await startTriggers(config, config.smtp ? {} : { mailer: printed })), deadlineMs: config.shutdownDeadlineMs };
});
