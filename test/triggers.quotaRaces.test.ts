import fs from "node:fs";
import { expect } from "chai";
import { approvedToken, fakeChain, fakeCore, http, startHarness, type Harness } from "./helpers/triggers";
import { STORES, tempDatabase, type TempDatabase } from "./helpers/postgres";

const CODE = `async function main(params) { return params; }`;
const KEY = "usage-key-secret-123";
const HEAD = 200_000;

// TRIGGERS_MAX_CHAIN_EVENT_PER_USER holds against racing creates (review finding: the route counted the
// user's chain-event triggers, then awaited the chain and the core, then inserted through a
// transaction that checked only TRIGGERS_MAX_PER_USER: 12 creates at once held 9 on SQLite, 10 on
// PostgreSQL). The insert now counts the kind too, in the user's turn.
for (const store of STORES)
  describe(`triggers: racing creates of chain-event triggers vs TRIGGERS_MAX_CHAIN_EVENT_PER_USER (${store})`, function () {
    this.timeout(120_000);
    let core: Awaited<ReturnType<typeof fakeCore>>;
    let chain: Awaited<ReturnType<typeof fakeChain>>;
    let h: Harness;
    let pg: TempDatabase | undefined;
    before(async function () {
      if (store === "PostgreSQL") pg = await tempDatabase(this);
      core = await fakeCore(() => ({ status: 200, body: { response: null, logs: "", has_error: false } }));
      chain = await fakeChain(HEAD);
      h = await startHarness(
        { TRIGGERS_CORE_URL: core.url, TRIGGERS_RPC_ETHEREUM: chain.url, TRIGGERS_MAX_CHAIN_EVENT_PER_USER: "3", TRIGGERS_MAX_PER_USER: "100", ...(pg ? { DATABASE_URL: pg.url } : {}) },
        { pollers: false, workers: false },
      );
    });
    after(async () => {
      await h?.stop();
      await core?.close();
      await chain?.close();
      await pg?.stop();
    });

    it("12 creates at once hold at most 3 chain-event triggers", async function () {
      const token = await approvedToken(h, "racer@example.com");
      const body = { name: "t", kind: "chain_event", action_code: CODE, usage_api_key: KEY, config: { chain: "ethereum", contract_address: "0x" + "11".repeat(20), event_signature: "Transfer(address,address,uint256)" } };
      const replies = await Promise.all(Array.from({ length: 12 }, () => http(`${h.svc.url}/api/triggers`, { token, method: "POST", body })));
      const created = replies.filter((r) => r.status === 201).length;
      const held = (await http(`${h.svc.url}/api/triggers`, { token })).body.filter((t: any) => t.kind === "chain_event").length;
      expect({ created, held, statuses: replies.map((r) => r.status).join(",") }).to.deep.include({ created: 3, held: 3 });
    });
  });

// The per-mailbox budget of sign-in mails lives in the store (review finding: it was each process's
// memory, and two replicas on one PostgreSQL mailed twice TRIGGERS_LOGIN_RATE_PER_ADDRESS).
describe("triggers: the per-mailbox sign-in mail limit across two replicas on one PostgreSQL", function () {
  this.timeout(120_000);
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h1: Harness;
  let h2: Harness;
  let pg: TempDatabase;
  before(async function () {
    pg = await tempDatabase(this);
    core = await fakeCore(() => ({ status: 200, body: {} }));
    const env = { TRIGGERS_CORE_URL: core.url, TRIGGERS_LOGIN_RATE_PER_ADDRESS: "2", TRIGGERS_LOGIN_RATE_PER_IP: "100", DATABASE_URL: pg.url, TRIGGERS_SECRET_KEY: "ab".repeat(32) };
    h1 = await startHarness(env, { pollers: false, workers: false });
    h2 = await startHarness(env, { pollers: false, workers: false });
  });
  after(async () => {
    await h2?.svc.close();
    if (h2) fs.rmSync(h2.dataDir, { recursive: true, force: true });
    await h1?.stop();
    await core?.close();
    await pg?.stop();
  });

  it("mails at most TRIGGERS_LOGIN_RATE_PER_ADDRESS (2) links to one mailbox, whichever replica is asked", async function () {
    const login = (h: Harness) =>
      http(`${h.svc.url}/auth/login`, { method: "POST", raw: new URLSearchParams({ email: "victim@example.com" }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await login(i % 2 ? h2 : h1)).status);
    const mailed = h1.links.length + h2.links.length;
    expect({ mailed, statuses: statuses.join(",") }).to.deep.equal({ mailed: 2, statuses: "200,200,429,429,429,429" });
  });
});
