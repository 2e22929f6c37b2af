import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect } from "chai";
import { AbiCoder, Transaction, Wallet, computeAddress, ethers, SigningKey } from "ethers";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host, type HostCall, type RunLimits, type RunResult } from "../executor/sandbox/types";

const PKP_ID = "0x1111111111111111111111111111111111111111";
const PKP_KEY = `0x${"11".repeat(32)}`;
const ACTION_KEY = `0x${"22".repeat(32)}`;
const CID = "QmTestActionCid";
const EXAMPLES = path.join(__dirname, "..", "executor", "examples");
const GRACE_MS = 500;

const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 5000, ...overrides });
/** A run request as the executor makes one: the code's UTF-8 bytes and the params as JSON. */
const request = (code: string, params: unknown, limits: RunLimits, headers?: Record<string, string>) => ({
  code: Buffer.from(code, "utf8"),
  ipfsId: CID,
  paramsJson: JSON.stringify(params),
  limits,
  ...(headers ? { headers } : {}),
});

/** A Host with fixed keys (the test double of the key-holding host); records every call. */
function testHost(limits: RunLimits) {
  const calls: HostCall[] = [];
  const host: Host = async (call) => {
    calls.push(call);
    switch (call.op) {
      case "getPrivateKey":
        if (call.pkpId !== PKP_ID) throw new Error(`not permitted: wallet ${call.pkpId}`);
        return PKP_KEY;
      case "getLitActionPrivateKey":
        return ACTION_KEY;
      case "getLitActionPublicKey":
        return new SigningKey(ACTION_KEY).compressedPublicKey;
      case "getLitActionWalletAddress":
        return computeAddress(ACTION_KEY).toLowerCase(); // as executor/host.ts answers it (Chipotle's form)
      case "encrypt":
        return `enc:${Buffer.from(call.message).toString("base64")}`;
      case "decrypt":
        return Buffer.from(call.ciphertext.slice(4), "base64").toString();
      case "fetch":
        return hostFetch(call, limits, { allowPrivateNetworks: true }); // the test servers are on 127.0.0.1
    }
  };
  return { host, calls };
}

