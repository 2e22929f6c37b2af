import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { rpcRequest } from "../executor/sandbox/host/rpc-urls";
import { DEFAULT_LIMITS } from "../executor/sandbox/types";
import { loadConfig } from "../relayer/config";
import { fakeInternet, stubResolver } from "./helpers/network";

const rpc = (method: string, params: unknown[] = []) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const post = (url: string, body = rpc("eth_blockNumber")) => ({ op: "fetch" as const, url, method: "POST", headers: { "content-type": "application/json" }, body });

describe("the deployment's RPC URLs: reachable from actions although loopback, and nothing else is", function () {
  /** A JSON-RPC node on 127.0.0.1 that counts connections and requests; /redirect-* answer redirects. */
  let node: http.Server;
  let other: http.Server;
  let rpcUrl = "";
  let otherPort = 0;
  const seen = { node: 0, other: 0, connections: 0, paths: [] as string[] };
  before(async () => {
    other = http.createServer((_req, res) => {
      seen.other++;
      res.end("the operator's admin port");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    otherPort = (other.address() as AddressInfo).port;
    node = http.createServer((req, res) => {
      seen.node++;
      seen.paths.push(req.url!);
      if (req.url === "/rpc/to-other") return res.writeHead(307, { location: `http://127.0.0.1:${otherPort}/` }).end();
      if (req.url === "/rpc/to-path") return res.writeHead(307, { location: "/admin" }).end();
      res.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":"0x2a"}');
    });
    node.on("connection", () => seen.connections++);
    await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
    rpcUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}/rpc`;
  });
  after(async () => {
    node.closeAllConnections();
    other.closeAllConnections();
    await Promise.all([new Promise((r) => node.close(r)), new Promise((r) => other.close(r))]);
  });

  it("the exact RPC URL is fetched although it is loopback; without it in rpcUrls, the same request is refused", async () => {
    const before = seen.node;
    await expect(hostFetch(post(rpcUrl), DEFAULT_LIMITS)).to.be.rejectedWith(/private or local address \(127\.0\.0\.1: loopback\)/);
    expect(seen.node).to.equal(before);
    const answer = await hostFetch(post(rpcUrl), DEFAULT_LIMITS, { rpcUrls: [rpcUrl] });
    expect([answer.status, answer.body]).to.deep.equal([200, '{"jsonrpc":"2.0","id":1,"result":"0x2a"}']);
    expect(seen.node).to.equal(before + 1);
    const spelled = await hostFetch(post(`${rpcUrl}#fragment`), DEFAULT_LIMITS, { rpcUrls: [rpcUrl] }); // the fragment is never sent
    expect(spelled.status).to.equal(200);
  });

  for (const [label, url, why] of [
    ["another path on the same origin", () => rpcUrl.replace("/rpc", "/admin"), undefined],
    ["the path with a query", () => `${rpcUrl}?x=1`, undefined],
    ["the path with a trailing slash", () => `${rpcUrl}/`, undefined],
    ["a dot-segment that leaves the path", () => `${rpcUrl}/../admin`, undefined],
    ["another port on loopback", () => `http://127.0.0.1:${otherPort}/rpc`, undefined],
    ["127.0.0.2", () => rpcUrl.replace("127.0.0.1", "127.0.0.2"), undefined],
    ["IPv6 ::1", () => rpcUrl.replace("127.0.0.1", "[::1]"), undefined],
    ["localhost", () => rpcUrl.replace("127.0.0.1", "localhost"), undefined],
    ["credentials added", () => rpcUrl.replace("http://", "http://user:pw@"), /Request cannot be constructed from a URL that includes credentials/],
  ] as const) {
    it(`${label} is refused before any connection`, async () => {
      const before = { ...seen };
      await expect(hostFetch(post(url()), DEFAULT_LIMITS, { rpcUrls: [rpcUrl] })).to.be.rejectedWith(why ?? /private or local address \(127\.0\.0\.[12]: loopback\)|private or local address \(::1: loopback\)/);
      expect([seen.node, seen.other, seen.connections]).to.deep.equal([before.node, before.other, before.connections]);
    });
  }

  it("a name resolving to the RPC URL's loopback address (DNS rebinding) is refused: the exception is the URL, not the address", async () => {
    const names = stubResolver(() => [{ address: "127.0.0.1" }]);
    const before = seen.connections;
    const url = rpcUrl.replace("127.0.0.1", "rebind.test");
    await expect(hostFetch(post(url), DEFAULT_LIMITS, { rpcUrls: [rpcUrl], resolve: names.resolve })).to.be.rejectedWith(/rebind\.test is a private or local address \(127\.0\.0\.1: loopback\)/);
    expect(seen.connections).to.equal(before);
  });

  it("a configured name is resolved once and connected to as answered (no second lookup to rebind)", async () => {
    const names = stubResolver((_name, n) => [{ address: n === 1 ? "127.0.0.1" : "8.8.8.8" }]);
    const internet = fakeInternet({});
    const url = rpcUrl.replace("127.0.0.1", "chain.internal");
    const answer = await hostFetch(post(url), DEFAULT_LIMITS, { rpcUrls: [url], resolve: names.resolve, network: internet.network });
    expect(answer.status).to.equal(200);
    expect(names.lookups("chain.internal")).to.equal(1);
    expect(internet.attempts.map((a) => a.hostname)).to.deep.equal(["127.0.0.1"]);
  });

  it("a redirect into the RPC URL is not followed: only a fetch of the RPC URL itself reaches it (and waits its turn among the run's chain requests)", async () => {
    const redirector = http.createServer((_req, res) => res.writeHead(307, { location: rpcUrl }).end());
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    try {
      const before = seen.node;
      // the redirecting server stands for a public host (the test's is on loopback: private networks allowed for it)
      const from = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`;
      await expect(hostFetch(post(from), DEFAULT_LIMITS, { rpcUrls: [rpcUrl], allowPrivateNetworks: true })).to.be.rejectedWith(/a redirect to the deployment's RPC URL is not followed/);
      expect(seen.node).to.equal(before);
    } finally {
      redirector.closeAllConnections();
      await new Promise((r) => redirector.close(r));
    }
  });

  it("a redirect from the RPC URL elsewhere is refused: to another loopback port, and to another path of its origin", async () => {
    for (const path of ["/rpc/to-other", "/rpc/to-path"]) {
      const url = rpcUrl.replace("/rpc", path);
      const before = { ...seen };
      await expect(hostFetch(post(url), DEFAULT_LIMITS, { rpcUrls: [url] })).to.be.rejectedWith(/private or local address/);
      expect([seen.node, seen.other]).to.deep.equal([before.node + 1, before.other]); // the RPC URL answered the redirect; nothing else was reached
    }
    expect(seen.paths).to.not.include("/admin");
  });

  it("only single JSON-RPC requests of the chain's read and raw-send methods are sent to it", async () => {
    const refusals: [string, string | undefined, RegExp][] = [
      ["GET", undefined, /only JSON-RPC requests \(POST\)/],
      ["POST", "not json", /the body is not JSON/],
      ["POST", `[${rpc("eth_blockNumber")},${rpc("eth_chainId")}]`, /batches are not accepted/],
      ["POST", rpc("eth_sendTransaction", [{}]), /"eth_sendTransaction" may not be sent/],
      ["POST", rpc("Eth_SendTransaction", [{}]), /"Eth_SendTransaction" may not be sent/],
      ["POST", rpc("eth_sign", ["0x00", "0x00"]), /"eth_sign" may not be sent/],
      ["POST", rpc("eth_signTypedData_v4"), /"eth_signTypedData_v4" may not be sent/],
      ["POST", rpc("eth_accounts"), /"eth_accounts" may not be sent/],
      ["POST", rpc("personal_sendTransaction"), /"personal_sendTransaction" may not be sent/],
      ["POST", rpc("hardhat_setBalance"), /"hardhat_setBalance" may not be sent/],
      ["POST", rpc("evm_revert", ["0x1"]), /"evm_revert" may not be sent/],
      ["POST", rpc("anvil_reset"), /"anvil_reset" may not be sent/],
      ["POST", rpc("debug_traceTransaction"), /"debug_traceTransaction" may not be sent/],
      ["POST", JSON.stringify({ jsonrpc: "2.0", id: 1, params: Array(2000).fill(0), method: "eth_call" }), /at most 1024 JSON values/],
    ];
    for (const [method, body, why] of refusals) {
      const before = seen.connections;
      await expect(hostFetch({ op: "fetch", url: rpcUrl, method, headers: {}, ...(body === undefined ? {} : { body }) }, DEFAULT_LIMITS, { rpcUrls: [rpcUrl] }), `${method} ${body?.slice(0, 40)}`).to.be.rejectedWith(why);
      expect(seen.connections).to.equal(before);
    }
    for (const m of ["eth_getLogs", "eth_getTransactionReceipt", "eth_chainId", "net_version", "eth_blockNumber"]) {
      expect(rpcRequest("POST", rpc(m)), m).to.deep.equal({ body: rpc(m) });
    }
  });

  it("the node receives the request as checked: a second \"method\" key or an escaped name cannot make it read another method", async () => {
    const bodies: string[] = [];
    const recorder = http.createServer(async (req, res) => {
      let body = "";
      for await (const c of req) body += c;
      bodies.push(body);
      res.end('{"jsonrpc":"2.0","id":1,"result":null}');
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/`;
    try {
      // JSON.parse keeps the last "method"; a node whose parser kept the first would run eth_sendTransaction
      await hostFetch(post(url, '{"jsonrpc":"2.0","id":1,"method":"eth_sendTransaction","params":[{}],"method":"eth_chainId"}'), DEFAULT_LIMITS, { rpcUrls: [url] });
      await expect(hostFetch(post(url, '{"jsonrpc":"2.0","id":1,"method":"eth_\\u0073endTransaction","params":[]}'), DEFAULT_LIMITS, { rpcUrls: [url] })).to.be.rejectedWith(/"eth_sendTransaction" may not be sent/);
      expect(bodies).to.deep.equal(['{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[{}]}']);
    } finally {
      recorder.closeAllConnections();
      await new Promise((r) => recorder.close(r));
    }
  });

  describe("VESTA_ACTION_RPC_URLS", function () {
    const env = (value?: string) => ({
      VESTA_MODE: "development",
      VESTA_RPC_URL: "http://127.0.0.1:8545",
      VESTA_ACCOUNT_CONFIG_ADDRESS: "0x1111111111111111111111111111111111111111",
      VESTA_PAYER_KEYS: `0x${"11".repeat(32)}`,
      VESTA_SANDBOX_NETWORK: "shared",
      ...(value === undefined ? {} : { VESTA_ACTION_RPC_URLS: value }),
    });
    it("reads chain=url pairs; unset leaves the choice to the relayer (development: its own chain)", () => {
      expect(loadConfig(env()).actionRpcUrls).to.equal(undefined);
      expect([...loadConfig(env("")).actionRpcUrls!]).to.deep.equal([]);
      expect([...loadConfig(env(" base=https://mainnet.base.org , local=http://127.0.0.1:8545 ")).actionRpcUrls!]).to.deep.equal([
        ["base", "https://mainnet.base.org"],
        ["local", "http://127.0.0.1:8545"],
      ]);
    });
    for (const [value, problem] of [
      ["Base=https://x.test", /"Base=https:\/\/x.test" is not chain=url/],
      ["https://x.test", /is not chain=url/],
      ["a=https://x.test,a=https://y.test", /chain a is listed twice/],
      ["a=ftp://x.test", /the URL of a must be http or https/],
      ["a=not a url", /the URL of a is not a URL/],
    ] as const) {
      it(`refuses ${value} at boot`, () => expect(() => loadConfig(env(value))).to.throw(problem));
    }
  });
});
