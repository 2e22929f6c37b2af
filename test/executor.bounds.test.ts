import { expect } from "chai";
import { RunRefused } from "../executor/errors";
import { hostMessageChars, MAX_ERROR_MESSAGE_BYTES, MAX_ERROR_STACK_BYTES } from "../executor/sandbox/wire/bounds";
import { HostChannel } from "../executor/sandbox/host/call-channel";
import { FairQueue, defaultFairShare } from "../executor/sandbox/host/fair-queue";
import { encodeFrame, FRAME_HEADER_BYTES, FrameReader } from "../executor/sandbox/wire/frames";
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
      expect(r.response).to.equal("message is larger than 1048576 bytes of UTF-8");
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

  describe("the ethers shim allocates no more than the run's memory (finding 1)", function () {
    const limits = limitsWith();
    const refused = (label: string) => `${label}: memory limit exceeded: the action may use at most 64 MB (memoryBytes)`;
    // Each call asks the sandbox process (outside QuickJS's memory limit) for far more than the run's 64 MB.
    const hostile: [string, string, string][] = [
      ["zeroPadValue to 200 MB (the red team's 4 GB, smaller)", "ethers.zeroPadValue", `ethers.zeroPadValue("0x01", 200e6)`],
      ["v5's hexZeroPad", "ethers.utils.hexZeroPad", `ethers.utils.hexZeroPad("0x01", 200e6)`],
      ["v5's zeroPad", "ethers.utils.zeroPad", `ethers.utils.zeroPad("0x01", 200e6)`],
      ["toBeHex to a width of 200 MB", "ethers.toBeHex", `ethers.toBeHex(1, 200e6)`],
      ["abiDecode of a fixed array of 10^8 words from no data", "abiCoder.decode", `ethers.AbiCoder.defaultAbiCoder().decode(["uint256[100000000]"], "0x")`],
      ["abiDecode of 10^8 empty tuples (no data needed per element)", "abiCoder.decode", `ethers.AbiCoder.defaultAbiCoder().decode(["()[100000000]"], "0x")`],
      ["abiEncode of 1.1 M small numbers (32 bytes each: 35 MB)", "abiCoder.encode", `ethers.AbiCoder.defaultAbiCoder().encode(["uint8[]"], [new Array(1.1e6).fill(1)])`],
      ["solidityPacked of 1.1 M numbers in an array (32 bytes each)", "ethers.solidityPacked", `ethers.solidityPacked(["uint8[]"], [new Array(1.1e6).fill(1)])`],
      ["toUtf8Bytes of 12 M three-byte characters", "ethers.toUtf8Bytes", `ethers.toUtf8Bytes("\u4e00".repeat(12e6))`],
    ];
    for (const [name, label, call] of hostile) {
      it(`refuses ${name} with the memory limit, before allocating; the action may catch it (the run does not fail for it, as on Chipotle), the sandbox lives`, async function () {
        const replaced = pool.stats().replaced;
        const r = await pool.run(request(`async function main() { try { ${call}; return "allocated" } catch (e) { return e.message } }`, limits), host);
        expect(r.response).to.equal(refused(label));
        expect([r.hasError, r.error]).to.deep.equal([false, undefined]);
        expect(pool.stats().replaced, "no sandbox died").to.equal(replaced);
      });
    }

    it("a refusal the action does not catch fails the run with the limit it met", async function () {
      const r = await pool.run(request(`async function main() { ${hostile[0][2]}; return "allocated" }`, limits), host);
      expect([r.hasError, r.error?.limit, r.error?.message]).to.deep.equal([true, "memoryBytes", `Error: ${refused(hostile[0][1])}`]);
    });

    it("answers what fits: a pad of 1 MB, a 32-byte width, a fixed array the data holds, an ABI array of 10,000", async function () {
      const r = await pool.run(
        request(`async function main() {
          const abi = ethers.AbiCoder.defaultAbiCoder();
          const words = abi.encode(["uint256[3]"], [[1n, 2n, 3n]]);
          return [
            ethers.zeroPadValue("0x01", 1e6).length,
            ethers.toBeHex(1, 32),
            abi.decode(["uint256[3]"], words)[0].map(String),
            ethers.dataLength(abi.encode(["uint8[]"], [new Array(10000).fill(7)])),
          ];
        }`),
        host,
      );
      expect(r.hasError, r.error?.message).to.equal(false);
      expect(r.response).to.deep.equal([2e6 + 2, "0x" + "0".repeat(63) + "1", ["1", "2", "3"], 64 + 32 * 10000]);
    });
  });

  describe("the relayer builds no more than a flat message out of what a sandbox sends (finding 1, siblings)", function () {
    it("refuses host call arguments holding more than 256 JSON values before parsing them; the host never sees the call", async function () {
      let seen = 0;
      const channel = new HostChannel(async () => (seen++, "answered"), CID, limitsWith());
      // Ignored fields would be parsed all the same: 1 M empty arrays are ~50 MB of the relayer's heap out of 3 MB of text
      // (now past a fetch's bound on its arguments' length, checked first); within it, 60 K of them would still be 3 MB.
      const flood = JSON.stringify({ url: "https://example.com/", method: "GET", headers: {}, x: Array.from({ length: 6e4 }, () => []) });
      expect(await channel.answer("fetch", flood)).to.deep.equal({ ok: false, message: "fetch: the arguments hold more than 256 JSON values" });
      const huge = JSON.stringify({ url: "https://example.com/", method: "GET", headers: {}, x: Array.from({ length: 1e6 }, () => []) });
      expect(await channel.answer("fetch", huge)).to.deep.equal({ ok: false, message: "fetch: the arguments are too large" });
      const headers = JSON.stringify({ url: "https://example.com/", method: "GET", headers: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`h${i}`, "v"])) });
      expect(await channel.answer("fetch", headers)).to.deep.equal({ ok: false, message: "fetch: the arguments hold more than 256 JSON values" });
      expect(seen).to.equal(0);
      // Long text inside strings is no value: a call within the other caps goes through.
      expect(await channel.answer("getLitActionWalletAddress", JSON.stringify({ ipfsId: CID, note: "[],".repeat(1e3) }))).to.deep.equal({ ok: true, json: '"answered"' });
      expect(seen).to.equal(1);
      // Each operation has its own bound on its arguments, checked on the length before anything is parsed.
      expect(await channel.answer("getLitActionWalletAddress", JSON.stringify({ ipfsId: CID, note: "[],".repeat(1e5) }))).to.deep.equal({ ok: false, message: "getLitActionWalletAddress: the arguments are too large" });
      expect(seen).to.equal(1);
    });

    it("refuses a frame holding more than 64 JSON values before parsing it (a flat message holds about 15)", function () {
      const got: unknown[] = [];
      const problems: string[] = [];
      const reader = new FrameReader(() => 64 * 1024 * 1024, (m) => got.push(m), (p) => problems.push(p));
      reader.push(encodeFrame({ type: "done", runId: 1, responseJson: null, logs: "[],".repeat(1e5), wasmBytes: 1, poisoned: false, error: { message: "m", stack: "s" } }));
      expect(problems).to.deep.equal([]);
      expect(got).to.have.length(1);
      reader.push(encodeFrame({ type: "done", runId: 1, responseJson: null, logs: "", wasmBytes: 1, poisoned: false, x: Array.from({ length: 1e6 }, () => []) }));
      expect(problems).to.deep.equal(["a frame holds more than 64 JSON values"]);
      expect(got).to.have.length(1);
    });

    it("counts values outside strings only, escaped quotes included", function () {
      const { jsonTextValues } = require("../protocol/json") as typeof import("../protocol/json");
      expect(jsonTextValues("1", 10)).to.equal(1);
      expect(jsonTextValues("[1,2,3]", 10)).to.equal(4);
      expect(jsonTextValues('{"a,[{":"\\",",":["\\\"[,{"]}', 10)).to.equal(3);
      expect(jsonTextValues("[[],[],[],[]]", 3)).to.equal(4); // gives up past the bound
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

    it("carries byte fields (the code, a call's or an answer's bulk) as bytes after the JSON, and reads back only what its list states", function () {
      const code = new Uint8Array([0xef, 0xbb, 0xbf, 0x31, 0x00, 0xff]);
      const body = Buffer.alloc(1000, 1);
      const frame = encodeFrame({ type: "answer", runId: 1, callId: 2, ok: true, json: "{}", body, extra: code });
      expect(frame.length, "each byte once, not escaped").to.be.below(FRAME_HEADER_BYTES + 200 + body.length + code.length);
      const got: unknown[] = [];
      const problems: string[] = [];
      new FrameReader(() => 1 << 20, (m) => got.push(m), (p) => problems.push(p)).push(frame);
      expect(problems).to.deep.equal([]);
      expect(got).to.have.length(1);
      const m = got[0] as Record<string, unknown>;
      expect([m.type, m.json, Buffer.from(m.body as Uint8Array).equals(body), Buffer.from(m.extra as Uint8Array).equals(Buffer.from(code)), "$bytes" in m]).to.deep.equal(["answer", "{}", true, true, false]);
      // A list that does not match the bytes (lengths, names) is a broken frame.
      const forged = (json: string, bytes: Buffer) => {
        const text = Buffer.from(json);
        const header = Buffer.alloc(FRAME_HEADER_BYTES);
        header.writeUInt32BE(text.length + bytes.length, 0);
        header.writeUInt32BE(text.length, 4);
        const seen: string[] = [];
        new FrameReader(() => 1 << 20, () => seen.push("message"), (p) => seen.push(p)).push(Buffer.concat([header, text, bytes]));
        return seen;
      };
      expect(forged('{"type":"ready"}', Buffer.alloc(0))).to.deep.equal(["message"]);
      expect(forged('{"type":"ready"}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes are not listed"]);
      expect(forged('{"type":"ready","$bytes":{"a":4}}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes do not match their list"]);
      expect(forged('{"type":"ready","$bytes":{"a":2}}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes do not match their list"]);
      expect(forged('{"type":"ready","$bytes":{"type":3}}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes do not match their list"]);
      expect(forged('{"type":"ready","$bytes":{"__proto__":3}}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes do not match their list"]);
      expect(forged('{"type":"ready","$bytes":[3]}', Buffer.alloc(3))).to.deep.equal(["a frame's bytes are not listed"]);
      expect(() => encodeFrame({ type: "x", $bytes: {} })).to.throw(TypeError);
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

    it("shares by payer: a payer with five accounts gets what a payer with one gets, its accounts splitting its turns", function () {
      type J = { owner: RunOwner; n: number };
      const q = new FairQueue<J>(defaultFairShare(4, { perPayer: 100 }));
      const sybils = [1, 2, 3, 4, 5].map((i) => ({ payer: "wallet:0xSybil", account: `s${i}`, key: "k" }));
      const honest = { payer: "account:h", account: "h", key: "k" };
      for (let round = 0; round < 4; round++) for (const o of sybils) q.offer({ owner: o, n: 0 });
      for (let i = 0; i < 20; i++) q.offer({ owner: honest, n: 0 });
      const order = Array.from({ length: 20 }, () => q.take()!.owner.account);
      // Payers alternate; the sybil payer's turns go round its accounts.
      expect(order.slice(0, 10)).to.deep.equal(["s1", "h", "s2", "h", "s3", "h", "s4", "h", "s5", "h"]);
      expect(order.filter((a) => a === "h")).to.have.length(10);
    });

    it("a newcomer goes ahead of the flood it found running: it never waits for the flood's second turn", function () {
      type J = { owner: RunOwner; n: number };
      const q = new FairQueue<J>(defaultFairShare(4, { perPayer: 100 }));
      const flood = { payer: "account:f", account: "f", key: "k" };
      for (let n = 1; n <= 5; n++) q.offer({ owner: flood, n });
      expect(q.take()?.n).to.equal(1);
      q.offer({ owner: { payer: "account:v", account: "v", key: "k" }, n: 6 });
      q.offer({ owner: { payer: "account:w", account: "w", key: "k" }, n: 7 }); // and another after it, still ahead of the flood
      expect([q.take(), q.take(), q.take(), q.take()].map((j) => j?.n)).to.deep.equal([6, 7, 2, 3]);
    });

    it("caps each payer's runs over all its accounts: its share running, its queue waiting or being prepared", function () {
      type J = { owner: RunOwner; n: number };
      const q = new FairQueue<J>(defaultFairShare(8, { perPayer: 2, queuePerPayer: 3, queuePerAccount: 3 }));
      const sybil = (i: number): RunOwner => ({ payer: "wallet:0xSybil", account: `s${i}`, key: "k" });
      // 2 (its share) + 3 (its queue) over five accounts; the sixth, from any account, is refused.
      expect([1, 2, 3, 4, 5, 6].map((i) => q.offer({ owner: sybil(i), n: i }))).to.deep.equal(["ok", "ok", "ok", "ok", "ok", "payer"]);
      expect(q.offer({ owner: { payer: "account:h", account: "h", key: "k" }, n: 7 })).to.equal("ok");
      const taken = [q.take(), q.take(), q.take(), q.take()].map((j) => j?.n);
      expect(taken).to.deep.equal([1, 7, 2, undefined]); // the sybil payer holds 2 (its share) over two accounts; s3 waits
      expect(q.offer({ owner: sybil(1), n: 8 })).to.equal("payer"); // still 2 running + 3 waiting
      q.finished({ owner: sybil(1), n: 1 });
      expect(q.take()?.n).to.equal(3);
      // A held place counts until its run is queued or released.
      q.finished({ owner: sybil(2), n: 2 });
      const hold = q.hold(sybil(9)); // 1 running + 2 waiting + this one
      expect(typeof hold).to.equal("object");
      expect([q.hold(sybil(9)), q.hold(sybil(9))].map((h) => (typeof h === "string" ? h : "held"))).to.deep.equal(["held", "payer"]);
      if (typeof hold === "object") q.release(hold);
      expect(typeof q.hold(sybil(10))).to.equal("object");
    });

    it("bounds each account's queue and the whole queue", function () {
      const q = new FairQueue<{ owner: RunOwner; n: number }>({ perPayer: 1, perAccount: 1, perKey: 1, queuePerPayer: 2, queuePerAccount: 2, queueTotal: 4 });
      // one may run (its share) and two wait (its queue): the fourth is refused
      expect([1, 2, 3, 4].map((n) => q.offer(job(owner("a"), n)))).to.deep.equal(["ok", "ok", "ok", "account"]);
      expect([5, 6].map((n) => q.offer(job(owner(`b${n}`), n)))).to.deep.equal(["ok", "total"]); // four places in all
      expect(q.take()?.n).to.equal(1);
      expect([7, 8].map((n) => q.offer(job(owner(`b${n}`), n)))).to.deep.equal(["ok", "total"]);
      expect(q.length).to.equal(4);
    });

    it("defaults: all sandbox processes but one per payer (at least one), each account and key as much as its payer", function () {
      expect(defaultFairShare(1)).to.deep.equal({ perPayer: 1, perAccount: 1, perKey: 1, queuePerPayer: 64, queuePerAccount: 64, queueTotal: 1024 });
      expect(defaultFairShare(8)).to.include({ perPayer: 7, perAccount: 7, perKey: 7 });
      expect(defaultFairShare(8, { perAccount: 2, queuePerPayer: 10 })).to.include({ perPayer: 7, perAccount: 2, perKey: 2, queuePerAccount: 10 });
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
