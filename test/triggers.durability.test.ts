import { expect } from "chai";
import { spawn } from "node:child_process";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";

const CODE = `async function main(params) { return params.event.i; }`;

/** A fake core that holds every call until `release`, then answers each with its event's `i`. */
async function gatedCore() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const core = await fakeCore(async (body) => {
    await gate;
    return { status: 200, body: { response: body.js_params.event.i, logs: "", has_error: false } };
  });
  return { core, release };
}

/** Kill-and-restart of the run queue: no queued run is lost, none runs twice (in-flight runs are failed, not re-run). */
for (const store of STORES)
describe(`triggers service: durable run queue (spec 3, fake core) (${store})`, function () {
  this.timeout(60_000);
  it("keeps queued runs across a stop in the middle of a run, and runs each at most once", async function () {
    const { core, release } = await gatedCore();
    const h: Harness = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url, TRIGGERS_WORKERS: "1" });
    try {
      const token = await approvedToken(h);
      const t = (await http(`${h.svc.url}/api/triggers`, { method: "POST", token, body: { name: "d", kind: "webhook", action_code: CODE, usage_api_key: "k", config: {} } })).body;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { i } })).body.run_id);
      await until(async () => core.calls.length === 1);
      await h.svc.close(); // the first run is in flight at the core; four are queued
      release();
      await h.start();
      const runs = await until(async () => {
        const r = (await http(`${h.svc.url}/api/triggers/${t.id}/runs?limit=10`, { token })).body.runs as any[];
        return r.every((x) => x.status === "success" || x.status === "failed") ? r : undefined;
      });
      const byEvent = new Map(runs.map((r) => [r.params.event.i, r]));
      expect(byEvent.get(0).status).to.equal("failed");
      expect(byEvent.get(0).error).to.match(/interrupted/);
      for (let i = 1; i < 5; i++) expect([i, byEvent.get(i).status, byEvent.get(i).response.response]).to.deep.equal([i, "success", i]);
      const seen = core.calls.map((c) => c.body.js_params.event.i).sort();
      expect(seen).to.deep.equal([0, 1, 2, 3, 4]); // each once
    } finally {
      release();
      await h.stop();
      await core.close();
    }
  });

  it("loses no queued run and runs none twice when the process is killed with SIGKILL", async function () {
    const { core, release } = await gatedCore();
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const h: Harness = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url, TRIGGERS_WORKERS: "1" });
    const child = { proc: undefined as ReturnType<typeof spawn> | undefined };
    try {
      const token = await approvedToken(h);
      const t = (await http(`${h.svc.url}/api/triggers`, { method: "POST", token, body: { name: "k", kind: "webhook", action_code: CODE, usage_api_key: "k", config: {} } })).body;
      await h.svc.close();
      // The same data dir served by a real process (npm run triggers), then killed mid-run.
      const proc = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "triggers/main.ts"], {
        env: { ...process.env, ...h.env, TRIGGERS_PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.proc = proc;
      let out = "";
      proc.stdout!.on("data", (c) => (out += c));
      proc.stderr!.on("data", (c) => (out += c));
      await until(async () => out.includes("triggers service at") || proc.exitCode !== null, 60_000, "the triggers process");
      expect(out).to.contain(`http://127.0.0.1:${port}`);
      for (let i = 0; i < 5; i++) expect((await http(`http://127.0.0.1:${port}/webhook/${t.id}`, { method: "POST", body: { i } })).status).to.equal(202);
      await until(async () => core.calls.length === 1);
      const exited = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGKILL");
      await exited;
      release();
      await h.start();
      const runs = await until(async () => {
        const r = (await http(`${h.svc.url}/api/triggers/${t.id}/runs?limit=10`, { token })).body.runs as any[];
        return r.length === 5 && r.every((x) => x.status === "success" || x.status === "failed") ? r : undefined;
      });
      const byEvent = new Map(runs.map((r) => [r.params.event.i, r]));
      expect(byEvent.get(0).status).to.equal("failed");
      for (let i = 1; i < 5; i++) expect([i, byEvent.get(i).status]).to.deep.equal([i, "success"]);
      expect(core.calls.map((c) => c.body.js_params.event.i).sort()).to.deep.equal([0, 1, 2, 3, 4]);
    } finally {
      if (child.proc && child.proc.exitCode === null) child.proc.kill("SIGKILL");
      release();
      await h.stop();
      await core.close();
    }
  });
});
