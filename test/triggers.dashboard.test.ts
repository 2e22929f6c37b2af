import { expect } from "chai";
import crypto from "node:crypto";
import { loadTriggersConfig } from "../triggers/config";
import { approvedToken, fakeCore, http, startHarness, type Harness } from "./helpers/triggers";
import { keyHash } from "../protocol/usageKeySeal";
import { hex32 } from "../protocol/usageKeyShape";
import { STORES, storeEnv } from "./helpers/postgres";

/** The core's origin: the dashboard is served by it at /dashboard/ (the default TRIGGERS_DASHBOARD_URL). */
const DASHBOARD_ORIGIN = "http://127.0.0.1:8000";
const DASHBOARD = `${DASHBOARD_ORIGIN}/dashboard/`;
const EVIL = "https://evil.example";

const newToken = () => {
  const token = crypto.randomBytes(32).toString("base64url");
  return { token, challenge: crypto.createHash("sha256").update(token).digest("base64url") };
};

for (const store of STORES)
describe(`triggers service: approval from the web dashboard (session, CORS, JSON approval, login redirects) (${store})`, function () {
  this.timeout(60_000);
  let h: Harness;
  let cookie: string;
  before(async function () {
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: `${DASHBOARD_ORIGIN}/core/v1` });
    cookie = (await signIn("carol@example.com")).cookie;
  });
  after(async () => h?.stop());

  /** Login as the dashboard does it (JSON, from its origin), then the magic link: the session cookie and where it redirected. */
  async function signIn(email: string, next?: string): Promise<{ cookie: string; location: string }> {
    const n = h.links.length;
    const login = await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email, next }, headers: { origin: DASHBOARD_ORIGIN } });
    expect(login.status).to.equal(202);
    const magic = await http(h.links[n]);
    expect(magic.status).to.equal(303);
    return { cookie: magic.headers.get("set-cookie")!.split(";")[0], location: magic.headers.get("location")! };
  }

  const authorize = (body: unknown, headers: Record<string, string>) => http(`${h.svc.url}/api/authorize`, { method: "POST", body, headers });
  /** The ticket the approval page of this challenge and name carries (its form's hidden field; the dashboard link has the same). */
  async function ticket(challenge: string, name?: string): Promise<string> {
    const page = await http<string>(`${h.svc.url}/authorize?challenge=${challenge}${name === undefined ? "" : `&name=${encodeURIComponent(name)}`}`, { headers: { cookie } });
    return /name="ticket" value="([^"]+)"/.exec(page.body)![1];
  }
  /** An approval request as one link carries it: challenge, name and that link's ticket. */
  const linked = async (challenge: string, name?: string) => ({ challenge, ...(name === undefined ? {} : { name }), ticket: await ticket(challenge, name) });
  const me = (token: string) => http(`${h.svc.url}/api/me`, { token });

  it("defaults TRIGGERS_DASHBOARD_URL to the core's origin + /dashboard/ and refuses a URL that is not http(s)", () => {
    expect(h.svc.ctx.config.dashboardUrl).to.equal(DASHBOARD);
    const core = { VESTA_MODE: "development", TRIGGERS_CORE_URL: "http://127.0.0.1:8000" };
    expect(loadTriggersConfig({ ...core, TRIGGERS_DASHBOARD_URL: "https://app.example/dash?x=1#y" }).dashboardUrl).to.equal("https://app.example/dash/");
    expect(() => loadTriggersConfig({ ...core, TRIGGERS_DASHBOARD_URL: "javascript:alert(1)" })).to.throw(/TRIGGERS_DASHBOARD_URL/);
  });

  describe("GET /api/session", () => {
    it("answers 401 {error, message} without a session and {user_id, email} with one", async () => {
      const none = await http(`${h.svc.url}/api/session`);
      expect(none.status).to.equal(401);
      expect(none.body).to.have.keys("error", "code", "message");
      expect((await http(`${h.svc.url}/api/session`, { headers: { cookie: "vesta_triggers_session=forged" } })).status).to.equal(401);
      const ok = await http(`${h.svc.url}/api/session`, { headers: { cookie } });
      expect(ok.status).to.equal(200);
      expect(ok.body.email).to.equal("carol@example.com");
      expect(ok.body.user_id).to.be.a("string");
    });

    it("sends CORS headers with credentials to the dashboard's origin only, on errors too", async () => {
      for (const headers of [{ origin: DASHBOARD_ORIGIN, cookie }, { origin: DASHBOARD_ORIGIN }] as Record<string, string>[]) {
        const r = await http(`${h.svc.url}/api/session`, { headers });
        expect(r.headers.get("access-control-allow-origin")).to.equal(DASHBOARD_ORIGIN);
        expect(r.headers.get("access-control-allow-credentials")).to.equal("true");
        expect(r.headers.get("vary")).to.match(/origin/i);
      }
      for (const origin of [EVIL, "http://127.0.0.1:8001", h.svc.url]) {
        const r = await http(`${h.svc.url}/api/session`, { headers: { origin, cookie } });
        expect(r.status).to.equal(200);
        expect(r.headers.get("access-control-allow-origin")).to.equal(null);
        expect(r.headers.get("access-control-allow-credentials")).to.equal(null);
      }
    });
  });

  it("answers the dashboard's preflights (GET, POST; content-type) and no other origin's", async () => {
    for (const path of ["/api/session", "/api/authorize", "/auth/login"]) {
      const headers = { origin: DASHBOARD_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type" };
      const r = await http(`${h.svc.url}${path}`, { method: "OPTIONS", headers });
      expect(r.status, path).to.equal(204);
      expect(r.headers.get("access-control-allow-origin")).to.equal(DASHBOARD_ORIGIN);
      expect(r.headers.get("access-control-allow-credentials")).to.equal("true");
      expect(r.headers.get("access-control-allow-methods")).to.equal("GET, POST");
      expect(r.headers.get("access-control-allow-headers")).to.equal("content-type");
      const evil = await http(`${h.svc.url}${path}`, { method: "OPTIONS", headers: { ...headers, origin: EVIL } });
      expect(evil.headers.get("access-control-allow-origin")).to.equal(null);
    }
    expect((await http(`${h.svc.url}/api/me`, { method: "OPTIONS", headers: { origin: DASHBOARD_ORIGIN } })).headers.get("access-control-allow-origin")).to.equal(null);
  });

  describe("POST /api/authorize", () => {
    it("approves from the dashboard's origin (with CORS headers) or this service's; the token then works", async () => {
      for (const origin of [DASHBOARD_ORIGIN, h.svc.url]) {
        const { token, challenge } = newToken();
        expect((await me(token)).status).to.equal(401);
        const r = await authorize(await linked(challenge, "my cli"), { origin, cookie });
        expect([r.status, r.body]).to.deep.equal([200, { success: true, name: "my cli" }]);
        expect(r.headers.get("access-control-allow-origin")).to.equal(origin === DASHBOARD_ORIGIN ? DASHBOARD_ORIGIN : null);
        const who = await me(token);
        expect([who.status, who.body.email]).to.deep.equal([200, "carol@example.com"]);
      }
      const { challenge } = newToken();
      expect((await authorize(await linked(challenge), { origin: DASHBOARD_ORIGIN, cookie })).body).to.deep.equal({ success: true, name: "client" });
    });

    it("400 approval_mismatch when the challenge and name are not one link's (its ticket): a token is never approved under another client's name", async () => {
      const [a, b] = [newToken(), newToken()];
      const [linkA, linkB] = [await linked(a.challenge, "agent-A"), await linked(b.challenge, "agent-B")];
      const mixes = [
        { challenge: a.challenge, name: "agent-B", ticket: linkB.ticket }, // A's challenge under B's name (the stale page)
        { challenge: a.challenge, name: "agent-B", ticket: linkA.ticket },
        { challenge: a.challenge, name: "agent-A", ticket: linkB.ticket },
        { challenge: a.challenge, ticket: linkA.ticket }, // the name dropped
        { challenge: a.challenge, name: "agent-A", ticket: linkA.ticket.slice(0, -1) + (linkA.ticket.endsWith("A") ? "B" : "A") },
        { challenge: a.challenge, name: "agent-A", ticket: "é".repeat(linkA.ticket.length) }, // right length in characters, not in bytes
      ];
      for (const body of mixes) {
        const r = await authorize(body, { origin: DASHBOARD_ORIGIN, cookie });
        expect([r.status, r.body.code], JSON.stringify(body)).to.deep.equal([400, "approval_mismatch"]);
      }
      const noTicket = await authorize({ challenge: a.challenge, name: "agent-A" }, { origin: DASHBOARD_ORIGIN, cookie });
      expect([noTicket.status, noTicket.body.code]).to.deep.equal([400, "invalid_request"]);
      // The HTML form checks the same ticket.
      const page = await http<string>(`${h.svc.url}/authorize?challenge=${b.challenge}&name=agent-B`, { headers: { cookie } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
      const form = (fields: Record<string, string>) =>
        http(`${h.svc.url}/authorize`, { method: "POST", raw: new URLSearchParams(fields).toString(), headers: { cookie, "content-type": "application/x-www-form-urlencoded" } });
      const mixed = await form({ challenge: a.challenge, name: "agent-B", ticket: linkB.ticket, csrf });
      expect([mixed.status, mixed.body.code]).to.deep.equal([400, "approval_mismatch"]);
      // Nothing was approved; each link's own approval then works, under its own name.
      expect([(await me(a.token)).status, (await me(b.token)).status]).to.deep.equal([401, 401]);
      expect((await authorize(linkA, { origin: DASHBOARD_ORIGIN, cookie })).body).to.deep.equal({ success: true, name: "agent-A" });
      expect((await form({ ...linkB, csrf })).status).to.equal(200);
      const names = async (token: string) => ((await http(`${h.svc.url}/api/tokens`, { token })).body as { name: string }[]).map((t) => t.name);
      expect((await names(a.token)).filter((n) => n.startsWith("agent-"))).to.deep.equal(["agent-A", "agent-B"]);
    });

    it("403 (not a 500) for a CSRF token of the right length in characters but not in bytes", async () => {
      const { token, challenge } = newToken();
      const page = await http<string>(`${h.svc.url}/authorize?challenge=${challenge}`, { headers: { cookie } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
      const r = await http(`${h.svc.url}/authorize`, {
        method: "POST",
        raw: new URLSearchParams({ challenge, ticket: await ticket(challenge), csrf: "é".repeat(csrf.length) }).toString(),
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      });
      expect([r.status, r.body.code]).to.deep.equal([403, "forbidden"]);
      expect((await me(token)).status).to.equal(401);
    });

    it("403 for another or no Origin, 415 for a body that is not JSON; the token stays refused", async () => {
      const { token, challenge } = newToken();
      for (const origin of [EVIL, "http://127.0.0.1:8001", "null"]) {
        const r = await authorize({ challenge }, { origin, cookie });
        expect([r.status, r.body.code], origin).to.deep.equal([403, "forbidden"]);
        expect(r.headers.get("access-control-allow-origin")).to.equal(null);
      }
      const noOrigin = await authorize({ challenge }, { cookie });
      expect([noOrigin.status, noOrigin.body.code]).to.deep.equal([403, "forbidden"]);
      for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
        const r = await http(`${h.svc.url}/api/authorize`, { method: "POST", raw: JSON.stringify({ challenge }), headers: { "content-type": type, origin: DASHBOARD_ORIGIN, cookie } });
        expect([r.status, r.body.code], type).to.deep.equal([415, "unsupported_media_type"]);
      }
      expect((await me(token)).status).to.equal(401);
    });

    it("401 without a session, 400 for a bad body, 409 for a challenge used before", async () => {
      const { token, challenge } = newToken();
      const anon = await authorize(await linked(challenge), { origin: DASHBOARD_ORIGIN });
      expect([anon.status, anon.body.code]).to.deep.equal([401, "invalid_api_key"]);
      expect(anon.headers.get("access-control-allow-origin")).to.equal(DASHBOARD_ORIGIN);
      expect((await me(token)).status).to.equal(401);
      for (const body of [{ challenge: "short", ticket: "t" }, { name: "x", ticket: "t" }, { challenge, ticket: "t".repeat(65) }, { challenge, name: "n".repeat(101) }, []]) {
        const r = await authorize(body, { origin: DASHBOARD_ORIGIN, cookie });
        expect([r.status, r.body.code], JSON.stringify(body)).to.deep.equal([400, "invalid_request"]);
      }
      const bad = await http(`${h.svc.url}/api/authorize`, { method: "POST", raw: "{", headers: { "content-type": "application/json", origin: DASHBOARD_ORIGIN, cookie } });
      expect([bad.status, bad.body.code]).to.deep.equal([400, "invalid_request"]);
      expect((await authorize(await linked(challenge), { origin: DASHBOARD_ORIGIN, cookie })).status).to.equal(200);
      const again = await authorize(await linked(challenge), { origin: DASHBOARD_ORIGIN, cookie });
      expect([again.status, again.body.code]).to.deep.equal([409, "already_exists"]);
    });
  });

  describe("login redirects", () => {
    it("returns to a page under the dashboard URL after the magic link", async () => {
      const next = `${DASHBOARD}#/triggers/authorize?challenge=abc&name=my%20cli`;
      expect((await signIn("dave@example.com", next)).location).to.equal(next);
      expect((await signIn("dave@example.com", `${DASHBOARD}sub/page?x=1`)).location).to.equal(`${DASHBOARD}sub/page?x=1`);
      expect((await signIn("dave@example.com", "/authorize?challenge=x")).location).to.equal("/authorize?challenge=x");
    });

    it("falls back to / for any other absolute or protocol-relative next (no open redirect)", async () => {
      const others = [
        `${EVIL}/`,
        "//evil.example/",
        "/\\evil.example/",
        "/\t/evil.example/",
        "https:evil.example",
        `${DASHBOARD_ORIGIN}/core/v1/`,
        `${DASHBOARD_ORIGIN}/dashboardx/`,
        `${DASHBOARD}../core/v1/`,
        "http://127.0.0.1:8001/dashboard/",
        "javascript:alert(1)//",
        "//[",
      ];
      for (const next of others) expect((await signIn("eve@example.com", next)).location, next).to.equal("/");
      const n = h.links.length;
      await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "eve@example.com" } });
      const forged = new URL(h.links[n]);
      forged.searchParams.set("next", `${EVIL}/`);
      expect((await http(forged.href)).headers.get("location")).to.equal("/");
    });
  });

  it("the HTML approval page still works and links to the same approval in the dashboard", async () => {
    const { token, challenge } = newToken();
    const page = await http(`${h.svc.url}/authorize?challenge=${challenge}&name=${encodeURIComponent("my cli & co")}`, { headers: { cookie } });
    expect(page.status).to.equal(200);
    const expected = `${DASHBOARD}#/triggers/authorize?challenge=${challenge}&name=${encodeURIComponent("my cli & co")}&ticket=${await ticket(challenge, "my cli & co")}&triggers=${encodeURIComponent(h.svc.url)}`;
    expect(page.body).to.contain(`<a href="${expected.replaceAll("&", "&#38;")}">Approve in the dashboard</a>`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
    const ok = await http(`${h.svc.url}/authorize`, {
      method: "POST",
      raw: new URLSearchParams({ challenge, name: "my cli & co", ticket: await ticket(challenge, "my cli & co"), csrf }).toString(),
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(ok.status).to.equal(200);
    expect((await me(token)).status).to.equal(200);
  });
});

describe("triggers service: the dashboard manages triggers with its session cookie (CORS, Origin guard)", function () {
  this.timeout(60_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let cookie: string;
  const KEY = "usage-key-of-the-dashboard";
  const trigger = { name: "from the dashboard", kind: "webhook", action_code: "async function main(p) { return p; }", usage_api_key: KEY };
  before(async () => {
    core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } }));
    h = await startHarness({ TRIGGERS_CORE_URL: core.url, TRIGGERS_DASHBOARD_URL: DASHBOARD });
    const n = h.links.length;
    await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "dash@example.com" }, headers: { origin: DASHBOARD_ORIGIN } });
    cookie = (await http(h.links[n])).headers.get("set-cookie")!.split(";")[0];
  });
  after(async () => {
    await h?.stop();
    await core?.close();
  });
  const list = async () => (await http(`${h.svc.url}/api/triggers`, { headers: { cookie, origin: DASHBOARD_ORIGIN } })).body as { id: string; name: string; enabled: boolean }[];

  it("creates, lists, pauses, reads runs of and deletes a trigger from the dashboard's origin, with CORS headers; the key shows as its hash only", async () => {
    const headers = { cookie, origin: DASHBOARD_ORIGIN };
    const made = await http(`${h.svc.url}/api/triggers`, { method: "POST", body: trigger, headers });
    expect(made.status).to.equal(201);
    expect(made.headers.get("access-control-allow-origin")).to.equal(DASHBOARD_ORIGIN);
    expect(made.headers.get("access-control-allow-credentials")).to.equal("true");
    expect(made.body.usage_api_key_hash).to.equal(hex32(keyHash(KEY)));
    expect(JSON.stringify(made.body)).not.to.contain(KEY);
    const id = made.body.id as string;
    expect((await list()).map((t) => t.id)).to.deep.equal([id]);
    const paused = await http(`${h.svc.url}/api/triggers/${id}`, { method: "PATCH", body: { enabled: false }, headers });
    expect([paused.status, paused.body.enabled]).to.deep.equal([200, false]);
    const runs = await http(`${h.svc.url}/api/triggers/${id}/runs`, { headers });
    expect([runs.status, runs.body.total]).to.deep.equal([200, 0]);
    const gone = await http(`${h.svc.url}/api/triggers/${id}`, { method: "DELETE", headers });
    expect([gone.status, gone.body]).to.deep.equal([200, { success: true, id }]);
    expect(await list()).to.deep.equal([]);
  });

  it("answers the dashboard's preflights for GET, POST, PATCH, DELETE, and no other origin's", async () => {
    for (const path of ["/api/triggers", "/api/triggers/trg_x", "/api/runs/run_x"]) {
      const ask = { "access-control-request-method": "PATCH", "access-control-request-headers": "content-type" };
      const r = await http(`${h.svc.url}${path}`, { method: "OPTIONS", headers: { ...ask, origin: DASHBOARD_ORIGIN } });
      expect([r.status, r.headers.get("access-control-allow-methods")], path).to.deep.equal([204, "GET, POST, PATCH, DELETE"]);
      expect(r.headers.get("access-control-allow-origin")).to.equal(DASHBOARD_ORIGIN);
      const evil = await http(`${h.svc.url}${path}`, { method: "OPTIONS", headers: { ...ask, origin: EVIL } });
      expect(evil.status, path).to.equal(401);
      expect(evil.headers.get("access-control-allow-origin")).to.equal(null);
    }
    const read = await http(`${h.svc.url}/api/triggers`, { headers: { cookie, origin: EVIL } });
    expect(read.headers.get("access-control-allow-origin")).to.equal(null); // the browser keeps the answer from that page
  });

  it("refuses a cookie-authenticated write from another or no origin (403) or with a body that is not JSON (415): nothing changes", async () => {
    const made = await http(`${h.svc.url}/api/triggers`, { method: "POST", body: trigger, headers: { cookie, origin: DASHBOARD_ORIGIN } });
    const id = made.body.id as string;
    for (const origin of [EVIL, "http://127.0.0.1:8001", "null", undefined]) {
      const headers: Record<string, string> = { cookie, ...(origin ? { origin } : {}) };
      const create = await http(`${h.svc.url}/api/triggers`, { method: "POST", body: { ...trigger, name: "forged" }, headers });
      const patch = await http(`${h.svc.url}/api/triggers/${id}`, { method: "PATCH", body: { enabled: false }, headers });
      const del = await http(`${h.svc.url}/api/triggers/${id}`, { method: "DELETE", headers });
      for (const r of [create, patch, del]) expect([r.status, r.body.code], String(origin)).to.deep.equal([403, "forbidden"]);
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const r = await http(`${h.svc.url}/api/triggers`, { method: "POST", raw: JSON.stringify({ ...trigger, name: "forged" }), headers: { cookie, origin: DASHBOARD_ORIGIN, "content-type": type } });
      expect([r.status, r.body.code], type).to.deep.equal([415, "unsupported_media_type"]);
    }
    const now = await list();
    expect(now.map((t) => [t.id, t.name, t.enabled])).to.deep.equal([[id, "from the dashboard", true]]);
    await http(`${h.svc.url}/api/triggers/${id}`, { method: "DELETE", headers: { cookie, origin: DASHBOARD_ORIGIN } });
  });

  it("401 (never a 500) for a session cookie that is not valid percent-encoding, on every cookie route", async () => {
    const bad = { cookie: "vesta_triggers_session=%E0%A4%A", origin: DASHBOARD_ORIGIN };
    const before = await list();
    for (const [path, method, body] of [["/api/triggers", "GET"], ["/api/triggers", "POST", trigger], ["/api/session", "GET"], ["/api/authorize", "POST", { challenge: "a".repeat(43), ticket: "x" }]] as [string, string, unknown?][]) {
      const r = await http(`${h.svc.url}${path}`, { method, body, headers: bad });
      expect([r.status, r.body.code], `${method} ${path}`).to.deep.equal([401, "invalid_api_key"]);
    }
    const page = await http<string>(`${h.svc.url}/authorize?challenge=${"a".repeat(43)}`, { headers: bad });
    expect([page.status, page.headers.get("location")]).to.deep.equal([303, `/auth/login?next=${encodeURIComponent(`/authorize?challenge=${"a".repeat(43)}`)}`]);
    expect(await list()).to.deep.equal(before);
  });

  it("401 for an unknown session cookie; a bearer token still works from anywhere and sees the same user's triggers", async () => {
    const forged = await http(`${h.svc.url}/api/triggers`, { headers: { cookie: "vesta_triggers_session=forged", origin: DASHBOARD_ORIGIN } });
    expect([forged.status, forged.body.code]).to.deep.equal([401, "invalid_api_key"]);
    const none = await http(`${h.svc.url}/api/triggers`);
    expect([none.status, none.body.message]).to.deep.equal([401, "a bearer token is required: Authorization: Bearer <token> (see /SKILL.md for the handshake)"]);
    const token = await approvedToken(h, "dash@example.com");
    const made = await http(`${h.svc.url}/api/triggers`, { method: "POST", body: trigger, token });
    expect(made.status).to.equal(201);
    expect((await list()).map((t) => t.id)).to.deep.equal([made.body.id]);
    // Another user's session does not see it.
    const n = h.links.length;
    await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "other@example.com" }, headers: { origin: DASHBOARD_ORIGIN } });
    const other = (await http(h.links[n])).headers.get("set-cookie")!.split(";")[0];
    expect((await http(`${h.svc.url}/api/triggers`, { headers: { cookie: other } })).body).to.deep.equal([]);
    expect((await http(`${h.svc.url}/api/triggers/${made.body.id}`, { method: "DELETE", headers: { cookie: other, origin: DASHBOARD_ORIGIN } })).status).to.equal(404);
  });
});
