/** The relayer under `npm start`'s supervisor (configured by the environment the supervisor passes). */
import { loadConfig } from "../../relayer/config";
import { startRelayer } from "../../relayer/server";
import { runChild } from "./child";

runChild("relayer", async () => {
  const config = loadConfig(process.env);
  return { ...(await startRelayer(config)), deadlineMs: config.shutdownDeadlineMs };
});
