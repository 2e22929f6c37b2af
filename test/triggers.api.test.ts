import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import Database from "better-sqlite3";
import { Client } from "pg";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv, tempDatabase, type TempDatabase } from "./helpers/postgres";
import { loadTriggersConfig } from "../triggers/config";

const CODE = `async function main(params) { return params; }`;
const ok = (body: any) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } });

/** The suite runs on each store: SQLite, and PostgreSQL where one can be started (see helpers/postgres). */
for (const store of STORES)
describe(`triggers service: API, auth and webhook runs (spec 3, fake core, ${store})`, function () {
  this.timeout(60_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  let pg: TempDatabase | undefined;
  let mode: "ok" | "503" | "400" | "throw" = "ok";
  before(async function () {
    if (store === "PostgreSQL") {
      pg = await tempDatabase(this);
    }
    core = await fakeCore((body) => {
      if (mode === "503") return { status: 503, body: { error: "down", code: "chain_unavailable", message: "down" } };
      if (mode === "400") return { status: 403, body: { error: "no execute", code: "missing_scope", message: "no execute" } };
      if (mode === "throw") {
        const error = "Error: boom\n    at main (action.js:1:40)";
        return { status: 422, body: { response: null, logs: "before", has_error: true, error, code: "action_failed", message: error, ipfs_id: "Qm" } };
      }
      return ok(body);
    });
    h = await startHarness({
      TRIGGERS_CORE_URL: core.url,
      TRIGGERS_WEBHOOK_BODY_LIMIT: "1kb",
      TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "5",
      TRIGGERS_RATE_WINDOW_MS: "60000",
      ...(pg ? { DATABASE_URL: pg.url } : {}),
    });
    token = await approvedToken(h);
  });
  beforeEach(() => (mode = "ok"));
  after(async () => {
    await h?.stop();
    await core?.close();
    await pg?.stop();
  });

  /** The stored (sealed) usage key of trigger `id`, read from the store itself. */
  async function storedUsageKey(id: string): Promise<string> {
    if (pg) {
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      try {
        return (await client.query("SELECT usage_key FROM triggers WHERE id = $1", [id])).rows[0].usage_key;
      } finally {
        await client.end();
      }
    }
    const db = new Database(path.join(h.dataDir, "triggers.sqlite"), { readonly: true });
    try {
      return (db.prepare("SELECT usage_key FROM triggers WHERE id = ?").get(id) as { usage_key: string }).usage_key;
    } finally {
      db.close();
    }
  }

  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const webhook = async (name = "hook", extra: object = {}) =>
    (await api("/api/triggers", { method: "POST", body: { name, kind: "webhook", action_code: CODE, usage_api_key: "usage-key-secret-123", config: {}, ...extra } })).body;
  const runOf = (id: string) => until(async () => {
    const r = await api(`/api/runs/${id}`);
    return r.body.status === "success" || r.body.status === "failed" ? r.body : undefined;
  });

  describe("bearer tokens and the handshake", () => {
    it("answers /api/me for an approved token and 401 for unknown or missing ones", async () => {
      expect((await api("/api/me")).body.email).to.equal("alice@example.com");
      const r = await api("/api/me", { token: crypto.randomBytes(32).toString("base64url") });
      expect([r.status, r.body.code]).to.deep.equal([401, "invalid_api_key"]);
      expect((await http(`${h.svc.url}/api/triggers`)).status).to.equal(401);
    });

    it("a magic link works once; the approval page needs a session", async () => {
      const n = h.links.length;
      expect((await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "bob@example.com" } })).status).to.equal(202);
      const link = h.links[n];
      expect((await http(link)).status).to.equal(303);
      expect((await http(link)).status).to.equal(401);
      const post = await http(`${h.svc.url}/authorize`, { method: "POST", raw: `challenge=${"a".repeat(43)}&ticket=x&csrf=x`, headers: { "content-type": "application/x-www-form-urlencoded" } });
      expect(post.status).to.equal(401);
    });

    it("lists tokens and revokes one, after which it is refused", async () => {
      const other = await approvedToken(h, "alice@example.com");
      const list = (await api("/api/tokens", { token: other })).body as any[];
      expect(list.length).to.be.greaterThanOrEqual(2);
      const mine = list[list.length - 1];
      expect((await api(`/api/tokens/${mine.id}`, { method: "DELETE" })).status).to.equal(200);
      expect((await api("/api/me", { token: other })).status).to.equal(401);
      expect((await api("/api/me")).status).to.equal(200);
    });

    it("scopes triggers to their user: another user can neither read, rewrite, delete nor see the runs of one", async () => {
      const t = await webhook();
      const fired = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { n: 1 } });
      await runOf(fired.body.run_id);
      const bob = await approvedToken(h, "bob@example.com");
      const notFound = (r: { status: number; body: any }) => expect([r.status, r.body.code]).to.deep.equal([404, "trigger_not_found"]);
      notFound(await api(`/api/triggers/${t.id}`, { token: bob }));
      expect((await api("/api/triggers", { token: bob })).body).to.deep.equal([]);
      notFound(await api(`/api/triggers/${t.id}`, { token: bob, method: "PATCH", body: { action_code: "async function main() { return 'bob'; }", enabled: false } }));
      notFound(await api(`/api/triggers/${t.id}`, { token: bob, method: "DELETE" }));
      notFound(await api(`/api/triggers/${t.id}/runs`, { token: bob }));
      const run = await api(`/api/runs/${fired.body.run_id}`, { token: bob });
      expect([run.status, run.body.code]).to.deep.equal([404, "run_not_found"]);
      // nothing changed for its owner
      const mine = (await api(`/api/triggers/${t.id}`)).body;
      expect(mine).to.deep.include({ id: t.id, action_code: t.action_code, enabled: true, name: t.name });
      expect(mine.updated_at).to.equal(t.updated_at);
      expect((await api(`/api/runs/${fired.body.run_id}`)).body.status).to.equal("success");
    });

    it("publishes SKILL.md explaining the handshake", async () => {
      const r = await http(`${h.svc.url}/SKILL.md`);
      expect(r.status).to.equal(200);
      expect(r.body).to.contain(`${h.svc.url}/authorize?challenge=`).and.contain("base64url(sha256(TOKEN))").and.contain("/api/triggers");
    });
  });

  describe("triggers CRUD", () => {
    it("creates, lists, gets, patches and deletes; never returns the usage key, stored encrypted", async () => {
      const t = await webhook("crud");
      expect(t).to.include({ name: "crud", kind: "webhook", enabled: true });
      expect(JSON.stringify(t)).not.to.contain("usage-key-secret-123");
      expect(JSON.stringify((await api("/api/triggers")).body)).not.to.contain("usage-key-secret-123");
      const p = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { enabled: false, name: "renamed" } });
      expect(p.body).to.include({ enabled: false, name: "renamed" });
      expect((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: {} })).status).to.equal(409);
      const stored = await storedUsageKey(t.id);
      expect(stored).to.be.a("string").and.not.to.contain("usage-key-secret-123");
      if (!pg) expect(fs.readFileSync(path.join(h.dataDir, "triggers.sqlite")).includes("usage-key-secret-123")).to.equal(false);
      expect((await api(`/api/triggers/${t.id}`, { method: "DELETE" })).status).to.equal(200);
      expect((await api(`/api/triggers/${t.id}`)).status).to.equal(404);
    });

    it("rejects bad bodies with invalid_request and creates nothing", async () => {
      const before = (await api("/api/triggers")).body.length;
      for (const body of [
        { name: "x", kind: "nope", action_code: CODE, usage_api_key: "k", config: {} },
        { name: "x", kind: "webhook", action_code: CODE, config: {} },
        { name: "x", kind: "webhook", action_code: CODE, usage_api_key: "k", config: {}, extra: 1 },
      ]) {
        const r = await api("/api/triggers", { method: "POST", body });
        expect([r.status, r.body.code]).to.deep.equal([400, "invalid_request"]);
      }
      expect((await api("/api/triggers")).body.length).to.equal(before);
    });
  });

  describe("webhook", () => {
    it("202 with a run id; params {event, event_raw, headers} with secret headers stripped and verification headers kept", async () => {
      const t = await webhook("gh", { default_params: { repo: "vesta" } });
      const raw = `{"action":"opened","n":1}`;
      const r = await http(`${h.svc.url}/webhook/${t.id}`, {
        method: "POST",
        raw,
        headers: {
          "content-type": "application/json",
          authorization: "Bearer secret",
          "proxy-authorization": "Basic cHJveHk6c2VjcmV0",
          cookie: "s=1",
          "x-api-key": "k",
          "x-hub-signature-256": "sha256=abc",
          "x-github-event": "issues",
          "stripe-signature": "t=1,v1=x",
        },
      });
      expect(r.status).to.equal(202);
      const run = await runOf(r.body.run_id);
      expect(run.status).to.equal("success");
      const p = core.calls[core.calls.length - 1].body.js_params;
      expect(core.calls[core.calls.length - 1].key).to.equal("usage-key-secret-123");
      expect(core.calls[core.calls.length - 1].body.code).to.equal(CODE);
      expect(p.event).to.deep.equal({ action: "opened", n: 1 });
      expect(p.event_raw).to.equal(raw);
      expect(p.repo).to.equal("vesta");
      expect(p.headers).to.include({ "x-hub-signature-256": "sha256=abc", "x-github-event": "issues", "stripe-signature": "t=1,v1=x" });
      expect(p.headers).not.to.have.any.keys("authorization", "proxy-authorization", "cookie", "x-api-key");
      expect(JSON.stringify(p)).not.to.contain("secret").and.not.to.contain("cHJveHk6c2VjcmV0");
      expect(run.response.response.event).to.deep.equal({ action: "opened", n: 1 });
    });

    it("accepts a text body", async () => {
      const t = await webhook("text");
      const r = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", raw: "hello there", headers: { "content-type": "text/plain" } });
      expect(r.status).to.equal(202);
      await runOf(r.body.run_id);
      expect(core.calls[core.calls.length - 1].body.js_params).to.include({ event: "hello there", event_raw: "hello there", event_raw_encoding: "utf8" });
    });

    it("hands a body that is not UTF-8 over as its exact bytes, in base64", async () => {
      const t = await webhook("binary");
      const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41, 0xc3]); // invalid UTF-8
      const res = await fetch(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: bytes, headers: { "content-type": "application/octet-stream" } });
      expect(res.status).to.equal(202);
      await runOf(((await res.json()) as { run_id: string }).run_id);
      const params = core.calls[core.calls.length - 1].body.js_params;
      expect(params.event_raw_encoding).to.equal("base64");
      expect(Buffer.from(params.event_raw, "base64").equals(bytes)).to.equal(true);
    });

    it("answers 404 for an unknown trigger, 413 over the body limit, 429 over the per-trigger rate", async () => {
      expect((await http(`${h.svc.url}/webhook/trg_nope`, { method: "POST", body: {} })).status).to.equal(404);
      const t = await webhook("limits");
      const big = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", raw: "x".repeat(2048), headers: { "content-type": "text/plain" } });
      expect([big.status, big.body.code]).to.deep.equal([413, "body_too_large"]);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { i } })).status);
      expect(statuses.slice(0, 4)).to.deep.equal([202, 202, 202, 202]);
      expect(statuses[5]).to.equal(429);
    });

    it("lists runs newest first with limit and offset", async () => {
      const t = await webhook("paging");
      for (let i = 0; i < 3; i++) await runOf((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { i } })).body.run_id);
      const page = (await api(`/api/triggers/${t.id}/runs?limit=2&offset=1`)).body;
      expect(page.total).to.equal(3);
      expect(page.runs.map((r: any) => r.params.event.i)).to.deep.equal([1, 0]);
      expect((await api(`/api/triggers/${t.id}/runs?limit=0`)).status).to.equal(400);
    });
  });

  describe("runs", () => {
    it("retries a transient 5xx 3 times with backoff, then fails the run", async () => {
      mode = "503";
      const t = await webhook("retry");
      const before = core.calls.length;
      const run = await runOf((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: {} })).body.run_id);
      expect(run.status).to.equal("failed");
      expect(run.attempts).to.equal(4);
      expect(core.calls.length - before).to.equal(4);
      expect(run.error).to.match(/503/).and.match(/3 retries/);
    });

    it("does not retry a 4xx", async () => {
      mode = "400";
      const t = await webhook("4xx");
      const before = core.calls.length;
      const run = await runOf((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: {} })).body.run_id);
      expect([run.status, run.attempts, core.calls.length - before]).to.deep.equal(["failed", 1, 1]);
      expect(run.error).to.match(/403 missing_scope/);
    });

    it("stores the JS stack when the action throws", async () => {
      mode = "throw";
      const t = await webhook("throws");
      const before = core.calls.length;
      const run = await runOf((await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: {} })).body.run_id);
      expect([run.status, run.attempts, core.calls.length - before], "a 422 action_failed is final: not retried").to.deep.equal(["failed", 1, 1]);
      expect(run.error).to.contain("boom").and.contain("at main");
      expect(run.response).to.deep.include({ has_error: true, logs: "before", code: "action_failed" });
    });
  });
});

