/**
 * Relayer replicas (issue 20 item 3): one relayer in this process and two relayer processes
 * (relayer/main.ts) on one chain and one PostgreSQL, each with its own payer keys and data
 * directory, sharing the root secret (one key custody). A mixed load goes round-robin over them,
 * one process is killed with SIGKILL mid-load, and nothing acknowledged is lost or doubled: usage
 * keys on chain, debits at the provider (local billing's records), runs in the history. Admissions
 * spread over the replicas cannot spend more than the balance, and a usage key removed through one
 * replica is refused by another once its cache follows the chain.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { computeCid } from "../executor/cid";
import { chainKeys, newAccount, startStack, usageKeyFor, type Stack } from "./helpers/relayer";
import { dropTempDatabase, tempDatabase } from "./helpers/postgres";
import { rawQuery } from "./helpers/rawDb";
import { until } from "./helpers/triggers";
import { startReplica, stopReplicas, type Replica } from "./helpers/replica";

const SHORT = `async function main() { return "ran " + Date.now(); }`;
const LONG = `async function main() { await new Promise((r) => setTimeout(r, 1500)); return "long"; }`;
/** Every replica's settings beyond the test stack's: 10 s of run reserved at 1 cent a second, 40 cents for a new account. */
const SHARED = { VESTA_ACTION_TIMEOUT_MS: "10000", VESTA_PRICE_PER_SECOND_CENTS: "1", VESTA_FREE_CREDIT_CENTS: "40", VESTA_FREE_CREDIT_CAP_CENTS: "100000", VESTA_BILLING_SETTLE_MS: "1000" };

