import { expect } from "chai";
import { Cron } from "croner";
import { scanSchedules, validateSchedule } from "../triggers/kinds/schedule";
import { newId } from "../triggers/crypto";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, tempDatabase, type TempDatabase } from "./helpers/postgres";

const CODE = `async function main(params) { return params; }`;
const KEY = "usage-key-secret-123";

for (const store of STORES)
describe(`triggers service: limits on abuse (issue 15, ${store})`, function () {
  this.timeout(60_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  let pg: TempDatabase | undefined;
  let reply: (body: any) => { status: number; body: unknown } = (body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } });
  const clock = { t: Date.parse("2030-01-01T00:00:00Z") };
  before(async function () {
    if (store === "PostgreSQL") {
      pg = await tempDatabase(this);
    }
    core = await fakeCore((body) => reply(body));
    h = await startHarness(
      {
        TRIGGERS_CORE_URL: core.url,
        TRIGGERS_MAX_PER_USER: "3",
        TRIGGERS_MAX_STORED_RESPONSE_BYTES: "4096",
        TRIGGERS_WEBHOOK_BODY_LIMIT: "256kb", // the depth tests send 200 KB bodies (the size limit has its own test)
        TRIGGERS_LOGIN_RATE_PER_ADDRESS: "2",
        TRIGGERS_LOGIN_RATE_PER_IP: "5",
        TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "1000",
        TRIGGERS_WEBHOOK_RATE_PER_IP: "1000",
        ...(pg ? { DATABASE_URL: pg.url } : {}),
      },
      { pollers: false, now: () => clock.t },
    );
    token = await approvedToken(h, "owner@example.com"); // one login mail (of the 5 per IP)
  });
  after(async () => {
    await h?.stop();
    await core?.close();
    await pg?.stop();
  });

  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const create = (body: object) => api("/api/triggers", { method: "POST", body: { name: "t", kind: "webhook", action_code: CODE, usage_api_key: KEY, config: {}, ...body } });
  const count = async () => (await api("/api/triggers")).body.length as number;
  const runOf = (id: string) => until(async () => {
    const r = (await api(`/api/runs/${id}`)).body;
    return r.status === "success" || r.status === "failed" ? r : undefined;
  });
  const login = (email: string) =>
    http(`${h.svc.url}/auth/login`, { method: "POST", raw: new URLSearchParams({ email }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

  describe("sign-in mails", function () {
    it("sends at most TRIGGERS_LOGIN_RATE_PER_ADDRESS links to one address, then 429 with Retry-After; bad input sends nothing and is not counted", async function () {
      const sent = h.links.length;
      expect((await login("not an address")).status).to.equal(400);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await login("Victim@Example.com".replace("V", i === 1 ? "v" : "V")));
      expect(statuses.map((r) => r.status)).to.deep.equal([200, 200, 429]);
      expect(statuses[2].body.code).to.equal("rate_limited");
      expect(statuses[2].body.message).to.equal("too many sign-in links requested for this e-mail address; try again later");
      expect(Number(statuses[2].headers.get("retry-after"))).to.be.within(1, 15 * 60);
      expect(h.links.length - sent).to.equal(2);
    });

    it("sends at most TRIGGERS_LOGIN_RATE_PER_IP links from one client address, whatever the addresses", async function () {
      // 1 (approvedToken) + 2 (the test above) + 1 refused bad input + ... from this client: the 6th request is refused
      const sent = h.links.length;
      const statuses = [];
      for (const who of ["a@example.com", "b@example.com", "c@example.com"]) statuses.push((await login(who)).status);
      expect(statuses).to.deep.equal([429, 429, 429]);
      expect(h.links.length).to.equal(sent);
    });
  });

  describe("trigger quota", function () {
    it("creates at most TRIGGERS_MAX_PER_USER triggers per user, even when raced, then 409 trigger_quota_exceeded", async function () {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create({ name: `t${i}` })));
      expect(results.filter((r) => r.status === 201)).to.have.length(3);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused.map((r) => [r.status, r.body.code])).to.deep.equal(Array(5).fill([409, "trigger_quota_exceeded"]));
      expect(refused[0].body.message).to.equal("you have 3 triggers, the most one user may have; delete one first");
      expect(await count()).to.equal(3);
      const one = results.find((r) => r.status === 201)!.body.id;
      expect((await api(`/api/triggers/${one}`, { method: "DELETE" })).status).to.equal(200);
      expect((await create({ name: "after delete" })).status).to.equal(201);
    });
  });

  describe("inputs", function () {
    let hook: string;
    before(async () => {
      for (const t of (await api("/api/triggers")).body) await api(`/api/triggers/${t.id}`, { method: "DELETE" });
      hook = (await create({ name: "hook" })).body.id;
    });

    it("answers 400 json_too_deep to a webhook body, default_params or config nested past the limit, and stores nothing", async function () {
      const runs = async () => (await api(`/api/triggers/${hook}/runs`)).body.total;
      const before = [await count(), await runs()];
      const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
      for (const n of [61, 3700, 100_000]) {
        const r = await http(`${h.svc.url}/webhook/${hook}`, { method: "POST", raw: deep(n), headers: { "content-type": "application/json" } });
        expect([r.status, r.body.code], String(n)).to.deep.equal([400, "json_too_deep"]);
        const t = await http(`${h.svc.url}/webhook/${hook}`, { method: "POST", raw: `{"a":${deep(n)}}`, headers: { "content-type": "text/plain" } });
        expect([t.status, t.body.code], `text ${n}`).to.deep.equal([400, "json_too_deep"]);
      }
      for (const body of [`{"name":"d","kind":"webhook","action_code":"x","usage_api_key":"k","default_params":{"a":${deep(3700)}}}`, `{"name":"d","kind":"webhook","action_code":"x","usage_api_key":"k","config":${deep(100)}}`]) {
        const r = await http(`${h.svc.url}/api/triggers`, { token, method: "POST", raw: body, headers: { "content-type": "application/json" } });
        expect([r.status, r.body.code]).to.deep.equal([400, "json_too_deep"]);
      }
      expect([await count(), await runs()]).to.deep.equal(before);
      const ok = await http(`${h.svc.url}/webhook/${hook}`, { method: "POST", raw: deep(60), headers: { "content-type": "application/json" } });
      expect(ok.status).to.equal(202);
    });

    it("refuses action code (and names) that are not well-formed Unicode or hold NUL, on create and update", async function () {
      const before = await count();
      const refusals: [string, string, string][] = [
        ['async function main() { return "\uD800" }', "invalid_code", "action_code: must be well-formed Unicode: a lone surrogate \\uD800 at character 32 has no UTF-8 encoding"],
        ["async function main() {} \u0000", "invalid_request", "action_code: must not hold NUL characters (the trigger store cannot keep them)"],
      ];
      for (const [action_code, code, message] of refusals) {
        const r = await create({ action_code });
        expect([r.status, r.body.code, r.body.message]).to.deep.equal([400, code, `invalid body: ${message}`]);
        const p = await api(`/api/triggers/${hook}`, { method: "PATCH", body: { action_code } });
        expect([p.status, p.body.code]).to.deep.equal([400, code]);
      }
      for (const name of ["\uDFFF", "a\u0000b", "a\u202Eb"]) {
        const r = await create({ name });
        expect([r.status, r.body.code], JSON.stringify(name)).to.deep.equal([400, "invalid_text"]);
      }
      expect(await count()).to.equal(before);
      expect((await api(`/api/triggers/${hook}`)).body.action_code).to.equal(CODE);
    });

    it("stores webhook bodies holding NUL and lone surrogates (as U+FFFD where the store cannot keep them)", async function () {
      const r = await http(`${h.svc.url}/webhook/${hook}`, { method: "POST", raw: '{"a":"x\\u0000y","b":"\\ud800"}', headers: { "content-type": "application/json" } });
      expect(r.status).to.equal(202);
      const run = await runOf(r.body.run_id);
      expect(run.status).to.equal("success");
      expect(run.params.event.a).to.be.oneOf(["x\u0000y", "x\uFFFDy"]);
      // The lone surrogate, which the core would refuse, reaches the action as U+FFFD; event_raw keeps the exact text.
      expect(run.params.event.b).to.equal("\uFFFD");
      expect(run.params.event_raw).to.equal('{"a":"x\\u0000y","b":"\\ud800"}');
    });
  });

  describe("runs", function () {
    let hook: string;
    before(async () => {
      for (const t of (await api("/api/triggers")).body) await api(`/api/triggers/${t.id}`, { method: "DELETE" });
      hook = (await create({ name: "runs" })).body.id;
    });
    afterEach(() => {
      reply = (body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } });
    });
    const fire = async (body: unknown = {}) => runOf((await http(`${h.svc.url}/webhook/${hook}`, { method: "POST", body })).body.run_id);

    it("stores at most TRIGGERS_MAX_STORED_RESPONSE_BYTES of a run's answer, and says what was cut", async function () {
      const big = { response: "r".repeat(100_000), logs: "l".repeat(100_000), has_error: false };
      reply = () => ({ status: 200, body: big });
      const run = await fire();
      expect(run.status).to.equal("success");
      expect(run.response.truncated).to.equal(true);
      expect(run.response.bytes).to.equal(Buffer.byteLength(JSON.stringify(big)));
      expect(Buffer.byteLength(JSON.stringify(run.response))).to.be.at.most(4096);
      expect(run.response.preview.startsWith('{"response":"rrr')).to.equal(true);
    });

    it("stores at most 16 KB of a run's error", async function () {
      reply = () => ({ status: 200, body: { response: null, logs: "", has_error: true, error: "e".repeat(1_000_000) } });
      const run = await fire();
      expect(run.status).to.equal("failed");
      expect(run.error.length).to.equal(16 * 1024);
    });

    it("fails once, with the reason, a stored run whose params cannot be delivered; never calls the core, never retries", async function () {
      const calls = core.calls.length;
      const id = newId("run");
      // as an older version could have stored it (the webhook edge now refuses such bodies)
      if (store === "SQLite") {
        const Database = (await import("better-sqlite3")).default;
        const db = new Database(`${h.dataDir}/triggers.sqlite`);
        db.prepare("INSERT INTO runs (id, trigger_id, status, params, seq, created_at) VALUES (?, ?, 'queued', ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs), ?)").run(id, hook, `{"event":${"[".repeat(5000)}${"]".repeat(5000)}}`, Date.now());
        db.close();
      } else {
        // PostgreSQL's JSONB refuses such depth itself; a deep value of the largest depth it keeps still cannot be sent
        await h.svc.ctx.store.enqueue(hook, [{ id, params: { event: JSON.parse("[".repeat(200) + "]".repeat(200)) } }], Date.now());
      }
      h.svc.ctx.wake();
      const run = await runOf(id);
      expect([run.status, run.attempts]).to.deep.equal(["failed", 1]);
      expect(run.error).to.match(/^the run's params cannot be sent: they are nested more than 62 levels deep$/);
      expect(core.calls.length).to.equal(calls);
      if (store === "SQLite") expect(run.params).to.deep.equal({ unavailable: "nested too deeply to show" });
      const next = await fire({ after: true }); // and the runner keeps going
      expect(next.status).to.equal("success");
    });

    it("fails once a run the core refuses as too large or too deep (4xx), never retried", async function () {
      reply = () => ({ status: 413, body: { error: "params too large: at most 64 KB of JSON (maxParamsBytes)", code: "params_too_large", message: "params too large: at most 64 KB of JSON (maxParamsBytes)" } });
      const calls = core.calls.length;
      const run = await fire();
      expect([run.status, run.attempts, core.calls.length - calls]).to.deep.equal(["failed", 1, 1]);
      expect(run.error).to.equal("core answered 413 params_too_large: params too large: at most 64 KB of JSON (maxParamsBytes)");
    });
  });

  describe("schedules", function () {
    it("validates rare cron expressions with bounded work (at most a few next-run searches each)", async function () {
      const rare = ["0 0 29 2 *", "0 0 29 2 1", "59 23 31 12 *", "0 0 13 * 5", "* * * 29 2 *", "0 0 0 29 2 *", "0 0 31 2 *"];
      const original = Cron.prototype.nextRun;
      let searches = 0;
      Cron.prototype.nextRun = function (this: Cron, ...a: Parameters<Cron["nextRun"]>) {
        searches++;
        return original.apply(this, a);
      };
      try {
        for (const cron of rare) {
          searches = 0;
          try {
            validateSchedule({ cron });
          } catch {
            /* "never fires" is an answer too */
          }
          expect(searches, cron).to.be.at.most(2 + 61); // one search, and a 6-field cron's seconds over one minute
        }
      } finally {
        Cron.prototype.nextRun = original;
      }
    });

    it("a schedule that cannot be read (stored by an older version) does not stop the others", async function () {
      for (const t of (await api("/api/triggers")).body) await api(`/api/triggers/${t.id}`, { method: "DELETE" });
      const good = (await create({ name: "good", kind: "schedule", config: { cron: "* * * * *" } })).body;
      const bad = (await create({ name: "bad", kind: "schedule", config: { cron: "* * * * *" } })).body;
      const row = (await h.svc.ctx.store.getTrigger(bad.id))!;
      await h.svc.ctx.store.updateTrigger({ ...row, config: { cron: "not a cron" } });
      clock.t += 61_000;
      expect(await scanSchedules(h.svc.ctx)).to.equal(1);
      expect((await api(`/api/triggers/${good.id}/runs`)).body.total).to.equal(1);
    });

    it("fires once, for the latest slot, a schedule the service missed for years", async function () {
      for (const t of (await api("/api/triggers")).body) await api(`/api/triggers/${t.id}`, { method: "DELETE" });
      const t = (await create({ name: "every minute", kind: "schedule", config: { cron: "* * * * *" } })).body;
      clock.t += 3 * 365 * 24 * 3600_000 + 17_000; // three years (1.5 million minutes) later
      const original = Cron.prototype.nextRun;
      let searches = 0;
      Cron.prototype.nextRun = function (this: Cron, ...a: Parameters<Cron["nextRun"]>) {
        searches++;
        return original.apply(this, a);
      };
      try {
        expect(await scanSchedules(h.svc.ctx)).to.equal(1);
      } finally {
        Cron.prototype.nextRun = original;
      }
      expect(searches, "a bisection, not one search per missed minute").to.be.below(200);
      const [run] = (await api(`/api/triggers/${t.id}/runs`)).body.runs;
      const latest = new Date(Math.floor(clock.t / 60_000) * 60_000).toISOString();
      expect(run.params.scheduled_at).to.equal(latest);
    });
  });
});