describe("executor sandbox", function () {
  this.timeout(30_000);
  let pool: SandboxPool;
  let server: http.Server;
  let base: string;

  const run = async (code: string, params: unknown = {}, overrides: Partial<RunLimits> = {}, headers?: Record<string, string>) => {
    const limits = limitsWith(overrides);
    const { host, calls } = testHost(limits);
    const started = Date.now();
    const result = await pool.run(request(code, params, limits, headers), host);
    return { ...result, calls, ms: Date.now() - started };
  };
  const example = (name: string) => fs.readFileSync(path.join(EXAMPLES, name), "utf8");
  const expectLimit = (result: RunResult, limit: keyof RunLimits, message: RegExp) => {
    expect(result.hasError, JSON.stringify(result)).to.equal(true);
    expect(result.error?.limit).to.equal(limit);
    expect(result.error?.message).to.match(message);
    expect(result.logs).to.include(result.error!.message);
  };

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/json") return res.writeHead(200, { "content-type": "application/json", "x-test": "yes" }).end('{"hello":"world"}');
      if (req.url === "/big") return res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(2 * 1024 * 1024));
      if (req.url === "/to-file") return res.writeHead(302, { location: "file:///etc/passwd" }).end();
      if (req.url === "/to-json") return res.writeHead(302, { location: "/json" }).end();
      if (req.url === "/echo") return req.pipe(res.writeHead(201, { "content-type": "text/plain" }));
      if (req.url === "/slow") return; // never answers
      if (req.url === "/bytes") return res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i)));
      res.writeHead(404).end("not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = new SandboxPool({ size: 2, graceMs: GRACE_MS });
    await Promise.all([run("1"), run("2")]); // start both sandbox processes
  });

  after(async () => {
    await pool.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe("examples", function () {
    it("hello.js returns its params and logs", async () => {
      const r = await run(example("hello.js"), { name: "vesta" });
      expect(r).to.deep.include({ response: { hello: "vesta", params: { name: "vesta" } }, logs: "hello, vesta\n", hasError: false });
    });

    it("sign-message.js signs with the wallet's key like ethers does", async () => {
      const r = await run(example("sign-message.js"), { pkpId: PKP_ID, message: "hello" });
      const wallet = new Wallet(PKP_KEY);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ address: wallet.address, signature: await wallet.signMessage("hello"), recovered: wallet.address });
      expect(r.calls).to.deep.equal([{ op: "getPrivateKey", pkpId: PKP_ID }]);
    });

    it("encrypt-decrypt.js round-trips through the host", async () => {
      const r = await run(example("encrypt-decrypt.js"), { pkpId: PKP_ID, message: "secret" });
      expect(r.response).to.deep.equal({ ciphertext: `enc:${Buffer.from("secret").toString("base64")}`, plaintext: "secret", roundTrip: true });
    });

    it("fetch-url.js fetches a URL from params", async () => {
      const r = await run(example("fetch-url.js"), { url: `${base}/json` });
      expect(r.response).to.deep.equal({ ok: true, status: 200, contentType: "application/json", body: { hello: "world" }, isResponse: true, bytes: 17 });
    });

    it("web-platform.js uses TextEncoder/Decoder, atob/btoa, URL, structuredClone, Request/Response, AbortController and global", async () => {
      const r = await run(example("web-platform.js"), { name: "vesta" });
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({
        utf8Bytes: Buffer.byteLength("héllo vesta 😀"),
        decoded: "héllo vesta 😀",
        base64: "dmVzdGE=",
        fromBase64: "vesta",
        url: "https://example.com/search?q=vesta&page=2",
        query: { q: "vesta", page: "2" },
        request: { method: "POST", url: "https://example.com/search?q=vesta&page=2", contentType: "application/json" },
        response: { status: 201, ok: true, type: "application/json", body: { echoed: { name: "vesta" } } },
        aborted: { aborted: true, reason: "AbortError" },
        cloned: { when: "1970-01-01T00:00:00.000Z", tags: ["a"], sameBytes: true },
        global: true,
      });
    });

    it("web-crypto.js: digests, HMAC, ECDSA P-256 and AES-GCM agree with Node's crypto", async () => {
      const r = await run(example("web-crypto.js"), { message: "hello" });
      expect(r.hasError, r.logs).to.equal(false);
      const digest = (alg: string) => crypto.createHash(alg).update("hello").digest("hex");
      expect(r.response).to.deep.equal({
        digests: { "SHA-1": digest("sha1"), "SHA-256": digest("sha256"), "SHA-384": digest("sha384"), "SHA-512": digest("sha512") },
        hmac: { mac: crypto.createHmac("sha256", "secret").update("hello").digest("hex"), verified: true, jwk: Buffer.from("secret").toString("base64url") },
        ecdsa: { signatureBytes: 64, publicKeyBytes: 65, verified: true },
        aes: { sealedBytes: 5 + 16, opened: "hello", extractable: false },
        uuid: true,
      });
    });

    it("lit-namespace.js (Chipotle style): frozen Lit, compressed public key, a JSON string response parsed", async () => {
      const r = await run(example("lit-namespace.js"));
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ same: true, frozen: true, assignmentThrew: true, compressed: true, matchesAddress: true, imports: [] });
    });

    it("action-wallet.js derives the action's wallet and signs a transaction", async () => {
      const to = "0x2222222222222222222222222222222222222222";
      const r = await run(example("action-wallet.js"), { to, chainId: 1 });
      const wallet = new Wallet(ACTION_KEY);
      const signedTx = await wallet.signTransaction({ to, value: ethers.parseEther("0.01"), nonce: 0, gasLimit: 21000, maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, chainId: 1, type: 2 });
      expect(r.response).to.deep.equal({ address: wallet.address.toLowerCase(), publicKey: wallet.signingKey.compressedPublicKey, matches: true, signedTx });
    });
  });

  describe("action shape and results", function () {
    it("main's return value wins over setResponse, and a returned string is taken as setResponse takes it, as on Chipotle; Actions is Lit.Actions", async () => {
      // Chipotle's runtime calls setResponse({response}) with what main returns (when it returns something), after main.
      const r = await run("async function main() { Actions.setResponse({ response: 'set' }); return Lit.Actions === Actions ? 'returned' : 'bad' }");
      expect(r).to.deep.include({ response: "returned", hasError: false });
      expect((await run("async function main() { Lit.Actions.setResponse({ response: 'set' }) }")).response).to.equal("set");
      // setResponse answers null, as Chipotle's op does (its runtime test async_await logs [ "456", null ])
      const both = await run("async function main() { console.log(await Promise.all([Promise.resolve('456'), Lit.Actions.setResponse({ response: 'OK' })])) }");
      expect([both.response, both.logs]).to.deep.equal(["OK", '[ "456", null ]\n']);
      expect((await run("async function main() { Lit.Actions.setResponse({ response: 'set' }); return undefined }")).response).to.equal("set");
      expect((await run("async function main() { Lit.Actions.setResponse({ response: 'set' }); return null }")).response).to.equal(null);
      // a string that parses as JSON is that JSON, any other string itself
      expect((await run("async function main() { return JSON.stringify({ signature: '0x01', n: [1] }) }")).response).to.deep.equal({ signature: "0x01", n: [1] });
      expect((await run("async function main() { return '32' }")).response).to.equal(32);
      expect((await run("async function main() { return 'not json' }")).response).to.equal("not json");
      expect((await run("async function main() { return '' }")).response).to.equal("");
      // nothing set, nothing returned: "" (Chipotle's response then), not null
      expect(await run("async function main() { }")).to.deep.include({ response: "", hasError: false });
      expect(await run("console.log('top level only')")).to.deep.include({ response: "", hasError: false });
    });

    it("accepts top-level setResponse, top-level await and an arrow main", async () => {
      expect((await run("Lit.Actions.setResponse('bare')")).response).to.equal("bare");
      expect((await run("const v = await new Promise((r) => setTimeout(() => r(7), 10)); Lit.Actions.setResponse({ response: v })")).response).to.equal(7);
      expect((await run("const main = async (p) => p.n * 2;", { n: 21 })).response).to.equal(42);
      expect((await run("(async () => { await null; Lit.Actions.setResponse({ response: 'iife' }) })()")).response).to.equal("iife");
    });

    it("captures console output, each call's text ending with a newline (as on Chipotle), NULs and lone surrogates kept", async () => {
      const r = await run("console.log('a', {b: 1}, [2]); console.info(1n); console.warn(undefined); console.error(new Error('e').message); console.debug(null)");
      expect(r.logs).to.equal("a { b: 1 } [ 2 ]\n1n\nundefined\ne\nnull\n"); // as Deno prints them (test/executor.console.test.ts)
      // review finding: strings were read out of QuickJS as C strings (a NUL ended them)
      const exact = await run("async function main() { console.log('visible\\u0000after'); console.log('x\\ud800y'); throw new Error('shown\\u0000kept') }");
      expect(exact.logs).to.match(/^visible\u0000after\nx\ud800y\nError: shown\u0000kept\n/);
      expect(exact.error?.message).to.equal("Error: shown\u0000kept");
    });

    it("reports a thrown error with its QuickJS stack, also at the end of the logs", async () => {
      const r = await run("console.log('before');\nfunction f() { throw new Error('boom'); }\nasync function main() { f(); }");
      expect(r.hasError).to.equal(true);
      expect(r.error?.message).to.equal("Error: boom");
      expect(r.error?.stack).to.match(/at f \(action\.js:2:/);
      expect(r.logs).to.match(/^before\nError: boom\n {4}at f \(action\.js:2:/);
    });

    it("reports syntax errors and non-JSON responses", async () => {
      expect((await run("function (")).error?.message).to.match(/^SyntaxError/);
      expect((await run("async function main() { return 1n }")).error?.message).to.match(/not JSON-serializable/);
      expect((await run("async function main() { const a = {}; a.a = a; return a }")).error?.message).to.match(/not JSON-serializable/);
    });

    it("runs real timers: setTimeout waits, clearTimeout cancels", async () => {
      const r = await run("async function main() { const t0 = Date.now(); let hit = false; const id = setTimeout(() => (hit = true), 5); clearTimeout(id); await new Promise((r) => setTimeout(r, 30)); return { waited: Date.now() - t0 >= 25, hit } }");
      expect(r.response).to.deep.equal({ waited: true, hit: false });
    });

    it("ends the run on an error thrown in a timer callback", async () => {
      const r = await run("async function main() { setTimeout(() => { throw new Error('in timer') }, 5); await new Promise((r) => setTimeout(r, 1000)); return 'finished' }");
      expect(r.error?.message).to.equal("Error: in timer (uncaught in setTimeout)");
      expect(r.response).to.equal(null);
      expect(r.ms).to.be.below(900);
    });

    it("ends a run whose promise can never settle", async () => {
      const r = await run("async function main() { await new Promise(() => {}) }");
      expect(r.error?.message).to.match(/never settled/);
    });

    it("passes host errors to the action as rejected promises", async () => {
      const r = await run("async function main() { try { await Lit.Actions.getPrivateKey({ pkpId: '0xother' }) } catch (e) { return e.message } }");
      expect(r).to.deep.include({ response: "not permitted: wallet 0xother", hasError: false });
    });
  });

  describe("limits", function () {
    it("memory: many small objects and a few huge strings stop at the limit; RSS stays bounded", async () => {
      const rss = process.memoryUsage().rss;
      const memoryBytes = 32 * 1024 * 1024;
      const [objects, strings, repeat] = await Promise.all([
        run("const a = []; while (true) a.push({ i: a.length, s: 'v' + a.length })", {}, { memoryBytes }),
        run("const s = 'y'.repeat(1 << 20); const a = []; for (let i = 0; i < 3000; i++) a.push(s + 'a' + i); a.map((x) => x.indexOf('z'))", {}, { memoryBytes }),
        run("const a = []; for (let i = 0; i < 100; i++) a.push('x'.repeat(1 << 24) + i); a.map((s) => s.indexOf('q'))", {}, { memoryBytes }),
      ]);
      for (const r of [objects, strings, repeat]) expectLimit(r, "memoryBytes", /memory limit exceeded/);
      expect(process.memoryUsage().rss - rss).to.be.below(500 * 1024 * 1024);
      expect((await run("async function main() { return 'alive' }")).response).to.equal("alive");
    });

    it("time: an infinite loop at top level and inside an async function", async () => {
      const [top, inAsync] = await Promise.all([run("while (true) {}", {}, { timeoutMs: 1000 }), run("async function main() { await null; for (;;) {} }", {}, { timeoutMs: 1000 })]);
      for (const r of [top, inAsync]) {
        expectLimit(r, "timeoutMs", /^timeout: the action ran longer than 1000 ms/);
        expect(r.error?.message).not.to.match(/terminated/); // stopped by the interrupt handler
        expect(r.ms).to.be.within(1000, 1000 + GRACE_MS);
      }
    });

    it("time: a built-in that ignores the interrupt handler is killed with its sandbox process, which is replaced", async () => {
      const replaced = pool.stats().replaced;
      const r = await run("Array.prototype.indexOf.call({ length: 4294967295 }, 1)", {}, { timeoutMs: 1000 });
      expectLimit(r, "timeoutMs", /^timeout: .*the sandbox was killed/);
      expect(r.ms).to.be.within(1000, 1000 + GRACE_MS + 500);
      expect(pool.stats().replaced).to.equal(replaced + 1);
      expect((await run("async function main() { return 'after' }")).response).to.equal("after");
    });

    it("a runaway action does not block other runs", async () => {
      await Promise.all([run("1"), run("2")]); // both sandbox processes started
      const runaway = run("while (true) {}", {}, { timeoutMs: 8000 });
      let runawayEnded = false;
      void runaway.then(() => (runawayEnded = true));
      const hellos = await Promise.all([1, 2, 3, 4, 5].map((n) => run(example("hello.js"), { name: `n${n}` })));
      expect(runawayEnded, "the hellos finished while the runaway still held its worker").to.equal(false);
      expect(hellos.map((h) => h.response)).to.deep.equal([1, 2, 3, 4, 5].map((n) => ({ hello: `n${n}`, params: { name: `n${n}` } })));
      expectLimit(await runaway, "timeoutMs", /timeout/);
    });

    it("deep recursion ends with a stack overflow error and the sandbox keeps working", async () => {
      const deep = await run("function f(n) { return f(n + 1) + 1 } f(0)");
      expect(deep.error?.message).to.equal("InternalError: stack overflow");
      const json = await run("JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))");
      expect(json.error?.message).to.match(/stack overflow/);
      const nested = await run("let a = []; for (let i = 0; i < 1e5; i++) a = [a]; JSON.stringify(a)", {}, { timeoutMs: 20_000 }); // slow machines: the overflow, not the clock, must end it
      expect(nested.error?.message).to.match(/stack overflow/);
      expect((await run("async function main() { return 'ok' }")).response).to.equal("ok");
    });

    it("response: a huge return value or setResponse", async () => {
      expectLimit(await run("async function main() { return 'x'.repeat(200 * 1024) }"), "maxResponseBytes", /^response too large/);
      expectLimit(await run("Lit.Actions.setResponse({ response: 'x'.repeat(200 * 1024) }); while (true) {}"), "maxResponseBytes", /^response too large/);
    });

    it("logs: a log flood ends the run at maxLogBytes", async () => {
      const r = await run("for (;;) console.log('x'.repeat(100))", {}, { maxLogBytes: 1024 });
      expectLimit(r, "maxLogBytes", /^log limit exceeded: logs are capped at 1 KB/);
      expect(Buffer.byteLength(r.logs.slice(0, r.logs.lastIndexOf("\nlog limit")))).to.be.at.most(1024);
      expect(r.ms).to.be.below(2000);
    });

    it("fetch: over maxFetches rejects (the action may catch it, and then the run does not fail for it, as on Chipotle; uncaught, it fails the run with the limit); the host sees only the allowed fetches", async () => {
      const code = `async function main({ url }) { const out = []; for (let i = 0; i < 5; i++) { try { out.push((await fetch(url)).status) } catch (e) { out.push(e.message) } } return out }`;
      const r = await run(code, { url: `${base}/json` }, { maxFetches: 3 });
      const refused = "fetch limit exceeded: at most 3 fetches per run (maxFetches)";
      expect([r.hasError, r.response]).to.deep.equal([false, [200, 200, 200, refused, refused]]);
      expect(r.calls.filter((c) => c.op === "fetch")).to.have.length(3);
      const uncaught = await run(`async function main({ url }) { for (let i = 0; i < 5; i++) await fetch(url) }`, { url: `${base}/json` }, { maxFetches: 3 });
      expectLimit(uncaught, "maxFetches", /fetch limit exceeded: at most 3 fetches per run/);
    });

    it("keys: over maxKeyRequests rejects (caught: the run does not fail for it; uncaught: it fails with the limit); the host sees only the allowed requests", async () => {
      const code = `async function main({ pkpId }) { const out = []; for (let i = 0; i < 4; i++) { try { out.push((await Lit.Actions.getPrivateKey({ pkpId })).length) } catch (e) { out.push(e.message) } } return out }`;
      const r = await run(code, { pkpId: PKP_ID }, { maxKeyRequests: 2 });
      const refused = "key request limit exceeded: at most 2 key requests per run (maxKeyRequests)";
      expect([r.hasError, r.response]).to.deep.equal([false, [66, 66, refused, refused]]);
      expect(r.calls).to.have.length(2);
      const uncaught = await run(`async function main({ pkpId }) { for (let i = 0; i < 4; i++) await Lit.Actions.getPrivateKey({ pkpId }) }`, { pkpId: PKP_ID }, { maxKeyRequests: 2 });
      expectLimit(uncaught, "maxKeyRequests", /key request limit exceeded: at most 2 key requests per run/);
    });

    it("code and params: sizes over the limits; big code still runs", async () => {
      expectLimit(await run("1".repeat(2048), {}, { maxCodeBytes: 1024 }), "maxCodeBytes", /^code too large/);
      expectLimit(await run("1", { s: "x".repeat(2048) }, { maxParamsBytes: 1024 }), "maxParamsBytes", /^params too large/);
      const big = `/* ${"padding ".repeat(600_000)} */\nlet n = 0;\n${"n++;\n".repeat(200_000)}async function main() { return n }`;
      expect((await run(big)).response).to.equal(200_000);
    });
  });

  describe("isolation", function () {
    it("has no Node globals", async () => {
      const r = await run("async function main() { return [typeof process, typeof require, typeof Buffer, typeof module, typeof __vesta, typeof globalThis.process] }");
      expect(r.response).to.deep.equal(["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"]);
    });

    it("Function constructors only reach the sandbox's own global", async () => {
      const reach = await run("globalThis.constructor.constructor('return process')()");
      expect(reach.error?.message).to.equal("ReferenceError: 'process' is not defined (process does not exist in Vesta's sandbox: actions are not Node programs)");
      const r = await run(`async function main() {
        const g = (function () {}).constructor("return this")();
        const viaApi = await Lit.Actions.getPrivateKey.constructor("return typeof require")(); // AsyncFunction
        const viaConsole = console.log.constructor.constructor("return typeof process")();
        return { same: g === globalThis, hasLit: typeof g.Lit, viaApi, viaConsole };
      }`);
      expect(r.response).to.deep.equal({ same: true, hasLit: "object", viaApi: "undefined", viaConsole: "undefined" });
    });

    it("gives every run a fresh context: globals and prototype pollution do not survive, nor reach the host", async () => {
      const single = new SandboxPool({ size: 1 });
      try {
        const { host } = testHost(limitsWith());
        const req = (code: string) => single.run(request(code, {}, limitsWith()), host);
        const first = await req("Object.prototype.polluted = 'yes'; Array.prototype.map = null; globalThis.leak = 1; Lit.Actions.setResponse(JSON.parse('{\"__proto__\": {\"polluted\": 1}}'))");
        expect(first.hasError).to.equal(false);
        const second = await req("async function main() { return [({}).polluted, typeof Array.prototype.map, typeof leak] }");
        expect(second.response).to.deep.equal([null, "function", "undefined"]);
        expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
        expect(single.stats().started).to.equal(1); // the same sandbox process ran both
      } finally {
        await single.close();
      }
    });

    it("a run that leaks inside QuickJS leaves nothing behind: the next runs start from the warm context's copy, in the same process", async () => {
      // QuickJS (quickjs-emscripten 0.32) leaks an object when JSON.parse overflows its stack. Before
      // issue 18's snapshot, freeing that runtime failed and the process was replaced; now the memory
      // is put back whole after the run, leak included.
      const single = new SandboxPool({ size: 1 });
      try {
        const { host } = testHost(limitsWith());
        const req = (code: string) => single.run(request(code, {}, limitsWith()), host);
        const [overflow, next] = await Promise.all([req("JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))"), req("async function main() { return 'next' }")]);
        expect(overflow.error?.message).to.match(/stack overflow/);
        expect(next).to.deep.include({ response: "next", hasError: false });
        const again = await req("async function main() { return JSON.parse('[[1]]') }");
        expect(again).to.deep.include({ response: [[1]], hasError: false });
        expect(single.stats()).to.include({ started: 1, replaced: 0 });
      } finally {
        await single.close();
      }
    });


    it("an action whose memory grows inside a promise job runs, in the same process (its memory is there before it starts)", async () => {
      // Review finding: quickjs-emscripten reads a promise job's context through a view made before
      // the job; a WASM memory growth during the job detached it, the library asked for a new context,
      // and every such run failed with "the sandbox failed" and cost its process, on a fresh one too.
      const single = new SandboxPool({ size: 1 });
      try {
        const { host } = testHost(limitsWith());
        const req = (code: string, params: unknown = {}) => single.run(request(code, params, limitsWith()), host);
        const afterAwait = "async function main({ mb }) { await null; return 'x'.repeat(mb * 1024 * 1024).length }";
        for (const mb of [40, 20, 48]) expect(await req(afterAwait, { mb })).to.deep.include({ response: mb * 1024 * 1024, hasError: false });
        const inTimers = await req("async function main() { const a = []; for (let i = 0; i < 40; i++) { a.push(new Array(100000).fill(i)); await new Promise((r) => setTimeout(r, 0)) } return a.length }");
        expect(inTimers).to.deep.include({ response: 40, hasError: false });
        const key = await req("async function main() { await null; const s = 'y'.repeat(30 << 20); return [s.length, (await Lit.Actions.getLitActionPublicKey()).length] }");
        expect(key).to.deep.include({ response: [30 << 20, 68], hasError: false });
        expect(single.stats()).to.include({ started: 1, replaced: 0 });
      } finally {
        await single.close();
      }
    });
    it("rejects runs once closed", async () => {
      const closed = new SandboxPool({ size: 1 });
      await closed.close();
      const { host } = testHost(limitsWith());
      await expect(closed.run(request("1", {}, limitsWith()), host)).to.be.rejectedWith("SandboxPool is closed");
    });
  });

  describe("ethers shim", function () {
    it("matches ethers v6 for wallets, signatures and transactions", async () => {
      const tx1559 = { to: PKP_ID, value: "1000000000000000", data: "0x1234", nonce: 7, gasLimit: 50000, maxFeePerGas: "30000000000", maxPriorityFeePerGas: 1000000000, chainId: 8453, type: 2 };
      const txLegacy = { to: PKP_ID, value: 5, nonce: 1, gasLimit: "21000", gasPrice: "1000000000", chainId: 1 };
      const code = `async function main({ key, tx1559, txLegacy }) {
        const w = new ethers.Wallet(key);
        return { address: w.address, publicKey: w.publicKey, json: JSON.stringify(w), msg: await w.signMessage("hello"), bytesMsg: await w.signMessage(new Uint8Array([1, 2, 3])),
          tx1559: await w.signTransaction(tx1559), txLegacy: await w.signTransaction(txLegacy),
          typed: await w.signTypedData({ name: "Vesta", chainId: 1 }, { Mail: [{ name: "to", type: "address" }] }, { to: w.address }) };
      }`;
      const r = await run(code, { key: PKP_KEY.slice(2), tx1559, txLegacy });
      const w = new Wallet(PKP_KEY);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({
        address: w.address,
        publicKey: w.signingKey.publicKey,
        json: JSON.stringify({ address: w.address, publicKey: w.signingKey.publicKey, signingKey: { publicKey: w.signingKey.publicKey, compressedPublicKey: w.signingKey.compressedPublicKey } }),
        msg: await w.signMessage("hello"),
        bytesMsg: await w.signMessage(new Uint8Array([1, 2, 3])),
        tx1559: await w.signTransaction(tx1559),
        txLegacy: await w.signTransaction({ ...txLegacy, type: 0 }), // untyped with gasPrice: legacy, as ethers v5 signs it (v6 would choose EIP-2930)
        typed: await w.signTypedData({ name: "Vesta", chainId: 1 }, { Mail: [{ name: "to", type: "address" }] }, { to: w.address }),
      });
      expect(Transaction.from((r.response as { tx1559: string }).tx1559).from).to.equal(w.address);
    });

    it("matches ethers v6 utilities, in v6 and v5 (utils.*) spellings", async () => {
      const code = `async function main() {
        const e = ethers, u = ethers.utils;
        const sig = await new e.Wallet("${PKP_KEY}").signMessage("m");
        const encoded = e.AbiCoder.defaultAbiCoder().encode(["uint256", "address", "bytes", "string[]"], [42n, "${PKP_ID}", "0xabcd", ["a", "b"]]);
        return {
          keccak: e.keccak256(e.toUtf8Bytes("x")), keccakArray: u.keccak256([1, 2, 3]), sha: e.sha256("0x1234"), id: u.id("transfer(address,uint256)"),
          bytes: Array.from(u.arrayify("0x0102")), isU8: e.getBytes("0x01") instanceof Uint8Array, utf8: e.toUtf8String([104, 105]), hex: e.hexlify(new Uint8Array([255])),
          hashMessage: e.hashMessage("m"), verify: u.verifyMessage("m", sig), computed: e.computeAddress("${new SigningKey(PKP_KEY).publicKey}"),
          checksum: u.getAddress("${PKP_ID.toLowerCase()}"), isAddress: [e.isAddress("${PKP_ID}"), e.isAddress("nope")],
          ether: String(e.parseEther("1.5")), formatted: u.formatEther(1500000000000000000n), units: String(u.parseUnits("2", 6)), fUnits: e.formatUnits("2000000", 6),
          packed: e.solidityPackedKeccak256(["uint8", "string"], [1, "a"]), packedV5: u.solidityKeccak256(["uint8", "string"], [1, "a"]),
          encoded, encodedV5: u.defaultAbiCoder.encode(["uint256"], [1]),
          decoded: e.AbiCoder.defaultAbiCoder().decode(["uint256", "address", "bytes", "string[]"], encoded).map((v) => typeof v === "bigint" ? String(v) : v),
        };
      }`;
      const r = await run(code);
      const coder = AbiCoder.defaultAbiCoder();
      const encoded = coder.encode(["uint256", "address", "bytes", "string[]"], [42n, PKP_ID, "0xabcd", ["a", "b"]]);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({
        keccak: ethers.keccak256(ethers.toUtf8Bytes("x")),
        keccakArray: ethers.keccak256(new Uint8Array([1, 2, 3])),
        sha: ethers.sha256("0x1234"),
        id: ethers.id("transfer(address,uint256)"),
        bytes: [1, 2],
        isU8: true,
        utf8: "hi",
        hex: "0xff",
        hashMessage: ethers.hashMessage("m"),
        verify: new Wallet(PKP_KEY).address,
        computed: new Wallet(PKP_KEY).address,
        checksum: ethers.getAddress(PKP_ID),
        isAddress: [true, false],
        ether: "1500000000000000000",
        formatted: "1.5",
        units: "2000000",
        fUnits: "2.0",
        packed: ethers.solidityPackedKeccak256(["uint8", "string"], [1, "a"]),
        packedV5: ethers.solidityPackedKeccak256(["uint8", "string"], [1, "a"]),
        encoded,
        encodedV5: coder.encode(["uint256"], [1]),
        decoded: ["42", ethers.getAddress(PKP_ID), "0xabcd", ["a", "b"]],
      });
    });
  });

  describe("action runtime as on Chipotle (issue 18)", function () {
    it("setResponse parses a JSON string response as Chipotle's server does, and keeps other strings", async () => {
      const cases: [string, unknown][] = [['\'{"a":[1,2]}\'', { a: [1, 2] }], ["'123'", 123], ["'\"quoted\"'", "quoted"], ["'not json'", "not json"], ["{ b: 1 }", { b: 1 }]];
      for (const [value, expected] of cases) {
        const r = await run(`Lit.Actions.setResponse({ response: ${value} })`);
        expect([r.hasError, r.response], value).to.deep.equal([false, expected]);
      }
    });

    it("the Lit namespace is read-only: assignments do nothing in sloppy code and throw in strict code", async () => {
      const r = await run(`async function main() {
        Lit.Actions = 1; LitActions = 2; Lit = 3; LitActions.getPrivateKey = null; LitHeaders = 4;
        const actions = LitActions;
        const strict = [];
        for (const f of [() => { "use strict"; LitActions = 1 }, () => { "use strict"; Lit.Actions = 1 }, () => { "use strict"; LitActions.setResponse = 1 }]) {
          try { f(); strict.push("assigned") } catch (e) { strict.push(e.name) }
        }
        return { same: Lit.Actions === actions && LitActions === actions && Actions === actions, fn: typeof LitActions.getPrivateKey, headers: LitHeaders instanceof Headers, auth: LitAuth, strict,
          descriptor: Object.getOwnPropertyDescriptor(globalThis, "LitActions") };
      }`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ same: true, fn: "function", headers: true, auth: [], strict: ["TypeError", "TypeError", "TypeError"], descriptor: { enumerable: true, configurable: false } });
    });

    it("the Lit namespace cannot be deleted, assigned or redefined before its first read either (Chipotle's lit_namespace_protection)", async () => {
      // Review finding: its globals were configurable accessors until first read: \`delete globalThis.Lit\` worked.
      const r = await run(`"use strict";
        const errors = [];
        const attempt = (fn) => { try { fn(); errors.push("allowed") } catch (e) { errors.push(e.name) } };
        async function main() {
          attempt(() => delete globalThis.Lit); attempt(() => delete globalThis.LitActions); attempt(() => delete globalThis.LitHeaders); attempt(() => delete globalThis.LitAuth);
          attempt(() => Object.defineProperty(globalThis, "LitActions", { value: { fake: true } }));
          attempt(() => delete Lit.Actions); attempt(() => delete Lit.Headers);
          attempt(() => Lit = {}); attempt(() => LitActions = {}); attempt(() => LitHeaders = {});
          attempt(() => Lit.Actions = {}); attempt(() => Lit.Headers = {});
          return { errors, same: Lit.Actions === LitActions && LitActions === globalThis.LitActions && Lit.Headers === LitHeaders && Lit.Auth === LitAuth,
            names: Object.keys(globalThis).filter((k) => k.startsWith("Lit")).sort() };
        }`);
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ errors: Array(12).fill("TypeError"), same: true, names: ["Lit", "LitActions", "LitAuth", "LitHeaders"] });
      const sloppy = await run("async function main() { const gone = [delete globalThis.Lit, delete globalThis.LitActions]; Lit = 1; return [gone, typeof Lit.Actions.setResponse] }");
      expect(sloppy.response).to.deep.equal([[false, false], "function"]);
    });

    it("Lit.Headers (LitHeaders) holds the headers the run was given, as Chipotle fills it with the request's ids", async () => {
      const code = "async function main() { return { id: LitHeaders.get('x-request-id'), corr: Lit.Headers.get('X-Correlation-Id'), same: Lit.Headers === LitHeaders, all: [...LitHeaders] } }";
      const r = await run(code, {}, {}, { "x-request-id": "6f1c1a2e-0000-4000-8000-000000000001", "x-correlation-id": "trace-7" });
      expect(r.response).to.deep.equal({ id: "6f1c1a2e-0000-4000-8000-000000000001", corr: "trace-7", same: true, all: [["x-correlation-id", "trace-7"], ["x-request-id", "6f1c1a2e-0000-4000-8000-000000000001"]] });
      expect((await run(code)).response).to.deep.equal({ id: null, corr: null, same: true, all: [] });
      // what does not fit a run message is refused before it reaches a sandbox
      const flood = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`h${i}`, "v"]));
      const refused = await run(code, {}, {}, flood);
      expect(refused.error?.message).to.equal("TypeError: the run's headers are at most 16 strings, 4096 characters of JSON");
    });

    for (const [name, why] of [
      ["WebAssembly", "QuickJS has no WebAssembly engine"],
      ["Deno", "actions run in QuickJS, not Deno: there is no Deno namespace"],
      ["Worker", "QuickJS has no threads"],
      ["localStorage", "the sandbox keeps nothing between runs"],
    ]) {
      it(`${name}: typeof is "undefined", and using it is a ReferenceError that says why (the sandbox keeps serving)`, async () => {
        const r = await run(`async function main() { if (typeof ${name} !== "undefined") return "defined"; return ${name}.x }`);
        expect(r.hasError).to.equal(true);
        expect(r.error?.message).to.equal(`ReferenceError: '${name}' is not defined (${name} does not exist in Vesta's sandbox: ${why})`);
        expect(r.error?.stack).to.include("action.js");
        expect((await run("async function main() { return 1 }")).response).to.equal(1);
      });
    }

    it("fetch answers a Response (headers, text, json, arrayBuffer, clone) and honours an AbortSignal", async () => {
      const r = await run(`async function main({ base }) {
        const res = await fetch(base + "/json");
        const early = await fetch(base + "/json", { signal: AbortSignal.abort() }).then(() => "fetched", (e) => e.name);
        const ac = new AbortController();
        const slow = fetch(base + "/slow", { signal: ac.signal }).then(() => "fetched", (e) => e.name);
        ac.abort();
        const posted = await fetch(base + "/echo", { method: "POST", body: new URLSearchParams({ a: "1 2" }) });
        return { response: res instanceof Response, headers: res.headers instanceof Headers, x: res.headers.get("X-Test"), json: await res.clone().json(),
          bytes: Array.from(new Uint8Array(await res.arrayBuffer())).length, used: res.bodyUsed, again: await res.text().catch((e) => e.name),
          early, slow: await slow, echoed: [posted.status, await posted.text()] };
      }`, { base });
      expect(r.hasError, r.logs).to.equal(false);
      expect(r.response).to.deep.equal({ response: true, headers: true, x: "yes", json: { hello: "world" }, bytes: 17, used: true, again: "TypeError", early: "AbortError", slow: "AbortError", echoed: [201, "a=1+2"] });
      // The aborts came before their calls were sent: the host never saw them.
      expect(r.calls.filter((c) => c.op === "fetch").map((c) => (c as { url: string }).url)).to.deep.equal([`${base}/json`, `${base}/echo`]);
    });

    it("crypto.getRandomValues refuses more than 65,536 bytes (QuotaExceededError) and non-integer arrays", async () => {
      const r = await run(`async function main() {
        const out = [];
        for (const f of [() => crypto.getRandomValues(new Uint8Array(65537)), () => crypto.getRandomValues(new Float64Array(2))]) {
          try { f(); out.push("ok") } catch (e) { out.push([e.name, e instanceof DOMException]) }
        }
        out.push(crypto.getRandomValues(new Uint32Array(16384)).length);
        return out;
      }`);
      expect(r.response).to.deep.equal([["QuotaExceededError", true], ["TypeMismatchError", true], 16384]);
    });

    it("bounds crypto.subtle: 16 operations at once, arguments within half the run's memory, HMAC keys of 8192 bits, unsupported algorithms refused", async () => {
      const r = await run(`async function main() {
        const out = [];
        const many = [];
        for (let i = 0; i < 17; i++) many.push(crypto.subtle.digest("SHA-256", new Uint8Array(1)).then(() => "ok", (e) => e.name + ": " + e.message));
        out.push((await Promise.all(many)).filter((x) => x !== "ok"));
        for (const f of [
          () => crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256", length: 1e9 }, true, ["sign"]),
          () => crypto.subtle.generateKey({ name: "RSA-PSS", modulusLength: 1e6 }, true, ["sign"]),
          () => crypto.subtle.importKey("spki", new Uint8Array(8), { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]),
        ]) out.push(await f().then(() => "made", (e) => e.name));
        out.push(await crypto.subtle.importKey("raw", new Uint8Array(16), "AES-GCM", true, Array(200000).fill("x")).then(() => "imported", (e) => e.message));
        return out;
      }`, {}, { memoryBytes: 4 * 1024 * 1024 * 2 });
      expect(r.response).to.deep.equal([
        ["RangeError: crypto.subtle: at most 16 operations may be under way at once"],
        "OperationError",
        "NotSupportedError",
        "NotSupportedError",
        "crypto.subtle.importKey: memory limit exceeded: the action may use at most 8 MB (memoryBytes)",
      ]);
      expect([r.hasError, r.error?.limit]).to.deep.equal([false, undefined]); // each refusal caught: the run does not fail for them
    });

    it("bounds what the crypto.subtle operations under way hold in all (the run's memory): the action may catch the refusals", async () => {
      const r = await run(`async function main() {
        const data = new Uint8Array(300 * 1024);
        const ops = [];
        for (let i = 0; i < 10; i++) ops.push(crypto.subtle.digest("SHA-256", data).then((d) => d.byteLength, (e) => e.message));
        return await Promise.all(ops);
      }`, {}, { memoryBytes: 4 * 1024 * 1024, timeoutMs: 20_000 });
      const refused = "crypto.subtle.digest: the operations under way hold too much: memory limit exceeded: the action may use at most 4 MB (memoryBytes)";
      expect(r.response, JSON.stringify(r.error)).to.deep.equal([32, 32, 32, 32, 32, 32, refused, refused, refused, refused]);
      expect([r.hasError, r.error?.limit]).to.deep.equal([false, undefined]);
    });

    it("bounds URL: inputs longer than 64 KB are a RangeError; an invalid URL is a TypeError", async () => {
      const r = await run(`async function main() {
        const out = [];
        for (const f of [() => new URL("https://e.com/" + "a".repeat(70000)), () => new URL("not a url"), () => new URL("/x", "also not")]) {
          try { f(); out.push("parsed") } catch (e) { out.push(e.name) }
        }
        out.push(URL.canParse("https://e.com"), new URL("https://e.com/" + "a".repeat(60000)).pathname.length);
        return out;
      }`);
      expect(r.response).to.deep.equal(["RangeError", "TypeError", "TypeError", true, 60001]);
    });

    it("structuredClone keeps cycles and refuses functions with DataCloneError", async () => {
      const r = await run(`async function main() {
        const a = { n: 1 }; a.self = a;
        const c = structuredClone(a);
        let refused;
        try { structuredClone({ f() {} }) } catch (e) { refused = [e.name, e instanceof DOMException] }
        const p = structuredClone(JSON.parse('{"__proto__": {"x": 1}}'));
        return { cycle: c.self === c && c !== a, refused, proto: Object.getPrototypeOf(p) === Object.prototype && Object.keys(p) };
      }`);
      expect(r.response).to.deep.equal({ cycle: true, refused: ["DataCloneError", true], proto: ["__proto__"] });
    });
  });

  describe("hostFetch", function () {
    const code = "async function main({ url, init }) { try { const r = await fetch(url, init); return { status: r.status, body: await r.text(), header: r.headers.get('X-Test') } } catch (e) { return { error: e.message } } }";

    it("follows http redirects and sends bodies", async () => {
      expect((await run(code, { url: `${base}/to-json` })).response).to.deep.equal({ status: 200, body: '{"hello":"world"}', header: "yes" });
      expect((await run(code, { url: `${base}/echo`, init: { method: "POST", body: "ping" } })).response).to.deep.equal({ status: 201, body: "ping", header: null });
    });

    it("binary bodies cross unchanged both ways: bytes that are not UTF-8 sent and answered, text() decoding them as browsers do", async () => {
      const r = await run(`async function main({ base }) {
        const all = Uint8Array.from({ length: 256 }, (_, i) => i);
        const echoed = new Uint8Array(await (await fetch(base + "/echo", { method: "POST", body: all })).arrayBuffer());
        const fromBuffer = new Uint8Array(await (await fetch(base + "/echo", { method: "PUT", body: all.buffer.slice(250) })).arrayBuffer());
        const answered = await fetch(base + "/bytes");
        const bytes = new Uint8Array(await answered.clone().arrayBuffer());
        const bom = new Uint8Array(await (await fetch(base + "/echo", { method: "POST", body: new Uint8Array([0xef, 0xbb, 0xbf, 0x41]) })).arrayBuffer());
        return { echoed: Array.from(echoed), fromBuffer: Array.from(fromBuffer), bytes: Array.from(bytes), text: (await answered.text()).slice(0, 3), bom: Array.from(bom) };
      }`, { base });
      expect(r.hasError, r.logs).to.equal(false);
      const all = Array.from({ length: 256 }, (_, i) => i);
      expect(r.response).to.deep.equal({ echoed: all, fromBuffer: [250, 251, 252, 253, 254, 255], bytes: all.map((i) => 255 - i), text: "\ufffd\ufffd\ufffd", bom: [0xef, 0xbb, 0xbf, 0x41] });
      const sent = r.calls.filter((c) => c.op === "fetch") as Extract<HostCall, { op: "fetch" }>[];
      expect(sent[0].bodyBase64).to.equal(Buffer.from(all).toString("base64")); // not UTF-8: sent as base64
      expect([sent[3].body, sent[3].bodyBase64]).to.deep.equal(["\ufeffA", undefined]); // UTF-8 (a BOM kept): sent as text
    });

    it("refuses non-http schemes: in the sandbox before the host, and behind a redirect in hostFetch", async () => {
      const refused = { error: "fetch: only http and https URLs are allowed, got file:" };
      const direct = await run(code, { url: "file:///etc/passwd" });
      expect(direct.response).to.deep.equal(refused);
      expect(direct.calls).to.deep.equal([]);
      const redirected = await run(code, { url: `${base}/to-file` });
      expect(redirected.response).to.deep.equal(refused);
      expect(redirected.calls).to.have.length(1);
      await expect(hostFetch({ op: "fetch", url: "file:///etc/passwd", method: "GET", headers: {} }, limitsWith())).to.be.rejectedWith(refused.error);
    });

    it("caps the response body at maxFetchBytes: the fetch rejects, the action may catch it", async () => {
      const r = await run(code, { url: `${base}/big` });
      expect([r.hasError, r.response]).to.deep.equal([false, { error: "fetch response too large: at most 1 MB per response (maxFetchBytes)" }]);
    });

    it("times out a request at what is left of the run", async () => {
      const started = Date.now();
      const answer = hostFetch({ op: "fetch", url: `${base}/slow`, method: "GET", headers: {} }, limitsWith(), { deadline: Date.now() + 300, allowPrivateNetworks: true });
      // cut at what is left of the run (~300 ms, a millisecond or two may already be gone), not the 10 s default
      await expect(answer).to.be.rejectedWith(/timed out after (29\d|300) ms/);
      const elapsed = Date.now() - started;
      expect(elapsed).to.be.at.least(250);
      expect(elapsed).to.be.below(2000);
    });
  });
});
