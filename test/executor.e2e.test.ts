import { expect } from "chai";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ethers } from "hardhat";
import { keccak256, toUtf8Bytes, verifyMessage, Wallet } from "ethers";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { countingServer } from "./helpers/network";
import { JS_HEADERS, zodBundle } from "./helpers/cdn";
import { hashOf } from "./helpers/accountConfig";
import { computeCid } from "../executor/cid";
import { deriveWallet, paths } from "../executor/keys/provider";
import { LocalKeyProvider } from "../executor/keys/local";
import pino from "pino";

const HELLO = `async function main(params) { console.log("hello", params.name); return { greeting: "hi " + params.name }; }`;
const SIGN = `async function main(params) {
  const pk = await Lit.Actions.getPrivateKey({ pkpId: params.pkpId });
  const wallet = new ethers.Wallet(pk);
  return { address: wallet.address, signature: await wallet.signMessage(params.message) };
}`;
const TRY_KEY = `async function main(params) {
  try { await Actions.getPrivateKey({ pkpId: params.pkpId }); return "got a key"; }
  catch (e) { return "refused: " + (e && e.message); }
}`;

/** An account with a wallet, group 1 listing SIGN's CID and the wallet, and a usage key with execute on group 1. */
async function setup(stack: Stack) {
  const { apiKey } = await newAccount(stack);
  const wallet = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address as string;
  const signCid = await computeCid(SIGN);
  await call(stack, "POST", "/add_group", {
    key: apiKey,
    body: { group_name: "signers", pkp_ids_permitted: [wallet], cid_hashes_permitted: [keccak256(toUtf8Bytes(signCid))] },
  });
  const usageKey = (await call(stack, "POST", "/add_usage_api_key", { key: apiKey, body: { name: "runner", execute_in_groups: [1] } })).body
    .usage_api_key as string;
  return { apiKey, wallet, signCid, usageKey };
}

const run = (stack: Stack, key: string, body: unknown, route = "/lit_action") => call(stack, "POST", route, { key, body });

/** The contract as the managed account's own admin wallet (derived by the local provider), funded: the direct path. */
async function directAdmin(stack: Stack, apiKey: string) {
  const keys = LocalKeyProvider.open(path.join(stack.relayerConfig.dataDir, "root-secret"), pino({ level: "silent" }));
  const admin = await deriveWallet(keys, paths.accountAdmin(hashOf(apiKey)));
  const [funder] = await ethers.getSigners();
  await (await funder.sendTransaction({ to: admin.address, value: ethers.parseEther("1") })).wait();
  return stack.config.connect(new Wallet(admin.privateKey, ethers.provider));
}

/** A loopback CDN serving zod (bundled from node_modules) as jsDelivr serves zod@3.22.4/+esm. */
async function zodCdn() {
  const zod = zodBundle();
  const server = await countingServer((req, res) => {
    if (req.url === "/npm/zod@3.22.4/+esm") return res.writeHead(200, JS_HEADERS).end(zod);
    res.writeHead(404).end();
  });
  return { ...server, zod, base: `http://127.0.0.1:${server.port}/npm/` };
}

