import { expect } from "chai";
import { spawn } from "node:child_process";
import { toBeHex, zeroPadValue } from "ethers";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { hashOf } from "./helpers/accountConfig";
import { scanChains } from "../triggers/kinds/chainEvent";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";

const ECHO = `async function main(params) { return params.event.decoded.arg3; }`;
const GROUP_CREATED = "GroupCreated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description)";

/**
 * Kill-and-restart durability of the chain-event cursor: a real `triggers/main.ts` process follows
 * the chain, is killed with SIGKILL while logs are arriving, and a fresh process takes over from the
 * same data dir. Every log fires exactly once: none lost, none twice.
 */
for (const store of STORES)
describe(`triggers chain-event cursor across SIGKILL (${store})`, function () {
  this.timeout(120_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  it("fires each log exactly once when the process following the chain is killed and restarted", async function () {
    const core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params.event.decoded.arg3, logs: "", has_error: false } }));
    const h: Harness = await startHarness(
      { ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url, TRIGGERS_RPC_ETHEREUM: stack.rpcUrl, TRIGGERS_CHAIN_POLL_MS: "50", TRIGGERS_CONFIRMATIONS: "0" },
      { pollers: false },
    );
    const { apiKey } = await newAccount(stack);
    const addGroup = (name: string) => call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: name } });
    let proc: ReturnType<typeof spawn> | undefined;
    try {
      const token = await approvedToken(h);
      const start = await stack.relayer.ctx.chain.provider.getBlockNumber();
      const created = await http(`${h.svc.url}/api/triggers`, {
        method: "POST",
        token,
        body: {
          name: "cursor",
          kind: "chain_event",
          action_code: ECHO,
          usage_api_key: "k",
          config: { chain: "ethereum", contract_address: await stack.config.getAddress(), event_signature: GROUP_CREATED, start_block: start + 1, topic_filters: [zeroPadValue(toBeHex(hashOf(apiKey)), 32)] },
        },
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      await h.svc.close();

      for (const n of ["g1", "g2", "g3"]) await addGroup(n);
      const port = 20_000 + Math.floor(Math.random() * 20_000);
      proc = spawn(process.execPath, ["--require", "ts-node/register/transpile-only", "triggers/main.ts"], {
        env: { ...process.env, ...h.env, TRIGGERS_PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      proc.stdout!.on("data", (c) => (out += c));
      proc.stderr!.on("data", (c) => (out += c));
      const child = proc;
      // killed once it has started firing the backfilled logs, while more logs arrive
      await until(async () => core.calls.length >= 1 || child.exitCode !== null, 60_000, "the process to fire a first log");
      expect(child.exitCode, out).to.equal(null);
      await addGroup("g4");
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGKILL");
      await exited;
      await addGroup("g5");

      await h.start({ pollers: false });
      await scanChains(h.svc.ctx);
      await scanChains(h.svc.ctx);
      const runs = await until(async () => {
        const r = (await http(`${h.svc.url}/api/triggers/${created.body.id}/runs?limit=100`, { token })).body.runs as any[];
        return r.length >= 5 && r.every((x) => x.status === "success" || x.status === "failed") ? r : undefined;
      }, 60_000, "five finished runs");
      const fired = runs.map((r) => r.params.event.decoded.arg3).sort();
      expect(fired).to.deep.equal(["g1", "g2", "g3", "g4", "g5"]); // each log once: none lost, none twice
      // a run caught in flight by the kill is failed as interrupted, never run again
      const calls = core.calls.map((c) => c.body.js_params.event.decoded.arg3);
      expect(new Set(calls).size).to.equal(calls.length);
    } finally {
      if (proc && proc.exitCode === null) proc.kill("SIGKILL");
      await h.stop();
      await core.close();
    }
  });
});
