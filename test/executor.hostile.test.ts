import { expect } from "chai";
import crypto from "node:crypto";
import { keccak256, toUtf8Bytes } from "ethers";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { computeCid } from "../executor/cid";
import { PermissionCache } from "../executor/permissions";
import { hashKey } from "../relayer/http/auth";
import pino from "pino";

/** The CID `ipfs add` gives a file holding exactly these bytes (computed here from the bytes, never from a JS string). */
const cidOfBytes = (bytes: Buffer) => computeCid(new Uint8Array(bytes));
const sha256 = (bytes: Buffer) => `0x${crypto.createHash("sha256").update(bytes).digest("hex")}`;
/** An action whose response is the SHA-256 of its own source text as QuickJS parsed it (Function.prototype.toString). */
const REPORT = "return ethers.sha256(ethers.toUtf8Bytes(main.toString()));";
const selfReporting = (payload: string) => `async function main() {${payload}\n${REPORT} }`;
const CHUNK = 256 * 1024;

/** A source of exactly `size` UTF-8 bytes whose comment is padded with `fill`, with `straddle` (if any) crossing the 256 KiB chunk boundary. */
function sized(size: number, straddle = ""): string {
  const head = "async function main() {/*";
  const tail = `*/\n${REPORT} }`;
  const before = CHUNK - 2 - Buffer.byteLength(head);
  const code = head + "a".repeat(straddle ? before : 0) + straddle;
  return code + "b".repeat(size - Buffer.byteLength(code) - Buffer.byteLength(tail)) + tail;
}