describe("executor over HTTP (execution flow of spec 1)", function () {
  this.timeout(120_000);
  let stack: Stack;
  let cdn: Awaited<ReturnType<typeof zodCdn>>;
  before(async () => {
    cdn = await zodCdn();
    stack = await startStack({ env: { VESTA_IMPORT_CDN_URL: cdn.base } });
  });
  after(async () => {
    await stack?.stop();
    await cdn?.close();
  });

  it("runs a Chipotle action that imports zod@3.22.4 from the configured CDN; Lit.Headers holds the request's X-Request-Id and X-Correlation-Id", async function () {
    const { apiKey } = await newAccount(stack);
    const code = `import { z } from "zod@3.22.4";
      async function main({ email }) {
        return { valid: z.string().email().safeParse(email).success, imports: Lit.Actions.showImportDetails(), id: Lit.Headers.get("x-request-id"), corr: LitHeaders.get("x-correlation-id") };
      }`;
    const res = await fetch(`${stack.api}/lit_action`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey, "x-correlation-id": "trace-42" },
      body: JSON.stringify({ code, js_params: { email: "a@b.co" } }),
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).to.equal(200);
    const hash = `sha384-${crypto.createHash("sha384").update(cdn.zod).digest("base64")}`;
    expect(body.response).to.deep.equal({ valid: true, imports: [{ url: `${cdn.base}zod@3.22.4/+esm`, hash }], id: res.headers.get("x-request-id"), corr: "trace-42" });
    expect(body.response.id).to.match(/^[0-9a-f-]{36}$/);
    // a failed import is a failed run (422), with the reason
    const missing = await run(stack, apiKey, { code: 'import { z } from "zod@9.9.9"; async function main() { return 1 }' });
    expect([missing.status, missing.body.code, missing.body.error]).to.deep.equal([422, "action_failed", `TypeError: import: ${cdn.base}zod@9.9.9/+esm answered HTTP 404`]);
  });

  it("runs an action with the account key on /lit_action and /run_action", async function () {
    const { apiKey } = await newAccount(stack);
    for (const route of ["/lit_action", "/run_action"]) {
      const r = await run(stack, apiKey, { code: HELLO, js_params: { name: "vesta" } }, route);
      expect(r.status).to.equal(200);
      expect(r.body.response).to.deep.equal({ greeting: "hi vesta" });
      expect(r.body.has_error).to.equal(false);
      expect(r.body.logs).to.contain("hello vesta");
      expect(r.body.ipfs_id).to.equal(await computeCid(HELLO));
    }
  });

  it("stores inline code by its CID, so a later call may pass only ipfs_id", async function () {
    const { apiKey } = await newAccount(stack);
    const code = `async function main() { return "stored ${Date.now()}"; }`;
    const cid = await computeCid(code);
    expect((await run(stack, apiKey, { ipfs_id: cid })).status).to.equal(404);
    expect((await run(stack, apiKey, { code })).status).to.equal(200);
    const again = await run(stack, apiKey, { ipfs_id: cid });
    expect(again.status).to.equal(200);
    expect(again.body.response).to.match(/^stored /);
    const mismatch = await run(stack, apiKey, { code, ipfs_id: await computeCid("other") });
    expect([mismatch.status, mismatch.body.code]).to.deep.equal([400, "invalid_request"]);
  });

  it("answers get_action_ipfs_id and get_lit_action_ipfs_id with the CID of the code", async function () {
    for (const route of ["/get_action_ipfs_id", "/get_lit_action_ipfs_id"]) {
      const r = await call(stack, "POST", route, { body: "hello world\n" });
      expect(r).to.deep.equal({ status: 200, body: "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o" });
    }
    expect((await call(stack, "POST", "/get_action_ipfs_id", { body: { code: "x" } })).status).to.equal(400);
  });

  it("lets a usage key run an action only where a group it may execute in lists the CID (403 before anything runs)", async function () {
    const { usageKey, wallet, signCid } = await setup(stack);
    const denied = await run(stack, usageKey, { code: HELLO, js_params: { name: "x" } });
    expect([denied.status, denied.body.code]).to.deep.equal([403, "not_permitted"]);
    const ok = await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "gm" } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.has_error).to.equal(false);
    expect(ok.body.response.address).to.equal(wallet);
    expect(verifyMessage("gm", ok.body.response.signature)).to.equal(wallet);
    expect(ok.body.ipfs_id).to.equal(signCid);
  });

  it("refuses a PKP that the permitted group does not list, and a PKP of another account", async function () {
    const a = await setup(stack);
    const other = await setup(stack);
    const tryCid = await computeCid(TRY_KEY);
    await call(stack, "POST", "/add_action_to_group", { key: a.apiKey, body: { group_id: 1, action_ipfs_cid: tryCid } });
    // a second wallet of the same account, in no group
    const loose = (await call(stack, "GET", "/create_wallet", { key: a.apiKey })).body.wallet_address;
    const refusal = (pkpId: string) => `refused: this key may not use wallet ${pkpId} with action ${tryCid}: no group on which it has execute lists both`;
    for (const pkpId of [loose, other.wallet]) {
      const r = await run(stack, a.usageKey, { code: TRY_KEY, js_params: { pkpId } });
      expect(r.status).to.equal(200);
      expect(r.body.response).to.equal(refusal(pkpId));
    }
    // the account key may use its own PKPs, but not another account's
    expect((await run(stack, a.apiKey, { code: TRY_KEY, js_params: { pkpId: loose } })).body.response).to.equal("got a key");
    expect((await run(stack, a.apiKey, { code: TRY_KEY, js_params: { pkpId: other.wallet } })).body.response).to.equal(refusal(other.wallet));
  });

  it("gives 401 to a revoked key on its next request", async function () {
    const { apiKey, usageKey, wallet } = await setup(stack);
    expect((await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } })).status).to.equal(200);
    await call(stack, "POST", "/remove_usage_api_key", { key: apiKey, body: { usage_api_key: usageKey } });
    const r = await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } });
    expect([r.status, r.body.code]).to.deep.equal([401, "invalid_api_key"]);
  });

  it("denies on the next request a permission removed through the API", async function () {
    const { apiKey, usageKey, wallet, signCid } = await setup(stack);
    expect((await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } })).status).to.equal(200);
    await call(stack, "POST", "/remove_action_from_group", { key: apiKey, body: { group_id: 1, hashed_cid: keccak256(toUtf8Bytes(signCid)) } });
    expect((await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } })).status).to.equal(403);
  });

  it("denies a permission removed by a direct contract call once the block is seen (event sync)", async function () {
    const { apiKey, usageKey, wallet } = await setup(stack);
    expect((await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } })).status).to.equal(200);
    // The account's admin wallet (derived by the local provider) removes the PKP from the group itself.
    await (await (await directAdmin(stack, apiKey)).removePkpFromGroup(hashOf(apiKey), 1, wallet)).wait();
    await stack.relayer.ctx.executor.permissions.sync();
    const r = await run(stack, usageKey, { code: SIGN, js_params: { pkpId: wallet, message: "a" } });
    expect(r.body.has_error).to.equal(true);
    expect(JSON.stringify(r.body)).to.match(/may not use wallet/);
  });

  it("serves list reads from the cache, and shows a direct contract write once its block is seen", async function () {
    const { apiKey } = await newAccount(stack);
    await stack.relayer.ctx.executor.permissions.sync();
    expect((await call(stack, "GET", "/list_groups", { key: apiKey })).body).to.deep.equal([]);
    // the account's admin wallet creates a group directly on chain (the direct path)
    await (await (await directAdmin(stack, apiKey)).addGroup(hashOf(apiKey), "direct", "", [], [])).wait();
    await stack.relayer.ctx.executor.permissions.sync();
    const after = (await call(stack, "GET", "/list_groups", { key: apiKey })).body;
    expect(after.map((g: { name: string }) => g.name)).to.deep.equal(["direct"]);
    // and a write relayed by the service is visible on the very next read
    await call(stack, "POST", "/add_group", { key: apiKey, body: { group_name: "relayed" } });
    expect((await call(stack, "GET", "/list_groups", { key: apiKey })).body.map((g: { name: string }) => g.name)).to.deep.equal(["direct", "relayed"]);
  });

  it("answers repeated runs from the cache without asking the chain", async function () {
    const { usageKey, wallet } = await setup(stack);
    const body = { code: SIGN, js_params: { pkpId: wallet, message: "cached" } };
    // steady state: the setup's own events are seen (they drop the account's entries), then one warm-up run
    await stack.relayer.ctx.executor.permissions.sync();
    expect((await run(stack, usageKey, body)).status).to.equal(200);
    const provider = stack.relayer.ctx.chain.provider;
    const calls: string[] = [];
    const original = provider.send.bind(provider);
    provider.send = async (method: string, params: any[]) => {
      calls.push(method);
      return original(method, params);
    };
    try {
      for (let i = 0; i < 3; i++) expect((await run(stack, usageKey, body)).status).to.equal(200);
    } finally {
      provider.send = original;
    }
    expect(calls.filter((m) => m === "eth_call")).to.deep.equal([]);
  });

  it("encrypts and decrypts with a key derived from the PKP, and refuses another PKP's ciphertext", async function () {
    const code = `async function main(p) {
      const c = await Lit.Actions.Encrypt({ pkpId: p.pkpId, message: "secret ✓" });
      const back = await Lit.Actions.Decrypt({ pkpId: p.pkpId, ciphertext: c });
      let other = "no error";
      try { await Lit.Actions.Decrypt({ pkpId: p.otherPkp, ciphertext: c }); } catch (e) { other = e.message; }
      return { c, back, other };
    }`;
    const { apiKey } = await newAccount(stack);
    const w1 = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address;
    const w2 = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address;
    const r = await run(stack, apiKey, { code, js_params: { pkpId: w1, otherPkp: w2 } });
    expect(r.body.has_error, JSON.stringify(r.body)).to.equal(false);
    expect(r.body.response.back).to.equal("secret ✓");
    expect(r.body.response.c).to.not.contain("secret");
    expect(r.body.response.other).to.match(/decryption failed/);
  });

  it("gives each action its own identity key, derived from its CID", async function () {
    const code = (tag: string) => `async function main(p) {
      const pk = await Lit.Actions.getLitActionPrivateKey();
      const own = await Lit.Actions.getLitActionWalletAddress({ ipfsId: p.self });
      return { address: new ethers.Wallet(pk).address, own, pub: await Lit.Actions.getLitActionPublicKey({ ipfsId: p.self }), tag: "${tag}" };
    }`;
    const { apiKey } = await newAccount(stack);
    const cidA = await computeCid(code("a"));
    const cidB = await computeCid(code("b"));
    const a = await run(stack, apiKey, { code: code("a"), js_params: { self: cidA } });
    const b = await run(stack, apiKey, { code: code("b"), js_params: { self: cidB } });
    expect(a.body.has_error, JSON.stringify(a.body)).to.equal(false);
    // the key the service derives for the action's CID (the relayer's local provider, same root secret)
    const keys = LocalKeyProvider.open(path.join(stack.relayerConfig.dataDir, "root-secret"), pino({ level: "silent" }));
    const expectedA = await deriveWallet(keys, paths.action(cidA));
    const expectedB = await deriveWallet(keys, paths.action(cidB));
    // getLitActionWalletAddress answers as Chipotle: lowercase hex
    expect(a.body.response).to.deep.include({ address: expectedA.address, own: expectedA.address.toLowerCase(), pub: new ethers.SigningKey(expectedA.privateKey).compressedPublicKey });
    expect(b.body.response).to.deep.include({ address: expectedB.address, own: expectedB.address.toLowerCase() });
    expect(expectedB.address).to.not.equal(expectedA.address);
    // another action's identity is public (its address and public key), never its private key
    const peek = await run(stack, apiKey, { code: code("peek"), js_params: { self: cidA } });
    expect(peek.body.response.own).to.equal(expectedA.address.toLowerCase());
    expect(peek.body.response.address).to.equal((await deriveWallet(keys, paths.action(await computeCid(code("peek"))))).address);
  });

  it("ends a run that asks for more keys than the limit with has_error", async function () {
    const { apiKey } = await newAccount(stack);
    const w = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address;
    const code = `async function main(p) { for (let i = 0; i < 11; i++) await Lit.Actions.getPrivateKey({ pkpId: p.w }); return "all"; }`;
    const r = await run(stack, apiKey, { code, js_params: { w } });
    expect(r.body.has_error).to.equal(true);
    expect(JSON.stringify(r.body)).to.match(/key request/i);
  });

  it("answers a failed run as a failed request (422 action_failed, as on Chipotle), keeping the run's answer and the stack", async function () {
    const { apiKey } = await newAccount(stack);
    const thrown = await run(stack, apiKey, { code: `async function main() {\n  console.log("before");\n  throw new Error("boom");\n}` });
    expect(thrown.status).to.equal(422);
    expect(thrown.body).to.include({ code: "action_failed", has_error: true, response: null, logs: "before\nError: boom\n    at main (action.js:3:18)\n" });
    expect(thrown.body.error).to.equal("Error: boom\n    at main (action.js:3:18)\n");
    expect(thrown.body.message).to.equal(thrown.body.error);
    expect(thrown.body.ipfs_id).to.match(/^Qm/);
    // A limit is a failed run too; a run that succeeds stays 200.
    const limited = await run(stack, apiKey, { code: `async function main() { for (;;) console.log("x".repeat(1000)) }` });
    expect([limited.status, limited.body.code, limited.body.error]).to.deep.equal([422, "action_failed", "log limit exceeded: logs are capped at 100 KB (maxLogBytes)"]);
    expect((await run(stack, apiKey, { code: HELLO })).status).to.equal(200);
  });

  it("rejects oversized js_params and a missing action with clear errors", async function () {
    const { apiKey } = await newAccount(stack);
    const big = await run(stack, apiKey, { code: HELLO, js_params: { blob: "x".repeat(70 * 1024) } });
    expect([big.status, big.body.code]).to.deep.equal([413, "params_too_large"]);
    const none = await run(stack, apiKey, {});
    expect([none.status, none.body.code]).to.deep.equal([400, "invalid_request"]);
  });

  it("runs every example action in executor/examples", async function () {
    const dir = path.join(__dirname, "..", "executor", "examples");
    const { apiKey } = await newAccount(stack);
    const w = (await call(stack, "GET", "/create_wallet", { key: apiKey })).body.wallet_address;
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".js"));
    expect(files.length).to.be.greaterThan(2);
    // the chain examples (erc20-balance.js, send-eth.js): a token to read, gas and ETH for the wallet to send
    const token = await ethers.deployContract("TestToken", [1000n]);
    const [funder] = await ethers.getSigners();
    await (await funder.sendTransaction({ to: w, value: ethers.parseEther("1") })).wait();
    const chain = { chain: "local", tokenAddress: await token.getAddress(), holderAddress: w, toAddress: Wallet.createRandom().address, amountEth: "0.01" };
    for (const f of files) {
      const r = await run(stack, apiKey, { code: fs.readFileSync(path.join(dir, f), "utf8"), js_params: { pkpId: w, message: "hello", name: "vesta", url: `${stack.api}/get_node_chain_config`, ...chain } });
      expect(r.status, f).to.equal(200);
      expect(r.body.has_error, `${f}: ${JSON.stringify(r.body)}`).to.equal(false);
    }
  });
});
