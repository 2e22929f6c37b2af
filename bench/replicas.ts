import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chainKeys, newAccount, startStack } from "../test/helpers/relayer";
import { startPostgres } from "../test/helpers/postgres";
import { startReplica, stopReplicas, type Replica } from "../test/helpers/replica";
import { measure, type LoadShape, type Stats } from "./relayer";

const HELLO = `async function main() { return "hello"; }`;
/** 8 clients in all (4 per replica with two): a shared 2-core machine under load times out at 32. */
const LOAD: LoadShape = { concurrency: 8, warmup: 100, maxRequests: 1500, maxMs: 6000 };

/**
 * Action runs/s through one relayer process and through two (each its own process, its own payers),
 * on one PostgreSQL and one chain: hello-world runs from one account, the load split evenly between
 * the replicas. Informational: on a 2-core machine the replicas, their sandboxes, PostgreSQL, the
 * chain and the load share the same cores.
 */
export async function printReplicasBench(): Promise<void> {
  console.log("== Relayer replicas (relayer processes on one PostgreSQL and one in-process chain)");
  const pg = startPostgres();
  const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), "vesta-bench-replica-")));
  const stack = await startStack({ payerCount: 5, env: { DATABASE_URL: pg.url, VESTA_PAYER_KEYS: chainKeys(1, 1).join(",") } });
  const replicas: Replica[] = [];
  try {
    for (const [i, dir] of dirs.entries()) replicas.push(await startReplica(stack, { databaseUrl: pg.url, payerKeys: chainKeys(2 + 2 * i, 2), dataDir: dir, env: { VESTA_SANDBOX_WORKERS: "2" } }));
    const { apiKey } = await newAccount({ ...stack, api: `${replicas[0].url}/core/v1` }, "replica bench");
    const run = (r: Replica) => ({ url: `${r.url}/core/v1/lit_action`, headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify({ code: HELLO }) });
    const half = { ...LOAD, concurrency: LOAD.concurrency / 2 };
    for (const r of replicas) for (let i = 0; i < 10; i++) await fetch(run(r).url, { method: "POST", headers: run(r).headers, body: run(r).body }).then((x) => x.text()); // each replica's sandboxes up
    let one: Stats | undefined;
    let two: number | undefined;
    for (let round = 0; round < 2; round++) {
      const s = await measure(run(replicas[0]), LOAD);
      if (!one || s.rps > one.rps) one = s;
      const both = await Promise.all(replicas.map((r) => measure(run(r), half)));
      const rps = both.reduce((sum, x) => sum + x.rps, 0);
      if (two === undefined || rps > two) two = rps;
    }
    console.log(`hello-world lit_action, ${LOAD.concurrency} concurrent clients, best of 2 interleaved runs (${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}):`);
    console.log(`  1 replica  ${one!.rps.toFixed(0)} runs/s (p50 ${one!.p50.toFixed(1)} ms, p99 ${one!.p99.toFixed(1)} ms)`);
    console.log(`  2 replicas ${two!.toFixed(0)} runs/s`);
    console.log(`  ratio 2/1 replicas ${(two! / one!.rps).toFixed(2)} (informational)`);
  } finally {
    await stopReplicas(replicas);
    await stack.stop();
    pg.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}
