import { expect } from "chai";
import { RunRefused } from "../executor/errors";
import { hostMessageChars, MAX_ERROR_MESSAGE_BYTES, MAX_ERROR_STACK_BYTES } from "../executor/sandbox/wire/bounds";
import { FairQueue, defaultFairShare } from "../executor/sandbox/host/fair-queue";
import { codeFromFrame, encodeFrame, FRAME_HEADER_BYTES, FrameReader } from "../executor/sandbox/wire/frames";
import { readFromSandbox, readToSandbox } from "../executor/sandbox/wire/messages";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { DEFAULT_LIMITS, type Host, type HostCall, type RunLimits, type RunOwner, type RunResult } from "../executor/sandbox/types";

const CID = "QmBoundsTest";
const limitsWith = (overrides: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 5000, ...overrides });
const request = (code: string, limits = limitsWith(), params: unknown = {}) => ({ code: Buffer.from(code, "utf8"), ipfsId: CID, paramsJson: JSON.stringify(params), limits });
const utf8 = (s: string | undefined) => Buffer.byteLength(s ?? "", "utf8");

/** What leaves a run stays within the documented caps: response, logs (+ the error's lines), error message, stack. */
function expectCapped(r: RunResult, limits: RunLimits) {
  expect(utf8(JSON.stringify(r.response))).to.be.at.most(limits.maxResponseBytes);
  expect(utf8(r.error?.message)).to.be.at.most(MAX_ERROR_MESSAGE_BYTES);
  expect(utf8(r.error?.stack)).to.be.at.most(MAX_ERROR_STACK_BYTES);
  expect(utf8(r.logs)).to.be.at.most(limits.maxLogBytes + 1 + MAX_ERROR_MESSAGE_BYTES + 1 + MAX_ERROR_STACK_BYTES);
}

