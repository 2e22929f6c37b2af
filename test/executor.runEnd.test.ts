import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createHost, type HostDeps } from "../executor/host";
import type { KeyProvider } from "../executor/keys/provider";
import type { PermissionCache } from "../executor/permissions";
import { HostChannel } from "../executor/sandbox/host/call-channel";
import { ModuleFetcher } from "../executor/sandbox/host/modules";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { MAX_OPEN_IO_CALLS } from "../executor/sandbox/wire/bounds";
import { DEFAULT_LIMITS, type Host, type RunLimits, type RunResult } from "../executor/sandbox/types";
import type { IAccountConfig } from "../typechain-types";
import { JS_HEADERS } from "./helpers/cdn";

/**
 * Nothing a run starts on the relayer's side outlives it (executor/host.ts, host/call-channel.ts,
 * host/fetch.ts, host/modules.ts): the pool aborts a run's signal however the run ends, and each
 * fetch and module download of the run stops then, its connections closed. And what one run sends
 * is bounded in bytes, every redirect hop counted.
 */

const CID = "QmRunEnd";
const WHO = { keyHash: 1n, accountHash: 2n, isAccountKey: true };

/** An HTTP server on 127.0.0.1 that never answers (or answers what `answer` says); counts the connections open now, in all, and the request bytes. */
async function heldServer(answer?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean) {
  const state = { open: 0, total: 0, requests: 0, bodyBytes: 0, url: "", paths: [] as string[] };
  const server = http.createServer((req, res) => {
    state.requests++;
    state.paths.push(req.url ?? "");
    req.on("data", (chunk: Buffer) => (state.bodyBytes += chunk.length));
    req.on("end", () => answer?.(req, res));
  });
  server.on("connection", (socket) => {
    state.open++;
    state.total++;
    socket.on("close", () => state.open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    state,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves once `check()` holds (polled every 20 ms), or rejects after `ms` with what it saw. */
async function until(check: () => boolean, ms: number, what: () => string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

/** The executor's own Host (executor/host.ts) for fetches, imports and keys; `keys` answers what a test says (by default never). */
function executorHost(limits: RunLimits, opts: { modules?: ModuleFetcher; keys?: KeyProvider } = {}): Host {
  const deps: HostDeps = {
    keys: opts.keys ?? { kind: "local", deriveSecret: () => new Promise<Uint8Array>(() => {}) },
    permissions: {} as PermissionCache,
    accountConfig: {} as IAccountConfig,
    walletCache: new Map(),
    fetchAllowPrivate: true, // the test servers stand in for public hosts on 127.0.0.1
    modules: opts.modules ?? new ModuleFetcher({ source: { base: "http://127.0.0.1:1/npm/", entry: "/+esm" } }),
    rpcUrls: new Map(),
  };
  return createHost(deps, WHO, CID, limits);
}

describe("executor: a run's host work ends with the run", function () {
  this.timeout(60_000);
  let pool: SandboxPool;
  const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 10_000, ...overrides });
  const run = (code: string, params: unknown, limits: RunLimits, host: Host, on = pool, imports?: { base: string; entry: string }) =>
    on.run({ code: Buffer.from(code), ipfsId: CID, paramsJson: JSON.stringify(params), limits, ...(imports ? { imports } : {}) }, host);

  before(() => {
    pool = new SandboxPool({ size: 2, graceMs: 300 });
  });
  after(() => pool.close());

  describe("fetch", function () {
    // Each way a run ends, with 20 fetches to a server that never answers still under way
    // (MAX_OPEN_IO_CALLS of them open, connected by the relayer; the others wait their turn in the sandbox process).
    const FETCHES = 20;
    const started = `for (let i = 0; i < ${FETCHES}; i++) fetch(url + i).catch(() => {});`;
    const opened = `await new Promise((resolve) => setTimeout(resolve, 300));`; // the relayer has connected them all by then
    for (const [how, code, limits, check] of [
      ["returns", `async function main({ url }) { ${started} ${opened} return "bye"; }`, {}, (r: RunResult) => expect([r.hasError, r.response]).to.deep.equal([false, "bye"])],
      ["throws", `async function main({ url }) { ${started} ${opened} throw new Error("boom"); }`, {}, (r: RunResult) => expect(r.error?.message).to.equal("Error: boom")],
      ["passes its deadline", `async function main({ url }) { ${started} await new Promise(() => setInterval(() => {}, 50)); }`, { timeoutMs: 1000 }, (r: RunResult) => expect(r.error?.limit).to.equal("timeoutMs")],
      [
        "has its sandbox killed",
        `async function main({ url }) { ${started} ${opened} Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1); }`,
        { timeoutMs: 1000 },
        (r: RunResult) => expect(r.error?.message).to.match(/the sandbox was killed$/),
      ],
    ] as const) {
      it(`a run that ${how} closes the connections of its fetches at once, not after their 10 s timeout`, async () => {
        const target = await heldServer();
        try {
          // The host's own deadline is 10 s (a fetch's own timeout): only the end of the run can close these sooner.
          const result = await run(code, { url: target.state.url }, limitsWith(limits), executorHost(limitsWith()));
          check(result);
          const ended = Date.now();
          expect(target.state.total, "the relayer had connected every open fetch").to.equal(Math.min(FETCHES, MAX_OPEN_IO_CALLS));
          const ms = await until(() => target.state.open === 0, 2000, () => `${target.state.open} connections still open`);
          console.log(`      ${target.state.total} connections closed ${ms} ms after the run ended (${Date.now() - ended} ms)`);
        } finally {
          await target.close();
        }
      });
    }

    it("closing the pool ends its runs' fetches too", async () => {
      const target = await heldServer();
      const own = new SandboxPool({ size: 1 });
      try {
        const limits = limitsWith();
        const result = run(`async function main({ url }) { await fetch(url); }`, { url: target.state.url }, limits, executorHost(limits), own);
        await until(() => target.state.total === 1, 5000, () => "the fetch never arrived");
        await own.close();
        expect((await result).error?.message).to.equal("the sandbox pool was closed during the run");
        await until(() => target.state.open === 0, 2000, () => `${target.state.open} connections still open`);
      } finally {
        await own.close();
        await target.close();
      }
    });

    it("a run that ends while a host call waits on the key provider (which takes no signal) leaves nothing waiting in the channel", async () => {
      const limits = limitsWith();
      const never: Host = () => new Promise(() => {});
      const channel = new HostChannel(never, CID, limits);
      const answer = channel.answer("getLitActionPrivateKey", "{}");
      channel.close();
      expect(await answer).to.deep.equal({ ok: false, message: "the run has ended" });
      // and a call after the end never reaches the host
      let asked = false;
      const late = new HostChannel(async () => (asked = true), CID, limits);
      late.close();
      expect(await late.answer("getLitActionPrivateKey", "{}")).to.deep.equal({ ok: false, message: "the run has ended" });
      expect(asked).to.equal(false);
    });
  });

  describe("imports", function () {
    let cdn: Awaited<ReturnType<typeof heldServer>>;
    let release: () => void = () => {};
    const gate: http.ServerResponse[] = [];
    before(async () => {
      cdn = await heldServer((req, res) => {
        if (req.url === "/npm/gate@1.0.0/+esm") {
          gate.push(res);
          return true;
        }
        return true; // everything else: never answered
      });
      release = () => {
        for (const res of gate.splice(0)) res.writeHead(200, JS_HEADERS).end("export const g = 'through the gate';");
      };
    });
    after(() => cdn.close());
    const source = () => ({ base: `${cdn.state.url}npm/`, entry: "/+esm" });

    it("a module download of a run that ended is aborted at once, not after its 30 s", async () => {
      const modules = new ModuleFetcher({ source: source() });
      const limits = limitsWith({ timeoutMs: 1000 });
      const open = cdn.state.open;
      const result = await run(`import x from "slow@1.0.0"; async function main() { return 1 }`, {}, limits, executorHost(limits, { modules }), pool, source());
      expect(result.error?.limit).to.equal("timeoutMs");
      const ms = await until(() => cdn.state.open === open, 2000, () => `${cdn.state.open - open} CDN connections still open`);
      console.log(`      the download's connection closed ${ms} ms after the run ended`);
    });

    it("a download shared by two runs goes on while one of them waits, and reaches it; it is fetched once", async () => {
      const modules = new ModuleFetcher({ source: source() });
      const code = `import { g } from "gate@1.0.0"; async function main() { return g }`;
      const requests = () => cdn.state.paths.filter((p) => p === "/npm/gate@1.0.0/+esm").length;
      const short = limitsWith({ timeoutMs: 800 });
      const long = limitsWith({ timeoutMs: 8000 });
      const first = run(code, {}, short, executorHost(short, { modules }), pool, source());
      const second = run(code, {}, long, executorHost(long, { modules }), pool, source());
      expect((await first).error?.limit).to.equal("timeoutMs");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(gate.length === 1 && gate[0].socket !== null && !gate[0].socket.destroyed, "the download is still under way for the second run").to.equal(true);
      release();
      const r = await second;
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, "through the gate"]);
      expect(requests()).to.equal(1);
    });
  });

  describe("what one run sends", function () {
    it("a body is sent once per fetch of the run: a redirect that sends it again is one more fetch (maxFetches bodies in all)", async () => {
      // Each fetch's target answers 307 five times: before, every hop sent the body again (6 bodies per fetch).
      const target = await heldServer((req, res) => {
        const n = Number(/^\/r\/(\d+)/.exec(req.url ?? "")?.[1] ?? 0);
        if (n > 0) res.writeHead(307, { location: `/r/${n - 1}` }).end();
        else res.end("ok");
        return true;
      });
      try {
        const limits = limitsWith({ maxFetches: 10, maxFetchBytes: 64 * 1024 });
        const code = `async function main({ url, size }) {
          const body = "x".repeat(size);
          const results = await Promise.allSettled(Array.from({ length: 10 }, () => fetch(url + "r/5", { method: "POST", body })));
          return results.map((r) => r.status === "fulfilled" ? r.value.status : r.reason.message);
        }`;
        const r = await run(code, { url: target.state.url, size: limits.maxFetchBytes }, limits, executorHost(limits));
        console.log(`      10 fetches of a 64 KB body through 5 redirects: the target received ${target.state.requests} requests, ${target.state.bodyBytes} bytes of body`);
        expect(target.state.bodyBytes).to.be.at.most(limits.maxFetches * limits.maxFetchBytes);
        expect(r.hasError, r.logs).to.equal(false); // the action caught the refusals (Promise.allSettled)
        expect((r.response as string[]).some((m) => typeof m === "string" && m.includes("a redirect that sends the body again is one more fetch")), JSON.stringify(r.response)).to.equal(true);
        // a GET redirect sends no body: not counted
        target.state.requests = 0;
        const get = await run(`async function main({ url }) { return (await fetch(url + "r/5")).status }`, { url: target.state.url }, limitsWith({ maxFetches: 1 }), executorHost(limitsWith({ maxFetches: 1 })));
        expect([get.hasError, get.response, target.state.requests]).to.deep.equal([false, 200, 6]);
      } finally {
        await target.close();
      }
    });

    it("a body is bounded by its UTF-8 bytes: maxFetchBytes of text is maxFetchBytes sent, not three times that", async () => {
      const target = await heldServer((req, res) => {
        res.end("ok");
        return true;
      });
      try {
        const limits = limitsWith({ maxFetchBytes: 64 * 1024 });
        const code = `async function main({ url, n }) { return fetch(url, { method: "POST", body: "€".repeat(n) }).then((r) => r.status, (e) => e.message) }`;
        const over = await run(code, { url: target.state.url, n: limits.maxFetchBytes }, limits, executorHost(limits));
        expect(over.response).to.equal(`body is larger than ${limits.maxFetchBytes} bytes of UTF-8`);
        expect(target.state.requests).to.equal(0);
        const within = await run(code, { url: target.state.url, n: Math.floor(limits.maxFetchBytes / 3) }, limits, executorHost(limits));
        expect([within.response, target.state.bodyBytes]).to.deep.equal([200, 3 * Math.floor(limits.maxFetchBytes / 3)]);
      } finally {
        await target.close();
      }
    });
  });
});
