/** The triggers service under `npm start`'s supervisor; sign-in links are printed (local development, no mail). */
import { loadTriggersConfig } from "../../triggers/config";
import { startTriggers } from "../../triggers/server";
import { runChild } from "./child";

const mailer = (email: string, link: string) => console.log(`Vesta triggers: sign-in link for ${email}: ${link}`);
runChild("triggers service", () => startTriggers(loadTriggersConfig(process.env), { mailer }));
