/**
 * Runs the relayer alone against an existing chain and deployment:
 *   node --require ts-node/register/transpile-only relayer/main.ts   (npm run relayer)
 * Configuration: see the README ("Relayer environment").
 */
import { loadConfig } from "./config";
import { startRelayer } from "./server";

async function main() {
  const relayer = await startRelayer(loadConfig(process.env));
  // Listening for the stop signal before saying where it listens: whoever reads that line may stop
  // it at once, and a SIGTERM with no listener yet kills the process (no drain, signal instead of exit 0).
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  console.log(`Vesta relayer: ${relayer.url}/core/v1  (API explorer: ${relayer.url}/core/v1/swagger-ui)`);
  await stopped;
  await relayer.close({ deadlineMs: relayer.ctx.config.shutdownDeadlineMs }); // finish what is under way, flush billing
  process.exit(0);
}

main().catch((err) => {
  console.error(`Vesta relayer failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
