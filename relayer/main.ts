/**
 * Runs the relayer alone against an existing chain and deployment:
 *   node --require ts-node/register/transpile-only relayer/main.ts   (npm run relayer)
 * Configuration: see the README ("Relayer environment").
 */
import { loadConfig } from "./config";
import { startRelayer } from "./server";
import { stopSignal } from "../protocol/ops/drain";

async function main() {
  const relayer = await startRelayer(loadConfig(process.env));
  const stopped = stopSignal(); // before the line below: whoever reads it may stop the process at once
  console.log(`Vesta relayer: ${relayer.url}/core/v1  (API explorer: ${relayer.url}/core/v1/swagger-ui)`);
  await stopped;
  await relayer.close({ deadlineMs: relayer.ctx.config.shutdownDeadlineMs }); // finish what is under way, flush billing
  process.exit(0);
}

main().catch((err) => {
  console.error(`Vesta relayer failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
