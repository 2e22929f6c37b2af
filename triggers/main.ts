/** `npm run triggers`: the triggers service as its own process (configuration: TRIGGERS_* variables, see the README). */
import { loadTriggersConfig } from "./config";
import { startTriggers } from "./server";

async function main() {
  const t = await startTriggers(loadTriggersConfig(process.env));
  console.log(`Vesta triggers service at ${t.url} (agent guide: ${t.url}/SKILL.md)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await t.close({ deadlineMs: t.ctx.config.shutdownDeadlineMs }); // finish the runs under way
  process.exit(0);
}

main().catch((err) => {
  console.error(`Vesta triggers failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
