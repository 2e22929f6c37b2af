import { expect } from "chai";
import { keyHash } from "../protocol/usageKeySeal";
import { hex32 } from "../protocol/usageKeyShape";
import { getAddress } from "ethers";
import { scanSchedules } from "../triggers/kinds/schedule";
import { approvedToken, fakeChain, fakeCore, http, permitted, startHarness, type Harness } from "./helpers/triggers";

const CODE = `async function main(params) { return params; }`;
const KEY = "usage-key-secret-123";
const HEAD = 1_000;
const CONTRACT = "0x" + "ab".repeat(20);
const SIGNATURE = "Transfer(address,address,uint256)";

/**
 * The triggers API and the webhook edge rule by rule, as users reach them over HTTP: what each kind
 * shows, what a PATCH changes and keeps (the key check, a chain cursor, a schedule's place), how a
 * webhook body is read, and every refusal with its exact code and message. Each test sets up what it
 * needs (mutation testing runs tests alone). No workers run: runs stay queued, as stored.
 */
describe("triggers API and webhook, rule by rule", function () {
  this.timeout(60_000);
  const clock = { t: Date.parse("2030-01-01T00:00:30Z") };
  const iso = (ms: number) => new Date(ms).toISOString();
  let refuseKeys = false;
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let chain: Awaited<ReturnType<typeof fakeChain>>;
  let h: Harness;
  let token: string;
  before(async () => {
    core = await fakeCore(
      () => ({ status: 500, body: {} }), // never called: no workers
      (key, body) => (refuseKeys ? { status: 401, body: { error: "this API key is unknown, revoked or expired", code: "invalid_api_key" } } : permitted(key, body)),
    );
    chain = await fakeChain(HEAD);
    h = await startHarness(
      {
        TRIGGERS_CORE_URL: core.url,
        TRIGGERS_RPC_ETHEREUM: chain.url,
        TRIGGERS_MAX_CHAIN_EVENT_PER_USER: "1",
        TRIGGERS_MAX_RUN_PARAMS_BYTES: "2048",
        TRIGGERS_MAX_QUEUED_PER_TRIGGER: "3",
        TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "5",
        TRIGGERS_WEBHOOK_RATE_PER_IP: "100000",
        TRIGGERS_RATE_WINDOW_MS: "600000",
      },
      { pollers: false, workers: false, now: () => clock.t },
    );
    token = await approvedToken(h);
  });
  afterEach(() => {
    refuseKeys = false;
    chain.head = HEAD;
  });
  after(async () => {
    await h?.stop();
    await core?.close();
    await chain?.close();
  });

  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const create = async (body: object = {}, as = token) => {
    const r = await api("/api/triggers", { token: as, method: "POST", body: { name: "t", kind: "webhook", action_code: CODE, usage_api_key: KEY, config: {}, ...body } });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body;
  };
  const chainConfig = (extra: object = {}) => ({ chain: "ethereum", contract_address: CONTRACT, event_signature: SIGNATURE, ...extra });
  const post = (id: string, raw: string, type: string, headers: Record<string, string> = {}) =>
    http(`${h.svc.url}/webhook/${id}`, { method: "POST", raw, headers: { "content-type": type, ...headers } });
  const runsOf = async (id: string) => (await api(`/api/triggers/${id}/runs?limit=100`)).body.runs as any[];
  const refused = (r: { status: number; body: any }, status: number, code: string, message: string) =>
    expect([r.status, r.body.code, r.body.message], JSON.stringify(r.body)).to.deep.equal([status, code, message]);

  /** The key shows only as its on-chain hash (keccak256 of its bytes, as list_api_keys shows it). */
  const KEY_HASH = hex32(keyHash(KEY));

  describe("what the API shows", function () {
    it("shows each kind exactly: a webhook's URL, a chain-event trigger's next block, times in ISO, never the key", async function () {
      const at = iso(clock.t);
      const hook = await create({ name: "hook", default_params: { a: 1 } });
      expect(hook.id).to.match(/^trg_[0-9a-f]{24}$/);
      expect(hook).to.deep.equal({
        id: hook.id,
        name: "hook",
        kind: "webhook",
        enabled: true,
        usage_api_key_hash: KEY_HASH,
        action_code: CODE,
        default_params: { a: 1 },
        config: {},
        webhook_url: `${h.svc.url}/webhook/${hook.id}`,
        created_at: at,
        updated_at: at,
      });
      const schedule = await create({ name: "cron", kind: "schedule", config: { cron: "* * * * *" } });
      expect(schedule).to.deep.equal({ id: schedule.id, name: "cron", kind: "schedule", enabled: true, usage_api_key_hash: KEY_HASH, action_code: CODE, default_params: {}, config: { cron: "* * * * *" }, created_at: at, updated_at: at });
      const other = await approvedToken(h, "shows@example.com"); // a chain-event trigger of its own (one per user here)
      const events = await create({ name: "events", kind: "chain_event", config: chainConfig() }, other);
      expect(events).to.deep.equal({
        id: events.id,
        name: "events",
        kind: "chain_event",
        enabled: true,
        usage_api_key_hash: KEY_HASH,
        action_code: CODE,
        default_params: {},
        config: { chain: "ethereum", contract_address: getAddress(CONTRACT), event_signature: "Transfer(address, address, uint256)" },
        next_block: HEAD + 1,
        created_at: at,
        updated_at: at,
      });
      for (const [t, as] of [[hook, token], [schedule, token], [events, other]]) expect((await api(`/api/triggers/${t.id}`, { token: as })).body).to.deep.equal(t);
      expect(JSON.stringify((await api("/api/triggers")).body)).not.to.contain(KEY);
    });

    it("answers a webhook call 202 {run_id, status: queued}; the run shows null for the times it has not reached", async function () {
      const t = await create();
      const r = await post(t.id, `{"n":1}`, "application/json");
      expect(r.status).to.equal(202);
      expect(r.body).to.deep.equal({ run_id: r.body.run_id, status: "queued" });
      expect(r.body.run_id).to.match(/^run_[0-9a-f]{24}$/);
      const run = (await api(`/api/runs/${r.body.run_id}`)).body;
      expect(run).to.deep.include({ id: r.body.run_id, trigger_id: t.id, status: "queued", attempts: 0, response: null, error: null, created_at: iso(clock.t), started_at: null, finished_at: null });
      expect(run.params).to.deep.include({ event: { n: 1 }, event_raw: `{"n":1}`, event_raw_encoding: "utf8" });
    });

    it("answers an unknown or foreign trigger or run 404 with its code and message; DELETE answers {success, id}", async function () {
      refused(await api("/api/triggers/trg_nope"), 404, "trigger_not_found", "no trigger trg_nope");
      refused(await api("/api/runs/run_nope"), 404, "run_not_found", "no such run");
      const t = await create();
      const fired = await post(t.id, "x", "text/plain");
      const bob = await approvedToken(h, "bob-routes@example.com");
      refused(await api(`/api/runs/${fired.body.run_id}`, { token: bob }), 404, "run_not_found", "no such run");
      refused(await api(`/api/triggers/${t.id}`, { token: bob, method: "DELETE" }), 404, "trigger_not_found", `no trigger ${t.id}`);
      expect((await api(`/api/runs/${fired.body.run_id}`)).body.status, "the owner still sees it").to.equal("queued");
      const del = await api(`/api/triggers/${t.id}`, { method: "DELETE" });
      expect([del.status, del.body]).to.deep.equal([200, { success: true, id: t.id }]);
      expect((await api(`/api/triggers/${t.id}`)).status).to.equal(404);
    });

    it("names the part of the request at fault (body, query), and changes nothing", async function () {
      const t = await create();
      refused(await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { name: "x", extra: 1 } }), 400, "invalid_request", "invalid body: body: unknown field(s) extra");
      const page = await api(`/api/triggers/${t.id}/runs?limit=0`);
      expect([page.status, page.body.code]).to.deep.equal([400, "invalid_request"]);
      expect(page.body.message.startsWith("invalid query: limit: "), page.body.message).to.equal(true);
      expect((await api(`/api/triggers/${t.id}`)).body).to.deep.equal(t);
    });
  });

  describe("PATCH", function () {
    it("asks the core about the key only when the key or the action changes; other fields change without it", async function () {
      const t = await create({ default_params: { a: 1 } });
      refuseKeys = true; // from now on the core refuses the key
      const checks = core.checks.length;
      clock.t += 1000;
      const p = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { name: "renamed", enabled: false, default_params: { b: 2 } } });
      expect(p.status, JSON.stringify(p.body)).to.equal(200);
      expect(p.body).to.deep.equal({ ...t, name: "renamed", enabled: false, default_params: { b: 2 }, updated_at: iso(clock.t) });
      expect((await api(`/api/triggers/${t.id}`)).body).to.deep.equal(p.body);
      expect(core.checks.length, "no key check").to.equal(checks);
      const code = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { action_code: "async function main() { return 1; }" } });
      refused(code, 400, "invalid_usage_key", "usage_api_key is not a key of the core service (unknown, revoked or expired)");
      expect(core.checks.length).to.equal(checks + 1);
      expect((await api(`/api/triggers/${t.id}`)).body).to.deep.equal(p.body);
    });

    it("keeps a chain-event trigger's cursor when its config changes, unless the change names a start_block", async function () {
      const carol = await approvedToken(h, "cursor@example.com");
      const t = await create({ kind: "chain_event", config: chainConfig() }, carol);
      expect(t.next_block).to.equal(HEAD + 1);
      chain.head = HEAD + 50; // the chain moved on since
      const kept = await api(`/api/triggers/${t.id}`, { token: carol, method: "PATCH", body: { config: chainConfig({ confirmations: 3 }) } });
      expect(kept.status, JSON.stringify(kept.body)).to.equal(200);
      expect([kept.body.next_block, kept.body.config.confirmations]).to.deep.equal([HEAD + 1, 3]);
      const moved = await api(`/api/triggers/${t.id}`, { token: carol, method: "PATCH", body: { config: chainConfig({ start_block: HEAD - 10 }) } });
      expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
      expect([moved.body.next_block, moved.body.config.start_block, moved.body.config.confirmations]).to.deep.equal([HEAD - 10, HEAD - 10, undefined]);
      expect((await api(`/api/triggers/${t.id}`, { token: carol })).body).to.deep.equal(moved.body);
    });

    it("keeps a schedule's place when its cron changes: a slot of the new cron due since the last scan still fires", async function () {
      const t = await create({ kind: "schedule", config: { cron: "* * * * *" } });
      clock.t += 60_000; // a minute boundary passed since creation
      const due = Math.floor(clock.t / 60_000) * 60_000;
      const p = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { config: { cron: "0-59 * * * *" } } });
      expect([p.status, p.body.config]).to.deep.equal([200, { cron: "0-59 * * * *" }]);
      await scanSchedules(h.svc.ctx);
      expect((await runsOf(t.id)).map((r) => r.params.scheduled_at)).to.deep.equal([iso(due)]);
    });

    it("re-enabling a schedule skips the time it was disabled; a PATCH that does not re-enable it skips nothing", async function () {
      const paused = await create({ kind: "schedule", config: { cron: "* * * * *" } });
      const running = await create({ kind: "schedule", config: { cron: "* * * * *" } });
      expect((await api(`/api/triggers/${paused.id}`, { method: "PATCH", body: { enabled: false } })).body.enabled).to.equal(false);
      clock.t += 180_000;
      const due = Math.floor(clock.t / 60_000) * 60_000;
      expect((await api(`/api/triggers/${paused.id}`, { method: "PATCH", body: { enabled: true } })).body.enabled).to.equal(true);
      // already enabled: enabling it again (and renaming it) keeps its due slot
      expect((await api(`/api/triggers/${running.id}`, { method: "PATCH", body: { enabled: true, name: "again" } })).body.name).to.equal("again");
      await scanSchedules(h.svc.ctx);
      expect(await runsOf(paused.id), "nothing for the disabled time").to.deep.equal([]);
      expect((await runsOf(running.id)).map((r) => r.params.scheduled_at)).to.deep.equal([iso(due)]);
      clock.t += 60_000;
      await scanSchedules(h.svc.ctx);
      expect((await runsOf(paused.id)).map((r) => r.params.scheduled_at), "and it runs again from then on").to.deep.equal([iso(due + 60_000)]);
    });
  });

  it("counts only chain-event triggers against TRIGGERS_MAX_CHAIN_EVENT_PER_USER (1 here), and no other kind is refused by it", async function () {
    const dave = await approvedToken(h, "quota@example.com");
    await create({ name: "first webhook" }, dave);
    await create({ kind: "chain_event", config: chainConfig() }, dave);
    const second = await api("/api/triggers", { token: dave, method: "POST", body: { name: "t", kind: "chain_event", action_code: CODE, usage_api_key: KEY, config: chainConfig() } });
    refused(second, 409, "trigger_quota_exceeded", "you have 1 chain-event triggers, the most one user may have (TRIGGERS_MAX_CHAIN_EVENT_PER_USER); delete one first");
    await create({ name: "another webhook" }, dave);
    expect((await api("/api/triggers", { token: dave })).body.map((t: any) => t.kind)).to.have.members(["webhook", "chain_event", "webhook"]);
  });

  describe("webhook", function () {
    /** The event a fresh webhook trigger's action gets for a body `raw` sent with content-type `type`. */
    const eventOf = async (raw: string, type: string) => {
      const t = await create();
      const r = await post(t.id, raw, type);
      expect(r.status, `${type} ${JSON.stringify(raw)}: ${JSON.stringify(r.body)}`).to.equal(202);
      return (await api(`/api/runs/${r.body.run_id}`)).body.params.event;
    };

    it("parses the body as JSON when its type says JSON (also +json) or it starts like a JSON object, array or string; other text stays text", async function () {
      expect(await eventOf("42", "application/json")).to.equal(42);
      expect(await eventOf(" true", "application/vnd.api+json")).to.equal(true);
      expect(await eventOf(' "quoted"', "text/plain")).to.equal("quoted");
      expect(await eventOf("123", "text/plain")).to.equal("123");
      expect(await eventOf("null", "text/plain")).to.equal("null");
      expect(await eventOf("{oops", "text/plain"), "looks like JSON but is not: taken as text").to.equal("{oops");
      expect(await eventOf("", "application/json"), "an empty body is empty text, whatever its type").to.equal("");
    });

    it("answers 400 invalid_request to a body sent as application/json that is not JSON, and stores no run", async function () {
      const t = await create();
      refused(await post(t.id, "{oops", "application/json"), 400, "invalid_request", "the request body is not valid JSON");
      refused(await post(t.id, "[" + "[".repeat(60) + "]".repeat(61), "application/json"), 400, "json_too_deep", "the JSON body nests arrays or objects more than 60 levels deep (the limit is 60)");
      expect(await runsOf(t.id)).to.deep.equal([]);
    });

    it("refuses a trigger of another kind (404) or a disabled one (409) with code and message, and stores no run", async function () {
      const schedule = await create({ kind: "schedule", config: { cron: "0 0 1 1 *" } });
      refused(await post(schedule.id, "{}", "application/json"), 404, "trigger_not_found", `no webhook trigger ${schedule.id}`);
      const off = await create({ enabled: false });
      refused(await post(off.id, "{}", "application/json"), 409, "trigger_disabled", "this trigger is disabled");
      expect([await runsOf(schedule.id), await runsOf(off.id)]).to.deep.equal([[], []]);
    });

    it("takes params of exactly TRIGGERS_MAX_RUN_PARAMS_BYTES and refuses one byte more (413), storing nothing", async function () {
      const t = await create();
      const send = (pad: number) => post(t.id, "body", "text/plain", { "x-pad": "p".repeat(pad) });
      const probe = await send(100);
      expect(probe.status).to.equal(202);
      const size = Buffer.byteLength(JSON.stringify((await api(`/api/runs/${probe.body.run_id}`)).body.params), "utf8");
      const exact = 100 + 2048 - size; // the header is in the params once: one byte per character
      const at = await send(exact);
      expect(at.status, JSON.stringify(at.body)).to.equal(202);
      expect(Buffer.byteLength(JSON.stringify((await api(`/api/runs/${at.body.run_id}`)).body.params), "utf8")).to.equal(2048);
      refused(
        await send(exact + 1),
        413,
        "params_too_large",
        "this call would give the action 2049 bytes of params (the event, its raw bytes, the headers and the default params); at most 2048",
      );
      expect((await runsOf(t.id)).length).to.equal(2);
    });

    it("answers 429 with code and message when a trigger's queue is full, then when its rate is spent", async function () {
      const t = await create();
      const replies = [];
      for (let i = 0; i < 6; i++) replies.push(await post(t.id, `{"i":${i}}`, "application/json"));
      expect(replies.slice(0, 3).map((r) => r.status)).to.deep.equal([202, 202, 202]);
      for (const r of replies.slice(3, 5)) {
        refused(r, 429, "trigger_queue_full", "this trigger has 3 runs waiting already; retry later");
        expect(r.headers.get("retry-after")).to.equal("30");
      }
      refused(replies[5], 429, "rate_limited", "too many webhook calls for this trigger; retry later");
      expect((await runsOf(t.id)).length).to.equal(3);
    });
  });
});
