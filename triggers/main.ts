/** `npm run triggers`: the triggers service as its own process (configuration: TRIGGERS_* variables, see the README). */
import { loadTriggersConfig } from "./config";
import { startTriggers } from "./server";
import { stopSignal } from "../protocol/ops/drain";

async function main() {
  const t = await startTriggers(loadTriggersConfig(process.env));
  const stopped = stopSignal(); // before the line below: whoever reads it may stop the process at once
  console.log(`Vesta triggers service at ${t.url} (agent guide: ${t.url}/SKILL.md)`);
  await stopped;
  await t.close({ deadlineMs: t.ctx.config.shutdownDeadlineMs }); // finish the runs under way
  process.exit(0);
}

main().catch((err) => {
  console.error(`Vesta triggers failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
