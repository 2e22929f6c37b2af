import { Writable } from "node:stream";
import { expect } from "chai";
import { ethers } from "hardhat";
import pino from "pino";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { startRelayer } from "../relayer/server";
import { ERROR_CODES, isErrorCode } from "../protocol/errors";
import { MAX_CORRELATION_ID_LENGTH } from "../protocol/http";
import { call, startStack, type Stack } from "./helpers/relayer";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";
import { ChipotleApiClient } from "./helpers/chipotleClient";
import { walletAccount } from "./helpers/wallets";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const HELLO = `async function main(params) { return { hello: params.who ?? "world" }; }`;

/** Expects `p` to reject as Chipotle's SDK throws: `<context>: <the human message>` (never a bare code), with `status`. */
async function sdkError(p: Promise<unknown>, context: string, status: number, mentions: string) {
  try {
    await p;
  } catch (err) {
    const e = err as Error & { status: number; body: any };
    expect(e.status, e.message).to.equal(status);
    expect(e.message.startsWith(`${context}: `), e.message).to.equal(true);
    expect(e.message).to.include(mentions);
    expect(e.message, "the SDK shows the message, not the code").to.equal(`${context}: ${e.body.message}`);
    return e.body;
  }
  expect.fail(`${context} succeeded`);
}

/**
 * Chipotle's own client, unchanged: requests shaped as core_sdk.js sends them in API mode, against
 * a relayer with card payments (the Stripe double), for every route the SDK calls and the routes the
 * issue adds, checking Chipotle's answer shapes and the deliberate differences.
 */
