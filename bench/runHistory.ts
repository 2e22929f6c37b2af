import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { availableParallelism } from "node:os";
import pino from "pino";
import { call, newAccount, startStack, type Stack } from "../test/helpers/relayer";
import { startRelayer } from "../relayer/server";
import { RunHistory } from "../relayer/runs/history";
import { compareOnOff } from "./relayer";

const HELLO = `async function main(params) { return { hello: params.name }; }`;
const TARGET = 0.9;

/**
 * What the run history costs a run: hello-world action runs over HTTP with the history on (the
 * default) against the same relayer code with it off (VESTA_RUN_HISTORY_DAYS=0), on the same chain
 * and account, interleaved, best of 2; then the store alone: a record into an account at its
 * cap (10,000 runs) against one into a new account, each committed on its own.
 */
export async function printRunHistoryBench() {
  console.log("== Run history: action runs over HTTP with the history on vs off; a record at the account's cap vs a small account");
  const workers = String(Math.max(2, availableParallelism()));
  let stack: Stack | undefined;
  let off: Awaited<ReturnType<typeof startRelayer>> | undefined;
  try {
    stack = await startStack({ payerCount: 1, env: { VESTA_SANDBOX_WORKERS: workers, VESTA_RUNS_PER_ACCOUNT: workers } });
    const offDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-bench-history-off-"));
    off = await startRelayer({ ...stack.relayerConfig, port: 0, dataDir: offDir, runHistory: { retentionMs: 0, perAccount: 1 } }, pino({ level: "silent" }));
    const { apiKey } = await newAccount(stack, "history bench");
    const first = await call(stack, "POST", "/lit_action", { key: apiKey, body: { code: HELLO, js_params: { name: "bench" } } });
    await fetch(`${off.url}/core/v1/lit_action`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify({ code: HELLO }) });
    const request = (api: string) => ({
      url: `${api}/lit_action`,
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
      body: JSON.stringify({ ipfs_id: first.body.ipfs_id, js_params: { name: "bench" } }),
    });
    await compareOnOff("history", { off: request(`${off.url}/core/v1`), on: request(stack.api) }, TARGET);
    const listed = await call(stack, "GET", "/list_runs?limit=1", { key: apiKey });
    console.log(`  runs recorded for the account: newest ${listed.body.runs[0]?.run_id ?? "none"}`);
    fs.rmSync(offDir, { recursive: true, force: true });
  } finally {
    await off?.close();
    await stack?.stop();
  }
  await storeBench();
}

/**
 * Microseconds per record, each committed alone, at a cap of 10,000: into a
 * new account, into one holding 9,000 runs (below the cap: what its size costs), and into one at its
 * cap (its oldest dropped in batches of 1 % of the cap).
 */
export async function storeBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-bench-history-"));
  const h = await RunHistory.open({ sqliteFile: path.join(dir, "runs.sqlite") }, { retentionMs: 3600_000, perAccount: 10_000 });
  const record = (account: bigint, i: number) =>
    h.record({ id: `run_${i}`, accountHash: account, keyHash: 7n, cid: "QmX", status: "success", startedAt: Date.now(), durationMs: 5, costCents: 1, logs: "x".repeat(200), error: null, requestId: null });
  const fill = async (account: bigint, n: number) => {
    for (let i = 0; i < n; i++) void record(account, i);
    await h.flush();
  };
  const timed = async (account: bigint, n: number) => {
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await record(account, i); // each committed alone
    return Number(process.hrtime.bigint() - t) / n / 1000;
  };
  await fill(1n, 10_000);
  await fill(2n, 9_000);
  const results = { fresh: [] as number[], below: [] as number[], atCap: [] as number[] };
  for (let round = 0; round < 3; round++) {
    results.fresh.push(await timed(BigInt(100 + round), 300));
    results.below.push(await timed(2n, 300));
    results.atCap.push(await timed(1n, 300));
  }
  const best = (l: number[]) => Math.min(...l);
  const [fresh, below, atCap] = [best(results.fresh), best(results.below), best(results.atCap)];
  console.log(
    `store, a record and its commit (best of 3 interleaved): a new account ${fresh.toFixed(0)} us, 9,000 runs held ${below.toFixed(0)} us (${(below / fresh).toFixed(2)}), at the cap of 10,000 ${atCap.toFixed(0)} us (${(atCap / fresh).toFixed(2)}: the oldest dropped 100 at a time)`,
  );
  await h.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
