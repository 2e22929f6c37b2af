/** The relayer under `npm start`'s supervisor (configured by the environment the supervisor passes). */
import { loadConfig } from "../../relayer/config";
import { startRelayer } from "../../relayer/server";
import { runChild } from "./child";

runChild("relayer", () => startRelayer(loadConfig(process.env)));
