import { printGasBench } from "./gas";
import { printRelayerBench } from "./relayer";
import { benchExecutor } from "./executor";
import { printActionCpuBench } from "./actionCpu";
import { printExecutorHttpBench } from "./executorHttp";
import { printSignatureBench } from "./signatures";
import { printBillingBench } from "./billing";
import { printTriggersBench } from "./triggers";
import { printWriteCostBench } from "./writeCosts";
import { printFairnessBench } from "./fairness";
import { printRunHistoryBench } from "./runHistory";
import { printReplicasBench } from "./replicas";

/** `npm run bench` runs every bench; VESTA_BENCH=gas,relayer,executor,cpu,http,signatures,billing,writes,triggers,fairness,history,replicas picks some. */
const BENCHES: Record<string, () => Promise<void>> = {
  gas: printGasBench,
  relayer: printRelayerBench,
  executor: benchExecutor,
  cpu: printActionCpuBench,
  http: printExecutorHttpBench,
  signatures: printSignatureBench,
  billing: printBillingBench,
  writes: printWriteCostBench,
  triggers: printTriggersBench,
  fairness: printFairnessBench,
  history: printRunHistoryBench,
  replicas: printReplicasBench,
};

async function main() {
  const wanted = (process.env.VESTA_BENCH ?? "").split(",").filter(Boolean);
  for (const name of wanted) if (!BENCHES[name]) throw new Error(`unknown bench ${name}; choose from ${Object.keys(BENCHES).join(", ")}`);
  for (const [name, run] of Object.entries(BENCHES)) if (wanted.length === 0 || wanted.includes(name)) await run();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
