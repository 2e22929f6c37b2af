import crypto from "node:crypto";
import { Writable } from "node:stream";
import { expect } from "chai";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { serviceLogger } from "../protocol/ops/logger";

const TOKEN = crypto.randomBytes(24).toString("hex");
const CODE = `async function main(params) { return params; }`;

describe("operating the triggers service: /health, /ready, /metrics, logs, graceful stop", function () {
  this.timeout(60_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  let slowMs = 0;
  const lines: any[] = [];
  const sink = new Writable({ write: (chunk, _e, done) => (lines.push(...chunk.toString().trim().split("\n").map((l: string) => JSON.parse(l))), done()) });

  before(async () => {
    core = await fakeCore(async (body) => {
      if (slowMs) await new Promise((r) => setTimeout(r, slowMs));
      return { status: 200, body: { response: body.js_params.event, logs: "", has_error: false } };
    });
    h = await startHarness({ TRIGGERS_CORE_URL: core.url, TRIGGERS_METRICS_TOKEN: TOKEN }, { logger: serviceLogger("info", sink) });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await core?.close();
  });

  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const newWebhook = async () => (await api("/api/triggers", { method: "POST", body: { name: "hook", kind: "webhook", action_code: CODE, usage_api_key: "usage-key-secret-123", config: {} } })).body;

  it("GET /health and GET /live answer 200 while the process runs (the core being down); GET /ready names a failing check (core) and nothing more", async function () {
    expect((await http(`${h.svc.url}/health`)).status).to.equal(200);
    const live = await http(`${h.svc.url}/live`);
    expect([live.status, live.body]).to.deep.equal([200, { alive: true }]);
    // The fake core has no /core/v1/version: the core check fails, the database passes.
    const r = await http(`${h.svc.url}/ready`);
    expect([r.status, r.body]).to.deep.equal([503, { ready: false, failing: ["core"] }]);
  });

  it("counts runs by trigger kind and outcome, labels webhook requests by template (never the trigger id) and logs no webhook id", async function () {
    const t = await newWebhook();
    const fired = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { n: 1 } });
    expect(fired.status).to.equal(202);
    await until(async () => ((await api(`/api/runs/${fired.body.run_id}`)).body.status === "success" ? true : undefined));
    expect((await http(`${h.svc.url}/metrics`)).status).to.equal(401);
    const text = (await http<string>(`${h.svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).body;
    expect(text).to.include('vesta_triggers_runs_total{kind="webhook",outcome="success"} 1');
    expect(text).to.include('vesta_triggers_http_requests_total{route="/webhook/:id",method="POST",status="202"} 1');
    expect(text).to.not.include(t.id);
    const all = lines.map((l) => JSON.stringify(l)).join("\n");
    expect(all, "the webhook's id is its capability: never logged").to.not.include(t.id);
    const requestLine = lines.find((l) => l.msg === "request" && l.path === "/webhook/:id");
    expect(requestLine).to.include({ method: "POST", status: 202 });
    expect(requestLine.request_id).to.match(/^[0-9a-f-]{36}$/);
  });

  it("on close with a deadline: refuses new requests, lets the run under way finish, claims no more", async function () {
    const t = await newWebhook();
    slowMs = 1500;
    const calls = core.calls.length + 1;
    const fired = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { n: 2 } });
    await until(async () => core.calls.length === calls, 10_000, "the run under way at the core");
    const closing = h.svc.close({ deadlineMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const refused = await fetch(`${h.svc.url}/health`).then((r) => r.status, (err) => err.cause?.code);
    expect(refused).to.equal("ECONNREFUSED");
    await closing;
    expect(core.calls.length, "the run under way reached the core once, nothing else was started").to.equal(calls);
    await h.start(); // the store shows the run finished, not interrupted
    const run = (await api(`/api/runs/${fired.body.run_id}`)).body;
    expect([run.status, run.response]).to.deep.equal(["success", { response: { n: 2 }, logs: "", has_error: false }]);
    slowMs = 0;
  });
});
