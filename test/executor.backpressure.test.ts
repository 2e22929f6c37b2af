import { expect } from "chai";
import { EventEmitter } from "node:events";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { HostChannel } from "../executor/sandbox/host/call-channel";
import { toHostCall } from "../executor/sandbox/host/call-checks";
import { hostFetch } from "../executor/sandbox/host/fetch";
import { processLauncher } from "../executor/sandbox/host/launchers";
import { SandboxPool } from "../executor/sandbox/host/pool";
import { callArgsChars, MAX_OPEN_IO_CALLS, sandboxFrameBytes } from "../executor/sandbox/wire/bounds";
import { joinAnswer, splitAnswer, splitCall } from "../executor/sandbox/wire/calls";
import { encodeFrame, FrameReader, FrameWriter } from "../executor/sandbox/wire/frames";
import { readFromSandbox, readToSandbox } from "../executor/sandbox/wire/messages";
import { DEFAULT_LIMITS, type Host, type RunLimits } from "../executor/sandbox/types";

/**
 * What one run may make the relayer hold and read for it (review finding: three runs of one account,
 * each with 50 fetches of 1 MB of U+0001 under way while busy in a loop, grew the relayer by ~1 GB:
 * each answer was a 7 MB frame, all written at once to a socket the sandbox did not read; fetch
 * calls of 12 M characters were parsed before being refused). A body crosses once, as bytes; a run
 * has at most MAX_OPEN_IO_CALLS I/O calls open; the relayer writes no faster than the sandbox reads
 * and reads no frame larger than the largest legitimate call.
 */
const MB = 1024 * 1024;
/** MAX_OPEN_IO_CALLS, as the tests expect it (checked in "the pieces"). */
const OPEN = 6;
const CID = "QmBackpressure";
const limitsWith = (o: Partial<RunLimits> = {}): RunLimits => ({ ...DEFAULT_LIMITS, timeoutMs: 20_000, ...o });
const request = (code: string, params: unknown = {}, limits = limitsWith()) => ({ code: Buffer.from(code), ipfsId: CID, paramsJson: JSON.stringify(params), limits });

/** The stand-in sandbox (test/fixtures/sandbox-double.js), copied where the sandbox's user can read it. */
const STAND_INS = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-stand-ins-"));
fs.chmodSync(STAND_INS, 0o755);
const DOUBLE = path.join(STAND_INS, "sandbox-double.js");
fs.copyFileSync(path.join(__dirname, "fixtures", "sandbox-double.js"), DOUBLE);
fs.chmodSync(DOUBLE, 0o444);
process.once("exit", () => fs.rmSync(STAND_INS, { recursive: true, force: true }));

/**
 * Counts, while `fn` runs, the bytes the relayer writes to its sandboxes' sockets (a socket is one
 * once a frame starts on it: `{"type":` after the frame's header), the most any one of them held
 * unsent right after a write, and the bytes it reads from them.
 */
async function onTheWire<T>(fn: () => Promise<T>): Promise<{ result: T; writtenBytes: number; maxBuffered: number; readBytes: number }> {
  const proto = net.Socket.prototype as unknown as { write: (...args: unknown[]) => boolean };
  const write = proto.write;
  const readerProto = FrameReader.prototype as unknown as { push: (chunk: Buffer) => void };
  const push = readerProto.push;
  let writtenBytes = 0;
  let maxBuffered = 0;
  let readBytes = 0;
  const sandboxes = new WeakSet<net.Socket>();
  proto.write = function (this: net.Socket, chunk: unknown, ...rest: unknown[]) {
    const ok = write.call(this, chunk, ...rest);
    if (Buffer.isBuffer(chunk) && chunk.subarray(0, 24).includes('{"type":"')) sandboxes.add(this);
    if (Buffer.isBuffer(chunk) && sandboxes.has(this)) {
      writtenBytes += chunk.length;
      maxBuffered = Math.max(maxBuffered, this.writableLength);
    }
    return ok;
  };
  readerProto.push = function (this: FrameReader, chunk: Buffer) {
    readBytes += chunk.length;
    return push.call(this, chunk);
  };
  try {
    return { result: await fn(), writtenBytes, maxBuffered, readBytes };
  } finally {
    proto.write = write;
    readerProto.push = push;
  }
}