describe("execution path under attack (issue 15)", function () {
  this.timeout(180_000);
  let stack: Stack;
  let apiKey: string;
  before(async () => {
    stack = await startStack();
    ({ apiKey } = await newAccount(stack));
  });
  after(async () => stack?.stop());

  const run = (key: string, body: unknown) => call(stack, "POST", "/lit_action", { key, body });
  const cidOf = (code: string) => call(stack, "POST", "/get_action_ipfs_id", { body: code });
  /** No other request is disturbed: the process answers and a fresh run works. */
  async function stillServing() {
    expect((await call(stack, "GET", "/get_node_chain_config")).status).to.equal(200);
    const r = await run(apiKey, { code: "async function main() { return 'alive' }" });
    expect([r.status, r.body.response]).to.deep.equal([200, "alive"]);
  }

  describe("one CID, one program", function () {
    const corpus: [string, string][] = [
      ["CR, LF and CRLF mixed, U+2028/2029", selfReporting("\r\nconst a = 1;\r\rconst b = 2;\n\r\n// c\r/* \u2028 \u2029 */\r\n")],
      ["paired surrogates and non-BMP characters", selfReporting(' const s = "😀 𝒳 \uD83D\uDE00"; /* 𝄞 */ ')],
      ["a BOM inside the code", selfReporting(" /* \uFEFF */ const bom = '\uFEFF'; ")],
      ["a very long line", selfReporting(` /* ${"x".repeat(300_000)} */ `)],
      ["exactly one 256 KiB chunk", sized(CHUNK)],
      ["one chunk and one byte", sized(CHUNK + 1)],
      ["a 4-byte character across the chunk boundary", sized(CHUNK + 3000, "😀")],
    ];
    for (const [name, code] of corpus) {
      it(`runs exactly the bytes its CID names: ${name}`, async function () {
        const bytes = Buffer.from(code, "utf8");
        const cid = await cidOfBytes(bytes);
        const r = await run(apiKey, { code });
        expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(200);
        expect(r.body.has_error, r.body.logs?.slice(0, 300)).to.equal(false);
        expect(r.body.response).to.equal(sha256(bytes)); // QuickJS parsed these very bytes
        expect(r.body.ipfs_id).to.equal(cid);
        expect((await cidOf(code)).body).to.equal(cid);
        const again = await run(apiKey, { ipfs_id: cid }); // and the stored copy is the same program
        expect([again.status, again.body.response]).to.deep.equal([200, sha256(bytes)]);
      });
    }

    it("keeps a leading BOM in the hash and in the run (a different program from the same code without it)", async function () {
      const code = selfReporting("");
      const withBom = `\uFEFF${code}`;
      const r = await run(apiKey, { code: withBom });
      expect([r.status, r.body.response]).to.deep.equal([200, sha256(Buffer.from(code))]);
      expect(r.body.ipfs_id).to.equal(await cidOfBytes(Buffer.from(withBom, "utf8")));
      expect(r.body.ipfs_id).to.not.equal(await cidOfBytes(Buffer.from(code, "utf8")));
      expect((await cidOf(withBom)).body).to.equal(r.body.ipfs_id);
    });

    it("parses past a NUL: the whole source runs, and the CID covers all of it", async function () {
      const code = `async function main() { /* \u0000 */ return "a\u0000b" + "c"; }`;
      const r = await run(apiKey, { code });
      expect([r.status, r.body.response]).to.deep.equal([200, "a\u0000bc"]);
      expect(r.body.ipfs_id).to.equal(await cidOfBytes(Buffer.from(code, "utf8")));
    });

    it("refuses code with a lone surrogate (400 invalid_code) on every route that hashes or runs code, and stores nothing", async function () {
      for (const code of ['async function main() { return "\uD800"; }', 'async function main() { return "\uDC00"; }', "async function main() {}\uD83D", '"\uDE00\uD83D"']) {
        for (const r of [await run(apiKey, { code }), await cidOf(code)]) {
          expect([r.status, r.body.code]).to.deep.equal([400, "invalid_code"]);
          expect(r.body.message).to.match(/lone surrogate \\uD[89A-F][0-9A-F]{2} at character \d+/);
        }
        const replaced = code.replace(/[\uD800-\uDFFF]/g, "\uFFFD"); // what an encoder would have hashed instead
        expect((await run(apiKey, { ipfs_id: await computeCid(replaced) })).status).to.equal(404);
      }
    });

    it("a usage key allowed one audited action cannot run another program under its CID and read a wallet's key", async function () {
      const owner = await newAccount(stack);
      const wallet = (await call(stack, "GET", "/create_wallet", { key: owner.apiKey })).body.wallet_address;
      // The audited action, as its CID names it, derives the key but answers "safe" (its last line runs before
      // the promise settles). The attacker's variant differs only by lone surrogates where the audited one has
      // U+FFFD: an encoder that miscounts them (Emscripten's lengthBytesUTF8 counts 4 bytes and skips the next
      // character) cuts the tail of the source, so a runtime fed the string runs the program without its last line.
      const tail = "\nleak = false;";
      const variant = (c: string) =>
        `// ${(c + "€").repeat(Buffer.byteLength(tail) / 2)}\nlet leak = true;\nLit.Actions.getPrivateKey({ pkpId: "${wallet}" }).then((k) => Lit.Actions.setResponse(leak ? k : "safe"));${tail}`;
      const audited = variant("\uFFFD");
      const attack = variant("\uD800");
      const cid = await computeCid(audited);
      await call(stack, "POST", "/add_group", { key: owner.apiKey, body: { group_name: "audited", pkp_ids_permitted: [wallet], cid_hashes_permitted: [keccak256(toUtf8Bytes(cid))] } });
      const usage = (await call(stack, "POST", "/add_usage_api_key", { key: owner.apiKey, body: { name: "scoped", execute_in_groups: [1] } })).body.usage_api_key;
      const ok = await run(usage, { code: audited });
      expect([ok.status, ok.body.response, ok.body.ipfs_id]).to.deep.equal([200, "safe", cid]);
      const r = await run(usage, { code: attack });
      expect([r.status, r.body.code], JSON.stringify(r.body)).to.deep.equal([400, "invalid_code"]);
      expect(JSON.stringify(r.body)).to.not.match(/0x[0-9a-f]{64}/);
    });
  });

  describe("hostile input gets a 4xx, never a 5xx nor a crash", function () {
    const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth));

    for (const depth of [65, 3_700, 100_000]) {
      it(`answers 400 json_too_deep to js_params nested ${depth} deep, and keeps serving`, async function () {
        const raw = `{"code":"async function main(p) { return 1 }","js_params":${"[".repeat(depth)}${"]".repeat(depth)}}`;
        const r = await call(stack, "POST", "/lit_action", { key: apiKey, rawBody: raw });
        expect([r.status, r.body.code]).to.deep.equal([400, "json_too_deep"]);
        expect(r.body.message).to.equal("the JSON body nests arrays or objects more than 64 levels deep (the limit is 64)");
        await stillServing();
      });
    }

    it("answers 400 to js_params nested 3,700 deep while every worker is busy (the run would wait in the queue)", async function () {
      const sleepers = await Promise.all([newAccount(stack), newAccount(stack)]);
      const sleep = "async function main() { await new Promise((r) => setTimeout(r, 3000)); return 'slept' }";
      const busy = sleepers.map((a) => run(a.apiKey, { code: sleep }));
      await new Promise((r) => setTimeout(r, 500));
      const raw = `{"code":"async function main(p) { return 1 }","js_params":${"[".repeat(3700)}${"]".repeat(3700)}}`;
      const r = await call(stack, "POST", "/lit_action", { key: apiKey, rawBody: raw });
      expect([r.status, r.body.code]).to.deep.equal([400, "json_too_deep"]);
      expect((await Promise.all(busy)).map((b) => b.body.response)).to.deep.equal(["slept", "slept"]);
      await stillServing();
    });

    it("runs js_params nested up to the limit", async function () {
      const r = await run(apiKey, { code: "async function main(p) { let d = 0; while (Array.isArray(p)) { p = p[0]; d++; } return d }", js_params: nested(63) });
      expect([r.status, r.body.response]).to.deep.equal([200, 63]);
    });

    it("answers 400 json_too_deep on every other JSON route, authenticated or not", async function () {
      const deep = "[".repeat(5000) + "]".repeat(5000);
      for (const [path, key] of [
        ["/new_account", undefined],
        ["/get_action_ipfs_id", undefined],
        ["/add_group", apiKey],
        ["/billing/free_credit", apiKey],
      ] as const) {
        const r = await call(stack, "POST", path, { key, rawBody: `{"a":${deep}}` });
        expect([r.status, r.body.code], path).to.deep.equal([400, "json_too_deep"]);
      }
      await stillServing();
    });

    it("refuses a too-deep response (it would crash the JSON answer) with has_error, and keeps serving", async function () {
      const r = await run(apiKey, { code: "async function main() { let a = []; for (let i = 0; i < 8000; i++) a = [a]; return a }" });
      expect([r.status, r.body.code]).to.deep.equal([422, "action_failed"]);
      expect([r.body.has_error, r.body.response]).to.deep.equal([true, null]);
      expect(r.body.error).to.equal("JSON nested too deeply: at most 64 levels of arrays and objects (maxJsonDepth)");
      await stillServing();
    });
  });

  describe("every byte that leaves the sandbox is capped", function () {
    /** The whole answer stays within the documented caps: response + logs + error message and stack. */
    const expectBounded = (r: { status: number; body: any }) => {
      expect([r.status, r.body.code]).to.deep.equal([422, "action_failed"]);
      const size = Buffer.byteLength(JSON.stringify(r.body));
      expect(size).to.be.below(100 * 1024 + 100 * 1024 + 4 * 8 * 1024 + 1024); // the error in `error`, `message` and the logs
      expect(Buffer.byteLength(r.body.error)).to.be.at.most(4096 + 1 + 4096);
    };

    it("caps an error thrown from a timer callback (message, stack and the copy in the logs)", async function () {
      const code = `async function main() { setTimeout(() => { throw new Error("x".repeat(8e6)) }, 0); await new Promise((r) => setTimeout(r, 2000)); }`;
      const r = await run(apiKey, { code });
      expectBounded(r);
      expect(r.body.has_error).to.equal(true);
      expect(r.body.error).to.match(/^Error: x{100}/);
    });

    it("caps a thrown error's message and name, a thrown string, and a giant stack", async function () {
      for (const code of [
        `async function main() { const e = new Error("y".repeat(4e6)); e.name = "N".repeat(4e6); throw e; }`,
        `async function main() { throw "z".repeat(4e6); }`,
        `async function main() { const e = new Error("s"); Object.defineProperty(e, "stack", { value: "at ".repeat(3e6) }); throw e; }`,
        `async function main() { queueMicrotask(() => { throw { big: "q".repeat(4e6) } }); await new Promise((r) => setTimeout(r, 500)); }`,
      ]) {
        const r = await run(apiKey, { code });
        expectBounded(r);
        expect(r.body.has_error).to.equal(true);
      }
    });
  });

  describe("one action cannot take the host's memory (red team, critical)", function () {
    it("ethers.zeroPadValue to 3 GB answers the memory limit at once, allocates nothing, and the next run succeeds", async function () {
      const code = `async function main() { try { ethers.zeroPadValue("0x01", 3e9); return "allocated" } catch (e) { return e.message } }`;
      const rss = process.memoryUsage().rss;
      const t = Date.now();
      const r = await run(apiKey, { code });
      expect(Date.now() - t, "refused before any allocation").to.be.below(5000);
      // refused before allocating; the action caught it, so the run does not fail for it (as on Chipotle)
      expect([r.status, r.body.has_error, r.body.response]).to.deep.equal([200, false, "ethers.zeroPadValue: memory limit exceeded: the action may use at most 64 MB (memoryBytes)"]);
      expect(process.memoryUsage().rss - rss, "the relayer's own memory").to.be.below(200 * 1024 * 1024);
      await stillServing();
    });
  });

  describe("host calls are counted", function () {
    it("counts getLitActionPublicKey and getLitActionWalletAddress against the key budget (10 per run)", async function () {
      const code = `async function main() {
        const out = [];
        for (let i = 0; i < 12; i++) {
          try { await (i % 2 ? Lit.Actions.getLitActionWalletAddress() : Lit.Actions.getLitActionPublicKey({ ipfsId: "Qm" + i })); out.push("ok"); }
          catch (e) { out.push(e.message); }
        }
        return out;
      }`;
      const r = await run(apiKey, { code });
      const limit = "key request limit exceeded: at most 10 key requests per run (maxKeyRequests)";
      // the action caught the refusals: the run does not fail for them (as on Chipotle), and it was refused the 11th and 12th
      expect([r.status, r.body.has_error]).to.deep.equal([200, false]);
      expect(r.body.response).to.deep.equal([...Array(10).fill("ok"), limit, limit]);
    });

    /** Runs `code` and answers its reply and how many keys the key provider derived meanwhile. */
    async function derivationsOf(code: string) {
      const keys = stack.relayer.ctx.keys;
      const original = keys.deriveSecret.bind(keys);
      let derived = 0;
      keys.deriveSecret = async (p: string) => (derived++, original(p));
      try {
        return { r: await run(apiKey, { code }), derived };
      } finally {
        keys.deriveSecret = original;
      }
    }

    it("answers a flood of 1,000 concurrent key derivations with at most 10 derivations", async function () {
      const { r, derived } = await derivationsOf(
        `async function main() { const r = await Promise.allSettled(Array.from({ length: 1000 }, (_, i) => Lit.Actions.getLitActionPublicKey({ ipfsId: "Qm" + i }))); return r.filter((x) => x.status === "fulfilled").length }`,
      );
      expect(r.body.response).to.equal(10);
      expect(derived).to.equal(10);
    });

    it("derives once per run what is asked twice (the answers are cached)", async function () {
      const { r, derived } = await derivationsOf(
        `async function main() { const a = await Lit.Actions.getLitActionWalletAddress(); const b = await Lit.Actions.getLitActionPublicKey(); const k = await Lit.Actions.getLitActionPrivateKey(); return new ethers.Wallet(k).address.toLowerCase() === a && ethers.computeAddress(b).toLowerCase() === a }`,
      );
      expect([r.body.has_error, r.body.response]).to.deep.equal([false, true]);
      expect(derived).to.equal(1);
    });
  });

  describe("caches are bounded", function () {
    it("keeps at most its bound of permission decisions, answering the rest from the chain (one decision per wallet a caller asks about)", async function () {
      const ctx = stack.relayer.ctx;
      const cache = new PermissionCache(ctx.chain.accountConfig, ctx.chain.provider, pino({ level: "silent" }), 60_000, 3);
      const abort = new AbortController();
      await cache.start(abort.signal);
      try {
        const keyHash = hashKey(apiKey);
        const who = { keyHash, ...(await cache.resolve(keyHash)) };
        const cid = keccak256(toUtf8Bytes(await computeCid("async function main() {}")));
        const answers = [];
        for (let i = 1; i <= 10; i++) answers.push(await cache.allowed(who, cid, `0x${i.toString(16).padStart(40, "0")}`));
        expect(answers).to.deep.equal(Array(10).fill(false));
        expect(cache.size().decisions).to.equal(3);
      } finally {
        abort.abort();
      }
    });
  });
});
