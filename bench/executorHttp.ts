import type { AddressInfo } from "node:net";
import { availableParallelism } from "node:os";
import express from "express";
import { call, newAccount, startStack } from "../test/helpers/relayer";
import { measure, type LoadShape, type Stats } from "./relayer";

const HELLO = `async function main(params) { return { hello: params.name }; }`;
const SHAPE: LoadShape = { concurrency: 32, maxRequests: 2000, maxMs: 8000, warmup: 200 };
const TARGET = 0.3;

/**
 * End to end: a hello-world action run over HTTP (auth, permission check from the cache, sandbox
 * run in a sandbox process, JSON answer) at 32 concurrent clients, against a bare express endpoint
 * answering the same JSON, in one run.
 */
export async function printExecutorHttpBench() {
  console.log("== Action runs over HTTP (POST /core/v1/lit_action, hello world, by ipfs_id)");
  // One account makes every request: it may use every sandbox process here (the fair share is the fairness bench's subject).
  const workers = String(Math.max(2, availableParallelism()));
  const stack = await startStack({ payerCount: 1, env: { VESTA_SANDBOX_WORKERS: workers, VESTA_RUNS_PER_ACCOUNT: workers } });
  const bare = express();
  const server = bare.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const { apiKey } = await newAccount(stack, "run bench");
    const first = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code: HELLO, js_params: { name: "bench" } } });
    if (first.status !== 200 || first.body.has_error) throw new Error(`warm-up run failed: ${JSON.stringify(first.body)}`);
    bare.post("/json", express.json(), (_req, res) => {
      res.json(first.body);
    });
    const body = JSON.stringify({ ipfs_id: first.body.ipfs_id, js_params: { name: "bench" } });
    const headers = { "x-api-key": apiKey, "content-type": "application/json" };
    const base = await measure({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/json`, headers, body }, SHAPE);
    const runs = await measure({ url: `${stack.api}/lit_action`, headers, body }, SHAPE);
    const row = (name: string, s: Stats) =>
      console.log(`${name.padEnd(26)} ${s.rps.toFixed(0).padStart(6)} req/s   p50 ${s.p50.toFixed(2)} ms   p99 ${s.p99.toFixed(2)} ms`);
    console.log(`${SHAPE.concurrency} concurrent clients, ${SHAPE.maxRequests} requests (or ${SHAPE.maxMs / 1000} s):`);
    row("bare express JSON", base);
    row("lit_action (hello world)", runs);
    const ratio = runs.rps / base.rps;
    console.log(`  ratio lit_action/bare ${ratio.toFixed(2)} (target >= ${TARGET}) ${ratio >= TARGET ? "ok" : "UNDER"}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stack.stop();
  }
}
