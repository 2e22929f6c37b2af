import path from "node:path";
import Database from "better-sqlite3";
import { expect } from "chai";
import { CID } from "multiformats/cid";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { until } from "./helpers/triggers";
import { gateServer } from "./helpers/network";
import { newCid } from "./helpers/relayerWorkflow";
import { expectError } from "./helpers/relayerChecks";
import { hex32 } from "../protocol/usageKeyShape";
import { hashKey } from "../relayer/http/auth";
import type * as CidModule from "../executor/cid";

const MiB = 1024 * 1024;
const MAX_CODE = 10 * MiB;
/** Code past the store's in-memory cache (a quarter of 32 MB per item): every read of it comes from the file. */
const BIG = `async function main() { return "big" }\n/*${"y".repeat(9 * MiB)}*/`;
/** Holds its sandbox until the gate opens. */
const GATED = "async function main(p) { await fetch(p.gate); return p.label }";

// The module object the executor and the code store call computeCid through: counting its calls counts the hashes.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const cidModule = require("../executor/cid") as { computeCid: typeof CidModule.computeCid };

describe("run admission: each refusal before the work it spares (issue 15, red team round 2)", function () {
  this.timeout(300_000);
  let stack: Stack;
  let gate: Awaited<ReturnType<typeof gateServer>>;
  let bigCid: string;
  let funded: string;
  const work = { hashes: 0, reads: 0 };
  const original = cidModule.computeCid;

  before(async () => {
    gate = await gateServer();
    stack = await startStack({
      env: {
        VESTA_SANDBOX_WORKERS: "2", // each payer (and account) may hold 1 at a time
        VESTA_RUN_QUEUE_PER_PAYER: "1",
        VESTA_RUN_QUEUE_PER_ACCOUNT: "1",
        VESTA_FREE_CREDIT_CENTS: "0", // accounts start without credit; `fund` tops one up
        VESTA_ACTION_MAX_CODE_BYTES: String(MAX_CODE),
        VESTA_CID_RATE_LIMIT: "4",
        VESTA_CID_LARGE_RATE_LIMIT: "2",
        VESTA_CID_LARGE_TOTAL_RATE_LIMIT: "3",
        VESTA_TRUST_PROXY: "loopback", // the CID test names its clients in X-Forwarded-For
      },
    });
    funded = await fundedAccount("storer");
    const stored = await run(funded, { code: BIG });
    expect([stored.status, stored.body.response]).to.deep.equal([200, "big"]);
    bigCid = stored.body.ipfs_id;
    cidModule.computeCid = (code) => (work.hashes++, original(code));
    countReads();
  });
  after(async () => {
    cidModule.computeCid = original;
    await gate?.close();
    await stack?.stop();
  });
  beforeEach(() => Object.assign(work, { hashes: 0, reads: 0 }));

  /** Counts the executor's reads of stored code (again after a restart, which makes a new store). */
  function countReads() {
    const codes = stack.relayer.ctx.executor.codes;
    const get = codes.get.bind(codes);
    codes.get = (cid) => (work.reads++, get(cid));
  }
  const run = (key: string, body: unknown) => call(stack, "POST", "/lit_action", { key, body });
  const balance = async (key: string) => (await call(stack, "GET", "/billing/balance", { key })).body.credit_cents as number;
  async function fundedAccount(name: string): Promise<string> {
    const { apiKey } = await newAccount(stack, name);
    const r = await call(stack, "POST", "/billing/free_credit", { key: apiKey, body: { amount_cents: 10_000 } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return apiKey;
  }
  const payerOf = (key: string) => `account:${hex32(hashKey(key))}`;
  /** What the code store's file holds: its rows and their bytes. */
  const storedRows = async () => {
    const db = new Database(path.join(stack.relayerConfig.dataDir, "actions.sqlite"), { readonly: true });
    try {
      return db.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(code)), 0) AS bytes FROM action_code").get();
    } finally {
      db.close();
    }
  };

  it("refuses with 400 an ipfs_id that is not an action's CID, before any permission, credit or code work", async function () {
    const v1 = CID.parse(bigCid).toV1().toString();
    const notActionCids = ["junk", `Qm${"1".repeat(44)}`, await newCid(), ` ${bigCid}`, `${bigCid}\n`, v1.toUpperCase(), `${bigCid}x`];
    for (const ipfs_id of notActionCids) {
      for (const path of ["/lit_action", "/check_execute_permission"]) {
        const r = await call(stack, "POST", path, { key: funded, body: { ipfs_id } });
        expectError(r, 400, "invalid_request", "ipfs_id");
      }
    }
    expect(work).to.deep.equal({ hashes: 0, reads: 0 });
    // The same identity spelled as a CIDv1 (dag-pb, SHA2-256) is an action CID: it names no stored code here.
    const unknownV1 = CID.parse(await original(`async function main() { return ${Date.now()} }`)).toV1().toString();
    expectError(await run(funded, { ipfs_id: unknownV1 }), 404, "action_code_not_found");
  });

  it("a key that may not run the named CID: 403, the stored code neither read nor hashed", async function () {
    const usage = await call(stack, "POST", "/add_usage_api_key", { key: funded, body: { name: "nothing", execute_in_groups: [] } });
    expectError(await run(usage.body.usage_api_key, { ipfs_id: bigCid }), 403, "not_permitted");
    expect(work).to.deep.equal({ hashes: 0, reads: 0 });
  });

  it("no credit: 402 before the stored code is read or inline code hashed, nothing stored, nothing charged", async function () {
    const { apiKey: broke } = await newAccount(stack, "broke");
    const stored = await storedRows();
    expectError(await run(broke, { ipfs_id: bigCid }), 402, "payment_required");
    const fresh = `async function main() { return "fresh" }\n/*${"z".repeat(2 * MiB)}*/`;
    expectError(await run(broke, { code: fresh }), 402, "payment_required");
    expect(work).to.deep.equal({ hashes: 0, reads: 0 });
    expect(await storedRows()).to.deep.equal(stored);
    expect(await stack.relayer.ctx.executor.codes.heldBy(payerOf(broke))).to.deep.equal({ bytes: 0, cids: 0 });
    expect(await balance(broke)).to.equal(0);
  });

  it("a full share: 429 before any code is read, hashed or stored; another payer's run goes at once", async function () {
    const gated = (label: string) => run(funded, { code: GATED, js_params: { gate: gate.url, label } });
    const load = () => stack.relayer.ctx.executor.sandboxLoad();
    const held = [gated("running")];
    await until(async () => (gate.arrived === 1 ? true : undefined), 60_000, "a run holding the account's one sandbox");
    held.push(gated("waiting"));
    await until(async () => (load().queued === 1 ? true : undefined), 60_000, "a second run waiting: the queue's one place");
    try {
      const stored = await storedRows();
      Object.assign(work, { hashes: 0, reads: 0 });
      expectError(await run(funded, { ipfs_id: bigCid }), 429, "run_queue_full");
      const fresh = `async function main() { return "refused" }\n/*${"q".repeat(MiB)}*/`;
      expectError(await run(funded, { code: fresh }), 429, "run_queue_full");
      expect(await storedRows()).to.deep.equal(stored);
      expect(work).to.deep.equal({ hashes: 0, reads: 0 });

      const other = await fundedAccount("other payer");
      const r = await run(other, { code: "async function main() { return 'other' }" });
      expect([r.status, r.body.response]).to.deep.equal([200, "other"]);
    } finally {
      gate.open();
    }
    expect((await Promise.all(held)).map((h) => [h.status, h.body.response])).to.deep.equal([
      [200, "running"],
      [200, "waiting"],
    ]);
  });

  it("verifies stored code once per process: a named CID costs no hash again (after a restart, one)", async function () {
    for (let i = 0; i < 3; i++) expect((await run(funded, { ipfs_id: bigCid })).body.response).to.equal("big");
    expect(work).to.deep.equal({ hashes: 0, reads: 3 });
    await stack.restart();
    countReads();
    for (let i = 0; i < 3; i++) expect((await run(funded, { ipfs_id: bigCid })).body.response).to.equal("big");
    expect(work).to.deep.equal({ hashes: 1, reads: 6 });
  });

  it("a bad key: 401 before the body is read (a body past the route's limit is not even measured)", async function () {
    const over = JSON.stringify({ code: "x".repeat(MAX_CODE + 200 * 1024) });
    const r = await call(stack, "POST", "/lit_action", { key: "not-a-key", rawBody: over });
    expectError(r, 401, "invalid_api_key");
  });

  // Last: it spends this client's CID-route budget for the minute.
  it("get_action_ipfs_id: a body past the code limit is 413; each client is limited per minute, bodies over 1 MiB more, and those from all clients together", async function () {
    const cidOf = (code: string, client: string) => call(stack, "POST", "/get_action_ipfs_id", { rawBody: JSON.stringify(code), headers: { "x-forwarded-for": client } });
    const [a, b, c] = ["203.0.113.1", "203.0.113.2", "203.0.113.3"];
    expectError(await cidOf("x".repeat(MAX_CODE + 65 * 1024), a), 413, "body_too_large");
    const large = `async function main() {}\n/*${"l".repeat(1.5 * MiB)}*/`;
    const first = await cidOf(large, a);
    expect([first.status, first.body]).to.deep.equal([200, await original(large)]);
    expectError(await cidOf(large, a), 429, "rate_limited", "over 1 MiB from this address");
    expect((await cidOf(large, b)).status).to.equal(200); // another client: its own budget; the third large body of all
    expectError(await cidOf(large, c), 429, "rate_limited", "over 1 MiB from all clients together");
    expect((await cidOf("async function main() {}", a)).status).to.equal(200); // small bodies: a's fourth call
    expectError(await cidOf("async function main() {}", a), 429, "rate_limited", "CID computations from this address");
  });
});
