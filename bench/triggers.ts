import type { AddressInfo } from "node:net";
import express from "express";
import { keccak256, toUtf8Bytes } from "ethers";
import { computeCid } from "../executor/cid";
import { call, newAccount, startStack } from "../test/helpers/relayer";
import { approvedToken, http, startHarness, until } from "../test/helpers/triggers";
import { measure, type LoadShape, type Stats } from "./relayer";

const ECHO = `async function main(params) { return { got: params.event }; }`;
const ACCEPT: LoadShape = { concurrency: 16, maxRequests: 600, maxMs: 5000, warmup: 50, expectStatus: 202 };
const TARGET = 0.5;
const E2E_RUNS = 40;

/**
 * Webhook acceptance (202 with a run id) req/s and p99 vs a bare express endpoint answering 202, in
 * one run; then end-to-end latency from the webhook POST to the run's success (through the real core
 * service and chain), p50/p99.
 */
export async function printTriggersBench() {
  console.log("== Triggers: webhook acceptance and webhook → run finished");
  const stack = await startStack({ payerCount: 1 });
  const bare = express();
  bare.post("/hook", express.json(), (_req, res) => {
    res.status(202).json({ run_id: "r" });
  });
  const server = bare.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  // Acceptance is measured with the run workers off: here the core service and the chain share this
  // process and its 2 cores, so draining runs during the measurement would charge their work to it.
  // (In production the triggers service is its own process.) The runs stay queued and drain afterwards.
  const h = await startHarness(
    // no queue bound either: with the workers off every accepted run waits (TRIGGERS_MAX_QUEUED_PER_TRIGGER would refuse past 100)
    { TRIGGERS_CORE_URL: stack.relayer.url, TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "1000000", TRIGGERS_WEBHOOK_RATE_PER_IP: "1000000", TRIGGERS_MAX_QUEUED_PER_TRIGGER: "1000000" },
    { workers: false },
  );
  try {
    const { apiKey } = await newAccount(stack, "triggers bench");
    const group = await call(stack, "POST", "/add_group", {
      key: apiKey,
      body: { group_name: "bench", cid_hashes_permitted: [keccak256(toUtf8Bytes(await computeCid(ECHO)))] },
    });
    const usageKey = (await call(stack, "POST", "/add_usage_api_key", { key: apiKey, body: { name: "bench", execute_in_groups: [group.body.group_id] } })).body.usage_api_key;
    const token = await approvedToken(h);
    const created = await http(`${h.svc.url}/api/triggers`, { method: "POST", token, body: { name: "bench", kind: "webhook", action_code: ECHO, usage_api_key: usageKey, config: {} } });
    if (created.status !== 201) throw new Error(`create trigger: ${created.status} ${JSON.stringify(created.body)}`);
    const hook = () => `${h.svc.url}/webhook/${created.body.id}`;
    const body = JSON.stringify({ hello: "bench" });
    const headers = { "content-type": "application/json" };

    const base = await measure({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, headers, body }, ACCEPT);
    const accepted = await measure({ url: hook(), headers, body }, ACCEPT);
    const row = (name: string, s: Stats) => console.log(`${name.padEnd(28)} ${s.rps.toFixed(0).padStart(6)} req/s   p50 ${s.p50.toFixed(2)} ms   p99 ${s.p99.toFixed(2)} ms`);
    console.log(`${ACCEPT.concurrency} concurrent clients, ${ACCEPT.maxRequests} requests (or ${ACCEPT.maxMs / 1000} s):`);
    row("bare express (202)", base);
    row("POST /webhook/<id> (202)", accepted);
    const ratio = accepted.rps / base.rps;
    console.log(`  ratio webhook/bare ${ratio.toFixed(2)} (target >= ${TARGET}) ${ratio >= TARGET ? "ok" : "UNDER"}`);

    // restart with workers: the queued runs drain (oldest first, so once the newest 100 are finished
    // all are), then single firings are timed
    await h.svc.close();
    await h.start({ workers: true });
    await until(async () => {
      const runs = (await http(`${h.svc.url}/api/triggers/${created.body.id}/runs?limit=100`, { token })).body.runs as { status: string }[];
      return runs.length > 0 && runs.every((r) => r.status === "success" || r.status === "failed") ? true : undefined;
    }, 300_000, "the accepted runs to finish");

    const latencies: number[] = [];
    for (let i = 0; i < E2E_RUNS; i++) {
      const t0 = performance.now();
      const fired = await http(hook(), { method: "POST", body: { i } });
      const runId = fired.body.run_id;
      await until(async () => {
        const run = (await http(`${h.svc.url}/api/runs/${runId}`, { token })).body;
        if (run.status === "failed") throw new Error(`run failed: ${JSON.stringify(run)}`);
        return run.status === "success" ? true : undefined;
      }, 30_000, "a run to finish");
      latencies.push(performance.now() - t0);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    console.log(`  webhook → run finished (${E2E_RUNS} sequential firings, real core and chain): p50 ${at(0.5).toFixed(1)} ms   p99 ${at(0.99).toFixed(1)} ms`);
  } finally {
    await h.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stack.stop();
  }
}