type Reply = { status: number; body: any; requestId: string | null };
/** One API call to the relayer at `base`; a connection that fails (a killed replica) answers status 0. */
async function api(base: string, method: "GET" | "POST", p: string, key: string | undefined, body?: unknown): Promise<Reply> {
  try {
    const res = await fetch(`${base}/core/v1${p}`, {
      method,
      headers: { ...(key ? { "x-api-key": key } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, requestId: res.headers.get("x-request-id") };
  } catch (err) {
    return { status: 0, body: (err as Error).message, requestId: null };
  }
}

describe("relayer replicas on one PostgreSQL and one chain", function () {
  this.timeout(300_000);
  let stack: Stack | undefined;
  let databaseUrl: string;
  const dirs: string[] = [];
  const replicas: Replica[] = [];

  before(async function () {
    databaseUrl = (await tempDatabase(this)).url;
    // Six payers on chain: two per replica.
    stack = await startStack({ payerCount: 6, env: { ...SHARED, DATABASE_URL: databaseUrl, VESTA_PAYER_KEYS: chainKeys(1, 2).join(",") } });
    replicas.push({ url: stack.relayer.url, out: () => "" });
    for (const i of [1, 2]) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-replica-"));
      dirs.push(dir);
      replicas.push(await startReplica(stack, { databaseUrl, payerKeys: chainKeys(1 + 2 * i, 2), dataDir: dir, env: SHARED }));
    }
  });
  after(async () => {
    await stopReplicas(replicas);
    await stack?.stop();
    await dropTempDatabase(databaseUrl);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("a usage key removed through one replica is refused by another once its permission cache follows the chain", async function () {
    const [a, b, c] = replicas;
    const { apiKey } = await newAccount({ ...stack!, api: `${a.url}/core/v1` });
    expect((await api(a.url, "POST", "/billing/free_credit", apiKey, { amount_cents: 1000 })).status).to.equal(200);
    const { usageKey } = await usageKeyFor({ ...stack!, api: `${b.url}/core/v1` }, apiKey, [SHORT]);
    const run = () => api(c.url, "POST", "/lit_action", usageKey, { code: SHORT });
    const before = await run();
    expect(before.status, JSON.stringify(before.body)).to.equal(200); // c has read the key's permissions (and caches them)
    const removed = await api(a.url, "POST", "/remove_usage_api_key", apiKey, { usage_api_key: usageKey });
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    const t0 = Date.now();
    const refused = await until(
      async () => {
        const r = await run();
        return r.status !== 200 && r;
      },
      10_000,
      "replica c to refuse the removed key",
    );
    // The first refusal may be 403 not_permitted: a key lookup started before c saw the removal can
    // still answer "active" while the key's grants, read after it, are gone. Refused either way; the
    // key itself is unknown (401) once c's cache follows.
    expect([[401, "invalid_api_key"], [403, "not_permitted"]], JSON.stringify(refused.body)).to.deep.include([refused.status, refused.body.code]);
    expect(Date.now() - t0, "within a few permission polls").to.be.below(5_000);
    const unknown = await until(
      async () => {
        const r = await run();
        return r.status === 401 && r;
      },
      10_000,
      "replica c to answer the removed key as unknown",
    );
    expect(unknown.body.code).to.equal("invalid_api_key");
    expect((await api(b.url, "POST", "/lit_action", usageKey, { code: SHORT })).status, "and by b").to.equal(401);
  });

  it("an action removed from a group through one replica is refused (403) to the group's usage key by another within a few permission polls, and the other action still runs", async function () {
    const [a, b, c] = replicas;
    const OTHER = `async function main() { return "other"; }`;
    const { apiKey } = await newAccount({ ...stack!, api: `${a.url}/core/v1` });
    expect((await api(a.url, "POST", "/billing/free_credit", apiKey, { amount_cents: 1000 })).status).to.equal(200);
    const { usageKey, groupId } = await usageKeyFor({ ...stack!, api: `${a.url}/core/v1` }, apiKey, [SHORT, OTHER]);
    const run = (code: string) => api(c.url, "POST", "/lit_action", usageKey, { code });
    for (const code of [SHORT, OTHER]) expect((await run(code)).status, "c has read the group's actions (and caches them)").to.equal(200);
    const hashed = keccak256(toUtf8Bytes(await computeCid(SHORT)));
    const removed = await api(b.url, "POST", "/remove_action_from_group", apiKey, { group_id: groupId, hashed_cid: hashed });
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    const t0 = Date.now();
    const refused = await until(
      async () => {
        const r = await run(SHORT);
        return r.status !== 200 && r;
      },
      10_000,
      "replica c to refuse the removed action",
    );
    expect([refused.status, refused.body.code]).to.deep.equal([403, "not_permitted"]);
    expect(Date.now() - t0, "within a few permission polls (VESTA_PERMISSION_POLL_MS 100 here)").to.be.below(5_000);
    expect((await run(OTHER)).status, "the action still in the group runs").to.equal(200);
    expect((await api(a.url, "POST", "/lit_action", usageKey, { code: SHORT })).body.code, "and a refuses it too").to.equal("not_permitted");
  });

  it("admissions spread over the replicas never spend more than the balance (the overdraft rule across processes)", async function () {
    const [a] = replicas;
    const { apiKey } = await newAccount({ ...stack!, api: `${a.url}/core/v1` }); // 40 cents: four runs of 10 s reserved
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => api(replicas[i % 3].url, "POST", "/lit_action", apiKey, { code: LONG })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200), JSON.stringify(statuses)).to.have.length(4);
    expect(statuses.filter((s) => s === 402)).to.have.length(11);
    const charged = (await api(a.url, "GET", "/list_runs?limit=100", apiKey)).body.runs.map((r: { cost_cents: number }) => r.cost_cents);
    expect(charged, "each of the 4 runs charged its started seconds (1.5 s: 2, 3 on a slow machine)").to.have.length(4);
    const balance = await api(a.url, "GET", "/billing/balance", apiKey);
    expect(balance.body.credit_cents).to.equal(40 - charged.reduce((x: number, y: number) => x + y, 0));
    expect(balance.body.credit_cents).to.be.at.least(0);
  });

  it("a mixed load round-robin with one replica killed (SIGKILL) mid-load loses and doubles nothing acknowledged", async function () {
    const [a, b, c] = replicas;
    const { apiKey } = await newAccount({ ...stack!, api: `${a.url}/core/v1` });
    expect((await api(a.url, "POST", "/billing/free_credit", apiKey, { amount_cents: 5000 })).status).to.equal(200);
    const before = await api(a.url, "GET", "/billing/balance", apiKey);
    const cids: string[] = [];
    const keys: { name: string; status: number }[] = [];
    const runs: { via: number; status: number; requestId: string | null; cid: string }[] = [];
    let killedAt = -1;
    const ops = 36;
    for (let i = 0; i < ops; i++) {
      const via = i % 3;
      const base = replicas[via].url;
      const batch: Promise<unknown>[] = [];
      if (i === 12) {
        // Mid-load (this round's usage key write through c is under way): c is killed the moment it
        // has acknowledged a run, so that run's record must have been committed before its answer.
        killedAt = runs.length;
        batch.push(
          api(c.url, "POST", "/lit_action", apiKey, { code: SHORT }).then((r) => {
            c.child!.kill("SIGKILL");
            runs.push({ via: 2, status: r.status, requestId: r.requestId, cid: r.body?.ipfs_id });
            expect(r.status, "c acknowledged the run it was killed after").to.equal(200);
          }),
        );
      }
      // Store an action through one replica, run it by its CID through the next.
      const code = `async function main() { return "action ${i}"; }`;
      batch.push(
        api(base, "POST", "/lit_action", apiKey, { code }).then(async (r) => {
          runs.push({ via, status: r.status, requestId: r.requestId, cid: r.body?.ipfs_id });
          if (r.status !== 200) return;
          cids.push(r.body.ipfs_id);
          const next = (via + 1) % 3;
          const again = await api(replicas[next].url, "POST", "/lit_action", apiKey, { ipfs_id: r.body.ipfs_id });
          runs.push({ via: next, status: again.status, requestId: again.requestId, cid: r.body.ipfs_id });
        }),
      );
      // A usage key written through another.
      const name = `k${i}`;
      batch.push(api(replicas[(via + 2) % 3].url, "POST", "/add_usage_api_key", apiKey, { name, description: "", execute_in_groups: [] }).then((r) => void keys.push({ name, status: r.status })));
      await Promise.all(batch);
    }
    const survived = (via: number) => via !== 2;
    // Every request to a and b was answered 200; those to c after the kill got no answer.
    for (const r of runs.filter((x) => survived(x.via))) expect(r.status, JSON.stringify(r)).to.equal(200);
    expect(keys.filter((k) => k.status !== 200 && k.status !== 0), JSON.stringify(keys)).to.deep.equal([]);

    // Writes: every acknowledged usage key is on chain, once; one c never answered may have landed (once) or not.
    const listed = await api(a.url, "GET", "/list_api_keys?page_size=100", apiKey);
    const names: string[] = listed.body.map((k: { name: string }) => k.name);
    expect(names.length, "one page holds them all").to.be.below(100);
    expect(new Set(names).size, "no key twice").to.equal(names.length);
    for (const k of keys.filter((x) => x.status === 200)) expect(names, k.name).to.include(k.name);
    for (const n of names) expect(keys.map((k) => k.name)).to.include(n);

    // Actions: every stored CID runs through every surviving replica.
    for (const cid of cids.slice(0, 5)) for (const r of [a, b]) expect((await api(r.url, "POST", "/lit_action", apiKey, { ipfs_id: cid })).status).to.equal(200);
    const extraRuns = Math.min(cids.length, 5) * 2;

    // Runs: each acknowledged, by a survivor or by c before it was killed, is in the history once.
    const history: { request_id: string | null; cost_cents: number }[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await api(a.url, "GET", `/list_runs?limit=100${cursor ? `&cursor=${cursor}` : ""}`, apiKey);
      history.push(...page.body.runs);
      cursor = page.body.next_cursor;
    } while (cursor);
    const ids = history.map((h) => h.request_id);
    expect(new Set(ids).size, "no run recorded twice").to.equal(ids.length);
    expect(runs.filter((x) => !survived(x.via) && x.status === 200).length, "c acknowledged runs").to.be.greaterThan(1);
    for (const r of runs.filter((x) => x.status === 200)) expect(ids, `run ${r.requestId} via ${r.via}`).to.include(r.requestId);

    // Debits: c's reservations are ended by a survivor's recovery; then every debit reaches the provider once.
    const none = async (query: string) => (await rawQuery<{ n: number }>(databaseUrlWhere(databaseUrl), query))[0].n === 0;
    await until(() => none("SELECT COUNT(*)::int AS n FROM reservations"), 60_000, "c's reservations to be recovered");
    await stack!.relayer.ctx.billing!.settle();
    await until(() => none("SELECT COUNT(*)::int AS n FROM debits WHERE NOT settled"), 30_000, "every batch settled");
    const [{ customer }] = await rawQuery<{ customer: string }>(databaseUrlWhere(databaseUrl), "SELECT customer_id AS customer FROM local_adjustments WHERE delta_cents = 5000"); // this account's top-up
    const [{ debited }] = await rawQuery<{ debited: number }>(databaseUrlWhere(databaseUrl), `SELECT COALESCE(SUM(cents), 0)::int AS debited FROM debits WHERE customer_id = '${customer}'`);
    const [{ credit }] = await rawQuery<{ credit: number }>(databaseUrlWhere(databaseUrl), `SELECT credit_cents::int AS credit FROM local_customers WHERE id = '${customer}'`);
    expect(credit, "the provider applied every debit once").to.equal(before.body.credit_cents - debited);
    const [{ applied }] = await rawQuery<{ applied: number }>(databaseUrlWhere(databaseUrl), `SELECT COALESCE(-SUM(delta_cents), 0)::int AS applied FROM local_adjustments WHERE customer_id = '${customer}' AND delta_cents < 0`);
    expect(applied, "adjustments = debits").to.equal(debited);
    const after = await api(b.url, "GET", "/billing/balance", apiKey);
    expect(after.body.credit_cents).to.equal(credit);
    // Each acknowledged run was charged (1 cent: under a second), nothing charged twice: the run debits lie between the runs acknowledged and the runs sent.
    const [{ runDebits }] = await rawQuery<{ runDebits: number }>(databaseUrlWhere(databaseUrl), `SELECT COUNT(*)::int AS "runDebits" FROM debits WHERE customer_id = '${customer}' AND kind = 'run'`);
    const acknowledged = runs.filter((r) => r.status === 200).length + extraRuns;
    expect(runDebits).to.be.within(acknowledged, runs.length + extraRuns);
    expect(c.child!.signalCode, "c was killed").to.equal("SIGKILL");
    expect(killedAt, "c was killed after some of its requests were answered").to.be.greaterThan(0);
    expect(runs.filter((r) => r.via === 2 && r.status === 200).length, "c answered runs before it was killed").to.be.greaterThan(0);
  });
});

const databaseUrlWhere = (databaseUrl: string) => ({ databaseUrl, sqliteFile: "" });
