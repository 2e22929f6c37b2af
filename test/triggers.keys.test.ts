import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { computeCid } from "../executor/cid";
import { newId, seal } from "../triggers/crypto";
import { call, newAccount, startStack, usageKeyFor, type Stack } from "./helpers/relayer";
import { approvedToken, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";

const ECHO = `async function main(params) { return { echoed: params.event }; }`;
/** What an attacker holding a triggers token would like to run with the trigger's key. */
const STEAL = `async function main() { return await Lit.Actions.getLitActionPrivateKey(); }`;

/**
 * Spec 3: "every trigger needs a scoped usage key of the core service that is permitted to execute
 * the action": checked with the core (POST /core/v1/check_execute_permission) when a trigger is
 * saved and again before each run; against the real core service and chain.
 */
for (const store of STORES)
describe(`triggers hold scoped usage keys only (spec 3, real core) (${store})`, function () {
  this.timeout(120_000);
  let stack: Stack;
  let h: Harness;
  let token: string;
  let apiKey: string;
  let usageKey: string;
  let groupId: string;
  let stealKey: string;
  before(async function () {
    stack = await startStack({ payerCount: 1 });
    ({ apiKey } = await newAccount(stack));
    ({ usageKey, groupId } = await usageKeyFor(stack, apiKey, [ECHO]));
    ({ usageKey: stealKey } = await usageKeyFor(stack, apiKey, [STEAL]));
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: stack.relayer.url }, { pollers: false });
    token = await approvedToken(h);
  });
  after(async () => {
    await h?.stop();
    await stack?.stop();
  });
  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const list = async () => (await api("/api/triggers")).body as any[];
  const create = (body: object) => api("/api/triggers", { method: "POST", body: { name: "t", kind: "webhook", action_code: ECHO, usage_api_key: usageKey, config: {}, ...body } });
  const fire = async (id: string) => {
    const r = await http(`${h.svc.url}/webhook/${id}`, { method: "POST", body: { n: 1 } });
    expect(r.status).to.equal(202);
    return until(async () => {
      const run = (await api(`/api/runs/${r.body.run_id}`)).body;
      return run.status === "success" || run.status === "failed" ? run : undefined;
    });
  };
  const permission = (key: string, body: object) => call(stack, "POST", "/check_execute_permission", { key, body });

  describe("POST /core/v1/check_execute_permission", function () {
    it("answers the key's kind and whether it may execute the action, by code or CID", async function () {
      const [echo, steal] = [await computeCid(ECHO), await computeCid(STEAL)];
      expect(await permission(usageKey, { code: ECHO })).to.deep.equal({ status: 200, body: { key_kind: "usage", ipfs_id: echo, can_execute: true } });
      expect(await permission(usageKey, { ipfs_id: steal })).to.deep.equal({ status: 200, body: { key_kind: "usage", ipfs_id: steal, can_execute: false } });
      expect((await permission(apiKey, { code: STEAL })).body).to.deep.include({ key_kind: "account", ipfs_id: steal });
    });

    it("runs and stores nothing: a checked code is not runnable by its CID afterwards", async function () {
      const fresh = `async function main() { return "never run ${Date.now()}"; }`;
      const cid = await computeCid(fresh);
      expect((await permission(apiKey, { code: fresh })).body).to.deep.equal({ key_kind: "account", ipfs_id: cid, can_execute: true });
      const run = await call(stack, "POST", "/lit_action", { key: apiKey, body: { ipfs_id: cid } });
      expect([run.status, run.body.code]).to.deep.equal([404, "action_code_not_found"]);
    });

    it("refuses an unknown key (401), a mismatched CID and an empty body (400), and an unknown field", async function () {
      const unknown = await permission("not-a-key", { code: ECHO });
      expect([unknown.status, unknown.body.code]).to.deep.equal([401, "invalid_api_key"]);
      const mismatch = await permission(usageKey, { code: ECHO, ipfs_id: await computeCid(STEAL) });
      expect([mismatch.status, mismatch.body.code]).to.deep.equal([400, "invalid_request"]);
      expect((await permission(usageKey, {})).status).to.equal(400);
      expect((await permission(usageKey, { code: ECHO, api_key_hash: "0x01" })).status).to.equal(400);
    });
  });

  describe("saving a trigger", function () {
    it("refuses the account key on create, and stores nothing", async function () {
      const before = await list();
      const r = await create({ usage_api_key: apiKey });
      expect([r.status, r.body.code]).to.deep.equal([400, "account_key_not_allowed"]);
      expect(r.body.message).to.equal("usage_api_key is an account key: a trigger runs with a scoped usage key permitted to execute its action (mint one in the dashboard or with /core/v1/add_usage_api_key)");
      expect(await list()).to.deep.equal(before);
    });

    it("refuses a usage key without execute on the action, and an unknown key, storing nothing", async function () {
      const before = await list();
      const r = await create({ action_code: STEAL });
      expect([r.status, r.body.code, r.body.message]).to.deep.equal([403, "usage_key_not_permitted", `this usage key may not execute action ${await computeCid(STEAL)}: no group on which it has execute lists it`]);
      const unknown = await create({ usage_api_key: "not-a-key-of-the-core" });
      expect([unknown.status, unknown.body.code]).to.deep.equal([400, "invalid_usage_key"]);
      expect(await list()).to.deep.equal(before);
    });

    it("PATCH: refuses the account key, and action code the key may not run; the trigger is unchanged and still runs", async function () {
      const t = (await create({ name: "patched" })).body;
      const toAccountKey = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { usage_api_key: apiKey, name: "renamed" } });
      expect([toAccountKey.status, toAccountKey.body.code]).to.deep.equal([400, "account_key_not_allowed"]);
      const toSteal = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { action_code: STEAL } });
      expect([toSteal.status, toSteal.body.code]).to.deep.equal([403, "usage_key_not_permitted"]);
      const both = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { action_code: STEAL, usage_api_key: apiKey } });
      expect([both.status, both.body.code]).to.deep.equal([400, "account_key_not_allowed"]);
      expect((await api(`/api/triggers/${t.id}`)).body).to.deep.equal(t);
      const run = await fire(t.id);
      expect([run.status, run.response.response]).to.deep.equal(["success", { echoed: { n: 1 } }]);
    });

    it("PATCH: swaps the action together with a usage key permitted to run it", async function () {
      const t = (await create({ name: "swap" })).body;
      const r = await api(`/api/triggers/${t.id}`, { method: "PATCH", body: { action_code: STEAL, usage_api_key: stealKey } });
      expect([r.status, r.body.action_code]).to.deep.equal([200, STEAL]);
      expect((await fire(t.id)).status).to.equal("success");
    });
  });

  describe("running a trigger", function () {
    it("fails the next run, without retries, once the key's permission is removed", async function () {
      const t = (await create({ name: "revoked later" })).body;
      expect((await fire(t.id)).status).to.equal("success");
      const removed = await call(stack, "POST", "/remove_action_from_group", { key: apiKey, body: { group_id: groupId, hashed_cid: keccak256(toUtf8Bytes(await computeCid(ECHO))) } });
      expect(removed.status).to.equal(200);
      const run = await fire(t.id);
      expect(run).to.deep.include({
        status: "failed",
        attempts: 1,
        response: null,
        error: `not run: this usage key may not execute action ${await computeCid(ECHO)}: no group on which it has execute lists it`,
      });
    });

    it("fails a run of a trigger that holds an account key (saved before this rule), without running it", async function () {
      const now = Date.now();
      const id = newId("trg");
      const ctx = h.svc.ctx;
      await ctx.store.insertTrigger({
        id, userId: (await api("/api/me")).body.user_id, name: "legacy", kind: "webhook", enabled: true, actionCode: STEAL, defaultParams: {},
        usageKeySealed: seal(ctx.secretKey, apiKey), config: {}, state: {}, createdAt: now, updatedAt: now,
      }, { perUser: ctx.config.maxTriggersPerUser });
      const run = await fire(id);
      expect(run).to.deep.include({ status: "failed", attempts: 1, response: null });
      expect(run.error).to.equal("not run: usage_api_key is an account key: a trigger runs with a scoped usage key permitted to execute its action (mint one in the dashboard or with /core/v1/add_usage_api_key)");
    });
  });
});