for (const store of STORES)
describe(`triggers webhook per-IP rate limit (${store})`, function () {
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  before(async function () {
    core = await fakeCore((body) => ok(body));
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url, TRIGGERS_WEBHOOK_RATE_PER_IP: "4", TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "100", TRIGGERS_RATE_WINDOW_MS: "60000" });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await core?.close();
  });

  it("answers 429 once one client address has sent the per-IP limit, whichever triggers it targets", async () => {
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) {
      const r = await http(`${h.svc.url}/api/triggers`, { token, method: "POST", body: { name, kind: "webhook", action_code: CODE, usage_api_key: "usage-key-secret-123", config: {} } });
      expect(r.status).to.equal(201);
      ids.push(r.body.id);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await http(`${h.svc.url}/webhook/${ids[i % 3]}`, { method: "POST", body: { i } })).status);
    // each trigger got at most 2 (far under its own limit of 100): only the per-IP limit can refuse
    expect(statuses).to.deep.equal([202, 202, 202, 202, 429, 429]);
  });

  it("keys on the client a trusted proxy names (TRIGGERS_TRUST_PROXY), and ignores X-Forwarded-For otherwise", async () => {
    const t = (await http(`${h.svc.url}/api/triggers`, { token, method: "POST", body: { name: "xff", kind: "webhook", action_code: CODE, usage_api_key: "usage-key-secret-123", config: {} } })).body;
    const from = (svc: string, ip: string) => http(`${svc}/webhook/${t.id}`, { method: "POST", body: {}, headers: { "x-forwarded-for": ip } });
    // this client already spent its budget above: rotating X-Forwarded-For does not help without a trusted proxy
    expect((await from(h.svc.url, "203.0.113.1")).status).to.equal(429);
    // behind a trusted proxy (loopback here), each client the proxy names has its own budget
    await h.svc.close();
    h.env.TRIGGERS_TRUST_PROXY = "loopback";
    await h.start();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await from(h.svc.url, "203.0.113.7")).status);
    expect(statuses).to.deep.equal([202, 202, 202, 202, 429]);
    expect((await from(h.svc.url, "198.51.100.9")).status, "another client behind the same proxy").to.equal(202);
  });

  it("refuses TRIGGERS_TRUST_PROXY=true (any client could name itself)", () => {
    expect(() => loadTriggersConfig({ TRIGGERS_CORE_URL: "http://127.0.0.1:8000", TRIGGERS_TRUST_PROXY: "true" })).to.throw(/TRIGGERS_TRUST_PROXY=true would believe any X-Forwarded-For/);
  });
});
