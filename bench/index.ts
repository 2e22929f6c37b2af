import { printGasBench } from "./gas";
import { printRelayerBench } from "./relayer";

async function main() {
  await printGasBench();
  await printRelayerBench();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
