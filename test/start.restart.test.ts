import { expect } from "chai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { keccak256, toUtf8Bytes } from "ethers";
import { computeCid } from "../executor/cid";
import { freePorts, portFreed, spawnStart, type VestaProcess } from "./helpers/startProcess";
import { approvedTokenAt, http, until } from "./helpers/triggers";

const ECHO = `async function main(params) { return { echoed: params.n ?? params.event }; }`;
const READY = "Press Ctrl-C to stop.";

/**
 * `npm start` on one data directory, stopped and started again (Ctrl-C, then kill -9): everything
 * acknowledged before is there after, at the same contract addresses; and the supervisor starts a
 * killed relayer again while the chain and the triggers service keep serving.
 */
describe("npm start keeps its state across restarts (chain journal, supervisor)", function () {
  this.timeout(240_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-restart-"));
  let env: Record<string, string>;
  let ports: { chain: number; api: number; triggers: number };
  let vesta: VestaProcess | undefined;
  const s = {} as { key: string; wallet: string; groupId: string; cid: string; usageKey: string; token: string; triggerId: string; deployment: any };

  before(async () => {
    const [chain, api, triggers] = await freePorts(3);
    ports = { chain, api, triggers };
    env = { VESTA_CHAIN_PORT: String(chain), VESTA_PORT: String(api), TRIGGERS_PORT: String(triggers), VESTA_DATA_DIR: dataDir, VESTA_PAYER_COUNT: "2" };
  });
  after(async () => {
    await vesta?.stop("SIGKILL");
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const core = (p: string) => `http://127.0.0.1:${ports.api}/core/v1${p}`;
  const trig = (p: string) => `http://127.0.0.1:${ports.triggers}${p}`;
  const post = async (p: string, key: string, body: unknown) => {
    const r = await http(core(p), { method: "POST", body, headers: { "x-api-key": key } });
    expect(r.status, `${p}: ${JSON.stringify(r.body)}`).to.equal(200);
    return r.body;
  };
  const get = async (p: string, key: string) => {
    const r = await http(core(p), { headers: { "x-api-key": key } });
    expect(r.status, `${p}: ${JSON.stringify(r.body)}`).to.equal(200);
    return r.body;
  };
  const deployment = () => JSON.parse(fs.readFileSync(path.join(dataDir, "deployment.json"), "utf8"));
  const up = async () => {
    const t0 = Date.now();
    vesta = spawnStart(env);
    await vesta.waitFor(READY, 200_000);
    console.log(`      (npm start ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    return vesta.out();
  };
  /** Stops npm start and waits until its children have let their ports go. */
  const down = async (signal: NodeJS.Signals) => {
    const code = await vesta!.stop(signal);
    for (const p of Object.values(ports)) await portFreed(p);
    return code;
  };
  /** What the account holds, as the API lists it. */
  const holdings = async () => ({
    wallets: await get("/list_wallets", s.key),
    groups: await get("/list_groups", s.key),
    actions: await get("/list_actions", s.key),
    keys: await get("/list_api_keys", s.key),
    inGroup: await get(`/list_wallets_in_group?group_id=${s.groupId}`, s.key),
  });
  const fired = async (body: unknown) => {
    const r = await http(trig(`/webhook/${s.triggerId}`), { method: "POST", body });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    return until(async () => {
      const runs = (await http(trig(`/api/triggers/${s.triggerId}/runs?limit=100`), { token: s.token })).body.runs as any[];
      const run = runs.find((x) => x.id === r.body.run_id);
      return run && (run.status === "success" || run.status === "failed") ? run : undefined;
    }, 60_000, "the webhook's run");
  };

  it("comes back after Ctrl-C (SIGTERM) with every account, wallet, group, action, usage key and trigger, at the same addresses", async () => {
    const first = await up();
    s.deployment = deployment();
    s.key = /A first account key to try \(shown once\):\s+(\S+)/.exec(first)![1];
    s.wallet = (await post("/create_wallet", s.key, {})).wallet_address;
    s.cid = await computeCid(ECHO);
    s.groupId = (await post("/add_group", s.key, { group_name: "g", group_description: "kept", pkp_ids_permitted: [s.wallet], cid_hashes_permitted: [keccak256(toUtf8Bytes(s.cid))] })).group_id;
    await post("/add_action", s.key, { action_ipfs_cid: s.cid, name: "echo" });
    s.usageKey = (await post("/add_usage_api_key", s.key, { name: "runner", execute_in_groups: [Number(s.groupId)] })).usage_api_key;
    expect((await post("/lit_action", s.usageKey, { code: ECHO, js_params: { n: 1 } })).response).to.deep.equal({ echoed: 1 });
    const from = vesta!.out().length;
    s.token = await approvedTokenAt(trig(""), "dev@example.com", async () => /sign-in link for dev@example\.com: (\S+)/.exec((await vesta!.waitFor("sign-in link for dev@example.com", 10_000, from)).slice(from))![1]);
    const t = await http(trig("/api/triggers"), { method: "POST", token: s.token, body: { name: "hook", kind: "webhook", config: {}, action_code: ECHO, usage_api_key: s.usageKey } });
    expect(t.status, JSON.stringify(t.body)).to.equal(201);
    s.triggerId = t.body.id;
    const before = await holdings();
    expect(before.wallets.map((w: any) => w.wallet_address)).to.include(s.wallet);

    expect(await down("SIGTERM")).to.equal(0);
    const again = await up();
    expect(await holdings()).to.deep.equal(before);
    expect(deployment()).to.deep.equal(s.deployment);
    expect(again).to.contain(`AccountConfig      ${s.deployment.accountConfig}`);
    expect(again).to.match(/replayed the chain journal: \d+ blocks in [\d.]+ s/);
    expect(again).to.contain("A new account key to try (shown once; the accounts, keys and wallets of earlier runs are kept):");
    // The stored action code runs by its CID with the usage key (code store and permissions both kept) ...
    expect((await post("/lit_action", s.usageKey, { ipfs_id: s.cid, js_params: { n: 2 } })).response).to.deep.equal({ echoed: 2 });
    // ... and the trigger, its session and its sealed usage key still work against the same chain.
    expect((await http(trig("/api/triggers"), { token: s.token })).body.map((x: any) => x.id)).to.deep.equal([s.triggerId]);
    const run = await fired({ hello: "after restart" });
    expect(run.status, JSON.stringify(run)).to.equal("success");
    expect(run.response.response).to.deep.equal({ echoed: { hello: "after restart" } });
  });

  it("comes back after kill -9 right after acknowledged writes, with every acknowledged one", async () => {
    // Writes race the kill: each one answered 200 before it must be on the chain after.
    const names = Array.from({ length: 6 }, (_, i) => `raced-${i}`);
    const acked: string[] = [];
    const sends = names.map((n) =>
      http(core("/add_group"), { method: "POST", body: { group_name: n, group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }, headers: { "x-api-key": s.key } })
        .then((r) => r.status === 200 && acked.push(n))
        .catch(() => undefined),
    );
    await until(async () => acked.length > 0, 60_000, "a first acknowledged write");
    await down("SIGKILL");
    await Promise.all(sends);
    expect(acked.length).to.be.greaterThan(0);
    await up();
    const groups = (await get("/list_groups?page_size=100", s.key)).map((g: any) => g.name);
    for (const n of acked) expect(groups, `acknowledged ${n}`).to.include(n);
    expect(deployment()).to.deep.equal(s.deployment);
    expect(vesta!.out()).to.match(/replayed the chain journal: \d+ blocks/);
    expect(await get("/list_wallets", s.key)).to.deep.equal([{ id: s.wallet, name: "", description: "", wallet_address: s.wallet }]);
  });

  it("starts a killed relayer again on its own while the chain and the triggers service keep serving", async () => {
    const pid = Number(/started the relayer \(pid (\d+)\)/.exec(vesta!.out())![1]);
    const from = vesta!.out().length;
    process.kill(pid, "SIGKILL");
    await vesta!.waitFor(`the relayer (pid ${pid}) was killed by SIGKILL; starting it again in 1 s (restart 1); the other parts keep serving`, 10_000, from);
    // Meanwhile: the triggers service answers, the chain answers.
    expect((await http(trig("/SKILL.md"))).status).to.equal(200);
    expect((await http(trig("/api/triggers"), { token: s.token })).body.map((x: any) => x.id)).to.deep.equal([s.triggerId]);
    const rpc = await http(`http://127.0.0.1:${ports.chain}`, { method: "POST", body: { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] } });
    expect(rpc.body.result).to.equal("0x7a69");
    await vesta!.waitFor(new RegExp(`the relayer is back \\(pid \\d+\\) at http://127\\.0\\.0\\.1:${ports.api}`), 60_000, from);
    expect((await post("/lit_action", s.usageKey, { ipfs_id: s.cid, js_params: { n: 3 } })).response).to.deep.equal({ echoed: 3 });
    expect(await down("SIGTERM")).to.equal(0);
    expect(vesta!.out().slice(from)).to.contain("Vesta: stopping ...");
  });
});
