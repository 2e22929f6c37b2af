import { expect } from "chai";
import pino from "pino";
import { call, newAccount, type Reply } from "./helpers/relayer";
import { apiGroup, apiWallet, chainState, expectError, ok, suiteStack } from "./helpers/relayerChecks";
import { rpcProxy, type RpcFault, type RpcProxy } from "./helpers/rpcProxy";
import { startRelayer } from "../relayer/server";
import { CHAIN_RETRY_AFTER_SECONDS } from "../protocol/chainErrors";
import { buildTypedData } from "../protocol/eip712";
import { walletAuthHeader } from "../relayer/http/walletAuth";

const TRY_KEY = `async function main(params) {
  try { await Actions.getPrivateKey({ pkpId: params.pkpId }); return "got a key"; }
  catch (e) { return "refused: " + (e && e.message); }
}`;

/**
 * The chain's RPC node failing (down, cutting connections, hanging, rate limiting, answering
 * garbage): every read, write and permission lookup answers 503 chain_unavailable with Retry-After,
 * nothing about the node is shown, and a write that did not reach the chain is neither billed nor
 * holds credit. The relayer talks to the chain through a proxy that injects the faults.
 */
describe("relayer: the chain's RPC node fails", function () {
  this.timeout(180_000);
  // writes cost gas in cents here, so a write that held or charged credit shows in the balance
  const stack = suiteStack({ env: { VESTA_GAS_TOKEN_PRICE_CENTS: "300000" } });
  let proxy: RpcProxy;

  before(async () => {
    proxy = await rpcProxy(stack().rpcUrl);
    await stack().relayer.close();
    stack().relayer = await startRelayer({ ...stack().relayerConfig, rpcUrl: proxy.url, rpcTimeoutMs: 1_000 }, pino({ level: "silent" }));
    stack().api = `${stack().relayer.url}/core/v1`;
  });
  after(async () => proxy?.close());
  afterEach(async () => {
    proxy.fault = () => undefined;
    if (!(await fetch(proxy.url, { method: "POST", body: "{}" }).catch(() => undefined))) await proxy.up();
  });

  /** Nothing cached: every answer below needs the chain. */
  const uncached = () => stack().relayer.ctx.executor.permissions.clear();
  const credit = async (key: string) => ok(await call(stack(), "GET", "/billing/balance", { key }), "balance").credit_cents as number;

  function expectUnavailable(r: Reply, what: string) {
    expectError(r, 503, "chain_unavailable");
    expect(JSON.stringify(r.body), `${what} shows the node`).to.not.match(new RegExp(`127\\.0\\.0\\.1|${new URL(proxy.url).port}|ECONN|socket`));
  }

  async function answersUnavailable(key: string) {
    const requests: [string, "GET" | "POST", string, unknown?][] = [
      ["a read", "GET", "/list_groups"],
      ["a key check", "GET", "/account_exists"],
      ["a balance", "GET", "/billing/balance"],
      ["a write", "POST", "/add_group", { group_name: "while down" }],
      ["a run", "POST", "/lit_action", { code: "async function main() { return 1 }" }],
      ["a permission check", "POST", "/check_execute_permission", { code: "async function main() { return 1 }" }],
      ["an account", "POST", "/new_account", { account_name: "while down" }],
    ];
    for (const [what, method, path, body] of requests) {
      uncached();
      const res = await fetch(`${stack().api}${path}`, { method, headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
      const r = { status: res.status, body: await res.json() };
      expectUnavailable(r, what);
      expect(res.headers.get("retry-after"), what).to.equal(String(CHAIN_RETRY_AFTER_SECONDS));
    }
  }

  it("answers 503 chain_unavailable with Retry-After to reads, writes, runs and key checks while the node refuses connections, and changes nothing", async function () {
    const { apiKey } = await newAccount(stack());
    await apiGroup(stack(), apiKey, "before");
    const before = [await chainState(stack(), apiKey), await credit(apiKey)];
    await proxy.down();
    await answersUnavailable(apiKey);
    await proxy.up();
    uncached();
    expect([await chainState(stack(), apiKey), await credit(apiKey)]).to.deep.equal(before);
    await apiGroup(stack(), apiKey, "after"); // and it works again
  });

  const faults: [RpcFault, string][] = [
    ["reset", "cuts the connection"],
    ["hang", "does not answer within VESTA_RPC_TIMEOUT_MS"],
    ["429", "rate limits (HTTP 429)"],
    ["garbage", "answers an HTML page"],
    ["busy", "answers JSON-RPC -32005 (limit exceeded)"],
  ];
  for (const [fault, what] of faults) {
    it(`answers 503 chain_unavailable when the node ${what}`, async function () {
      const { apiKey } = await newAccount(stack());
      proxy.fault = (method) => (method === "eth_call" || method === "eth_estimateGas" ? fault : undefined);
      await answersUnavailable(apiKey);
    });
  }

  it("answers 503, not 401, to a signature the chain must check (ERC-1271) while the node fails: the failure says nothing of the signature", async function () {
    const address = "0x000000000000000000000000000000000000cafe";
    const td = buildTypedData("BillingAuth", { chainId: stack().relayer.ctx.chain.chainId, address, issuedAt: Math.floor(Date.now() / 1000) });
    const header = walletAuthHeader(td, "0x" + "11".repeat(65)); // not this address's ECDSA signature: only a contract there could accept it
    const balance = () => fetch(`${stack().api}/billing/balance`, { headers: { "x-wallet-auth": header } });
    const refused = await balance();
    expect([refused.status, ((await refused.json()) as { code: string }).code], "the node answers: no contract there").to.deep.equal([401, "invalid_wallet_auth"]);
    for (const fault of ["reset", "busy"] as RpcFault[]) {
      proxy.fault = (method) => (method === "eth_getCode" ? fault : undefined);
      const r = await balance();
      expectUnavailable({ status: r.status, body: await r.json() }, fault);
    }
  });

  it("answers 503 to a write whose transaction the node never received, charges nothing and holds no credit", async function () {
    const { apiKey } = await newAccount(stack());
    await apiGroup(stack(), apiKey, "warm"); // the payer's nonce and the gas price are known
    const before = [await chainState(stack(), apiKey), await credit(apiKey)];
    proxy.fault = (method) => (method === "eth_sendRawTransaction" ? "reset" : undefined);
    const r = await call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: "lost" } });
    proxy.fault = () => undefined;
    expect([await chainState(stack(), apiKey), await credit(apiKey)], "no transaction, no charge, no credit held").to.deep.equal(before);
    expectUnavailable(r, "the write");
    expect(r.body.message).to.include("nothing was sent");
    await apiGroup(stack(), apiKey, "next"); // the payer's nonce was not skipped
  });

  it("answers 200 to a write whose answer was lost after the node took it, once mined, and bills it once", async function () {
    const { apiKey } = await newAccount(stack());
    await apiGroup(stack(), apiKey, "warm");
    const before = await credit(apiKey);
    proxy.fault = (method) => (method === "eth_sendRawTransaction" ? "reset-after-forward" : undefined);
    const r = await call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: "landed" } });
    proxy.fault = () => undefined;
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const groups = ok(await call(stack(), "GET", "/list_groups", { key: apiKey }), "list_groups");
    expect(groups.map((g: { name: string }) => g.name)).to.deep.equal(["warm", "landed"]);
    const after = await credit(apiKey);
    expect(after).to.be.lessThan(before);
    await apiGroup(stack(), apiKey, "next");
    const next = after - (await credit(apiKey));
    expect(before - after, `billed once: about the price of the next identical write (${next} cents)`).to.be.within(next - 1, next + 1);
  });

  it("refuses an action's key request with a plain message when the permission lookup meets a failing node (no node error reaches the action)", async function () {
    const { apiKey } = await newAccount(stack());
    const wallet = await apiWallet(stack(), apiKey);
    const lookup = wallet.slice(2).toLowerCase();
    for (const fault of ["reset", "garbage", "busy"] as RpcFault[]) {
      uncached();
      proxy.fault = (method, params) => (method === "eth_call" && JSON.stringify(params).toLowerCase().includes(lookup) ? fault : undefined);
      const r = await call(stack(), "POST", "/lit_action", { key: apiKey, body: { code: TRY_KEY, js_params: { pkpId: wallet } } });
      expect([r.status, r.body.response], fault).to.deep.equal([200, "refused: the chain's RPC node did not answer; try again"]);
    }
    proxy.fault = () => undefined;
    uncached();
    expect((await call(stack(), "POST", "/lit_action", { key: apiKey, body: { code: TRY_KEY, js_params: { pkpId: wallet } } })).body.response).to.equal("got a key");
  });
});
