import { expect } from "chai";
import http from "node:http";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { chainState } from "./helpers/relayerChecks";
import { approvedToken, startHarness, type Harness } from "./helpers/triggers";

/**
 * Fuzz suite (issue 15): malformed bodies, queries and headers sent to every route of both
 * services. Properties: no answer is a 5xx, both processes keep answering, and nothing changes
 * (no transaction, no stored code, no ledger entry, no trigger, run, user, token or login link).
 * Every generated request is malformed by construction (an unknown field or query key, a bad
 * credential, a body of the wrong shape, nesting or size), so any state change is a bug.
 * VESTA_FUZZ_RUNS (per route, default 80: about a minute in all) and VESTA_FUZZ_SEED make a run longer or repeatable.
 */
const RUNS = Number(process.env.VESTA_FUZZ_RUNS ?? 80);
const SEED = process.env.VESTA_FUZZ_SEED === undefined ? undefined : Number(process.env.VESTA_FUZZ_SEED);

type Target = { method: string; path: string; body: "any" | "refused" | "none" };
type Request = { method: string; path: string; query: string; headers: Record<string, string>; body?: Buffer };
type Answer = { status: number; text: string };

/** One raw HTTP request: any method, any bytes, headers as given. */
function send(base: string, r: Request): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = http.request(
      { host: url.hostname, port: url.port, method: r.method, path: `${r.path}${r.query ? `?${r.query}` : ""}`, headers: { ...r.headers, ...(r.body ? { "content-length": String(r.body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8").slice(0, 2000) }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(r.body);
  });
}

const deep = (n: number, open = "[", close = "]") => open.repeat(n) + close.repeat(n);
const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

/** Bodies every route refuses, the webhook included: JSON that does not parse, nested past the limit, too large. */
const refusedWebhookBody = fc.oneof(
  fc.string({ minLength: 1, maxLength: 200 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }).map((s) => ({ type: "application/json", bytes: Buffer.from(s) })),
  fc.integer({ min: 65, max: 60_000 }).map((n) => ({ type: "application/json", bytes: Buffer.from(`{"a":${deep(n)}}`) })),
  fc.integer({ min: 61, max: 20_000 }).map((n) => ({ type: "application/json", bytes: Buffer.from(deep(n, '{"x":', "}").replace(/\{"x":\}/, '{"x":1}')) })),
  fc.constant({ type: "application/json", bytes: Buffer.from(`{"\\u0000fuzz":"${"x".repeat(2_100_000)}"}`) }),
  // well-formed requests but for their depth: a run's js_params, a trigger's default_params
  {
    arbitrary: fc.integer({ min: 64, max: 20_000 }).map((n) => ({ type: "application/json", bytes: Buffer.from(`{"code":"async function main() { return 1 }","js_params":${deep(n)}}`) })),
    weight: 3,
  },
  {
    arbitrary: fc.integer({ min: 60, max: 20_000 }).map((n) => ({
      type: "application/json",
      bytes: Buffer.from(`{"name":"n","kind":"webhook","action_code":"async function main() {}","usage_api_key":"k","config":{},"default_params":{"a":${deep(n)}}}`),
    })),
    weight: 3,
  },
);
/** ... and js_params over their size, bytes that are not UTF-8 where JSON is declared (the webhook takes both). */
const refusedBody = fc.oneof(
  refusedWebhookBody,
  fc.constant({ type: "application/json", bytes: Buffer.from(`{"code":"async function main() { return 1 }","js_params":"${"p".repeat(70 * 1024)}"}`) }),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => ({ type: "application/json", bytes: Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3]), Buffer.from(b), Buffer.from('"}')]) })),
);

/** Bodies of any shape, each with an unknown field (or of a wrong top-level type): every schema refuses them. */
const wrongBody = fc.oneof(
  fc.dictionary(printable, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }).map((o) => ({ type: "application/json", bytes: Buffer.from(JSON.stringify({ ...o, "\u0000fuzz": 1, email: 12345, challenge: 1 })) })),
  fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.integer(), fc.boolean(), fc.constant(null)).map((v) => ({ type: "application/json", bytes: Buffer.from(JSON.stringify(v)) })),
  fc.constantFrom(
    '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"\\u0000fuzz":1}',
    '{"code":"async function main() { return 1 }","\\u0000fuzz":1}',
    '{"group_id":"1e309","pkp_id":"0x","\\u0000fuzz":1}',
    '{"email":"\\ud800@example.com","next":"//evil"}',
    '{"amount_cents":1e400,"\\u0000fuzz":1}',
  ).map((s) => ({ type: "application/json", bytes: Buffer.from(s) })),
  fc.tuple(fc.constantFrom("application/x-www-form-urlencoded", "text/plain", "application/json; charset=utf-16", "application/json; charset=latin1", "multipart/form-data; boundary=x", "application/*+json", "%%%"), fc.uint8Array({ maxLength: 200 })).map(([type, b]) => ({
    type,
    bytes: Buffer.concat([Buffer.from("email=12345&\u0000fuzz=1&"), Buffer.from(b)]),
  })),
);