describe("what a run may make the relayer hold and read (backpressure, I/O calls, bulk as bytes)", function () {
  this.timeout(120_000);
  let pool: SandboxPool;
  let server: http.Server;
  let base: string;
  const state = { inFlight: 0, maxInFlight: 0, served: 0 };
  const host = (limits: RunLimits): Host => async (call) => {
    if (call.op === "fetch") return hostFetch(call, limits, { allowPrivateNetworks: true }); // the test's server is on loopback
    throw new Error(`no ${call.op} here`);
  };

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        state.served++;
        if (req.url === "/echo") return res.writeHead(200, { "content-type": "application/octet-stream" }).end(Buffer.concat(chunks));
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
        setTimeout(() => {
          state.inFlight--;
          res.end("ok");
        }, 100);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = new SandboxPool({ size: 1 });
    await pool.run(request("1"), host(limitsWith()));
  });
  after(async () => {
    await pool?.close();
    server?.close();
  });

  describe("a body crosses the wire once, as its bytes", function () {
    const echo = `async function main({ url, fill, n }) {
      const sent = new Uint8Array(n).fill(fill);
      const res = await fetch(url + "/echo", { method: "POST", body: sent });
      const copy = res.clone();
      const back = new Uint8Array(await res.arrayBuffer());
      const text = await copy.text();
      return { length: back.length, same: back.every((b) => b === fill), textLength: text.length, textFirst: text.charCodeAt(0) };
    }`;
    for (const [what, fill, textFirst] of [
      ["U+0001, text of control characters (7 MB a way before)", 1, 1],
      ["0xff, bytes that are not UTF-8 (1.33 MB of base64 a way before)", 0xff, 0xfffd],
    ] as const) {
      it(`1 MB of ${what}: ~1 MB to the relayer and ~1 MB back, the action reading the same bytes`, async function () {
        const n = MB - 16;
        const { result: r, writtenBytes, readBytes } = await onTheWire(() => pool.run(request(echo, { url: base, fill, n }), host(limitsWith())));
        expect(r.hasError, r.logs).to.equal(false);
        expect(r.response).to.deep.equal({ length: n, same: true, textLength: n, textFirst });
        expect(writtenBytes, "the run's frame and the answer's").to.be.within(n, n + 16 * 1024);
        expect(readBytes, "the call's frame, and the end of the run").to.be.within(n, n + 16 * 1024);
      });
    }

    it("the frame of a 1 MB answer body: its bytes and a few hundred more, whatever the bytes", async function () {
      for (const body of [Buffer.alloc(MB, 1), Buffer.alloc(MB, 0xff), Buffer.alloc(MB, 0x22), Buffer.from("€".repeat(MB / 3))]) {
        const text = body.toString("utf8");
        const answer = Buffer.from(text, "utf8").equals(body) ? { body: text } : { bodyBase64: body.toString("base64") };
        const channel = new HostChannel(async () => ({ status: 200, statusText: "OK", headers: { "content-type": "x/y" }, ...answer }), CID, limitsWith());
        const wire = await channel.answer("fetch", JSON.stringify({ url: "https://example.com/", method: "GET", headers: {} }));
        const frame = encodeFrame({ type: "answer", runId: 1, callId: 1, ...wire });
        expect(frame.length, `0x${body[0].toString(16)}`).to.be.within(body.length, body.length + 256);
        // The sandbox process reads back the answer the action reads: the same JSON as the host's answer.
        const read = readToSandbox(readFrame(frame));
        expect(read && "json" in read && JSON.parse(read.json)).to.deep.equal({ status: 200, statusText: "OK", headers: { "content-type": "x/y" }, ...answer });
      }
    });
  });

  describe(`at most ${OPEN} I/O calls of a run are open at once`, function () {
    it("20 fetches started at once: the server sees at most 6 at a time, all 20 answered", async function () {
      state.maxInFlight = 0;
      state.served = 0;
      const code = `async function main({ url }) {
        const all = [];
        for (let i = 0; i < 20; i++) all.push(fetch(url + "/slow/" + i).then((r) => r.text()));
        return (await Promise.all(all)).filter((t) => t === "ok").length;
      }`;
      const r = await pool.run(request(code, { url: base }), host(limitsWith()));
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, 20]);
      expect(state.served).to.equal(20);
      expect(state.maxInFlight).to.equal(OPEN);
    });

    it("Encrypt counts among them (and Decrypt); a call waiting its turn still ends with the run (its deadline)", async function () {
      let open = 0;
      let most = 0;
      const slow: Host = async (call) => {
        open++;
        most = Math.max(most, open);
        await new Promise((resolve) => setTimeout(resolve, call.op === "encrypt" ? 50 : 400));
        open--;
        return call.op === "encrypt" ? `c:${call.message}` : "fetched";
      };
      const code = `async function main({ url }) {
        const all = [];
        for (let i = 0; i < 10; i++) all.push(Lit.Actions.Encrypt({ pkpId: "0x1", message: "m" + i }));
        return (await Promise.all(all)).length;
      }`;
      const r = await pool.run(request(code, {}, limitsWith({ maxKeyRequests: 10 })), slow);
      expect([r.hasError, r.response], r.logs).to.deep.equal([false, 10]);
      expect(most).to.equal(OPEN);
      // 18 fetches of 400 ms, 6 at a time, in a run of 600 ms: the second six start at 400 ms, the third never.
      most = 0;
      let fetches = 0;
      const counted: Host = async (call, context) => (fetches++, slow(call, context));
      const late = await pool.run(request(`async function main() { await Promise.all(Array.from({ length: 18 }, (_, i) => fetch("https://example.com/" + i))) }`, {}, limitsWith({ timeoutMs: 600 })), counted);
      expect(late.error?.limit).to.equal("timeoutMs");
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect([most, open, fetches]).to.deep.equal([OPEN, 0, 2 * OPEN]);
    });
  });

  describe("a sandbox that reads nothing for a while (a run busy in a loop)", function () {
    it(`the relayer holds at most its ${OPEN} open calls' answers for it, written as its socket drains`, async function () {
      const double = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
      const answer = { status: 200, statusText: "OK", headers: {}, body: "\u0001".repeat(MB) };
      let held = 0;
      const sampler = setInterval(() => (held = Math.max(held, (double.stats() as { unsentBytes?: number }).unsentBytes ?? 0)), 5);
      try {
        const { result: r, maxBuffered } = await onTheWire(() => double.run(request("x", { mode: "ioBusy", calls: OPEN, busyMs: 1500 }), async () => answer));
        expect(r.error, r.logs).to.equal(undefined);
        const got = r.response as { answers: number; bodyBytes: number; frameBytes: number };
        expect([got.answers, got.bodyBytes]).to.deep.equal([OPEN, OPEN * MB]);
        const bound = OPEN * (MB + 64 * 1024);
        expect(got.frameBytes, "what crossed").to.be.at.most(bound);
        expect(Math.max(held, maxBuffered), "what the relayer held unread at most").to.be.at.most(bound);
      } finally {
        clearInterval(sampler);
        await double.close();
      }
    });

    it(`a sandbox that opens new I/O calls as the host answers the old ones, reading none of the answers, is cut off: the relayer holds at most ${OPEN} answers for it`, async function () {
      // Review finding: the relayer counted a call open until the host answered, not until the answer
      // left it: 5 calls at a time, every 300 ms, made it hold 50 answers of 1 MB (~50 MB) for one run.
      const double = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
      const answer = { status: 200, statusText: "OK", headers: {}, body: "\u0001".repeat(MB) };
      let held = 0;
      let seen = 0;
      const sampler = setInterval(() => (held = Math.max(held, double.stats().unsentBytes)), 5);
      try {
        const r = await double.run(request("x", { mode: "ioPaced", batch: OPEN - 1, batches: 10, pauseMs: 200 }), async () => (seen++, answer));
        expect(r.error?.message, JSON.stringify(r.response)).to.equal(`the sandbox opened more than ${OPEN} fetch, import, Encrypt or Decrypt calls at once`);
        expect(seen, "calls the host answered").to.be.at.most(OPEN);
        expect(held, "what the relayer held unread at most").to.be.at.most(OPEN * (MB + 64 * 1024));
      } finally {
        clearInterval(sampler);
        await double.close();
      }
    });

    it(`a sandbox that opens more than ${OPEN} I/O calls at once is cut off; the host sees no more than ${OPEN}`, async function () {
      const double = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
      let seen = 0;
      const slow: Host = async () => {
        seen++;
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { status: 200, statusText: "OK", headers: {}, body: "x" };
      };
      try {
        const r = await double.run(request("x", { mode: "ioFlood", calls: 50 }), slow);
        expect(r.error?.message).to.equal(`the sandbox opened more than ${OPEN} fetch, import, Encrypt or Decrypt calls at once`);
        expect(seen).to.be.at.most(OPEN);
      } finally {
        await double.close();
      }
    });
  });

  describe("a call the relayer would refuse costs it no parse", function () {
    it("a call frame larger than the largest legitimate call is refused from its header (12 M characters of arguments)", async function () {
      const limits = limitsWith({ timeoutMs: 3000 });
      expect(sandboxFrameBytes(limits), "a few MB, not the 75 MB of six escapes of an escape").to.be.below(6 * MB);
      const double = new SandboxPool({ size: 1, launcher: processLauncher({ entry: DOUBLE }) });
      let seen = 0;
      try {
        const r = await double.run(request("x", { mode: "bigCall" }, limits), async () => (seen++, "answered"));
        expect(r.error?.message).to.match(/^the sandbox broke the protocol \(a frame of \d+ bytes is larger than allowed \(\d+\)\)$/);
        expect(seen).to.equal(0);
      } finally {
        await double.close();
      }
    });

    it("a fetch body past maxFetchBytes is refused in the sandbox process with the relayer's message: nothing of it crosses", async function () {
      const code = `async function main({ url }) {
        const body = "a".repeat(2 * 1024 * 1024);
        const out = [];
        for (let i = 0; i < 10; i++) out.push(await fetch(url + "/echo", { method: "POST", body }).then((r) => r.status, (e) => e.message));
        return out;
      }`;
      let calls = 0;
      const counting: Host = async (call) => (calls++, host(limitsWith())(call, { signal: new AbortController().signal, countFetch: () => true }));
      const { result: r, readBytes } = await onTheWire(() => pool.run(request(code, { url: base }), counting));
      expect(r.response).to.deep.equal(Array(10).fill(`body is larger than ${MB} bytes of UTF-8`));
      expect(calls).to.equal(0);
      expect(readBytes, "read from the sandbox for the whole run").to.be.below(64 * 1024);
    });
  });

  describe("the pieces", function () {
    const limits = limitsWith({ maxFetchBytes: 100 });

    it(`at most ${OPEN} I/O calls open at once (fetch, import, Encrypt, Decrypt)`, function () {
      expect(MAX_OPEN_IO_CALLS).to.equal(OPEN);
    });

    it("splitCall takes the bulk out (fetch body, Encrypt message, Decrypt ciphertext) and refuses it past its bound with call-checks' message", function () {
      const fetchArgs = { url: "https://example.com/", method: "POST", headers: { a: "b" } };
      const text = splitCall("fetch", JSON.stringify({ ...fetchArgs, body: "é\u0001" }), limits);
      expect(text).to.deep.equal({ argsJson: JSON.stringify(fetchArgs), body: Buffer.from("é\u0001") });
      expect(splitCall("fetch", JSON.stringify({ ...fetchArgs, bodyBase64: "/w==" }), limits)).to.deep.equal({ argsJson: JSON.stringify(fetchArgs), body: Buffer.from([0xff]) });
      expect(splitCall("fetch", JSON.stringify(fetchArgs), limits)).to.deep.equal({ argsJson: JSON.stringify(fetchArgs) });
      expect(splitCall("fetch", JSON.stringify({ ...fetchArgs, body: "€".repeat(34) }), limits)).to.deep.equal({ refused: "body is larger than 100 bytes of UTF-8" });
      expect(splitCall("fetch", JSON.stringify({ ...fetchArgs, body: "x", bodyBase64: "eA==" }), limits)).to.deep.equal({ refused: "fetch: a body is text or base64, not both" });
      expect(splitCall("fetch", JSON.stringify({ ...fetchArgs, headers: { h: "v".repeat(callArgsChars("fetch")) } }), limits)).to.deep.equal({ tooLarge: true });
      expect(splitCall("encrypt", JSON.stringify({ pkpId: "p", message: "m€" }), limits)).to.deep.equal({ argsJson: '{"pkpId":"p"}', body: Buffer.from("m€") });
      expect(splitCall("decrypt", JSON.stringify({ pkpId: "p", ciphertext: "Y2lwaGVy" }), limits)).to.deep.equal({ argsJson: '{"pkpId":"p"}', body: Buffer.from("Y2lwaGVy") });
      expect(splitCall("getPrivateKey", JSON.stringify({ pkpId: "p" }), limits)).to.deep.equal({ argsJson: '{"pkpId":"p"}' });
      expect(splitCall("getPrivateKey", JSON.stringify({ pkpId: "p".repeat(20_000) }), limits)).to.deep.equal({ tooLarge: true });
    });

    it("toHostCall puts the bytes back as the Host reads them, and refuses bytes beside the same argument", function () {
      const args = { url: "https://example.com/", method: "POST", headers: {} };
      expect(toHostCall("fetch", args, CID, limits, Buffer.from("é\u0001"))).to.deep.equal({ op: "fetch", ...args, body: "é\u0001" });
      expect(toHostCall("fetch", args, CID, limits, Buffer.from([0xff, 0]))).to.deep.equal({ op: "fetch", ...args, bodyBase64: "/wA=" });
      expect(toHostCall("encrypt", { pkpId: "p" }, CID, limits, Buffer.from("m€"))).to.deep.equal({ op: "encrypt", pkpId: "p", message: "m€" });
      expect(toHostCall("decrypt", { pkpId: "p" }, CID, limits, Buffer.from("Y2lwaGVy"))).to.deep.equal({ op: "decrypt", pkpId: "p", ciphertext: "Y2lwaGVy" });
      expect(() => toHostCall("fetch", { ...args, body: "x" }, CID, limits, Buffer.from("y"))).to.throw(TypeError, "fetch: the body or bodyBase64 travels as bytes, not in the arguments");
      expect(() => toHostCall("fetch", args, CID, limits, Buffer.alloc(101))).to.throw(RangeError, "body is larger than 100 bytes");
      expect(() => toHostCall("getPrivateKey", { pkpId: "p" }, CID, limits, Buffer.from("y"))).to.throw(TypeError, "getPrivateKey carries no bytes");
    });

    it("an answer's bulk goes apart and comes back as the same JSON (fetch text, fetch bytes, long strings; short ones stay JSON)", function () {
      const cases: unknown[] = [
        { status: 200, statusText: "OK", headers: { a: "1" }, body: "\ufeffé\u0001\"" },
        { status: 200, statusText: "OK", headers: {}, bodyBase64: "/wA=" },
        "d".repeat(5000) + "é\u0001",
      ];
      for (const value of cases) {
        const split = splitAnswer(typeof value === "string" ? "decrypt" : "fetch", value)!;
        expect(split, JSON.stringify(value).slice(0, 40)).to.not.equal(undefined);
        expect(JSON.parse(joinAnswer(split.json, split.body, split.bodyAs)!)).to.deep.equal(value);
      }
      expect(splitAnswer("decrypt", "short")).to.equal(undefined);
      expect(splitAnswer("getRpcUrl", { body: "not a fetch" })).to.equal(undefined);
      expect(splitAnswer("decrypt", "\ud800".repeat(2000)), "not well-formed: JSON keeps it whole").to.equal(undefined);
    });

    it("readFromSandbox checks each operation's own bounds on the lengths alone", function () {
      const l = limitsWith();
      const call = (op: string, argsJson: string, body?: Uint8Array) => readFromSandbox({ type: "call", runId: 1, callId: 1, op, argsJson, ...(body ? { body } : {}) }, l);
      expect(call("fetch", "x".repeat(callArgsChars("fetch")))).to.not.equal(undefined);
      expect(call("fetch", "x".repeat(callArgsChars("fetch") + 1))).to.equal(undefined);
      expect(call("getPrivateKey", "x".repeat(callArgsChars("getPrivateKey") + 1))).to.equal(undefined);
      expect(call("fetch", "{}", new Uint8Array(l.maxFetchBytes))).to.have.property("body");
      expect(call("fetch", "{}", new Uint8Array(l.maxFetchBytes + 1))).to.equal(undefined);
      expect(call("getPrivateKey", "{}", new Uint8Array(1)), "no bulk for a key call").to.equal(undefined);
    });

    it("FrameWriter writes no faster than the socket drains, holds what waits, and drops a finished run's answers", function () {
      // A socket whose buffer is full past 16 KB; what is written between cork and uncork is one frame.
      const socket = Object.assign(new EventEmitter(), {
        writableLength: 0,
        written: [] as Buffer[],
        parts: [] as Buffer[],
        cork() {
          this.parts = [];
        },
        uncork() {
          this.written.push(Buffer.concat(this.parts));
        },
        write(part: Buffer) {
          this.parts.push(part);
          this.writableLength += part.length;
          return this.writableLength < 16 * 1024;
        },
      });
      const writer = new FrameWriter(socket as unknown as net.Socket);
      const answer = (runId: number, callId: number) => ({ type: "answer", runId, callId, ok: true, json: "{}", body: Buffer.alloc(MB) });
      for (let callId = 1; callId <= 6; callId++) writer.send(answer(1, callId), 1);
      expect(socket.written).to.have.length(1); // the first filled the socket's buffer: the others wait for 'drain'
      expect(writer.unsentBytes).to.be.within(6 * MB, 6 * MB + 1024);
      socket.writableLength = 0;
      socket.emit("drain");
      expect(socket.written).to.have.length(2);
      writer.send({ type: "run", runId: 2 }, 2, true); // run 1 is over: its answers still waiting go
      expect(writer.unsentBytes).to.be.below(MB + 1024 + 200);
      socket.writableLength = 0;
      socket.emit("drain");
      expect(socket.written.map((f) => JSON.parse(f.subarray(8, 8 + f.readUInt32BE(4)).toString()).type)).to.deep.equal(["answer", "answer", "run"]);
    });
  });
});

/** The one message of a whole frame, as FrameReader reads it. */
function readFrame(frame: Buffer): unknown {
  let message: unknown;
  new FrameReader(() => frame.length, (m) => (message = m), (p) => expect.fail(p)).push(frame);
  return message;
}
