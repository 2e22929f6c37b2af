import { expect } from "chai";
import { zeroPadValue, toBeHex, id as topicOf } from "ethers";
import { call, newAccount, startStack, usageKeyFor, type Stack } from "./helpers/relayer";
import { hashOf } from "./helpers/accountConfig";
import { scanChains } from "../triggers/kinds/chainEvent";
import { scanSchedules } from "../triggers/kinds/schedule";
import { approvedToken, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";

const ECHO = `async function main(params) { console.log("fired"); return params; }`;
const THROWS = `async function main(params) { throw new Error("action exploded " + params.source); }`;
const GROUP_CREATED = "GroupCreated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description)";

/** End to end against the real core service and the in-process chain (named `ethereum` for the service). */
for (const store of STORES)
describe(`triggers service end to end (spec 3, real core and chain) (${store})`, function () {
  this.timeout(120_000);
  let stack: Stack;
  let h: Harness;
  let token: string;
  let apiKey: string;
  let usageKey: string;
  const clock = { t: Date.now() };
  before(async function () {
    stack = await startStack();
    ({ apiKey } = await newAccount(stack));
    ({ usageKey } = await usageKeyFor(stack, apiKey, [ECHO, THROWS]));
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: stack.relayer.url, TRIGGERS_RPC_ETHEREUM: stack.rpcUrl }, { pollers: false, now: () => clock.t });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await stack?.stop();
  });
  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const create = async (body: object) => {
    const r = await api("/api/triggers", { method: "POST", body: { name: "t", action_code: ECHO, usage_api_key: usageKey, ...body } });
    if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const settled = (id: string, n: number) =>
    until(async () => {
      const runs = (await api(`/api/triggers/${id}/runs?limit=100`)).body.runs as any[];
      return runs.length === n && runs.every((r) => r.status === "success" || r.status === "failed") ? runs.reverse() : undefined;
    }, 60_000, `${n} finished runs`);

  it("webhook: runs the action on the core with the usage key and stores its response", async () => {
    const t = await create({ kind: "webhook", config: {} });
    const r = await http(`${h.svc.url}/webhook/${t.id}`, { method: "POST", body: { hello: "core" }, headers: { "x-api-key": apiKey, "x-github-event": "push" } });
    expect(r.status).to.equal(202);
    const [run] = await settled(t.id, 1);
    expect(run.status, JSON.stringify(run)).to.equal("success");
    expect(run.response.response.event).to.deep.equal({ hello: "core" });
    expect(run.response.response.headers["x-github-event"]).to.equal("push");
    expect(run.response.response.headers).not.to.have.property("x-api-key");
    expect(run.response.logs).to.contain("fired");
  });

  it("schedule: a firing runs the action with {source, scheduled_at, cron}; a throwing action fails with its stack", async () => {
    const t = await create({ kind: "schedule", action_code: THROWS, config: { cron: "* * * * *" } });
    clock.t += 60_000;
    expect(await scanSchedules(h.svc.ctx)).to.equal(1);
    const [run] = await settled(t.id, 1);
    expect(run.status).to.equal("failed");
    expect(run.params).to.include({ source: "schedule", cron: "* * * * *" });
    expect(run.error).to.contain("action exploded schedule").and.match(/\n\s+at /);
    expect(run.attempts, "a failed run (422 action_failed) is final, never retried").to.equal(1);
    await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { enabled: false } });
  });

  it("chain event: rejects an unknown chain, a chain without RPC and a 4th topic filter, creating nothing", async () => {
    const before = (await api("/api/triggers")).body.length;
    const base = { contract_address: await stack.config.getAddress(), event_signature: GROUP_CREATED };
    const bad = [
      { ...base, chain: "solana" },
      { ...base, chain: "polygon" },
      { ...base, chain: "ethereum", topic_filters: [null, null, null, null] },
      { ...base, chain: "ethereum", topic_filters: ["0x1234"] },
      { ...base, chain: "ethereum", contract_address: "0xnope" },
      { ...base, chain: "ethereum", event_signature: "not an event(" },
    ];
    for (const config of bad) {
      const r = await api("/api/triggers", { method: "POST", body: { name: "bad", kind: "chain_event", action_code: ECHO, usage_api_key: usageKey, config } });
      expect([r.status, r.body.code], JSON.stringify(config)).to.deep.equal([400, "invalid_request"]);
    }
    expect((await api("/api/triggers")).body.length).to.equal(before);
  });

  it("chain event: backfills from start_block, filters topics, decodes args, fires each log once across restarts", async () => {
    const other = await newAccount(stack, "other");
    const start = await stack.relayer.ctx.chain.provider.getBlockNumber();
    await call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: "g-a", group_description: "first", pkp_ids_permitted: [], cid_hashes_permitted: [] } });
    await call(stack, "POST", "/add_group", { key: other.apiKey, body: { group_name: "g-other", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] } });
    const mine = zeroPadValue(toBeHex(hashOf(apiKey)), 32);
    const t = await create({
      kind: "chain_event",
      config: { chain: "ethereum", contract_address: (await stack.config.getAddress()).toLowerCase(), event_signature: GROUP_CREATED, start_block: toBeHex(start), topic_filters: [mine, null], confirmations: 0 },
    });
    await scanChains(h.svc.ctx);
    const [first] = await settled(t.id, 1);
    expect(first.status, JSON.stringify(first)).to.equal("success");
    const ev = first.params.event;
    expect(ev.decoded).to.include({ arg0: hashOf(apiKey).toString(), arg3: "g-a", arg4: "first" });
    expect(ev.topics[0]).to.equal(topicOf("GroupCreated(uint256,uint64,uint256,string,string)"));
    expect(ev.topics[1]).to.equal(mine);
    expect(ev.transaction_hash).to.match(/^0x[0-9a-f]{64}$/);
    expect(ev.block_number).to.be.greaterThan(start);
    expect(ev.log.data).to.match(/^0x/);
    expect(first.response.response.event.decoded.arg3).to.equal("g-a");

    // Restart: the cursor survives; old logs do not fire again, new ones fire once.
    await h.svc.close();
    await call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: "g-b", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] } });
    await h.start();
    await scanChains(h.svc.ctx);
    await scanChains(h.svc.ctx);
    const runs = await settled(t.id, 2);
    expect(runs.map((r: any) => r.params.event.decoded.arg3)).to.deep.equal(["g-a", "g-b"]);
    await api(`/api/triggers/${t.id}`, { method: "DELETE" });
  });

  it("chain event: waits for the configured confirmations before firing", async () => {
    const start = await stack.relayer.ctx.chain.provider.getBlockNumber();
    const t = await create({
      kind: "chain_event",
      config: { chain: "ethereum", contract_address: await stack.config.getAddress(), event_signature: GROUP_CREATED, start_block: start + 1, topic_filters: [zeroPadValue(toBeHex(hashOf(apiKey)), 32)], confirmations: 2 },
    });
    await call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: "g-c", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] } });
    expect(await scanChains(h.svc.ctx)).to.equal(0);
    await stack.relayer.ctx.chain.provider.send("hardhat_mine", ["0x2"]);
    expect(await scanChains(h.svc.ctx)).to.equal(1);
    const [run] = await settled(t.id, 1);
    expect(run.params.event.decoded.arg3).to.equal("g-c");
    await api(`/api/triggers/${t.id}`, { method: "DELETE" });
  });
});