describe("sandbox bounds: one bounded channel in, one out (issue 15)", function () {
  this.timeout(60_000);
  let pool: SandboxPool;
  const calls: HostCall[] = [];
  let answer: (call: HostCall) => Promise<unknown> = async () => "ok";
  const host: Host = (call) => (calls.push(call), answer(call));

  before(async () => {
    pool = new SandboxPool({ size: 2 });
    await Promise.all([pool.run(request("1"), host), pool.run(request("2"), host)]);
  });
  after(async () => pool.close());
  beforeEach(() => {
    calls.length = 0;
    answer = async () => "ok";
  });

  describe("every channel out of a run is capped", function () {
    const limits = limitsWith();
    const cases: [string, string][] = [
      ["an error thrown from a timer callback", `setTimeout(() => { throw new Error("x".repeat(8e6)) }, 0); await new Promise((r) => setTimeout(r, 1000));`],
      ["a non-Error thrown from a microtask", `queueMicrotask(() => { throw { big: "q".repeat(4e6) } }); await new Promise((r) => setTimeout(r, 500));`],
      ["a huge message and name", `const e = new Error("y".repeat(4e6)); e.name = "N".repeat(4e6); throw e;`],
      ["a huge stack", `const e = new Error("s"); Object.defineProperty(e, "stack", { value: "at f (x)\\n".repeat(1e6) }); throw e;`],
      ["a thrown string of multi-byte characters", `throw "é😀".repeat(2e6);`],
      ["a log line of 8 MB then an error", `console.log("l".repeat(8e6)); throw new Error("after");`],
      ["a huge response", `return "r".repeat(4e6);`],
    ];
    for (const [name, body] of cases) {
      it(`caps ${name}`, async function () {
        const r = await pool.run(request(`async function main() { ${body} }`, limits), host);
        expect(r.hasError, JSON.stringify(r).slice(0, 200)).to.equal(true);
        expectCapped(r, limits);
      });
    }

    it("caps each host call's arguments: an over-long argument is refused before the host sees it", async function () {
      const r = await pool.run(request(`async function main() { try { await Lit.Actions.Encrypt({ pkpId: "0x1", message: "m".repeat(2e6) }) } catch (e) { return e.message } }`), host);
      expect(r.response).to.equal("message is longer than 1048576 characters");
      expect(calls).to.deep.equal([]);
    });

    it("caps each host answer: an answer over the cap is refused, the run goes on", async function () {
      answer = async () => "a".repeat(hostMessageChars(limits) + 1);
      const r = await pool.run(request(`async function main() { try { await Lit.Actions.getLitActionWalletAddress() } catch (e) { return e.message } }`), host);
      expect(r).to.deep.include({ response: "getLitActionWalletAddress: the answer is too large", hasError: false });
    });

    it("caps a host error's message as the action sees it", async function () {
      answer = async () => {
        throw new Error("h".repeat(1e6));
      };
      const r = await pool.run(request(`async function main() { try { await Lit.Actions.getLitActionWalletAddress() } catch (e) { return e.message.length } }`), host);
      expect(r.response).to.equal(2048);
    });
  });

  describe("a fault fails one call or one run, never the pool", function () {
    const hostile: [string, () => Promise<unknown>][] = [
      ["throws null", async () => Promise.reject(null)],
      ["throws an object whose message getter throws", async () => Promise.reject({ get message() { throw new Error("getter"); } })],
      ["answers a BigInt", async () => 1n],
      ["answers a cycle", async () => { const a: Record<string, unknown> = {}; a.a = a; return a; }],
      ["answers a deep value", async () => JSON.parse("[".repeat(1e5) + "]".repeat(1e5))],
    ];
    for (const [name, reply] of hostile) {
      it(`a host that ${name} fails that call only`, async function () {
        answer = reply;
        const r = await pool.run(request(`async function main() { try { await Lit.Actions.getLitActionWalletAddress(); return "answered" } catch (e) { return "refused: " + e.message } }`), host);
        expect(r.hasError).to.equal(false);
        expect(r.response).to.match(/^refused: /);
        expect((await pool.run(request("async function main() { return 'next' }"), host)).response).to.equal("next");
      });
    }

    it("checks the request before any sandbox sees it: code that is not UTF-8, params that are not JSON or too deep or too large", async function () {
      const started = pool.stats().started;
      const bad = [
        { ...request("1"), code: new Uint8Array([0x31, 0xed, 0xa0, 0x80]) },
        { ...request("1"), paramsJson: "{" },
        { ...request("1"), paramsJson: "[".repeat(65) + "]".repeat(65) },
        { ...request("1"), paramsJson: JSON.stringify("p".repeat(70 * 1024)) },
        { ...request("1"), ipfsId: "" },
      ];
      const results = await Promise.all(bad.map((req) => pool.run(req, host)));
      expect(results.map((r) => [r.hasError, r.error?.limit ?? r.error?.message])).to.deep.equal([
        [true, "TypeError: the code is not valid UTF-8"],
        [true, "TypeError: params are not valid JSON"],
        [true, "maxJsonDepth"],
        [true, "maxParamsBytes"],
        [true, "TypeError: ipfsId must be a CID"],
      ]);
      expect(pool.stats().started).to.equal(started);
    });
  });

  describe("the sandbox protocol is read, never trusted", function () {
    const limits = limitsWith();
    it("refuses malformed or oversized messages from a sandbox", function () {
      for (const m of [
        null,
        "ready",
        { type: "call", runId: 1, callId: 1, op: "x".repeat(65), argsJson: "{}" },
        { type: "call", runId: 1, callId: 0, op: "fetch", argsJson: "{}" },
        { type: "call", runId: 1, callId: 1, op: "fetch", argsJson: "a".repeat(hostMessageChars(limits) + 1) },
        { type: "call", runId: 1, callId: 1, op: "fetch", argsJson: { url: "x" } },
        { type: "done", runId: 1, responseJson: "r".repeat(limits.maxResponseBytes + 1), logs: "", wasmBytes: 1, poisoned: false },
        { type: "done", runId: 1, responseJson: null, logs: "l".repeat(limits.maxLogBytes + 1), wasmBytes: 1, poisoned: false },
        { type: "done", runId: 1, responseJson: null, logs: "", error: { message: "m".repeat(MAX_ERROR_MESSAGE_BYTES + 1) }, wasmBytes: 1, poisoned: false },
        { type: "done", runId: 1, responseJson: { a: 1 }, logs: "", wasmBytes: 1, poisoned: false },
        { type: "done", runId: 1, responseJson: null, logs: "", error: { message: "m", limit: "noSuchLimit" }, wasmBytes: 1, poisoned: false },
        { type: "other" },
      ]) {
        expect(readFromSandbox(m, limits), JSON.stringify(m)?.slice(0, 80)).to.equal(undefined);
      }
      expect(readFromSandbox({ type: "call", runId: 1, callId: 2, op: "fetch", argsJson: "{}", extra: { deep: [] } }, limits)).to.deep.equal({ type: "call", runId: 1, callId: 2, op: "fetch", argsJson: "{}" });
    });

    it("cuts the byte stream into frames however it arrives, and refuses an oversized frame from its header alone, or one that is not JSON", function () {
      const got: unknown[] = [];
      const problems: string[] = [];
      const reader = new FrameReader(() => 1024, (m) => got.push(m), (p) => problems.push(p));
      const frames = Buffer.concat([encodeFrame({ type: "ready" }), encodeFrame({ type: "call", runId: 1, callId: 1, op: "fetch", argsJson: "{\"é\":1}" }), encodeFrame({ type: "poisoned" })]);
      for (let i = 0; i < frames.length; i += 3) reader.push(frames.subarray(i, i + 3)); // 3 bytes at a time, headers split
      expect(got).to.deep.equal([{ type: "ready" }, { type: "call", runId: 1, callId: 1, op: "fetch", argsJson: '{"é":1}' }, { type: "poisoned" }]);
      const header = Buffer.alloc(FRAME_HEADER_BYTES);
      header.writeUInt32BE(1025);
      reader.push(header); // the body never needs to arrive: the header is refused
      expect(problems).to.deep.equal(["a frame of 1025 bytes is larger than allowed (1024)"]);
      reader.push(encodeFrame({ type: "ready" }));
      expect(got).to.have.length(3); // a broken stream reads nothing more
      const notJson = new FrameReader(() => 1024, (m) => got.push(m), (p) => problems.push(p));
      const body = Buffer.from("{ nope");
      header.writeUInt32BE(body.length);
      notJson.push(Buffer.concat([header, body]));
      expect(problems[1]).to.equal("a frame is not JSON");
      expect(got).to.have.length(3);
    });

    it("carries the code as base64 and reads it back only when it is strict base64", function () {
      const code = new Uint8Array([0xef, 0xbb, 0xbf, 0x31, 0x00, 0xff]);
      const frame = JSON.parse(encodeFrame({ type: "run", code }).subarray(FRAME_HEADER_BYTES).toString("utf8"));
      expect(frame.code).to.equal(Buffer.from(code).toString("base64"));
      expect(codeFromFrame(frame.code)).to.deep.equal(code);
      for (const bad of ["7_-_", "abc", "a b=", 42, null]) expect(codeFromFrame(bad), String(bad)).to.equal(undefined);
    });

    it("refuses malformed messages from the pool", function () {
      for (const m of [
        { type: "run", runId: 1, ipfsId: CID, code: "not bytes", paramsJson: "{}", limits },
        { type: "run", runId: 1, ipfsId: CID, code: new Uint8Array(1), paramsJson: "{}", limits: { ...limits, memoryBytes: "64" } },
        { type: "run", runId: 1, ipfsId: "c".repeat(129), code: new Uint8Array(1), paramsJson: "{}", limits },
        { type: "answer", runId: 1, callId: 1, ok: true, json: { value: 1 } },
        { type: "answer", runId: 1, callId: 1, ok: "yes", json: "1" },
      ]) {
        expect(readToSandbox(m)).to.equal(undefined);
      }
    });
  });

  describe("fair share", function () {
    const owner = (account: string, key = "k"): RunOwner => ({ account, key });
    const job = (o: RunOwner, n: number) => ({ owner: o, n });

    it("takes accounts in turn, each up to its share, and each key up to its own", function () {
      const q = new FairQueue<{ owner: RunOwner; n: number }>(defaultFairShare(4, { perAccount: 2, perKey: 1 }));
      for (let n = 1; n <= 3; n++) q.offer(job(owner("a", `k${n === 3 ? 1 : n}`), n));
      q.offer(job(owner("b"), 4));
      const taken = [q.take(), q.take(), q.take(), q.take()].map((j) => j?.n);
      // a1 (a/k1), b (b/k), a2 (a/k2); a3 waits: a holds 2 runs, and k1 holds its one
      expect(taken).to.deep.equal([1, 4, 2, undefined]);
      q.finished(job(owner("a", "k1"), 1));
      expect(q.take()?.n).to.equal(3);
    });

    it("bounds each account's queue and the whole queue", function () {
      const q = new FairQueue<{ owner: RunOwner; n: number }>({ perAccount: 1, perKey: 1, queuePerAccount: 2, queueTotal: 3 });
      expect([1, 2, 3].map((n) => q.offer(job(owner("a"), n)))).to.deep.equal(["ok", "ok", "account"]);
      expect([4, 5].map((n) => q.offer(job(owner(`b${n}`), n)))).to.deep.equal(["ok", "total"]);
      expect(q.length).to.equal(3);
    });

    it("defaults: all sandbox processes but one per account (at least one), each key as much as its account", function () {
      expect(defaultFairShare(1)).to.deep.equal({ perAccount: 1, perKey: 1, queuePerAccount: 64, queueTotal: 1024 });
      expect(defaultFairShare(8)).to.include({ perAccount: 7, perKey: 7 });
    });

    it("with one account saturating its share, another account's trivial run starts at once; a full queue answers queue_full with Retry-After", async function () {
      const fair = new SandboxPool({ size: 2, fairShare: { queuePerAccount: 2 } });
      try {
        await Promise.all([fair.run(request("1"), host), fair.run(request("2"), host)]);
        const sleep = request("async function main() { await new Promise((r) => setTimeout(r, 1000)); return 'slept' }");
        const attacker = owner("attacker");
        const attacks = [1, 2, 3].map(() => fair.run(sleep, host, attacker)); // 1 running (its share), 2 waiting (its queue)
        const refused = await fair.run(sleep, host, attacker).then(
          () => undefined,
          (e) => e,
        );
        expect(refused).to.be.instanceOf(RunRefused);
        expect([refused.reason, refused.retryAfterSeconds >= 1]).to.deep.equal(["queue_full", true]);
        let attackerDone = 0;
        attacks.forEach((a) => a.then(() => attackerDone++));
        const victim = await fair.run(request("async function main() { return 'victim' }"), host, owner("victim"));
        expect(victim.response).to.equal("victim");
        expect(attackerDone).to.equal(0); // the victim did not wait for any of the attacker's runs
        expect((await Promise.all(attacks)).map((r) => r.response)).to.deep.equal(["slept", "slept", "slept"]);
      } finally {
        await fair.close();
      }
    });
  });
});
