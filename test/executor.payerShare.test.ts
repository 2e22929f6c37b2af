import { expect } from "chai";
import { computeCid } from "../executor/cid";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { buildTypedData } from "../protocol/eip712";
import { call, startStack, type Stack } from "./helpers/relayer";
import { until } from "./helpers/triggers";
import { gateServer } from "./helpers/network";
import { fundedWallet } from "./helpers/wallets";
import { expectError } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, ok, type Client } from "./helpers/relayerWorkflow";

/** Tells the gate which run started, in the order runs start (one sandbox: one at a time). */
const STARTED = "async function main(p) { await fetch(p.gate + p.label); return p.label }";
const METRICS_TOKEN = "m".repeat(40);

describe("fair share by payer over HTTP: accounts billed to one wallet share one share (issue 15, red team round 2)", function () {
  this.timeout(300_000);
  let stack: Stack;
  let gate: Awaited<ReturnType<typeof gateServer>>;
  before(async () => {
    gate = await gateServer();
    // One sandbox: every payer may hold it (its share: 1) and keep 10 runs waiting.
    stack = await startStack({ env: { VESTA_SANDBOX_WORKERS: "1", VESTA_RUN_QUEUE_PER_PAYER: "10", VESTA_METRICS_TOKEN: METRICS_TOKEN } });
  });
  after(async () => {
    await gate?.close();
    await stack?.stop();
  });

  /** A managed account with a usage key that may run STARTED, converted to be held (and paid for) by `admin`. */
  async function heldBy(admin: Awaited<ReturnType<typeof fundedWallet>>, name: string, issuedAt: number): Promise<Client> {
    const owner = await accountClient(stack, false, name);
    const group = await addGroup(owner, "runs", [], [await computeCid(STARTED)]);
    const runner = await addUsageKey(stack, owner, { name: "runner", execute_in_groups: [group] });
    const typed_data = buildTypedData("ConvertAccount", { chainId: stack.relayer.ctx.chain.chainId, address: admin.address, issuedAt });
    await ok(owner.post("/convert_to_chain_secured_account", { new_admin_wallet_address: admin.address, typed_data, signature: await signEnvelope(admin, typed_data) }));
    await (await stack.config.connect(admin).acceptAccountOwnership(owner.hash)).wait();
    return runner;
  }

  it("a payer with five accounts gets the turns of a payer with one, and one queue for all five", async function () {
    const wallet = await fundedWallet();
    const sybils = [];
    const now = Math.floor(Date.now() / 1000);
    for (let i = 1; i <= 5; i++) sybils.push(await heldBy(wallet, `sybil ${i}`, now - i)); // one signature per conversion (each is used once)
    await stack.relayer.ctx.executor.permissions.sync();
    const honest = await accountClient(stack, false, "honest");
    const blocker = await accountClient(stack, false, "blocker");
    const start = (c: Client, label: string) => c.post("/lit_action", { code: STARTED, js_params: { gate: gate.url, label } });
    const queued = () => stack.relayer.ctx.executor.sandboxLoad().queued;

    const runs = [start(blocker, "blocker")];
    await until(async () => (gate.arrived === 1 ? true : undefined), 60_000, "the blocker holding the one sandbox");
    for (const [i, s] of sybils.entries()) runs.push(start(s, `s${i + 1}a`), start(s, `s${i + 1}b`));
    runs.push(start(sybils[0], "s1c"));
    await until(async () => (queued() === 11 ? true : undefined), 60_000, "the five accounts' eleven runs waiting");
    // The payer's share (1) and queue (10) hold eleven runs over all its accounts: a twelfth, from any of them, is refused.
    expectError(await start(sybils[2], "s3c"), 429, "run_queue_full", "billed to this payer");
    for (let i = 1; i <= 11; i++) runs.push(start(honest, `h${i}`));
    await until(async () => (queued() === 22 ? true : undefined), 60_000, "the honest account's eleven runs waiting too");
    gate.open();
    const answers = await Promise.all(runs);
    expect(answers.map((a) => a.status)).to.deep.equal(Array(23).fill(200));

    const order = gate.paths.slice(1).map((p) => p.slice(1)); // the start order after the blocker
    expect(order).to.have.length(22);
    // Payers take turns: the honest payer's runs start every other time while the other payer has runs waiting.
    expect(order.slice(0, 10).filter((l) => l.startsWith("h"))).to.have.length(5);
    expect(order.slice(0, 10).filter((l, i) => l.startsWith("h") !== (i % 2 === 1))).to.deep.equal([]);
    // And the five accounts split their payer's turns in turn: each starts one before any starts a second.
    expect(new Set(order.filter((l) => l.startsWith("s")).slice(0, 5).map((l) => l.slice(0, 2))).size).to.equal(5);
  });

  it("GET /metrics breaks sandbox occupancy and queue depth down by account class: managed (API-mode accounts) and wallet (ChainSecured, billed to their admin wallet)", async function () {
    const wallet = await fundedWallet();
    const held = await heldBy(wallet, "held for metrics", Math.floor(Date.now() / 1000) - 100);
    await stack.relayer.ctx.executor.permissions.sync();
    const managed = await accountClient(stack, false, "managed for metrics");
    const own = await gateServer();
    const scrape = async () => {
      const text = await (await fetch(`${stack.relayer.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
      const value = (name: string, cls: string) => Number(new RegExp(`^${name}\\{account_class="${cls}"\\} (\\S+)$`, "m").exec(text)?.[1]);
      return { managed: [value("vesta_sandbox_class_busy", "managed"), value("vesta_sandbox_class_queue_depth", "managed")], wallet: [value("vesta_sandbox_class_busy", "wallet"), value("vesta_sandbox_class_queue_depth", "wallet")] };
    };
    try {
      expect(await scrape()).to.deep.equal({ managed: [0, 0], wallet: [0, 0] });
      const start = (c: Client, label: string) => c.post("/lit_action", { code: STARTED, js_params: { gate: own.url, label } });
      const runs = [start(managed, "m1")];
      await until(async () => (own.arrived === 1 ? true : undefined), 60_000, "the managed account holding the one sandbox");
      runs.push(start(held, "w1"), start(held, "w2"), start(managed, "m2"));
      await until(async () => (stack.relayer.ctx.executor.sandboxLoad().queued === 3 ? true : undefined), 60_000, "three runs waiting");
      expect(await scrape()).to.deep.equal({ managed: [1, 1], wallet: [0, 2] });
      own.open();
      expect((await Promise.all(runs)).map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
      expect(await scrape()).to.deep.equal({ managed: [0, 0], wallet: [0, 0] });
    } finally {
      await own.close();
    }
  });
});
