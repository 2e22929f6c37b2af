/**
 * Run history (issue 23 item 2): every action run is recorded per account (never its params, its
 * response or a key), GET /core/v1/list_runs answers the caller's account's runs a page at a time,
 * the account key sees every key's runs and a usage key only its own, and the history is bounded in
 * time (retention), count (per account) and row size.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import pino from "pino";
import { computeCid } from "../executor/cid";
import { hex32 } from "../protocol/usageKeyShape";
import { loadConfig } from "../relayer/config";
import { RunHistory, RUN_ERROR_BYTES, RUN_LOG_BYTES, type RunHistoryOptions, type RunRecord } from "../relayer/runs/history";
import type { StoreLocation } from "../storage";
import { dropTempDatabase, STORES, storeEnv, tempStore } from "./helpers/postgres";
import { COMMIT_EVERY_MS } from "../storage/commitPacer";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { startRelayer, type RunningRelayer } from "../relayer/server";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, expectError, failedRun, ok, type Client } from "./helpers/relayerWorkflow";

const HELLO = `async function main(params) { console.log("hello", params.who); return { greeting: "hi " + params.who }; }`;
const THROWS = `async function main() { console.log("about to throw"); throw new Error("boom at the edge"); }`;
const CHATTY = `async function main() { const line = "x".repeat(1000); for (let i = 0; i < 60; i++) console.log(i, line); throw new Error("e".repeat(20000)); }`;

type Page = { runs: Record<string, any>[]; next_cursor: string | null };

describe("run history: GET /core/v1/list_runs (issue 23)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  const run = (who: Client, body: unknown) => who.post("/lit_action", body);
  const list = (who: Client, query = ""): Promise<Page> => ok(who.get(`/list_runs${query}`));

  /** An account whose usage key `runner` may execute HELLO and THROWS (CHATTY too), and a second usage key `other` with the same rights. */
  async function fixture() {
    const owner = await accountClient(stack());
    const cids = { hello: await computeCid(HELLO), throws: await computeCid(THROWS), chatty: await computeCid(CHATTY) };
    const group = await addGroup(owner, "runs", [], Object.values(cids));
    const runner = await addUsageKey(stack(), owner, { name: "runner", execute_in_groups: [group] });
    const other = await addUsageKey(stack(), owner, { name: "other", execute_in_groups: [group] });
    return { owner, runner, other, cids };
  }

  it("records each run that ran (success and failure, code or CID, any key) with its key hash, CID, status, time, cost, logs and error", async function () {
    const { owner, runner, cids } = await fixture();
    const before = Date.now();
    await ok(run(runner, { code: HELLO, js_params: { who: "ada" } }));
    await failedRun(run(runner, { code: THROWS }));
    await ok(run(owner, { ipfs_id: cids.hello, js_params: { who: "bob" } }));
    const { runs, next_cursor } = await list(owner);
    expect(next_cursor).to.equal(null);
    expect(runs.map((r) => [r.key_hash, r.ipfs_id, r.status])).to.deep.equal([
      [hex32(owner.hash), cids.hello, "success"],
      [hex32(runner.hash), cids.throws, "failed"],
      [hex32(runner.hash), cids.hello, "success"],
    ]);
    const [byOwner, failed, first] = runs;
    expect(Object.keys(first).sort()).to.deep.equal(["cost_cents", "duration_ms", "error", "ipfs_id", "key_hash", "logs", "logs_truncated", "request_id", "run_id", "started_at", "status"]);
    expect(first.logs).to.equal("hello ada\n");
    expect(byOwner.logs).to.equal("hello bob\n");
    expect(first.error).to.equal(null);
    expect(failed.logs).to.match(/^about to throw\nError: boom at the edge\n/); // the run's logs as answered: the error is their last line
    expect(failed.error).to.match(/^Error: boom at the edge\n/).and.to.contain("at main");
    for (const r of runs) {
      expect(r.run_id).to.match(/^run_[0-9a-f-]{36}$/);
      expect(Date.parse(r.started_at)).to.be.within(before - 1, Date.now());
      expect(r.duration_ms).to.be.a("number").that.is.at.least(0);
      const unit = stack().relayer.ctx.billing!.config.secondCents;
      expect(r.cost_cents, "one started second at the per-second price").to.equal(unit * Math.max(1, Math.ceil(r.duration_ms / 1000)));
      expect(r.request_id).to.match(/^[0-9a-f-]{36}$/);
    }
    expect(new Set(runs.map((r) => r.run_id)).size).to.equal(3);
  });

  it("answers each run's id, duration and cost with its result (success and failure), as list_runs records them", async function () {
    const { runner } = await fixture();
    const good = await ok(run(runner, { code: HELLO, js_params: { who: "ada" } }));
    const bad = await failedRun(run(runner, { code: THROWS }));
    const unit = stack().relayer.ctx.billing!.config.secondCents;
    for (const r of [good, bad]) {
      expect(r.run_id).to.match(/^run_[0-9a-f-]{36}$/);
      expect(Number.isInteger(r.duration_ms) && r.duration_ms >= 0, `whole milliseconds: ${r.duration_ms}`).to.equal(true);
      expect(r.cost_cents).to.equal(unit * Math.max(1, Math.ceil(r.duration_ms / 1000)));
    }
    const { runs } = await list(runner);
    const byId = new Map(runs.map((r) => [r.run_id, r]));
    for (const r of [good, bad]) expect([byId.get(r.run_id)?.duration_ms, byId.get(r.run_id)?.cost_cents]).to.deep.equal([r.duration_ms, r.cost_cents]);
  });

  it("records no refused request (no permission, bad params, unknown CID) and stores no params, response or key", async function () {
    const { owner, runner, other } = await fixture();
    await expectError(run(runner, { code: `async function main() { return 1; }` }), 403, "not_permitted");
    await expectError(run(runner, { ipfs_id: await computeCid("never stored"), js_params: {} }), 403, "not_permitted");
    await expectError(run(owner, { ipfs_id: await computeCid("never stored") }), 404, "action_code_not_found");
    await expectError(run(runner, { code: HELLO, js_params: JSON.parse("[".repeat(100) + "]".repeat(100)) }), 400, "json_too_deep");
    expect((await list(owner)).runs).to.deep.equal([]);
    const secret = `secret-param-${Date.now()}`;
    // HELLO logs its param (logs are kept, as the issue asks) and answers it: neither the params nor the answer are stored.
    expect(await ok(run(runner, { code: HELLO, js_params: { who: secret } }))).to.deep.include({ response: { greeting: `hi ${secret}` } });
    expect((await list(owner)).runs.map((r) => r.logs)).to.deep.equal([`hello ${secret}\n`]);
    const file = fs.readFileSync(path.join(stack().relayerConfig.dataDir, "runs.sqlite"));
    const wal = fs.existsSync(path.join(stack().relayerConfig.dataDir, "runs.sqlite-wal")) ? fs.readFileSync(path.join(stack().relayerConfig.dataDir, "runs.sqlite-wal")) : Buffer.alloc(0);
    const stored = Buffer.concat([file, wal]).toString("latin1");
    for (const k of [owner.key, runner.key, other.key]) expect(stored, "no key value is stored").not.to.contain(k);
    expect(stored, "no response is stored").not.to.contain(`hi ${secret}`);
    expect(stored, "no params are stored").not.to.contain(`{"who":"${secret}"}`);
  });

  it("the account key sees every key's runs; a usage key only its own (403 owner_only when it names another key, nothing answered)", async function () {
    const { owner, runner, other } = await fixture();
    await ok(run(runner, { code: HELLO, js_params: { who: "r" } }));
    await ok(run(other, { code: HELLO, js_params: { who: "o" } }));
    expect((await list(owner)).runs.map((r) => r.logs)).to.deep.equal(["hello o\n", "hello r\n"]);
    expect((await list(owner, `?key_hash=${hex32(runner.hash)}`)).runs.map((r) => r.logs)).to.deep.equal(["hello r\n"]);
    expect((await list(runner)).runs.map((r) => r.logs)).to.deep.equal(["hello r\n"]);
    expect((await list(runner, `?key_hash=${hex32(runner.hash)}`)).runs.map((r) => r.logs)).to.deep.equal(["hello r\n"]);
    expect((await list(other)).runs.map((r) => r.logs)).to.deep.equal(["hello o\n"]);
    for (const named of [other.hash, owner.hash]) {
      await expectError(runner.get(`/list_runs?key_hash=${hex32(named)}`), 403, "owner_only", "own runs");
    }
  });

  it("answers only the caller's account: another account sees none of its runs, whatever it filters on or whichever cursor it sends", async function () {
    const { owner, runner, cids } = await fixture();
    for (let i = 0; i < 3; i++) await ok(run(runner, { code: HELLO, js_params: { who: `${i}` } }));
    const cursor = (await list(owner, "?limit=1")).next_cursor!;
    expect(cursor).to.be.a("string");
    const stranger = await accountClient(stack());
    const strangerKey = await addUsageKey(stack(), stranger, { name: "k" });
    for (const who of [stranger, strangerKey]) {
      for (const q of ["", `?key_hash=${hex32(runner.hash)}`, `?ipfs_id=${cids.hello}`, `?cursor=${cursor}`, "?status=success"]) {
        const r = await who.get(`/list_runs${q}`);
        if (who === strangerKey && q.startsWith("?key_hash")) expect([r.status, r.body.code]).to.deep.equal([403, "owner_only"]);
        else expect([r.status, r.body], `${q}`).to.deep.equal([200, { runs: [], next_cursor: null }]);
      }
    }
  });

  it("filters by CID and status, and pages newest first with a cursor: every run once, in order", async function () {
    const { owner, runner, cids } = await fixture();
    for (let i = 0; i < 5; i++) await ok(run(runner, { code: HELLO, js_params: { who: `${i}` } }));
    await failedRun(run(runner, { code: THROWS }));
    await failedRun(run(runner, { code: THROWS }));
    expect((await list(owner, "?status=failed")).runs.map((r) => r.ipfs_id)).to.deep.equal([cids.throws, cids.throws]);
    expect((await list(owner, `?ipfs_id=${cids.hello}&status=success`)).runs.map((r) => r.logs)).to.deep.equal(["hello 4\n", "hello 3\n", "hello 2\n", "hello 1\n", "hello 0\n"]);
    expect((await list(owner, `?ipfs_id=${cids.hello}&status=failed`)).runs).to.deep.equal([]);
    const seen: string[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null) {
      const page: Page = await list(owner, `?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.runs.length).to.be.at.most(3);
      seen.push(...page.runs.map((r) => r.run_id));
      cursor = page.next_cursor;
      pages++;
    }
    expect(pages).to.equal(3);
    expect(seen).to.deep.equal((await list(owner, "?limit=100")).runs.map((r) => r.run_id));
    expect(new Set(seen).size).to.equal(7);
  });

  it("400 for a bad query (page size past 100, a bad cursor, filter values that are not a hash, a CID or a status, unknown fields): every filter is a bound value", async function () {
    const { owner, runner } = await fixture();
    await ok(run(runner, { code: HELLO, js_params: { who: "x" } }));
    const bad = [
      "?limit=101",
      "?limit=0",
      "?limit=abc",
      "?cursor=0",
      "?cursor=-1",
      "?cursor=1e9",
      "?cursor=9999999999999999",
      "?status=success'%20OR%20'1'='1",
      "?status=running",
      `?key_hash=${encodeURIComponent("0x00' OR 1=1 --")}`,
      "?key_hash=0x1234",
      `?ipfs_id=${encodeURIComponent("Qm' OR 1=1 --")}`,
      `?ipfs_id=${encodeURIComponent("bafy\u0000")}`,
      "?limit=1&limit=2",
      "?page_number=1",
      "?account=0x01",
    ];
    for (const q of bad) await expectError(owner.get(`/list_runs${q}`), 400, "invalid_request");
    expect((await list(owner)).runs).to.have.length(1);
  });

  it("is in the typed client: the page and its items are typed from the OpenAPI document", async function () {
    const { owner, runner, cids } = await fixture();
    await ok(run(runner, { code: HELLO, js_params: { who: "typed" } }));
    const { createVestaClient, unwrap } = await import("../client");
    const vesta = createVestaClient({ baseUrl: stack().relayer.url, apiKey: owner.key });
    const page = await unwrap(vesta.GET("/core/v1/list_runs", { params: { query: { ipfs_id: cids.hello, status: "success", limit: 5 } } }));
    const first: { ipfs_id: string; logs: string; cost_cents: number } = page.runs[0];
    expect([first.ipfs_id, first.logs, page.next_cursor]).to.deep.equal([cids.hello, "hello typed\n", null]);
  });

  it("401 without a key or with an unknown one", async function () {
    const { call } = await import("./helpers/relayer");
    await expectError(call(stack(), "GET", "/list_runs"), 401, "invalid_api_key");
    await expectError(call(stack(), "GET", "/list_runs", { key: "not-a-key" }), 401, "invalid_api_key");
  });

  it("keeps at most the first 16 KiB of logs (logs_truncated) and 8 KiB of an error", async function () {
    const { owner, runner } = await fixture();
    await failedRun(run(runner, { code: CHATTY }));
    const [r] = (await list(owner)).runs;
    expect(Buffer.byteLength(r.logs)).to.be.within(RUN_LOG_BYTES - 1100, RUN_LOG_BYTES);
    expect(r.logs.startsWith(`0 ${"x".repeat(1000)}\n1 `)).to.equal(true);
    expect(r.logs_truncated).to.equal(true);
    expect(Buffer.byteLength(r.error)).to.be.at.most(RUN_ERROR_BYTES);
    expect(r.error.startsWith("Error: eee")).to.equal(true);
  });
});

describe("run history on PostgreSQL: every relayer on one database lists the runs any of them recorded", function () {
  this.timeout(180_000);
  let stack: Stack | undefined;
  let second: RunningRelayer | undefined;
  let otherDir: string;
  before(async function () {
    stack = await startStack({ payerCount: 1, env: await storeEnv(this, "PostgreSQL") });
    otherDir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-replica-"));
  });
  after(async () => {
    await second?.close();
    await stack?.stop();
    await dropTempDatabase(stack?.relayerConfig.databaseUrl);
    if (otherDir) fs.rmSync(otherDir, { recursive: true, force: true });
  });

  it("a run through one replica is listed by the other; the account boundary holds there too", async function () {
    const { apiKey } = await newAccount(stack!);
    const ran = await call(stack!, "POST", "/lit_action", { key: apiKey, body: { code: HELLO, js_params: { who: "replica" } } });
    expect(ran.status).to.equal(200);
    second = await startRelayer({ ...stack!.relayerConfig, dataDir: otherDir, localRootSecretFile: path.join(otherDir, "root-secret") }, pino({ level: "silent" }));
    const listed = async (key: string) => (await fetch(`${second!.url}/core/v1/list_runs`, { headers: { "x-api-key": key } })).json();
    const page = await listed(apiKey);
    expect(page.runs.map((r: { logs: string; ipfs_id: string }) => [r.logs, r.ipfs_id])).to.deep.equal([["hello replica\n", ran.body.ipfs_id]]);
    const other = await newAccount(stack!);
    expect(await listed(other.apiKey)).to.deep.equal({ runs: [], next_cursor: null });
  });
});

for (const store of STORES)
describe(`run history store: retention, per-account cap (${store})`, function () {
  this.timeout(60_000);
  let where: StoreLocation;
  let drop: (() => Promise<void>) | undefined;
  beforeEach(async function () {
    ({ where, drop } = await tempStore(this, store, "runs.sqlite"));
  });
  afterEach(async () => drop?.());
  const open = (opts: RunHistoryOptions) => RunHistory.open(where, opts);

  const A = 0xaan;
  const B = 0xbbn;
  const record = (h: RunHistory, account: bigint, i: number, startedAt: number): void =>
    void h.record({ id: `run_${account}_${i}`, accountHash: account, keyHash: 7n, cid: "QmX", status: "success", startedAt, durationMs: 5, costCents: 1, logs: `${i}`, error: null, requestId: null } satisfies RunRecord);
  const ids = async (h: RunHistory, account: bigint) => (await h.list(account, { limit: 100 })).runs.map((r) => r.run_id);
  /** Every run of `account` listed, page by page. */
  async function all(h: RunHistory, account: bigint): Promise<number> {
    let n = 0;
    for (let cursor: number | undefined; ; ) {
      const page = await h.list(account, { limit: 100, cursor });
      n += page.runs.length;
      if (!page.next_cursor) return n;
      cursor = Number(page.next_cursor);
    }
  }

  it("keeps at most perAccount runs per account, dropping the account's oldest; other accounts keep theirs", async function () {
    const h = await open({ retentionMs: 3600_000, perAccount: 3 });
    for (let i = 0; i < 4; i++) record(h, B, i, Date.now());
    for (let i = 0; i < 10; i++) record(h, A, i, Date.now());
    expect(await ids(h, A)).to.deep.equal(["run_170_9", "run_170_8", "run_170_7"]);
    expect(await ids(h, B)).to.deep.equal(["run_187_3", "run_187_2", "run_187_1"]);
    for (let i = 10; i < 12; i++) {
      record(h, A, i, Date.now());
      await h.flush(); // each in its own commit too
    }
    expect(await ids(h, A)).to.deep.equal(["run_170_11", "run_170_10", "run_170_9"]);
    await h.close();
  });

  it("a lone run's record commits at once (never paced); records of concurrent runs share a commit, and the next commit waits for the pacing interval", async function () {
    const h = await open({ retentionMs: 3600_000, perAccount: 1000 });
    const one = (i: number) => h.record({ id: `run_lone_${i}`, accountHash: A, keyHash: 7n, cid: "QmX", status: "success", startedAt: Date.now(), durationMs: 5, costCents: 1, logs: "", error: null, requestId: null });
    const t0 = performance.now();
    for (let i = 0; i < 50; i++) await one(i); // a lone client's runs: each answer waits for its record's commit
    const elapsed = performance.now() - t0;
    expect(elapsed, `50 lone records took ${elapsed.toFixed(0)} ms`).to.be.lessThan(30 * COMMIT_EVERY_MS);
    await h.close();
    const paced = await open({ retentionMs: 3600_000, perAccount: 1000, commitEveryMs: 600 });
    const rec = (i: number) => paced.record({ id: `run_paced_${i}`, accountHash: B, keyHash: 7n, cid: "QmX", status: "success", startedAt: Date.now(), durationMs: 5, costCents: 1, logs: "", error: null, requestId: null });
    await Promise.all([rec(0), rec(1), rec(2)]); // concurrent runs: one commit
    const t1 = performance.now();
    await rec(3);
    expect(performance.now() - t1, "the commit after one of three waits for the interval").to.be.greaterThan(450);
    const t2 = performance.now();
    await rec(4);
    expect(performance.now() - t2, "after a commit of one, no wait").to.be.lessThan(300);
    expect(await all(paced, B)).to.equal(5);
    await paced.close();
  });

  it("flush() (and so list()) answers once what was recorded before it is committed, while records keep coming", async function () {
    const h = await open({ retentionMs: 3600_000, perAccount: 100_000 });
    // Writers that record again the moment their last record is committed (so one is always
    // pending), each up to EACH records: a flush that waited for nothing to be pending would answer
    // only once they all stopped.
    const EACH = 250;
    let made = 0;
    const writer = async (w: number) => {
      for (let i = 0; i < EACH; i++) {
        made++;
        await h.record({ id: `run_busy_${w}_${i}`, accountHash: A, keyHash: 7n, cid: "QmX", status: "success", startedAt: Date.now(), durationMs: 5, costCents: 1, logs: "", error: null, requestId: null });
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    try {
      await new Promise((ok) => setTimeout(ok, 20));
      const before = made;
      let madeWhenListed = -1;
      const listing = h.list(A, { limit: 1 }).then((page) => {
        madeWhenListed = made;
        return page;
      });
      await Promise.all(writers);
      const page = await listing;
      expect(before, "the writers were under way").to.be.lessThan(4 * EACH);
      expect(madeWhenListed, "list() waited for the writers to stop").to.be.lessThan(4 * EACH);
      expect(page.runs).to.have.length(1);
      expect(await all(h, A)).to.equal(4 * EACH);
    } finally {
      await Promise.allSettled(writers);
      await h.close();
    }
  });

  it("past a cap of 100 or more, trims in batches of 1 % of it: never more than the cap and 1 %, and back to the cap", async function () {
    const h = await open({ retentionMs: 3600_000, perAccount: 200 });
    for (let i = 0; i < 202; i++) {
      record(h, A, i, Date.now());
      if (i % 50 === 0) await h.flush();
    }
    expect(await all(h, A)).to.equal(202); // within 1 %
    record(h, A, 202, Date.now());
    expect(await all(h, A)).to.equal(200); // past it: the oldest 3 dropped at once
    expect((await ids(h, A))[0]).to.equal("run_170_202");
    await h.close();
  });

  it("the cap counts what is kept: runs pruned past the retention leave room for as many new ones", async function () {
    const now = 1_500_000_000_000;
    const h = await open({ retentionMs: 60_000, perAccount: 3, now: () => now });
    for (let i = 0; i < 3; i++) record(h, A, i, now - 120_000);
    record(h, A, 3, now);
    expect(await h.prune()).to.equal(2); // the cap dropped run 0 already
    for (let i = 4; i < 6; i++) record(h, A, i, now);
    expect(await ids(h, A)).to.deep.equal(["run_170_5", "run_170_4", "run_170_3"]);
    await h.close();
  });

  it("never lists a run past the retention, and prune() deletes those rows (in chunks of 5,000); retention 0 records nothing", async function () {
    let now = 1_000_000_000_000;
    const h = await open({ retentionMs: 60_000, perAccount: 100_000, now: () => now });
    for (let i = 0; i < 6_500; i++) record(h, A, i, now - (i < 6_000 ? 120_000 : 0)); // 6,000 old (more than one chunk), 500 recent
    expect((await h.list(A, { limit: 100 })).runs).to.have.length(100);
    const aborted = new AbortController();
    aborted.abort();
    expect(await h.prune(aborted.signal), "stopped before its first chunk").to.equal(0);
    expect(await h.prune()).to.equal(6_000);
    now += 30_000;
    expect(await h.prune()).to.equal(0);
    expect(await all(h, A)).to.equal(500);
    now += 60_000; // all past the retention: listed no more, before any prune
    expect(await h.list(A, { limit: 100 })).to.deep.equal({ runs: [], next_cursor: null });
    await h.close();
    const off = await open({ retentionMs: 0, perAccount: 100 });
    record(off, B, 1, Date.now());
    expect(await off.prune(), "history off: what was kept goes").to.equal(500);
    expect(await ids(off, B)).to.deep.equal([]);
    await off.close();
  });

  it("keeps any text the action logged (NUL and lone surrogates become U+FFFD on both databases)", async function () {
    const h = await open({ retentionMs: 3600_000, perAccount: 10 });
    await h.record({ id: "run_text", accountHash: A, keyHash: 7n, cid: "QmX", status: "failed", startedAt: Date.now(), durationMs: 1, costCents: 0, logs: "a\u0000b\ud800c é", error: "E\u0000", requestId: null });
    const [r] = (await h.list(A, { limit: 1 })).runs;
    expect([r.logs, r.error, r.logs_truncated]).to.deep.equal(["a\ufffdb\ufffdc é", "E\ufffd", false]);
    await h.close();
  });

  it("start() prunes at once and stops on the signal", async function () {
    const now = 2_000_000_000_000;
    const h = await open({ retentionMs: 1000, perAccount: 10, now: () => now });
    record(h, A, 1, now - 5000);
    record(h, A, 2, now);
    const abort = new AbortController();
    h.start(abort.signal, pino({ level: "silent" }));
    for (let t = 0; t < 200 && (await ids(h, A)).length > 1; t++) await new Promise((r) => setTimeout(r, 25));
    abort.abort();
    expect(await ids(h, A)).to.deep.equal(["run_170_2"]);
    await h.close();
  });
});

describe("run history: configuration", function () {
  it("VESTA_RUN_HISTORY_DAYS and VESTA_RUN_HISTORY_PER_ACCOUNT: defaults 30 days and 10,000; bad values stop the boot naming them", function () {
    const base = { VESTA_MODE: "development", VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: "0x" + "11".repeat(32) };
    expect(loadConfig(base).runHistory).to.deep.equal({ retentionMs: 30 * 24 * 3600_000, perAccount: 10_000 });
    expect(loadConfig({ ...base, VESTA_RUN_HISTORY_DAYS: "0", VESTA_RUN_HISTORY_PER_ACCOUNT: "5" }).runHistory).to.deep.equal({ retentionMs: 0, perAccount: 5 });
    for (const [name, value] of [["VESTA_RUN_HISTORY_DAYS", "-1"], ["VESTA_RUN_HISTORY_DAYS", "3651"], ["VESTA_RUN_HISTORY_DAYS", "1.5"], ["VESTA_RUN_HISTORY_PER_ACCOUNT", "0"], ["VESTA_RUN_HISTORY_PER_ACCOUNT", "x"]]) {
      expect(() => loadConfig({ ...base, [name]: value }), `${name}=${value}`).to.throw(new RegExp(name));
    }
  });
});
