import { expect } from "chai";
import { scanChains } from "../triggers/kinds/chainEvent";
import { mailboxOf } from "../triggers/api/auth";
import { approvedToken, fakeChain, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, tempDatabase, type TempDatabase } from "./helpers/postgres";

const CODE = `async function main(params) { return params; }`;
const KEY = "usage-key-secret-123";
const HEAD = 200_000;

describe("mailboxOf (the per-address sign-in limit's key)", function () {
  it("is one key for an address, its case and its subaddresses", function () {
    for (const a of ["victim@example.com", "VICTIM@Example.com", "victim+1@example.com", "Victim+a+b@EXAMPLE.COM"]) expect(mailboxOf(a)).to.equal("victim@example.com");
    expect(mailboxOf("other@example.com")).to.equal("other@example.com");
  });
});

for (const store of STORES)
  describe(`triggers service: what an anonymous caller or a free user can make it store or poll (${store})`, function () {
    this.timeout(60_000);
    let core: Awaited<ReturnType<typeof fakeCore>>;
    let chain: Awaited<ReturnType<typeof fakeChain>>;
    let h: Harness;
    let token: string;
    let pg: TempDatabase | undefined;
    before(async function () {
      if (store === "PostgreSQL") pg = await tempDatabase(this);
      core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params.event ?? null, logs: "", has_error: false } }));
      chain = await fakeChain(HEAD);
      h = await startHarness(
        {
          TRIGGERS_CORE_URL: core.url,
          TRIGGERS_RPC_ETHEREUM: chain.url,
          TRIGGERS_LOGIN_RATE_PER_ADDRESS: "2",
          TRIGGERS_LOGIN_RATE_PER_IP: "100",
          TRIGGERS_WEBHOOK_RATE_PER_TRIGGER: "1000",
          TRIGGERS_WEBHOOK_RATE_PER_IP: "1000",
          TRIGGERS_MAX_RUN_PARAMS_BYTES: "4096",
          TRIGGERS_MAX_QUEUED_PER_TRIGGER: "3",
          TRIGGERS_RUNS_KEPT_PER_TRIGGER: "2",
          TRIGGERS_MAX_CHAIN_EVENT_PER_USER: "3",
          TRIGGERS_MAX_BACKFILL_BLOCKS: "1000",
          ...(pg ? { DATABASE_URL: pg.url } : {}),
        },
        { pollers: false },
      );
      token = await approvedToken(h, "owner@example.com");
    });
    after(async () => {
      await h?.stop();
      await core?.close();
      await chain?.close();
      await pg?.stop();
    });

    const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
    const create = async (body: object) => api("/api/triggers", { method: "POST", body: { name: "t", kind: "webhook", action_code: CODE, usage_api_key: KEY, config: {}, ...body } });
    const total = async (id: string) => (await api(`/api/triggers/${id}/runs?limit=100`)).body.total as number;
    const login = (email: string) =>
      http(`${h.svc.url}/auth/login`, { method: "POST", raw: new URLSearchParams({ email }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

    it("counts subaddresses and case against one mailbox's sign-in links", async function () {
      const sent = h.links.length;
      const statuses = [];
      for (const email of ["victim@example.com", "victim+1@example.com", "VICTIM+2@example.com", "victim+3@Example.com"]) statuses.push((await login(email)).status);
      expect(statuses).to.deep.equal([200, 200, 429, 429]);
      expect(h.links.length - sent).to.equal(2);
    });

    it("answers 413 to a webhook call whose params would pass TRIGGERS_MAX_RUN_PARAMS_BYTES, and stores no run", async function () {
      const t = (await create({ name: "big" })).body;
      const r = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", raw: JSON.stringify({ blob: "x".repeat(3000) }), headers: { "content-type": "application/json" } });
      expect([r.status, r.body.code]).to.deep.equal([413, "params_too_large"]);
      expect(r.body.message).to.match(/^this call would give the action \d+ bytes of params .*; at most 4096$/);
      expect(await total(t.id)).to.equal(0);
      const small = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { blob: "x".repeat(100) } });
      expect(small.status).to.equal(202);
    });

    it("keeps at most TRIGGERS_MAX_QUEUED_PER_TRIGGER runs of a trigger waiting: 429 trigger_queue_full with Retry-After, nothing stored", async function () {
      await h.svc.close();
      await h.start({ pollers: false, workers: false }); // nothing takes the runs: they stay queued
      try {
        const t = (await create({ name: "queued" })).body;
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push(await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { i } }));
        expect(statuses.map((r) => r.status)).to.deep.equal([202, 202, 202, 429, 429]);
        expect(statuses[3].body.code).to.equal("trigger_queue_full");
        expect(Number(statuses[3].headers.get("retry-after"))).to.be.greaterThan(0);
        expect(await total(t.id)).to.equal(3);
        // another trigger is not affected
        const other = (await create({ name: "other" })).body;
        expect((await http(`${h.svc.url}/webhook/${other.id}`, { method: "POST", body: {} })).status).to.equal(202);
      } finally {
        await h.svc.close();
        await h.start({ pollers: false });
      }
    });

    it("keeps the newest TRIGGERS_RUNS_KEPT_PER_TRIGGER finished runs of a trigger", async function () {
      const t = (await create({ name: "kept" })).body;
      for (let i = 0; i < 5; i++) {
        const r = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { i } });
        await until(async () => ((await api(`/api/runs/${r.body.run_id}`)).body.status === "success" ? true : undefined));
      }
      await until(async () => ((await total(t.id)) === 2 ? true : undefined), 5_000, "pruning");
      const runs = (await api(`/api/triggers/${t.id}/runs`)).body.runs;
      expect(runs.map((r: any) => r.params.event.i)).to.deep.equal([4, 3]);
    });

    it("refuses a chain-event backfill older than TRIGGERS_MAX_BACKFILL_BLOCKS, and more chain-event triggers than a user may have", async function () {
      const cfg = (extra: object) => ({ kind: "chain_event", config: { chain: "ethereum", contract_address: "0x" + "11".repeat(20), event_signature: "Transfer(address,address,uint256)", ...extra } });
      const old = await create(cfg({ start_block: HEAD - 1001 }));
      expect([old.status, old.body.code]).to.deep.equal([400, "invalid_request"]);
      expect(old.body.message).to.equal(`config.start_block ${HEAD - 1001} is 1001 blocks behind the head of ethereum; a trigger may backfill at most 1000 blocks`);
      const before = (await api("/api/triggers")).body.length;
      for (let i = 0; i < 3; i++) expect((await create(cfg({ start_block: HEAD - 1000 }))).status).to.equal(201);
      const fourth = await create(cfg({}));
      expect([fourth.status, fourth.body.code]).to.deep.equal([409, "trigger_quota_exceeded"]);
      expect((await api("/api/triggers")).body.length).to.equal(before + 3);
      // one scan reads each chain's head once, however many triggers poll it
      chain.calls.length = 0;
      await scanChains(h.svc.ctx);
      expect(chain.calls.filter((m) => m === "eth_blockNumber")).to.have.length(1);
      expect(chain.calls.filter((m) => m === "eth_getLogs")).to.have.length(3);
    });
  });
