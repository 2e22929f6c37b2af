import { expect } from "chai";
import { ethers } from "hardhat";
import { AbiCoder, concat, ParamType, toBeHex, zeroPadValue } from "ethers";
import { startStack, type Stack } from "./helpers/relayer";
import { chainSecuredHash } from "./helpers/accountConfig";
import { rpcProxy, type RpcFault, type RpcProxy } from "./helpers/rpcProxy";
import { approvedToken, fakeCore, http, startHarness, until, type Harness } from "./helpers/triggers";
import { STORES, storeEnv } from "./helpers/postgres";
import { scanChains } from "../triggers/kinds/chainEvent";

const CODE = `async function main(params) { return params; }`;
const GROUP_CREATED = "GroupCreated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description)";

/**
 * The triggers service's edges meet the same classes of input and failure as the core's: strings
 * that are not well-formed Unicode anywhere in a request, a chain RPC node that fails while a
 * chain-event trigger is saved, and chain events carrying strings that are not UTF-8.
 */
for (const store of STORES)
describe(`triggers service: text and chain failures at the edges (${store})`, function () {
  this.timeout(120_000);
  let stack: Stack;
  let proxy: RpcProxy;
  let core: Awaited<ReturnType<typeof fakeCore>>;
  let h: Harness;
  let token: string;
  before(async function () {
    stack = await startStack();
    proxy = await rpcProxy(stack.rpcUrl);
    core = await fakeCore((body) => ({ status: 200, body: { response: body.js_params, logs: "", has_error: false } }));
    h = await startHarness({ ...(await storeEnv(this, store)), TRIGGERS_CORE_URL: core.url, TRIGGERS_RPC_ETHEREUM: proxy.url, TRIGGERS_RPC_TIMEOUT_MS: "1000", TRIGGERS_CONFIRMATIONS: "0" }, { pollers: false });
    token = await approvedToken(h);
    await h.svc.ctx.providers.ethereum!.getBlockNumber(); // the provider knows its network before any fault
  });
  after(async () => {
    await h?.stop();
    await core?.close();
    await proxy?.close();
    await stack?.stop();
  });
  afterEach(() => {
    proxy.fault = () => undefined;
  });

  const api = (p: string, init: Parameters<typeof http>[1] = {}) => http(`${h.svc.url}${p}`, { token, ...init });
  const count = async () => (await api("/api/triggers")).body.length as number;
  const chainEvent = async (config: Record<string, unknown> = {}) => ({
    name: "events",
    kind: "chain_event",
    action_code: CODE,
    usage_api_key: "k",
    config: { chain: "ethereum", contract_address: await stack.config.getAddress(), event_signature: GROUP_CREATED, ...config },
  });

  it("answers 400 invalid_text to a lone surrogate anywhere in a request (fields, default_params, config, keys, sign-in), and stores nothing", async function () {
    const before = await count();
    const hook = { name: "w", kind: "webhook", action_code: CODE, usage_api_key: "k", config: {} };
    const cases: [string, unknown, string][] = [
      ["/api/triggers", { ...hook, default_params: { a: ["x", "y\uD800"] } }, "default_params.a.1"],
      ["/api/triggers", { ...hook, default_params: { "\uDC00": 1 } }, "default_params.\uDC00 (the key)"],
      ["/api/triggers", { ...hook, usage_api_key: "k\uDFFF" }, "usage_api_key"],
      ["/api/triggers", await chainEvent({ event_signature: "Transfer(address,address,uint256)\uD800" }), "config.event_signature"],
    ];
    for (const [path, body, field] of cases) {
      const r = await api(path, { method: "POST", body });
      expect([r.status, r.body.code], JSON.stringify(r.body)).to.deep.equal([400, "invalid_text"]);
      expect(r.body.message).to.include(`${field}: must be well-formed Unicode: a lone surrogate`);
    }
    expect(await count()).to.equal(before);
    const sent = h.links.length;
    const login = await http(`${h.svc.url}/auth/login`, { method: "POST", body: { email: "a@example.com", next: "/\uD800" } });
    expect([login.status, login.body.code]).to.deep.equal([400, "invalid_text"]);
    expect(h.links.length, "no sign-in mail").to.equal(sent);
  });

  it("answers 503 chain_unavailable with Retry-After to a chain-event trigger saved while the chain's node fails, shows nothing of the node, and stores nothing", async function () {
    const before = await count();
    const body = await chainEvent();
    const expectUnavailable = async (what: string) => {
      const r = await api("/api/triggers", { method: "POST", body });
      expect([r.status, r.body.code], `${what}: ${JSON.stringify(r.body)}`).to.deep.equal([503, "chain_unavailable"]);
      expect(r.headers.get("retry-after"), what).to.equal("5");
      expect(JSON.stringify(r.body), what).to.not.match(new RegExp(`127\\.0\\.0\\.1|${new URL(proxy.url).port}|ECONN|socket|429|-32005`));
    };
    for (const fault of ["reset", "hang", "429", "garbage", "busy"] as RpcFault[]) {
      proxy.fault = () => fault;
      await expectUnavailable(fault);
    }
    proxy.fault = () => undefined;
    await proxy.down();
    try {
      await expectUnavailable("connection refused");
    } finally {
      await proxy.up();
    }
    expect(await count()).to.equal(before);
  });

  it("decodes a chain event's strings that are not UTF-8 with U+FFFD (a wallet wrote the bytes), the other arguments intact", async function () {
    const [, , , , , , , , , , , , , wallet] = await ethers.getSigners();
    const account = chainSecuredHash(wallet.address);
    const c = stack.config.connect(wallet);
    await (await c.newChainSecuredAccount("events", "")).wait();
    const created = await api("/api/triggers", { method: "POST", body: await chainEvent({ topic_filters: [zeroPadValue(toBeHex(account), 32)] }) });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    // addGroup(account, name, description, [], []) with the strings sent as raw bytes
    const f = c.interface.getFunction("addGroup")!;
    const types = f.inputs.map((p) => ParamType.from(JSON.parse(p.format("json").replace(/"type":"string"/g, '"type":"bytes"'))));
    await (await wallet.sendTransaction({ to: await c.getAddress(), data: concat([f.selector, AbiCoder.defaultAbiCoder().encode(types, [account, "0x61ff62", "0x41c3", [], []])]) })).wait();
    await scanChains(h.svc.ctx);
    const runs = await until(async () => {
      const r = (await api(`/api/triggers/${created.body.id}/runs`)).body.runs as any[];
      return r.length === 1 && r[0].status === "success" ? r : undefined;
    });
    const decoded = runs[0].params.event.decoded;
    expect([decoded.arg0, decoded.arg1, decoded.arg2, decoded.arg3, decoded.arg4]).to.deep.equal([account.toString(), "1", account.toString(), "a\uFFFDb", "A\uFFFD"]);
  });
});
