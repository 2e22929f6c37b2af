import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import ipaddr from "ipaddr.js";
import { refusedRange } from "../executor/sandbox/host/egress";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { DEFAULT_LIMITS } from "../executor/sandbox/types";
import { countingServer, fakeInternet, stubResolver } from "./helpers/network";

const get = (url: string) => ({ op: "fetch" as const, url, method: "GET", headers: {} });

describe("action fetch: no private networks", function () {
  let server: http.Server;
  let hits = 0;
  let base = "";
  before(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.end("secret of the operator's network");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  for (const url of [
    "http://127.0.0.1:8080/",
    "http://localhost:8080/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://[::ffff:127.0.0.1]/",
  ]) {
    it(`refuses ${url} before connecting`, async function () {
      const before = hits;
      try {
        await hostFetch(get(url), DEFAULT_LIMITS);
        expect.fail("a private address was fetched");
      } catch (err) {
        expect((err as Error).message).to.match(/private or local address/);
      }
      expect(hits).to.equal(before);
    });
  }

  it("refuses a local server that a test would reach, unless the operator allows private networks", async function () {
    const before = hits;
    await hostFetch(get(`${base}/`), DEFAULT_LIMITS).then(
      () => expect.fail("fetched a loopback server"),
      (err: Error) => expect(err.message).to.match(/private or local address/),
    );
    expect(hits).to.equal(before);
    const allowed = await hostFetch(get(`${base}/`), DEFAULT_LIMITS, { allowPrivateNetworks: true });
    expect(allowed.body).to.equal("secret of the operator's network");
  });
});

describe("action fetch: egress policy (IANA special-purpose ranges)", function () {
  // The test's own copy of the IANA IPv4 and IPv6 special-purpose registries (plus multicast and
  // the IPv6 forms that carry an IPv4 address): one address per entry and the reason expected.
  const REFUSED: [string, string][] = [
    ["0.1.2.3", "unspecified"],
    ["10.255.0.1", "private"],
    ["100.127.255.254", "carrierGradeNat"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "linkLocal"],
    ["172.31.255.254", "private"],
    ["192.0.0.9", "reserved"],
    ["192.0.0.170", "reserved"],
    ["192.0.2.1", "reserved"],
    ["192.31.196.1", "as112"],
    ["192.52.193.1", "amt"],
    ["192.88.99.1", "reserved"],
    ["192.168.1.1", "private"],
    ["192.175.48.1", "as112"],
    ["198.19.255.254", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.7", "reserved"],
    ["239.255.255.250", "multicast"],
    ["250.1.2.3", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["::ffff:169.254.169.254", "IPv4-mapped, carries 169.254.169.254 (linkLocal)"],
    ["::ffff:8.8.8.8", "IPv4-mapped, carries 8.8.8.8 (unicast)"],
    ["::ffff:0:127.0.0.1", "IPv4-translated, carries 127.0.0.1 (loopback)"],
    ["::127.0.0.1", "IPv4-compatible, carries 127.0.0.1 (loopback)"],
    ["::7f00:1", "IPv4-compatible, carries 127.0.0.1 (loopback)"],
    ["64:ff9b::a9fe:a9fe", "NAT64, carries 169.254.169.254 (linkLocal)"],
    ["64:ff9b::8.8.8.8", "NAT64, carries 8.8.8.8 (unicast)"],
    ["64:ff9b:1:7f00:0:100::", "NAT64 local-use, carries 127.0.0.1 (loopback)"],
    ["64:ff9b:1:808:8:800::", "NAT64 local-use, carries 8.8.8.8 (unicast)"],
    // near the local-use prefix 64:ff9b:1::/48, but outside it: no IPv4 is carried
    ["64:ff9b:2::1", "reserved (outside global unicast 2000::/3)"],
    ["64:ff9a:1::1", "reserved (outside global unicast 2000::/3)"],
    ["65:ff9b:1::1", "reserved (outside global unicast 2000::/3)"],
    // the IPv4-compatible form needs the first 96 bits zero and something beyond ::1
    ["::2", "IPv4-compatible, carries 0.0.0.2 (unspecified)"],
    ["::1:0:0:7f00:1", "reserved (outside global unicast 2000::/3)"],
    ["100::1", "discard"],
    ["100:0:0:1::1", "reserved (outside global unicast 2000::/3)"],
    ["2001:1::1", "reserved"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo, carries 192.0.2.45 (reserved)"],
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo, carries 127.0.0.1 (loopback)"],
    ["2001:2::1", "benchmarking"],
    ["2001:3::1", "amt"],
    ["2001:4:112::1", "as112v6"],
    ["2001:10::1", "deprecated"],
    ["2001:20::1", "orchid2"],
    ["2001:30::1", "droneRemoteIdProtocolEntityTags"],
    ["2001:db8::1", "reserved"],
    ["2002:7f00:1::1", "6to4, carries 127.0.0.1 (loopback)"],
    ["2002:a9fe:a9fe::", "6to4, carries 169.254.169.254 (linkLocal)"],
    ["2620:4f:8000::1", "as112v6"],
    ["3fff::1", "documentation"],
    ["5f00::1", "segmentRouting"],
    ["fd00::1", "uniqueLocal"],
    ["fc00::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["fec0::1", "reserved (outside global unicast 2000::/3)"],
    ["ff02::1", "multicast"],
    ["fe80::1%eth0", "not a plain IP address"],
  ];
  const PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"];

  for (const [address, reason] of REFUSED) {
    it(`refuses ${address}: ${reason}`, () => expect(refusedRange(address)).to.equal(reason));
  }
  it("allows public unicast addresses of both families", () => {
    expect(PUBLIC.map(refusedRange)).to.deep.equal(PUBLIC.map(() => null));
  });
  it("refuses the first and the last address of every range ipaddr.js names", () => {
    const allowed: string[] = [];
    for (const family of [ipaddr.IPv4, ipaddr.IPv6] as const) {
      for (const entries of Object.values((family.prototype as unknown as { SpecialRanges: Record<string, unknown> }).SpecialRanges)) {
        const list = (Array.isArray((entries as unknown[])[0]) ? entries : [entries]) as [ipaddr.IPv4 | ipaddr.IPv6, number][];
        for (const [net, bits] of list) {
          const cidr = `${net.toString()}/${bits}`;
          const parsed = family === ipaddr.IPv4 ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
          const last = family === ipaddr.IPv4 ? ipaddr.IPv4.broadcastAddressFromCIDR(cidr) : ipaddr.IPv6.broadcastAddressFromCIDR(cidr);
          for (const a of [parsed.toString(), last.toString()]) if (refusedRange(a) === null) allowed.push(`${a} in ${cidr}`);
        }
      }
    }
    expect(allowed).to.deep.equal([]);
  });

  describe("hostFetch connects to no refused address, whether a literal or a resolver's answer", function () {
    const internet = fakeInternet({});
    for (const [address, reason] of REFUSED) {
      const literal = address.includes(":") ? `[${address}]` : address;
      it(`refuses ${address} as a literal and as an answer for a name, before any connection`, async function () {
        const before = internet.attempts.length;
        const dnsAnswer = stubResolver(() => [{ address }]);
        const opts = { resolve: dnsAnswer.resolve, network: internet.network };
        if (!address.includes("%")) {
          await expect(hostFetch(get(`http://${literal}:8080/`), DEFAULT_LIMITS, opts)).to.be.rejectedWith(`is a private or local address (`);
        }
        await expect(hostFetch(get("http://name.test/"), DEFAULT_LIMITS, opts)).to.be.rejectedWith(
          `fetch: name.test is a private or local address (${address}: ${reason}); actions may only reach public hosts`,
        );
        expect(internet.attempts.length).to.equal(before);
      });
    }

    for (const [what, answer] of [
      ["answers no address", () => []],
      ["fails", () => { throw Object.assign(new Error("queryA ENOTFOUND name.test"), { code: "ENOTFOUND" }); }],
    ] as const) {
      it(`refuses a name whose resolver ${what}, before any connection`, async function () {
        const before = internet.attempts.length;
        const opts = { resolve: stubResolver(answer).resolve, network: internet.network };
        await expect(hostFetch(get("http://name.test/"), DEFAULT_LIMITS, opts)).to.be.rejectedWith(/^fetch: cannot resolve name\.test$/);
        expect(internet.attempts.length).to.equal(before);
      });
    }
  });
});

describe("action fetch: connects only to the address it checked", function () {
  const PUBLIC_A = "93.184.215.14";
  const PUBLIC_B = "2606:4700:4700::1111";
  let victim: Awaited<ReturnType<typeof countingServer>>;
  let publicServer: Awaited<ReturnType<typeof countingServer>>;
  let internet: ReturnType<typeof fakeInternet>;

  before(async () => {
    victim = await countingServer((req, res) => res.end("secret of the operator's network"));
    publicServer = await countingServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      if (url.pathname === "/to") return res.writeHead(302, { location: url.searchParams.get("url")! }).end();
      if (url.pathname === "/headers") return res.end(JSON.stringify({ authorization: req.headers.authorization ?? null, host: req.headers.host }));
      res.end("public answer");
    });
    internet = fakeInternet({ [PUBLIC_A]: publicServer.port, [PUBLIC_B]: publicServer.port });
  });
  after(async () => {
    await victim.close();
    await publicServer.close();
  });

  it("DNS rebinding: a name that answers a public address, then 127.0.0.1, is fetched from the public address only", async function () {
    const rebinding = stubResolver((name, n) => [{ address: n === 1 ? PUBLIC_A : "127.0.0.1" }]);
    rebinding.install(); // also the system resolver, for any code path that would resolve a second time
    try {
      const answer = await hostFetch(get(`http://rebind.test:${victim.port}/`), DEFAULT_LIMITS, { resolve: rebinding.resolve, network: internet.network });
      expect(answer.body).to.equal("public answer");
    } finally {
      rebinding.uninstall();
    }
    expect(victim.connections).to.equal(0);
    expect(rebinding.lookups("rebind.test")).to.equal(1);
    expect(internet.attempts.at(-1)).to.deep.equal({ hostname: PUBLIC_A, port: String(victim.port), servername: "rebind.test" });
  });

  it("checks every address of every family: a name with a public A and a private AAAA is refused", async function () {
    const before = internet.attempts.length;
    const mixed = stubResolver(() => [{ address: PUBLIC_A }, { address: "fd00::1" }]);
    await expect(hostFetch(get("http://mixed.test/"), DEFAULT_LIMITS, { resolve: mixed.resolve, network: internet.network })).to.be.rejectedWith(
      "fetch: mixed.test is a private or local address (fd00::1: uniqueLocal); actions may only reach public hosts",
    );
    expect(internet.attempts.length).to.equal(before);
  });

  it("reaches a public IPv6 address by its literal, and falls back to the next checked address when one is unreachable", async function () {
    const dual = stubResolver(() => [{ address: "2001:4860:4860::8888" }, { address: PUBLIC_B }]);
    const answer = await hostFetch(get("http://dual.test/"), DEFAULT_LIMITS, { resolve: dual.resolve, network: internet.network });
    expect(answer.body).to.equal("public answer");
    expect(internet.attempts.slice(-2).map((a) => a.hostname)).to.deep.equal(["2001:4860:4860::8888", PUBLIC_B]);
  });

  it("https: connects to the checked address and keeps the host name for TLS (SNI and certificate check)", async function () {
    const secure = stubResolver(() => [{ address: "8.8.4.4" }]);
    await expect(hostFetch(get("https://secure.test/"), DEFAULT_LIMITS, { resolve: secure.resolve, network: internet.network })).to.be.rejectedWith(/ENETUNREACH 8\.8\.4\.4/);
    expect(internet.attempts.at(-1)).to.deep.equal({ hostname: "8.8.4.4", port: "", servername: "secure.test" }); // "" = the scheme's default, 443
  });

  for (const [label, target, answer] of [
    ["a loopback literal", (port: number) => `http://127.0.0.1:${port}/`, undefined],
    ["an IPv4-mapped loopback literal", (port: number) => `http://[::ffff:127.0.0.1]:${port}/`, undefined],
    ["a 6to4 literal carrying loopback", (port: number) => `http://[2002:7f00:1::]:${port}/`, undefined],
    ["a name that resolves to loopback", (port: number) => `http://internal.test:${port}/`, "127.0.0.1"],
    ["a name that resolves to the metadata address", (port: number) => `http://internal.test:${port}/`, "169.254.169.254"],
    ["a name that resolves to NAT64 loopback", (port: number) => `http://internal.test:${port}/`, "64:ff9b::7f00:1"],
  ] as const) {
    it(`a redirect hop from a public host to ${label} is refused`, async function () {
      const names = stubResolver((name) => [{ address: name === "public.test" ? PUBLIC_A : answer! }]);
      const served = publicServer.connections;
      const url = `http://public.test/to?url=${encodeURIComponent(target(victim.port))}`;
      await expect(hostFetch(get(url), DEFAULT_LIMITS, { resolve: names.resolve, network: internet.network })).to.be.rejectedWith("is a private or local address (");
      expect(publicServer.connections).to.equal(served + 1); // the first hop was fetched
      expect(victim.connections).to.equal(0);
    });
  }

  it("follows a redirect to another public host, dropping credentials across origins (kept on the same origin)", async function () {
    const names = stubResolver((name) => [{ address: name === "a.test" ? PUBLIC_A : PUBLIC_B }]);
    const opts = { resolve: names.resolve, network: internet.network };
    const call = (url: string) => ({ ...get(url), headers: { Authorization: "Bearer s3cret" } });
    const same = await hostFetch(call(`http://a.test/to?url=${encodeURIComponent("/headers")}`), DEFAULT_LIMITS, opts);
    expect(JSON.parse(same.body!)).to.deep.equal({ authorization: "Bearer s3cret", host: "a.test" });
    const cross = await hostFetch(call(`http://a.test/to?url=${encodeURIComponent("http://b.test/headers")}`), DEFAULT_LIMITS, opts);
    expect(JSON.parse(cross.body!)).to.deep.equal({ authorization: null, host: "b.test" });
    expect(victim.connections).to.equal(0);
  });

  it("with VESTA_ACTION_FETCH_PRIVATE the name is still resolved once and connected to as answered", async function () {
    const rebinding = stubResolver((name, n) => [{ address: n === 1 ? "127.0.0.1" : PUBLIC_A }]);
    const served = publicServer.connections;
    const answer = await hostFetch(get(`http://dev.test:${victim.port}/`), DEFAULT_LIMITS, { resolve: rebinding.resolve, network: internet.network, allowPrivateNetworks: true });
    expect(answer.body).to.equal("secret of the operator's network");
    expect(rebinding.lookups("dev.test")).to.equal(1);
    expect(publicServer.connections).to.equal(served);
    expect(victim.connections).to.equal(1);
  });
});

describe("action fetch: what one fetch may cost its run (host/fetch.ts)", function () {
  let target: Awaited<ReturnType<typeof countingServer>>;
  let bodies = 0;
  before(async () => {
    target = await countingServer((req, res) => {
      req.on("data", (chunk: Buffer) => (bodies += chunk.length));
      req.on("end", () => {
        const url = new URL(req.url!, "http://x");
        const n = Number(/^\/r\/(\d+)$/.exec(url.pathname)?.[1] ?? -1);
        if (url.pathname === "/hold") return; // never answers
        if (n > 0) return res.writeHead(Number(url.searchParams.get("status") ?? 307), { location: `/r/${n - 1}${url.search}` }).end();
        res.end("done");
      });
    });
  });
  after(() => target.close());
  const post = (path: string, method = "POST") => ({ op: "fetch" as const, url: `http://127.0.0.1:${target.port}${path}`, method, headers: {}, body: "x".repeat(1000) });
  const opts = { allowPrivateNetworks: true }; // the target stands in for a public host

  for (const status of [307, 308]) {
    it(`a ${status} that sends the body again is one more fetch of the run; past the run's fetches, the redirect is not followed`, async () => {
      let left = 2;
      const countFetch = () => (left > 0 ? (left--, true) : false);
      bodies = 0;
      await expect(hostFetch(post(`/r/5?status=${status}`), DEFAULT_LIMITS, { ...opts, countFetch })).to.be.rejectedWith(
        "fetch limit exceeded: at most 50 fetches per run (maxFetches): a redirect that sends the body again is one more fetch",
      );
      expect(bodies, "the body was sent 3 times: the fetch, then 2 hops the run could pay for").to.equal(3000);
      const err = await hostFetch(post(`/r/1?status=${status}`), DEFAULT_LIMITS, { ...opts, countFetch: () => false }).catch((e: Error & { limit?: string }) => e);
      expect((err as Error & { limit?: string }).limit).to.equal("maxFetches");
    });
  }

  it("a redirect that sends no body again (303, or 302 after a POST) is not counted; a PUT through a 302 is", async () => {
    let counted = 0;
    const countFetch = () => (counted++, true);
    expect((await hostFetch(post("/r/3?status=303"), DEFAULT_LIMITS, { ...opts, countFetch })).body).to.equal("done");
    expect((await hostFetch(post("/r/3?status=302"), DEFAULT_LIMITS, { ...opts, countFetch })).body).to.equal("done");
    expect(counted).to.equal(0);
    expect((await hostFetch(post("/r/3?status=302", "PUT"), DEFAULT_LIMITS, { ...opts, countFetch })).body).to.equal("done");
    expect(counted).to.equal(3);
  });

  it("the run's end aborts the request and closes its connection; a fetch after the end is never sent", async () => {
    const ended = new AbortController();
    const connections = target.connections;
    const pending = hostFetch({ ...post("/hold"), method: "GET" }, DEFAULT_LIMITS, { ...opts, signal: ended.signal });
    while (target.connections === connections) await new Promise((resolve) => setTimeout(resolve, 10));
    const started = Date.now();
    ended.abort();
    await expect(pending).to.be.rejectedWith("fetch: the run has ended");
    expect(Date.now() - started).to.be.below(1000);
    await expect(hostFetch(post("/r/0"), DEFAULT_LIMITS, { ...opts, signal: ended.signal })).to.be.rejectedWith("fetch: the run has ended");
    expect(target.connections).to.equal(connections + 1);
  });
});