/** Query strings: each holds an unknown key, so a route with a query schema refuses it. */
const query = fc
  .oneof(
    fc.constant(""),
    fc.dictionary(printable, printable, { maxKeys: 4 }).map((o) => new URLSearchParams(o).toString()),
    fc.constantFrom("page_size=-1&page_number=1e400", "group_id=x&group_id=y", "a=%E0%A4%A&b=%ZZ", "__proto__[x]=1&constructor[prototype][y]=2", "token=" + "t".repeat(5000), "challenge=%00&name=%ud800"),
  )
  .map((q) => (q ? `${q}&%00fuzz=1` : "%00fuzz=1"));

describe("fuzz: malformed bodies, queries and headers on every route of both services (issue 15)", function () {
  this.timeout(600_000);
  let stack: Stack;
  let h: Harness;
  let apiKey: string;
  let usageKey: string;
  let token: string;
  let hookId: string;

  before(async () => {
    stack = await startStack();
    ({ apiKey } = await newAccount(stack, "fuzz"));
    usageKey = (await call(stack, "POST", "/add_usage_api_key", { key: apiKey, body: { name: "fuzz", execute_in_groups: [0] } })).body.usage_api_key;
    h = await startHarness({ TRIGGERS_CORE_URL: stack.relayer.url, TRIGGERS_WEBHOOK_RATE_PER_IP: "100000", TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "100000" }, { pollers: false });
    token = await approvedToken(h, "fuzz@example.com");
    const hook = await fetch(`${h.svc.url}/api/triggers`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "fuzz hook", kind: "webhook", action_code: "async function main(p) { return p }", usage_api_key: usageKey, config: {} }),
    });
    hookId = ((await hook.json()) as { id: string }).id;
  });
  after(async () => {
    await h?.stop();
    await stack?.stop();
  });

  /** Row counts of every table of a SQLite file (but the billing settler's own bookkeeping, which runs on a timer). */
  function tables(file: string): Record<string, number> {
    const db = new Database(file, { readonly: true, fileMustExist: false });
    try {
      const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[])
        .map((t) => t.name)
        .filter((n) => !["batches", "local_adjustments", "sqlite_sequence"].includes(n));
      return Object.fromEntries(names.map((n) => [n, (db.prepare(`SELECT COUNT(*) AS n FROM "${n}"`).get() as { n: number }).n]));
    } finally {
      db.close();
    }
  }
  /** Everything a request could change: the chain, the action code store, the billing ledger, the triggers store. */
  async function state() {
    const dir = stack.relayerConfig.dataDir;
    return {
      chain: await chainState(stack, apiKey),
      relayer: Object.fromEntries(["actions.sqlite", "billing.sqlite"].map((f) => [f, tables(path.join(dir, f))])),
      triggers: tables(path.join(h.dataDir, "triggers.sqlite")),
      links: h.links.length,
    };
  }
  async function alive() {
    expect((await send(stack.relayer.url, { method: "GET", path: "/core/v1/get_node_chain_config", query: "", headers: {} })).status).to.equal(200);
    expect((await send(h.svc.url, { method: "GET", path: "/api/me", query: "", headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);
  }

  /** Credentials: none, garbage, or a real one (the body or query is then what makes the request malformed). */
  const credentials = () =>
    fc.oneof(
      fc.constant({}),
      fc.record({ "x-api-key": printable }),
      printable.map((s) => ({ authorization: `Bearer ${s}` })),
      fc.constant({ "x-api-key": "k".repeat(600) }),
      { arbitrary: fc.constant({ "x-api-key": apiKey }), weight: 4 },
      { arbitrary: fc.constant({ authorization: `Bearer ${usageKey}` }), weight: 2 },
      { arbitrary: fc.constant({ authorization: `Bearer ${token}` }), weight: 3 },
      fc.oneof(fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)), fc.constant(`{"typed_data":${deep(4000)},"signature":"0x"}`), printable).map((s) => ({ "x-wallet-auth": Buffer.from(s).toString("base64") })),
      printable.map((s) => ({ cookie: `vesta_triggers_session=${encodeURIComponent(s)}` })),
    );
  const extraHeaders = fc.oneof(
    fc.constant({}),
    fc.dictionary(fc.stringMatching(/^x-[a-z]{1,12}$/), printable, { maxKeys: 3 }),
    fc.constantFrom<Record<string, string>[]>({ origin: "http://evil.example" }, { "x-forwarded-for": "1.2.3.4" }, { "content-encoding": "gzip" }, { "x-big": "b".repeat(20_000) }),
  );

  function requests(t: Target) {
    const body = t.body === "none" ? fc.constant(undefined) : t.body === "refused" ? refusedWebhookBody : fc.oneof(refusedBody, wrongBody);
    return fc.record({ query, creds: credentials(), extra: extraHeaders, body }).map(({ query: q, creds, extra, body: b }): Request => ({
      method: t.method,
      path: t.path,
      query: q,
      headers: { ...extra, ...creds, ...(b ? { "content-type": b.type } : {}) },
      body: b?.bytes,
    }));
  }

  async function fuzz(base: string, targets: Target[]) {
    const before = await state();
    for (const t of targets) {
      await fc.assert(
        fc.asyncProperty(requests(t), async (r) => {
          const a = await send(base, r).catch((err) => ({ status: 0, text: String(err) }));
          if (a.status === 0 && r.headers["x-big"]) return; // the server may drop a connection with oversized headers (431 or a reset)
          expect(a.status, `${r.method} ${r.path}?${r.query.slice(0, 100)} ${JSON.stringify(r.headers).slice(0, 200)} → ${a.status} ${a.text.slice(0, 300)}`).to.be.within(200, 499);
        }),
        { numRuns: RUNS, endOnFailure: true, ...(SEED === undefined ? {} : { seed: SEED }) },
      );
      await alive();
    }
    const show = (s: unknown) => JSON.stringify(s, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 1);
    expect(show(await state()), "a malformed request changed state").to.equal(show(before));
  }

  it("the core service (every route of its OpenAPI document, the dashboard and attestation files)", async function () {
    const doc = (await call(stack, "GET", "/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const targets: Target[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) targets.push({ method: m.toUpperCase(), path: p, body: m === "get" ? "none" : "any" });
    expect(targets.length).to.be.at.least(35);
    targets.push(
      { method: "POST", path: "/core/v1/billing/webhook", body: "any" },
      { method: "GET", path: "/core/v1/openapi.json", body: "none" },
      { method: "GET", path: "/dashboard/", body: "none" },
      { method: "GET", path: "/info", body: "none" },
      { method: "GET", path: "/evidences/", body: "none" },
      { method: "PUT", path: "/core/v1/lit_action", body: "any" },
      { method: "DELETE", path: "/core/v1/add_group", body: "any" },
      { method: "POST", path: "/core/v1/no_such_route", body: "any" },
    );
    await fuzz(stack.relayer.url, targets);
  });

  it("the triggers service (every route, the webhook of an existing trigger with bodies it must refuse)", async function () {
    const targets: Target[] = [
      { method: "GET", path: "/", body: "none" },
      { method: "GET", path: "/SKILL.md", body: "none" },
      { method: "POST", path: `/webhook/${hookId}`, body: "refused" },
      { method: "POST", path: "/webhook/trg_000000000000000000000000", body: "any" },
      { method: "GET", path: "/auth/login", body: "none" },
      { method: "POST", path: "/auth/login", body: "any" },
      { method: "GET", path: "/auth/magic", body: "none" },
      { method: "GET", path: "/authorize", body: "none" },
      { method: "POST", path: "/authorize", body: "any" },
      { method: "OPTIONS", path: "/api/authorize", body: "none" },
      { method: "GET", path: "/api/session", body: "none" },
      { method: "POST", path: "/api/authorize", body: "any" },
      { method: "GET", path: "/api/me", body: "none" },
      { method: "GET", path: "/api/tokens", body: "none" },
      { method: "DELETE", path: "/api/tokens/tok_000000000000000000000000", body: "none" },
      { method: "POST", path: "/api/triggers", body: "any" },
      { method: "GET", path: "/api/triggers", body: "none" },
      { method: "GET", path: `/api/triggers/${hookId}`, body: "none" },
      { method: "PATCH", path: `/api/triggers/${hookId}`, body: "any" },
      { method: "DELETE", path: "/api/triggers/trg_000000000000000000000000", body: "any" },
      { method: "GET", path: `/api/triggers/${hookId}/runs`, body: "none" },
      { method: "GET", path: "/api/runs/run_000000000000000000000000", body: "none" },
      { method: "PUT", path: "/api/triggers", body: "any" },
    ];
    await fuzz(h.svc.url, targets);
  });
});
