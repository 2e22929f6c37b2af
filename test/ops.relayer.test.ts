import crypto from "node:crypto";
import { expect } from "chai";
import pino from "pino";
import { startStack, call, type Stack } from "./helpers/relayer";
import { accountClient, ok } from "./helpers/relayerWorkflow";
import { startRelayer } from "../relayer/server";

const TOKEN = crypto.randomBytes(24).toString("hex"); // 48 characters

const scrape = async (url: string, token = TOKEN) => fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
/** The value of one sample (`name{labels}`) in a Prometheus text answer (undefined when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ? m[2].split(",") : [];
    if (want.every((w) => have.includes(w)) && have.length === want.length) return Number(m[3]);
  }
  return undefined;
}

describe("operating the relayer: /health, /ready, /metrics", function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ payerCount: 2, env: { VESTA_METRICS_TOKEN: TOKEN } });
  });
  after(async () => stack?.stop());

  describe("GET /ready", function () {
    it("answers 200 {ready: true, failing: []} when the chain, its sync, the database, the payers and the key provider answer", async function () {
      const r = await fetch(`${stack.relayer.url}/ready`);
      expect([r.status, r.headers.get("cache-control")]).to.deep.equal([200, "no-store"]);
      expect(await r.json()).to.deep.equal({ ready: true, failing: [] });
    });

    it("names only the failing checks (503), probes at most once per period whatever the request rate, and tells nothing more", async function () {
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0 }, pino({ level: "silent" }));
      try {
        let rpcCalls = 0;
        const send = relayer.ctx.chain.provider.send.bind(relayer.ctx.chain.provider);
        // a node that never says whether it is synced (the readiness probe's second call)
        relayer.ctx.chain.provider.send = (method: string, params: unknown[]) => (method === "eth_syncing" ? (rpcCalls++, new Promise(() => {})) : send(method, params));
        relayer.ctx.keys.deriveSecret = () => Promise.reject(new Error("guest agent at /var/run/dstack.sock: secret detail"));
        const answers = await Promise.all(Array.from({ length: 50 }, () => fetch(`${relayer.url}/ready`)));
        expect(answers.map((a) => a.status)).to.deep.equal(Array(50).fill(503));
        const bodies = await Promise.all(answers.map((a) => a.text()));
        expect(JSON.parse(bodies[0])).to.deep.equal({ ready: false, failing: ["chain", "keys"] });
        expect(new Set(bodies).size, "every caller got the one shared probe").to.equal(1);
        expect(bodies[0]).to.not.include("dstack.sock");
        expect(rpcCalls, "one chain probe for 50 requests").to.equal(1);
      } finally {
        await relayer.close();
      }
    });

    it("fails `payers` when every payer is under VESTA_PAYER_MIN_BALANCE_WEI, and a write then answers 503 payers_unfunded with nothing sent", async function () {
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0, payerWatch: { ...stack.relayerConfig.payerWatch, minBalanceWei: 10n ** 40n } }, pino({ level: "silent" }));
      try {
        expect(await (await fetch(`${relayer.url}/ready`)).json()).to.deep.equal({ ready: false, failing: ["payers"] });
        const before = await Promise.all(relayer.ctx.payers.addresses().map((a) => relayer.ctx.chain.provider.getTransactionCount(a)));
        const r = await fetch(`${relayer.url}/core/v1/new_account`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ account_name: "x" }) });
        expect([r.status, (await r.json()).code]).to.deep.equal([503, "payers_unfunded"]);
        const after = await Promise.all(relayer.ctx.payers.addresses().map((a) => relayer.ctx.chain.provider.getTransactionCount(a)));
        expect(after).to.deep.equal(before);
      } finally {
        await relayer.close();
      }
    });
  });

  describe("GET /metrics", function () {
    it("is 401 invalid_metrics_token without the bearer token or with a wrong one, 404 when no token is configured", async function () {
      for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }, { authorization: `Bearer ${TOKEN.slice(0, -1)}` }] as Record<string, string>[]) {
        const r = await fetch(`${stack.relayer.url}/metrics`, { headers });
        expect([r.status, (await r.json()).code], JSON.stringify(headers)).to.deep.equal([401, "invalid_metrics_token"]);
      }
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0, metricsToken: undefined }, pino({ level: "silent" }));
      try {
        const r = await fetch(`${relayer.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect([r.status, (await r.json()).code]).to.deep.equal([404, "not_found"]);
      } finally {
        await relayer.close();
      }
    });

    it("labels requests by route template and status: a thousand hostile paths add one series, never a raw path", async function () {
      const before = await (await scrape(stack.relayer.url)).text();
      const series = (t: string) => t.split("\n").filter((l) => l.startsWith("vesta_http_requests_total{")).length;
      const junk = Array.from({ length: 1000 }, (_, i) => `/core/v1/${crypto.randomBytes(8).toString("hex")}/${i}?q=${i}`);
      for (let i = 0; i < junk.length; i += 100) await Promise.all(junk.slice(i, i + 100).map((p) => fetch(`${stack.relayer.url}${p}`)));
      await ok(call(stack, "GET", "/get_node_chain_config"));
      const text = await (await scrape(stack.relayer.url)).text();
      expect(sample(text, "vesta_http_requests_total", { route: "other", method: "GET", status: "404" })! - (sample(before, "vesta_http_requests_total", { route: "other", method: "GET", status: "404" }) ?? 0)).to.equal(1000);
      expect(sample(text, "vesta_http_requests_total", { route: "/core/v1/get_node_chain_config", method: "GET", status: "200" })).to.be.at.least(1);
      expect(sample(text, "vesta_http_request_duration_seconds_count", { route: "/core/v1/get_node_chain_config", method: "GET" })).to.be.at.least(1);
      const labelsOf = (t: string) => new Set(t.split("\n").filter((l) => l.startsWith("vesta_http_requests_total{")).map((l) => l.split(" ")[0]));
      const added = [...labelsOf(text)].filter((l) => !labelsOf(before).has(l));
      expect(added.every((l) => /route="(other|\/core\/v1\/get_node_chain_config|\/metrics)"/.test(l)), added.join(" ")).to.equal(true);
      expect(series(text) - series(before)).to.be.at.most(3); // the 404 series, the chain config's and the first scrape's
      for (const p of junk.slice(0, 50)) expect(text).to.not.include(p.split("/")[3]);
    });

    it("takes the run routes as express would (any case, one trailing slash, a query), with the middleware every request passes, labelled by their template", async function () {
      const account = await accountClient(stack);
      const at = (path: string, init: RequestInit = {}) => fetch(`${stack.relayer.url}${path}`, init);
      const post = (path: string, body: string, key: string | undefined = account.key) =>
        at(path, { method: "POST", headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}) }, body });
      const code = JSON.stringify({ code: "async function main() { return 'hot'; }" });
      const before = await (await scrape(stack.relayer.url)).text();
      const counted = (t: string) => sample(t, "vesta_http_requests_total", { route: "/core/v1/lit_action", method: "POST", status: "200" }) ?? 0;
      for (const path of ["/core/v1/lit_action", "/core/v1/LIT_ACTION", "/core/v1/lit_action/", "/Core/V1/Lit_Action/?x=1"]) {
        const r = await post(path, code);
        expect(r.status, path).to.equal(200);
        expect((await r.json()).response, path).to.equal("hot");
        expect(r.headers.get("x-request-id"), path).to.match(/^[0-9a-f-]{36}$/);
        expect(r.headers.get("access-control-allow-origin"), path).to.equal("*");
      }
      expect(counted(await (await scrape(stack.relayer.url)).text()) - counted(before)).to.equal(4);
      // Not a run route: as express answers them.
      for (const [path, init] of [
        ["/core/v1//lit_action", { method: "POST" }],
        ["/core/v1/lit_action//", { method: "POST" }],
        ["/core/v1/lit%5Faction", { method: "POST" }],
        ["/core/v1/lit_action", { method: "GET" }],
        ["/core/v1/lit_action", { method: "PUT" }],
      ] as const) {
        const r = await at(path, init);
        expect(r.status, `${init.method} ${path}`).to.equal(404);
        expect((await r.json()).code, `${init.method} ${path}`).to.equal("not_found");
      }
      // Their failures go to the one error middleware: a bad key before the body, a body that is not JSON after it.
      expect((await (await post("/core/v1/lit_action", code, "not-a-key")).json()).code).to.equal("invalid_api_key");
      const broken = await post("/core/v1/lit_action", "{");
      expect(broken.status).to.equal(400);
      expect(broken.headers.get("x-request-id")).to.match(/^[0-9a-f-]{36}$/);
      expect((await broken.json()).code).to.equal("invalid_request");
      // A preflight is CORS's, not the route's.
      const preflight = await at("/core/v1/lit_action", { method: "OPTIONS" });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers.get("access-control-allow-headers")).to.include("X-Api-Key");
    });

    it("counts runs by outcome with run time and queue wait, writes by outcome with gas, and reads payers, sandbox, billing and caches at scrape time", async function () {
      const account = await accountClient(stack); // a relayed write (new_account)
      const good = "async function main() { return 1; }";
      const bad = "async function main() { throw new Error('no'); }";
      expect((await account.post("/lit_action", { code: good })).status).to.equal(200);
      expect((await account.post("/lit_action", { code: bad })).status).to.equal(422);
      await new Promise((r) => setTimeout(r, 500)); // the permission cache has seen new_account's events: the key is read once more, then remembered
      for (let i = 0; i < 3; i++) await ok(account.get("/list_groups"));
      const text = await (await scrape(stack.relayer.url)).text();
      expect(sample(text, "vesta_action_runs_total", { outcome: "ok" })).to.be.at.least(1);
      expect(sample(text, "vesta_action_runs_total", { outcome: "action_failed" })).to.be.at.least(1);
      expect(sample(text, "vesta_action_run_seconds_count", { outcome: "ok" })).to.be.at.least(1);
      expect(sample(text, "vesta_action_queue_wait_seconds_count")).to.be.at.least(2);
      // The run routes are registered on the app itself (createApp's hotRoutes), not under the /core/v1 router: same labels.
      expect(sample(text, "vesta_http_requests_total", { route: "/core/v1/lit_action", method: "POST", status: "200" })).to.be.at.least(1);
      expect(sample(text, "vesta_http_requests_total", { route: "/core/v1/lit_action", method: "POST", status: "422" })).to.be.at.least(1);
      expect(text).to.not.include("/core/v1/core/v1");
      expect(sample(text, "vesta_relayed_writes_total", { outcome: "ok" })).to.be.at.least(1);
      expect(sample(text, "vesta_relayed_write_gas_count", { outcome: "ok" })).to.be.at.least(1);
      expect(sample(text, "vesta_relayed_write_gas_sum", { outcome: "ok" })).to.be.above(21_000);
      const payers = stack.relayer.ctx.payers.addresses();
      for (const payer of payers) {
        expect(sample(text, "vesta_payer_balance_wei", { payer }), payer).to.be.above(0);
        expect(sample(text, "vesta_payer_active", { payer })).to.equal(1);
        expect(sample(text, "vesta_payer_pending_nonces", { payer })).to.equal(0);
      }
      expect(sample(text, "vesta_sandbox_processes")).to.equal(2);
      expect(sample(text, "vesta_sandbox_queue_depth")).to.equal(0);
      expect(sample(text, "vesta_billing_settlement_lag_seconds")).to.equal(0);
      expect(sample(text, "vesta_chain_poll_lag_seconds")).to.be.below(10);
      expect(sample(text, "vesta_permission_cache_lookups_total", { kind: "key", result: "miss" })).to.be.at.least(1);
      expect(sample(text, "vesta_permission_cache_lookups_total", { kind: "key", result: "hit" })).to.be.at.least(1);
      expect(text, "no key, account or request id in any label").to.not.include(account.key);
    });
  });
});
