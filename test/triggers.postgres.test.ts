import { expect } from "chai";
import { TriggersStore } from "../triggers/store/store";
import { scanSchedules } from "../triggers/kinds/schedule";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { tempDatabase, type TempDatabase } from "./helpers/postgres";

const CODE = `async function main(params) { return params; }`;

/** The same service on PostgreSQL (DATABASE_URL). Skipped where no PostgreSQL can be started. */
describe("triggers service on PostgreSQL", function () {
  this.timeout(120_000);
  let pg: TempDatabase | undefined;
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  const clock = { t: Date.parse("2030-01-01T00:00:00Z") };
  before(async function () {
    pg = await tempDatabase(this);
    core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } }));
    h = await startHarness({ TRIGGERS_CORE_URL: core.url, DATABASE_URL: pg.url }, { pollers: false, now: () => clock.t });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await core?.close();
    await pg?.stop();
  });
  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const finished = (id: string, n: number) =>
    until(async () => {
      const runs = (await api(`/api/triggers/${id}/runs?limit=100`)).body.runs as any[];
      return runs.length === n && runs.every((r) => r.status === "success" || r.status === "failed") ? runs : undefined;
    });

  it("runs webhook and schedule triggers, and keeps queued runs and schedule state across a restart", async () => {
    const hook = (await api("/api/triggers", { method: "POST", body: { name: "w", kind: "webhook", action_code: CODE, usage_api_key: "pg-key", config: {} } })).body;
    const r = await http(`${h.svc.url}/webhook/${hook.id}`, { method: "POST", body: { a: 1 }, headers: { cookie: "x=1" } });
    expect(r.status).to.equal(202);
    const [run] = await finished(hook.id, 1);
    expect(run.status).to.equal("success");
    expect(run.params.event).to.deep.equal({ a: 1 });
    expect(run.params.headers).not.to.have.property("cookie");
    expect(core.calls[core.calls.length - 1].key).to.equal("pg-key");

    const cron = (await api("/api/triggers", { method: "POST", body: { name: "c", kind: "schedule", action_code: CODE, usage_api_key: "k", config: { cron: "* * * * *" } } })).body;
    await h.svc.close();
    clock.t += 5 * 60_000;
    await h.start();
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
    expect(await scanSchedules(h.svc.ctx)).to.equal(0);
    await finished(cron.id, 1);
  });

  it("claims with SKIP LOCKED: two stores draining one queue never take the same run", async () => {
    const trg = (await api("/api/triggers", { method: "POST", body: { name: "q", kind: "webhook", action_code: CODE, usage_api_key: "k", config: {}, enabled: false } })).body;
    await h.svc.close(); // only the two stores below claim
    const a = await TriggersStore.open({ databaseUrl: pg!.url, sqliteFile: "" });
    const b = await TriggersStore.open({ databaseUrl: pg!.url, sqliteFile: "" });
    try {
      await a.enqueue(trg.id, Array.from({ length: 40 }, (_, i) => ({ id: `run_skip_${i}`, params: { i } })), Date.now());
      const taken: string[] = [];
      const drain = async (s: TriggersStore) => {
        for (;;) {
          const run = await s.claim(Date.now());
          if (!run) return;
          taken.push(run.id);
          if (run.triggerId === trg.id) await s.finish(run.id, "success", null, null, Date.now());
        }
      };
      await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
      const mine = taken.filter((id) => id.startsWith("run_skip_"));
      expect(mine).to.have.length(40);
      expect(new Set(mine).size).to.equal(40);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