describe("Chipotle's SDK (API mode) against Vesta", function () {
  this.timeout(180_000);
  let double: StripeDouble;
  let stack: Stack;
  let sdk: ChipotleApiClient;
  let chainId: number;
  before(async () => {
    double = await startStripeDouble();
    stack = await startStack({ env: { ...double.env(), VESTA_BILLING_SETTLE_MS: "3600000" } });
    sdk = new ChipotleApiClient(stack.relayer.url);
    chainId = Number(stack.relayer.ctx.chain.chainId);
  });
  after(async () => {
    await stack?.stop();
    await double?.close();
  });

  describe("configuration and service routes", function () {
    it("get_node_chain_config, get_api_payers, get_admin_api_payer answer Chipotle's shapes", async function () {
      const cfg = await sdk.getNodeChainConfig();
      expect(cfg).to.have.all.keys("chain_name", "chain_id", "is_evm", "testnet", "token", "contract_address");
      expect([typeof cfg.chain_id, cfg.is_evm, cfg.contract_address]).to.deep.equal(["number", true, await stack.config.getAddress()]);
      const payers = await sdk.getApiPayers();
      expect(payers).to.be.an("array").that.is.not.empty;
      for (const p of payers) expect(p).to.match(/^0x[0-9a-fA-F]{40}$/);
      expect(await sdk.getAdminApiPayer()).to.match(/^0x[0-9a-fA-F]{40}$/);
    });

    it("version, get_lit_action_client_config (the run limits, Chipotle's names), get_chain_config_keys", async function () {
      const v = await sdk.getVersion();
      expect(v).to.deep.equal({ name: "vesta", version: "0.1.0", commit_version: "unknown", submodule_versions: [] });
      const c = await sdk.getLitActionClientConfig();
      const l = stack.relayerConfig.limits;
      expect(c).to.include({
        timeout_ms: l.timeoutMs,
        async_timeout_ms: l.timeoutMs,
        memory_limit_mb: l.memoryBytes / 1024 / 1024,
        max_code_length: l.maxCodeBytes,
        max_response_length: l.maxResponseBytes,
        max_console_log_length: l.maxLogBytes,
        max_fetch_count: l.maxFetches,
        max_get_keys_count: l.maxKeyRequests,
        max_retries: 0,
        client_timeout_ms_buffer: 0,
      });
      const keys = await sdk.getChainConfigKeys();
      expect(keys).to.have.all.keys("keys");
      expect(keys.keys).to.include.members(["VESTA_ACTION_TIMEOUT_MS", "VESTA_ACTION_MEMORY_MB", "VESTA_ACTION_MAX_CODE_BYTES"]);
    });

    it("GET /health (200 with Chipotle's fields), /openapi.json (to /core/v1/openapi.json), /dstack/v1/info and /dstack/v1/attestation (the /info and /attestation documents)", async function () {
      const health = await fetch(`${stack.relayer.url}/health`);
      expect(health.status).to.equal(200);
      const body = await health.json();
      expect(Object.keys(body)).to.deep.equal(["lit_actions_reachable", "cpu_available", "billing_keys_present", "account_event_listener_lag_seconds", "chain_reachable"]);
      expect(body).to.include({ lit_actions_reachable: true, cpu_available: true, billing_keys_present: true, chain_reachable: true });
      expect(body.account_event_listener_lag_seconds, "Chipotle's listener lag: whole seconds since the permission cache followed the chain").to.be.a("number").within(0, 30);
      const redirect = await fetch(`${stack.relayer.url}/openapi.json`, { redirect: "manual" });
      expect([redirect.status, redirect.headers.get("location")]).to.deep.equal([308, "/core/v1/openapi.json"]);
      const doc = await (await fetch(`${stack.relayer.url}/openapi.json`)).json();
      expect(doc.openapi).to.match(/^3\.1\./);
      for (const name of ["info", "attestation"]) {
        const [alias, own] = await Promise.all([fetch(`${stack.relayer.url}/dstack/v1/${name}`), fetch(`${stack.relayer.url}/${name}`)]);
        expect(alias.status, name).to.equal(200);
        expect(await alias.text(), name).to.equal(await own.text());
      }
      expect((await fetch(`${stack.relayer.url}/dstack/v1/evidences/`)).status).to.equal(404);
    });

    it("a chain that does not answer: GET /health stays 200 (Chipotle's rule: only the sandbox and its queue decide) with chain_reachable false from one shared 2 s probe; /ready fails `chain`; /live answers 200", async function () {
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0 }, pino({ level: "silent" }));
      try {
        relayer.ctx.chain.provider.getBlockNumber = () => new Promise<number>(() => {}); // an RPC that never answers
        const t0 = Date.now();
        const answers = await Promise.all([1, 2, 3].map(() => fetch(`${relayer.url}/health`)));
        const waited = Date.now() - t0;
        expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
        expect(await answers[0].json()).to.include({ chain_reachable: false, lit_actions_reachable: true, cpu_available: true });
        expect(waited, "one 2 s probe shared by the concurrent checks").to.be.within(1900, 3500);
        const t1 = Date.now();
        expect((await fetch(`${relayer.url}/health`)).status).to.equal(200);
        expect(Date.now() - t1, "the next check reuses the probe").to.be.below(500);
        const ready = await fetch(`${relayer.url}/ready`);
        expect([ready.status, (await ready.json()).failing]).to.deep.equal([503, ["chain"]]);
        const live = await fetch(`${relayer.url}/live`);
        expect([live.status, await live.json()]).to.deep.equal([200, { alive: true }]);
      } finally {
        await relayer.close();
      }
    });

    it("a full sandbox queue: GET /health answers 503 cpu_available false (Chipotle's rule), while /live stays 200", async function () {
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0 }, pino({ level: "silent" }));
      try {
        const load = relayer.ctx.executor.sandboxLoad.bind(relayer.ctx.executor);
        relayer.ctx.executor.sandboxLoad = () => ({ ...load(), queued: 10, queueLimit: 10 }); // the fair queue is full
        const health = await fetch(`${relayer.url}/health`);
        expect([health.status, (await health.json()).cpu_available]).to.deep.equal([503, false]);
        expect((await fetch(`${relayer.url}/live`)).status).to.equal(200);
      } finally {
        await relayer.close();
      }
    });
  });

  describe("an account's whole life, as the SDK drives it", function () {
    let apiKey: string;
    let adminWallet: string;
    let pkp: string;
    let cid: string;
    let groupId: string;
    let usageKey: string;

    it("new_account and account_exists", async function () {
      const a = await sdk.newAccount({ accountName: "sdk", accountDescription: "from core_sdk.js", email: "sdk@example.com" });
      expect(a).to.have.all.keys("api_key", "wallet_address");
      [apiKey, adminWallet] = [a.api_key, a.wallet_address];
      expect(await sdk.accountExists(apiKey)).to.equal(true);
      expect(await sdk.accountExists("not-a-key")).to.equal(false);
    });

    it("billing in Chipotle's convention: no credit is balance_cents 0 ('No credits'); paying makes it negative ('$10.00 credit')", async function () {
      expect(await sdk.getStripeConfig()).to.deep.equal({ publishable_key: double.publishableKey });
      const empty = await sdk.getBillingBalance(apiKey);
      expect(empty).to.deep.equal({ balance_cents: 0, credit_cents: 0, balance_display: "No credits" });
      expect(empty.balance_cents >= 0, "Chipotle's dashboard shows its no-funds warning").to.equal(true);
      const intent = await sdk.createPaymentIntent(apiKey, 1000);
      expect(intent).to.have.all.keys("client_secret", "payment_intent_id");
      double.succeed(intent.payment_intent_id);
      await sdk.confirmPayment(apiKey, intent.payment_intent_id);
      const funded = await sdk.getBillingBalance(apiKey);
      expect(funded).to.deep.equal({ balance_cents: -1000, credit_cents: 1000, balance_display: "$10.00 credit" });
      expect(funded.balance_cents >= 0, "no no-funds warning").to.equal(false);
      expect(Math.max(0, -funded.balance_cents), "the credits k6's helper reads").to.equal(1000);
    });

    it("create_wallet (GET, no body), list_wallets: the PKP is listed, the admin wallet of new_account is not", async function () {
      pkp = (await sdk.createWallet(apiKey)).wallet_address;
      const wallets = await sdk.listWallets({ apiKey });
      expect(wallets).to.deep.equal([{ id: pkp, name: "", description: "", wallet_address: pkp }]);
      expect(wallets.map((w: { wallet_address: string }) => w.wallet_address)).not.to.include(adminWallet);
    });

    it("get_lit_action_ipfs_id, add_action, add_group (group_id a string), add_action_to_group, list_groups, list_actions", async function () {
      cid = await sdk.getLitActionIpfsId(HELLO);
      expect(cid).to.match(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
      expect(await sdk.addAction({ apiKey, actionIpfsCid: cid, name: "hello", description: "says hello" })).to.include({ success: true });
      const g = await sdk.addGroup({ apiKey, groupName: "sdk group", groupDescription: "made by the SDK", pkpIdsPermitted: [pkp], cidHashesPermitted: [] });
      expect(g).to.deep.equal({ success: true, group_id: "1" });
      groupId = g.group_id;
      expect(await sdk.addActionToGroup({ apiKey, groupId, actionIpfsCid: cid })).to.include({ success: true });
      const groups = await sdk.listGroups({ apiKey });
      expect(groups).to.have.length(1);
      expect(groups[0]).to.include({ id: "1", name: "sdk group", description: "made by the SDK" });
      const hashed = keccak256(toUtf8Bytes(cid));
      for (const list of [await sdk.listActions({ apiKey }), await sdk.listActions({ apiKey, groupId })]) {
        expect(list).to.have.length(1);
        expect(list[0]).to.include({ id: hashed, name: "hello", description: "says hello" });
      }
      expect(await sdk.listWalletsInGroup({ apiKey, groupId })).to.deep.equal([{ id: pkp, name: "", description: "", wallet_address: pkp }]);
    });

    it("refuses the new_account wallet as a PKP of a group, saying why (400 admin_wallet_not_a_pkp), in add_pkp_to_group, add_group and update_group", async function () {
      const before = await stack.config.listWalletsInGroup(keccak256(toUtf8Bytes(apiKey)), 1, 0, 10);
      const body = await sdkError(sdk.addPkpToGroup({ apiKey, groupId, pkpId: adminWallet }), "add_pkp_to_group", 400, "is this account's admin wallet");
      expect([body.code, body.details]).to.deep.equal(["admin_wallet_not_a_pkp", { pkp_id: adminWallet }]);
      expect(body.error).to.include("an action allowed to use its key would act as the owner");
      await sdkError(sdk.addGroup({ apiKey, groupName: "owner", pkpIdsPermitted: [pkp, adminWallet] }), "add_group", 400, "admin wallet");
      await sdkError(sdk.updateGroup({ apiKey, groupId, name: "sdk group", pkpIdsPermitted: [adminWallet] }), "update_group", 400, "admin wallet");
      expect(await stack.config.listWalletsInGroup(keccak256(toUtf8Bytes(apiKey)), 1, 0, 10)).to.deep.equal(before);
      expect((await stack.config.listGroups(keccak256(toUtf8Bytes(apiKey)), 0, 10))[0].length, "no group was added").to.equal(1);
    });

    it("add_usage_api_key, list_api_keys, lit_action with the usage key ({response, logs, has_error})", async function () {
      const k = await sdk.addUsageApiKey({ apiKey, name: "runner", description: "runs hello", executeInGroups: [Number(groupId)] });
      expect(k).to.have.all.keys("success", "usage_api_key");
      usageKey = k.usage_api_key;
      const keys = await sdk.listApiKeys({ apiKey });
      expect(keys).to.have.length(1);
      expect(keys[0]).to.include({ name: "runner", description: "runs hello", can_create_groups: false });
      expect(keys[0].id).to.be.a("string");
      const run = await sdk.litAction({ apiKey: usageKey, code: HELLO, jsParams: { who: "chipotle" } });
      expect(run).to.include.keys("response", "logs", "has_error");
      expect([run.response, run.has_error, typeof run.logs]).to.deep.equal([{ hello: "chipotle" }, false, "string"]);
      expect((await sdk.litAction({ apiKey: usageKey, code: HELLO })).response).to.deep.equal({ hello: "world" }); // js_params: null
    });

    it("shows the human message in the SDK's errors (body.error), with the stable code beside it (body.code)", async function () {
      const body = await sdkError(sdk.litAction({ apiKey: "not-a-key", code: HELLO }), "lit_action", 401, "unknown, revoked or expired");
      expect(body.code).to.equal("invalid_api_key");
      await sdkError(sdk.listWalletsInGroup({ apiKey, groupId: "99" }), "list_wallets_in_group", 404, "no group 99");
      await sdkError(sdk.litAction({ apiKey: usageKey, code: `async function main() { return "other" }` }), "lit_action", 403, "may not run action");
    });

    it("update_usage_api_key, update_usage_api_key_metadata, update_action_metadata, update_group", async function () {
      expect(await sdk.updateUsageApiKey({ apiKey, usageApiKey: usageKey, name: "runner 2", executeInGroups: [Number(groupId)] })).to.deep.equal({ success: true });
      expect(await sdk.updateUsageApiKeyMetadata({ apiKey, usageApiKey: usageKey, name: "runner 3", description: "renamed" })).to.deep.equal({ success: true });
      const hashed = keccak256(toUtf8Bytes(cid));
      expect(await sdk.updateActionMetadata({ apiKey, hashedCid: hashed, name: "hi", description: "renamed" })).to.deep.equal({ success: true });
      expect(await sdk.updateGroup({ apiKey, groupId, name: "renamed", description: "", pkpIdsPermitted: [pkp], cidHashesPermitted: [hashed] })).to.deep.equal({ success: true });
      expect((await sdk.listApiKeys({ apiKey }))[0]).to.include({ name: "runner 3", description: "renamed" });
      expect((await sdk.listActions({ apiKey }))[0]).to.include({ name: "hi", description: "renamed" });
      expect((await sdk.listGroups({ apiKey }))[0]).to.include({ name: "renamed" });
    });

    it("remove_pkp_from_group, remove_action_from_group, delete_action, remove_usage_api_key, remove_group (group_id sent as a string)", async function () {
      const hashed = keccak256(toUtf8Bytes(cid));
      expect(await sdk.removePkpFromGroup({ apiKey, groupId, pkpId: pkp })).to.deep.equal({ success: true });
      expect(await sdk.removeActionFromGroup({ apiKey, groupId, hashedCid: hashed })).to.deep.equal({ success: true });
      expect(await sdk.deleteAction({ apiKey, hashedCid: hashed })).to.deep.equal({ success: true });
      expect(await sdk.removeUsageApiKey({ apiKey, usageApiKey: usageKey })).to.deep.equal({ success: true });
      expect(await sdk.removeGroup({ apiKey, groupId })).to.deep.equal({ success: true });
      expect(await sdk.listGroups({ apiKey })).to.deep.equal([]);
      expect(await sdk.listApiKeys({ apiKey })).to.deep.equal([]);
    });

    it("convert_to_chain_secured_account with the SDK's signed text: proposed (Vesta: pending until the new admin accepts on chain)", async function () {
      const newAdmin = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
      await (await (await ethers.getSigners())[0].sendTransaction({ to: newAdmin.address, value: ethers.parseEther("1") })).wait();
      const answer = await sdk.convertToChainSecuredAccount({ apiKey, signer: newAdmin, chainId });
      expect(answer).to.deep.equal({ wallet_address: newAdmin.address, api_key_hash: keccak256(toUtf8Bytes(apiKey)) });
      const hash = keccak256(toUtf8Bytes(apiKey));
      expect((await stack.config.getAccount(hash)).managed, "two-step: still managed").to.equal(true);
      await (await stack.config.connect(newAdmin).acceptAccountOwnership(hash)).wait();
      expect((await stack.config.getAccount(hash)).adminWalletAddress).to.equal(newAdmin.address);
    });

    it("create_wallet_with_signature with the SDK's signed text mints for the signer's ChainSecured account", async function () {
      const a = await walletAccount(stack);
      const minted = await sdk.createWalletWithSignature({ signer: a.wallet, chainId });
      expect(minted).to.have.all.keys("wallet_address", "derivation_path");
      await (await a.config.registerWalletDerivation(a.hash, minted.wallet_address, minted.derivation_path, "Wallet", "Wallet")).wait();
    });
  });

  describe("every answer of the conversation above", function () {
    it("carries X-Request-Id, a fresh UUID v4 each time", function () {
      expect(sdk.seen.length).to.be.above(40);
      const ids = sdk.seen.map((r) => r.headers.get("x-request-id"));
      for (const [i, id] of ids.entries()) expect(id, `${sdk.seen[i].method} ${sdk.seen[i].path}`).to.match(UUID_V4);
      expect(new Set(ids).size).to.equal(ids.length);
      for (const r of sdk.seen) expect(r.headers.get("x-correlation-id"), "none sent, none echoed").to.equal(null);
    });

    it("answers each error with a code its route documents under that status in the OpenAPI document", async function () {
      const doc = (await call(stack, "GET", "/openapi.json")).body;
      const errors = sdk.seen.filter((r) => r.status >= 400);
      expect(errors.length).to.be.above(5);
      for (const r of errors) {
        const body = r.body as { code: string };
        const where = `${r.method} ${r.path} ${r.status} ${body.code}`;
        expect(isErrorCode(body.code) && ERROR_CODES[body.code].status, where).to.equal(r.status);
        const documented = doc.paths[`/core/v1${r.path}`]?.[r.method.toLowerCase()]?.responses?.[String(r.status)];
        expect(documented?.content?.["application/json"]?.schema?.properties?.code?.enum, where).to.include(body.code);
      }
    });
  });

  describe("request ids, correlation ids and CORS", function () {
    it("ignores the caller's X-Request-Id, echoes X-Correlation-Id (sanitized, bounded; absent when empty), also on errors and unknown paths", async function () {
      const get = (path: string, headers: Record<string, string>) => fetch(`${stack.relayer.url}${path}`, { headers });
      const theirs = "550e8400-e29b-41d4-a716-446655440000";
      for (const path of ["/core/v1/get_node_chain_config", "/core/v1/list_groups", "/nope", "/health", "/dashboard/config.json"]) {
        const r = await get(path, { "x-request-id": theirs, "x-correlation-id": "my-correlation-abc-123" });
        expect(r.headers.get("x-request-id"), path).to.match(UUID_V4).and.not.equal(theirs);
        expect(r.headers.get("x-correlation-id"), path).to.equal("my-correlation-abc-123");
      }
      expect((await get("/core/v1/version", { "x-correlation-id": "" })).headers.get("x-correlation-id")).to.equal(null);
      expect((await get("/core/v1/version", { "x-correlation-id": "a b\t<c>;d" })).headers.get("x-correlation-id")).to.equal("abcd");
      expect((await get("/core/v1/version", { "x-correlation-id": " \t " })).headers.get("x-correlation-id")).to.equal(null);
      const long = (await get("/core/v1/version", { "x-correlation-id": "x".repeat(5000) })).headers.get("x-correlation-id");
      expect(long).to.equal("x".repeat(MAX_CORRELATION_ID_LENGTH));
    });

    it("logs each request's ids with what the request logged (a pino child logger per request)", async function () {
      const lines: any[] = [];
      const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...chunk.toString().trim().split("\n").map((l: string) => JSON.parse(l))), done()) });
      const relayer = await startRelayer({ ...stack.relayerConfig, port: 0 }, pino({ level: "info" }, sink));
      try {
        const res = await fetch(`${relayer.url}/core/v1/new_account`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-correlation-id": "trace-42" },
          body: JSON.stringify({ account_name: "logged" }),
        });
        expect(res.status).to.equal(200);
        const requestId = res.headers.get("x-request-id");
        const bad = await fetch(`${relayer.url}/core/v1/list_groups`, { headers: { "x-api-key": "not-a-key" } });
        const ofRequest = (id: string | null) => lines.filter((l) => l.request_id === id);
        expect(ofRequest(requestId).map((l) => [l.msg, l.correlation_id])).to.deep.equal([
          ["account created", "trace-42"],
          ["request", "trace-42"],
        ]);
        expect(ofRequest(requestId)[1]).to.include({ method: "POST", path: "/core/v1/new_account", status: 200 });
        expect(ofRequest(bad.headers.get("x-request-id"))[0]).to.include({ msg: "request", status: 401 }).and.not.have.property("correlation_id");
      } finally {
        await relayer.close();
      }
    });

    it("answers preflights of the header-authenticated API from any origin, without credentials; the dashboard gets no CORS", async function () {
      const pre = await fetch(`${stack.api}/list_groups`, {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, content-type" },
      });
      expect(pre.status).to.equal(204);
      expect(pre.headers.get("access-control-allow-origin")).to.equal("*");
      expect(pre.headers.get("access-control-allow-credentials")).to.equal(null);
      expect(pre.headers.get("access-control-allow-headers")).to.include("X-Api-Key").and.include("Content-Type").and.include("X-Wallet-Auth");
      expect(pre.headers.get("access-control-allow-methods")).to.include("POST");
      const get = await fetch(`${stack.api}/get_node_chain_config`, { headers: { origin: "https://app.example" } });
      expect(get.headers.get("access-control-allow-origin")).to.equal("*");
      expect(get.headers.get("access-control-expose-headers")).to.include("X-Request-Id");
      for (const path of ["/dashboard/", "/dashboard/config.json"]) {
        const r = await fetch(`${stack.relayer.url}${path}`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "GET" } });
        expect(r.headers.get("access-control-allow-origin"), path).to.equal(null);
        const g = await fetch(`${stack.relayer.url}${path}`, { headers: { origin: "https://app.example" } });
        expect(g.headers.get("access-control-allow-origin"), path).to.equal(null);
      }
    });
  });
});
