/** `npm run triggers`: the triggers service as its own process (configuration: TRIGGERS_* variables, see the README). */
import { loadTriggersConfig } from "./config";
import { startTriggers } from "./server";

async function main() {
  const t = await startTriggers(loadTriggersConfig(process.env));
  // Listening for the stop signal before saying where it listens: whoever reads that line may stop
  // it at once, and a SIGTERM with no listener yet kills the process (no drain, signal instead of exit 0).
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  console.log(`Vesta triggers service at ${t.url} (agent guide: ${t.url}/SKILL.md)`);
  await stopped;
  await t.close({ deadlineMs: t.ctx.config.shutdownDeadlineMs }); // finish the runs under way
  process.exit(0);
}

main().catch((err) => {
  console.error(`Vesta triggers failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
