import { expect } from "chai";
import { scanSchedules } from "../triggers/kinds/schedule";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";

const CODE = `async function main(params) { return params; }`;

/** The scheduler with a driven clock: the test calls scanSchedules instead of waiting for the 30 s scan. */
for (const store of STORES)
describe(`triggers service: schedule trigger (spec 3, fake core) (${store})`, function () {
  this.timeout(60_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  const clock = { t: Date.parse("2030-01-01T00:00:00Z") };
  before(async function () {
    core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } }));
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url }, { pollers: false, now: () => clock.t });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await core?.close();
  });
  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const create = (cron: string, extra: object = {}) =>
    api("/api/triggers", { method: "POST", body: { name: `cron ${cron}`, kind: "schedule", action_code: CODE, usage_api_key: "k", config: { cron }, ...extra } });
  const runs = async (id: string) => (await api(`/api/triggers/${id}/runs?limit=100`)).body.runs as any[];

  it("rejects a schedule firing more often than every 30 seconds, and creates nothing", async () => {
    const before = (await api("/api/triggers")).body.length;
    for (const cron of ["*/10 * * * * *", "* * * * * *", "0,15 * * * * *", "0,45 * * * * *", "*/29 * * * * *"]) {
      const r = await create(cron);
      expect([r.status, r.body.code], cron).to.deep.equal([400, "invalid_request"]);
      expect(r.body.message).to.match(/30 seconds/);
    }
    for (const cron of ["not a cron", "* * * *", "1 2 3 4 5 6 7"]) expect((await create(cron)).status, cron).to.equal(400);
    expect((await api("/api/triggers")).body.length).to.equal(before);
  });

  it("accepts 5-field and 6-field crons at 30 s or more", async () => {
    for (const cron of ["* * * * *", "*/30 * * * * *", "0 */5 * * *", "15 * * * * *"]) expect((await create(cron, { enabled: false })).status, cron).to.equal(201);
  });

  it("fires at cron times with {source, scheduled_at, cron} and default params", async () => {
    const t = (await create("*/30 * * * * *", { default_params: { who: "cron" } })).body;
    expect(await scanSchedules(h.svc.ctx)).to.equal(0);
    clock.t += 30_000;
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
    expect(await scanSchedules(h.svc.ctx)).to.equal(0);
    const [run] = await until(async () => ((await runs(t.id)).every((r) => r.status === "success") ? runs(t.id) : undefined));
    expect(run.params).to.deep.equal({ who: "cron", source: "schedule", scheduled_at: "2030-01-01T00:00:30.000Z", cron: "*/30 * * * * *" });
    expect((await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { enabled: false } })).body.enabled).to.equal(false);
  });

  it("runs a firing missed while the service was down once on restart, not once per missed tick", async () => {
    const t = (await create("* * * * *")).body;
    await h.svc.close();
    clock.t += 10 * 60_000 + 5_000; // ten ticks missed
    await h.start();
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
    expect(await scanSchedules(h.svc.ctx)).to.equal(0);
    const list = await runs(t.id);
    expect(list).to.have.length(1);
    expect(list[0].params.scheduled_at).to.equal(new Date(Math.floor(clock.t / 60_000) * 60_000).toISOString());
    clock.t += 60_000;
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
    expect((await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { enabled: false } })).body.enabled).to.equal(false);
  });

  it("does not fire a disabled schedule, nor catch up for the time it was disabled", async () => {
    const t = (await create("* * * * *", { enabled: false })).body;
    clock.t += 5 * 60_000;
    await scanSchedules(h.svc.ctx);
    expect(await runs(t.id)).to.have.length(0);
    await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { enabled: true } });
    expect(await scanSchedules(h.svc.ctx)).to.equal(0);
    clock.t += 60_000;
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
  });
});
