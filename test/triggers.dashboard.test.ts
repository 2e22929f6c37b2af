import { expect } from "chai";
import crypto from "node:crypto";
import { loadTriggersConfig } from "../triggers/config";
import { http, startHarness, type Harness } from "./helpers/triggers";
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
