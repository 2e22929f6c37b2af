import { expect } from "chai";
import { countCall, toHostCall, type CallCounts } from "../executor/sandbox/host/call-checks";
import { MAX_CID_CHARS, MAX_CRYPTO_MESSAGE_CHARS, MAX_HOST_CALLS_PER_RUN } from "../executor/sandbox/wire/bounds";
import { DEFAULT_LIMITS, type HostCall, type RunLimits } from "../executor/sandbox/types";
import { MAX_MODULE_URL_CHARS, MAX_MODULES_PER_RUN } from "../executor/sandbox/imports";

/**
 * The one gate between an action and the Host (host/call-checks.ts), rule by rule: what each call
 * may carry and how calls are counted against the run's limits. The sandbox tests (executor.hostile,
 * executor.bounds, executor.sandbox) show the same limits through a real run.
 */
const limits: RunLimits = { ...DEFAULT_LIMITS, maxKeyRequests: 2, maxFetches: 2, maxFetchBytes: 100 };
const KEY_OPS = ["getPrivateKey", "getLitActionPrivateKey", "getLitActionPublicKey", "getLitActionWalletAddress", "encrypt", "decrypt"] as const;
const call = (op: HostCall["op"]) => ({ op }) as HostCall;
type FetchCall = Extract<HostCall, { op: "fetch" }>;
const fresh = (): CallCounts => ({ total: 0, keys: 0, fetches: 0, imports: 0 });

/** The error `fn` throws: its class and message. */
function thrown(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (e) {
    return [(e as Error).constructor.name, (e as Error).message];
  }
  expect.fail("did not throw");
}

describe("host call checks (host/call-checks.ts)", function () {
  describe("countCall", function () {
    it("counts every key operation against maxKeyRequests, and only those", function () {
      for (const op of KEY_OPS) {
        const counts = fresh();
        expect([countCall(call(op), counts, limits), countCall(call(op), counts, limits)], op).to.deep.equal([undefined, undefined]);
        expect(countCall(call(op), counts, limits), op).to.equal("maxKeyRequests");
        expect(counts, `${op}: a refused call is not counted`).to.deep.equal({ total: 2, keys: 2, fetches: 0, imports: 0 });
        expect(countCall(call("fetch"), counts, limits), "a fetch is not a key request").to.equal(undefined);
      }
    });

    it("counts fetches against maxFetches, and only those", function () {
      const counts = fresh();
      expect([countCall(call("fetch"), counts, limits), countCall(call("fetch"), counts, limits)]).to.deep.equal([undefined, undefined]);
      expect(countCall(call("fetch"), counts, limits)).to.equal("maxFetches");
      expect(counts).to.deep.equal({ total: 2, keys: 0, fetches: 2, imports: 0 });
      expect(countCall(call("getPrivateKey"), counts, limits)).to.equal(undefined);
      expect(counts).to.deep.equal({ total: 3, keys: 1, fetches: 2, imports: 0 });
    });

    it("counts an imported module as a fetch and as an import: maxFetches first, then MAX_MODULES_PER_RUN", function () {
      const counts = fresh();
      expect(countCall(call("import"), counts, limits)).to.equal(undefined);
      expect(counts).to.deep.equal({ total: 1, keys: 0, fetches: 1, imports: 1 });
      expect(countCall(call("fetch"), counts, limits)).to.equal(undefined);
      expect(countCall(call("import"), counts, limits), "the fetch budget is shared").to.equal("maxFetches");
      expect(counts).to.deep.equal({ total: 2, keys: 0, fetches: 2, imports: 1 });
      const roomy = { ...limits, maxFetches: MAX_MODULES_PER_RUN + 10 };
      const near = { total: 0, keys: 0, fetches: 0, imports: MAX_MODULES_PER_RUN - 1 };
      expect(countCall(call("import"), near, roomy)).to.equal(undefined);
      expect(near).to.deep.equal({ total: 1, keys: 0, fetches: 1, imports: MAX_MODULES_PER_RUN });
      expect(countCall(call("import"), near, roomy)).to.equal("maxImports");
      expect(near, "a refused import is not counted").to.deep.equal({ total: 1, keys: 0, fetches: 1, imports: MAX_MODULES_PER_RUN });
      expect(countCall(call("fetch"), near, roomy), "only imports stop at MAX_MODULES_PER_RUN").to.equal(undefined);
      expect(near).to.deep.equal({ total: 2, keys: 0, fetches: 2, imports: MAX_MODULES_PER_RUN });
      expect(countCall(call("getRpcUrl"), near, roomy), "getRpcUrl is neither a key request nor a fetch").to.equal(undefined);
      expect(near).to.deep.equal({ total: 3, keys: 0, fetches: 2, imports: MAX_MODULES_PER_RUN });
    });

    it("stops every call at MAX_HOST_CALLS_PER_RUN, before the per-kind limits", function () {
      const counts = { total: MAX_HOST_CALLS_PER_RUN - 1, keys: 0, fetches: 0, imports: 0 };
      expect(countCall(call("fetch"), counts, limits)).to.equal(undefined);
      expect(counts.total).to.equal(MAX_HOST_CALLS_PER_RUN);
      const full = { total: MAX_HOST_CALLS_PER_RUN, keys: 99, fetches: 99, imports: 0 };
      for (const op of ["fetch", "getPrivateKey"] as const) expect(countCall(call(op), full, limits)).to.equal("maxHostCalls");
      expect(full).to.deep.equal({ total: MAX_HOST_CALLS_PER_RUN, keys: 99, fetches: 99, imports: 0 });
    });
  });

  describe("toHostCall", function () {
    const IPFS = "QmRunCid";

    it("key calls: pkpId a string of at most 512 characters; the action's own CID by default; nothing else passed on", function () {
      expect(toHostCall("getPrivateKey", { pkpId: "p".repeat(512), extra: 1 }, IPFS, limits)).to.deep.equal({ op: "getPrivateKey", pkpId: "p".repeat(512) });
      expect(thrown(() => toHostCall("getPrivateKey", { pkpId: "p".repeat(513) }, IPFS, limits))).to.deep.equal(["RangeError", "pkpId is longer than 512 characters"]);
      expect(thrown(() => toHostCall("getPrivateKey", { pkpId: 7 }, IPFS, limits))).to.deep.equal(["TypeError", "pkpId must be a string"]);
      expect(thrown(() => toHostCall("getPrivateKey", {}, IPFS, limits))).to.deep.equal(["TypeError", "pkpId must be a string"]);
      expect(toHostCall("getLitActionPrivateKey", { ipfsId: "other" }, IPFS, limits)).to.deep.equal({ op: "getLitActionPrivateKey" });
      for (const op of ["getLitActionPublicKey", "getLitActionWalletAddress"] as const) {
        expect(toHostCall(op, {}, IPFS, limits)).to.deep.equal({ op, ipfsId: IPFS });
        expect(toHostCall(op, { ipfsId: "c".repeat(MAX_CID_CHARS) }, IPFS, limits)).to.deep.equal({ op, ipfsId: "c".repeat(MAX_CID_CHARS) });
        expect(thrown(() => toHostCall(op, { ipfsId: "c".repeat(MAX_CID_CHARS + 1) }, IPFS, limits))).to.deep.equal(["RangeError", `ipfsId is longer than ${MAX_CID_CHARS} characters`]);
        expect(thrown(() => toHostCall(op, { ipfsId: null }, IPFS, limits))).to.deep.equal(["TypeError", "ipfsId must be a string"]);
      }
    });

    it("encrypt and decrypt: bounded message and ciphertext (twice the message bound)", function () {
      const m = "m".repeat(MAX_CRYPTO_MESSAGE_CHARS);
      expect(toHostCall("encrypt", { pkpId: "p", message: m }, IPFS, limits)).to.deep.equal({ op: "encrypt", pkpId: "p", message: m });
      expect(thrown(() => toHostCall("encrypt", { pkpId: "p", message: `${m}m` }, IPFS, limits))[0]).to.equal("RangeError");
      expect(thrown(() => toHostCall("encrypt", { pkpId: 1, message: "m" }, IPFS, limits))).to.deep.equal(["TypeError", "pkpId must be a string"]);
      const c = "c".repeat(2 * MAX_CRYPTO_MESSAGE_CHARS);
      expect(toHostCall("decrypt", { pkpId: "p", ciphertext: c }, IPFS, limits)).to.deep.equal({ op: "decrypt", pkpId: "p", ciphertext: c });
      expect(thrown(() => toHostCall("decrypt", { pkpId: "p", ciphertext: `${c}c` }, IPFS, limits))).to.deep.equal(["RangeError", `ciphertext is longer than ${2 * MAX_CRYPTO_MESSAGE_CHARS} characters`]);
      expect(thrown(() => toHostCall("decrypt", { pkpId: "p" }, IPFS, limits))).to.deep.equal(["TypeError", "ciphertext must be a string"]);
    });

    it("encrypt: the message is bounded in UTF-8 bytes, so that Decrypt takes back every ciphertext Encrypt gives", function () {
      const euros = "€".repeat(Math.floor(MAX_CRYPTO_MESSAGE_CHARS / 3)); // 3 bytes each: just under the bound
      expect((toHostCall("encrypt", { pkpId: "p", message: euros }, IPFS, limits) as Extract<HostCall, { op: "encrypt" }>).message).to.equal(euros);
      expect(thrown(() => toHostCall("encrypt", { pkpId: "p", message: `${euros}€` }, IPFS, limits))).to.deep.equal(["RangeError", `message is larger than ${MAX_CRYPTO_MESSAGE_CHARS} bytes of UTF-8`]);
      // 1 M characters of "€" were accepted, and their ciphertext (base64 of 3 MB) is past what Decrypt takes
      expect(thrown(() => toHostCall("encrypt", { pkpId: "p", message: "€".repeat(MAX_CRYPTO_MESSAGE_CHARS) }, IPFS, limits))[0]).to.equal("RangeError");
      const ciphertextChars = 4 * Math.ceil((MAX_CRYPTO_MESSAGE_CHARS + 28) / 3); // iv + data + tag, base64
      expect(toHostCall("decrypt", { pkpId: "p", ciphertext: "c".repeat(ciphertextChars) }, IPFS, limits)).to.have.property("op", "decrypt");
    });

    it("fetch: an upper-case method of at most 16 letters, an http(s) URL of at most 8192 characters, a body within maxFetchBytes", function () {
      const ok = (args: Record<string, unknown>) => toHostCall("fetch", { method: "GET", url: "https://example.com/", ...args }, IPFS, limits) as FetchCall;
      expect(ok({})).to.deep.equal({ op: "fetch", url: "https://example.com/", method: "GET", headers: {} });
      expect(ok({ method: "PROPFINDABCDEFGH" }).method).to.equal("PROPFINDABCDEFGH");
      expect(thrown(() => ok({ method: "PROPFINDABCDEFGHI" }))).to.deep.equal(["RangeError", "method is longer than 16 characters"]);
      for (const method of ["get", "GET ", "G-T", "", "GET\r\nX"]) expect(thrown(() => ok({ method }))).to.deep.equal(["TypeError", `bad fetch method ${method}`]);
      expect(ok({ url: "HTTP://example.com/" }).url).to.equal("HTTP://example.com/");
      const long = `http://e.com/${"a".repeat(8192 - 13)}`;
      expect(ok({ url: long }).url).to.equal(long);
      expect(thrown(() => ok({ url: `${long}a` }))).to.deep.equal(["RangeError", "url is longer than 8192 characters"]);
      expect(thrown(() => ok({ url: "ftp://example.com/" }))).to.deep.equal(["TypeError", "fetch: only http and https URLs are allowed, got ftp:"]);
      expect(thrown(() => ok({ url: "file:///etc/passwd" }))).to.deep.equal(["TypeError", "fetch: only http and https URLs are allowed, got file:"]);
      expect(thrown(() => ok({ url: "//example.com/" }))).to.deep.equal(["TypeError", 'fetch: only http and https URLs are allowed, got "//example.com/"']);
      expect(thrown(() => ok({ url: "1http://example.com/" }))).to.deep.equal(["TypeError", 'fetch: only http and https URLs are allowed, got "1http://example.com/"']);
      expect(thrown(() => ok({ url: `x${"y".repeat(200)}` }))[1]).to.equal(`fetch: only http and https URLs are allowed, got ${JSON.stringify(`x${"y".repeat(99)}`)}`);
      expect(thrown(() => ok({ url: 5 }))).to.deep.equal(["TypeError", "url must be a string"]);
      expect(ok({ body: "b".repeat(100) }).body).to.equal("b".repeat(100));
      expect(thrown(() => ok({ body: "b".repeat(101) }))).to.deep.equal(["RangeError", "body is larger than 100 bytes of UTF-8"]);
      expect(thrown(() => ok({ body: null }))).to.deep.equal(["TypeError", "body must be a string"]);
      expect("body" in ok({ body: undefined })).to.equal(false);
    });

    it("fetch body: bounded by the bytes sent (UTF-8 of a text body, what base64 decodes to), not by characters", function () {
      const ok = (args: Record<string, unknown>) => toHostCall("fetch", { method: "POST", url: "https://example.com/", ...args }, IPFS, limits) as FetchCall;
      expect(ok({ body: "€".repeat(33) }).body).to.equal("€".repeat(33)); // 99 bytes
      expect(thrown(() => ok({ body: "€".repeat(34) }))).to.deep.equal(["RangeError", "body is larger than 100 bytes of UTF-8"]); // 34 characters, 102 bytes
      expect(thrown(() => ok({ body: "😀".repeat(26) }))).to.deep.equal(["RangeError", "body is larger than 100 bytes of UTF-8"]); // 52 UTF-16 units, 104 bytes
      expect(ok({ bodyBase64: Buffer.alloc(100).toString("base64") }).bodyBase64).to.have.length(136);
      expect(thrown(() => ok({ bodyBase64: "A".repeat(136) }))).to.deep.equal(["RangeError", "bodyBase64 is larger than 100 bytes"]); // 136 characters, 102 bytes
    });

    it("fetch URL: bounded as it is sent, percent-encoded (a \"€\" of the path is 9 bytes), not by characters", function () {
      const ok = (url: string) => toHostCall("fetch", { method: "GET", url }, IPFS, limits) as FetchCall;
      const prefix = "http://e.com/";
      const ascii = `${prefix}${"a".repeat(8192 - prefix.length)}`;
      expect(ok(ascii).url).to.equal(ascii);
      const euros = `${prefix}${"€".repeat(900)}`; // 913 characters, 8113 bytes encoded
      expect(ok(euros).url).to.equal(euros);
      expect(thrown(() => ok(`${prefix}${"€".repeat(910)}`))).to.deep.equal(["RangeError", "url is longer than 8192 bytes once percent-encoded"]); // 923 characters, 8203 bytes
      expect(thrown(() => ok(`${prefix}${"€".repeat(8000)}`))).to.deep.equal(["RangeError", "url is longer than 8192 bytes once percent-encoded"]); // 72 KB a request was accepted
    });

    it("fetch headers: at most 64 KB in all (every redirect hop sends them again)", function () {
      const ok = (headers: unknown) => toHostCall("fetch", { method: "GET", url: "https://example.com/", headers }, IPFS, limits) as FetchCall;
      const sized = (n: number, chars: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`h${i}`, "v".repeat(chars - `h${i}`.length)]));
      expect(Object.keys(ok(sized(8, 8192)).headers)).to.have.length(8); // 64 KB exactly
      expect(thrown(() => ok({ ...sized(8, 8192), x: "1" }))).to.deep.equal(["RangeError", "fetch headers are at most 65536 bytes in all"]);
      expect(thrown(() => ok(sized(64, 8191)))).to.deep.equal(["RangeError", "fetch headers are at most 65536 bytes in all"]); // 512 KB were accepted
    });

    it("fetch headers: an object of at most 64 string headers, each name and value within 8192 characters", function () {
      const ok = (headers: unknown) => toHostCall("fetch", { method: "GET", url: "https://example.com/", headers }, IPFS, limits) as FetchCall;
      expect(ok({ a: "1", "X-B": "2" }).headers).to.deep.equal({ a: "1", "X-B": "2" });
      for (const bad of [null, [], ["a", "1"], "a: 1", 5]) expect(thrown(() => ok(bad)), JSON.stringify(bad)).to.deep.equal(["TypeError", "fetch headers must be an object"]);
      const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`h${i}`, "v"]));
      expect(Object.keys(ok(many(64)).headers)).to.have.length(64);
      expect(thrown(() => ok(many(65)))).to.deep.equal(["RangeError", "at most 64 fetch headers"]);
      expect(ok({ k: "v".repeat(8191) }).headers.k).to.have.length(8191);
      expect(thrown(() => ok({ k: "v".repeat(8192) }))).to.deep.equal(["TypeError", "bad fetch header k"]);
      expect(thrown(() => ok({ n: 1 }))).to.deep.equal(["TypeError", "bad fetch header n"]);
      expect(thrown(() => ok({ ["N".repeat(100)]: 1 }))).to.deep.equal(["TypeError", `bad fetch header ${"N".repeat(64)}`]);
    });

    it("fetch bodyBase64: base64 of at most 4*ceil(maxFetchBytes/3) characters, never beside a text body", function () {
      const ok = (args: Record<string, unknown>) => toHostCall("fetch", { method: "POST", url: "https://example.com/", ...args }, IPFS, limits) as FetchCall;
      const max = 4 * Math.ceil(100 / 3); // 136
      const b64 = `${"A".repeat(max - 2)}==`;
      expect(ok({ bodyBase64: b64 })).to.deep.equal({ op: "fetch", url: "https://example.com/", method: "POST", headers: {}, bodyBase64: b64 });
      expect(ok({ bodyBase64: "" }).bodyBase64).to.equal("");
      expect(thrown(() => ok({ bodyBase64: "A".repeat(max + 1) }))).to.deep.equal(["RangeError", `bodyBase64 is longer than ${max} characters`]);
      expect(thrown(() => ok({ bodyBase64: 5 }))).to.deep.equal(["TypeError", "bodyBase64 must be a string"]);
      for (const bad of ["QUJD!", "QUJD===", "=QUJD", "QU JD", "QUJD\n", "QUJD=A"]) expect(thrown(() => ok({ bodyBase64: bad })), bad).to.deep.equal(["TypeError", "fetch: bodyBase64 is not base64"]);
      expect(thrown(() => ok({ body: "x", bodyBase64: "eA==" }))).to.deep.equal(["TypeError", "fetch: a body is text or base64, not both"]);
      expect(thrown(() => ok({ body: "", bodyBase64: "" })), "an empty body counts as a body").to.deep.equal(["TypeError", "fetch: a body is text or base64, not both"]);
      expect("bodyBase64" in ok({ body: "x" })).to.equal(false);
    });

    it("import: a URL of at most MAX_MODULE_URL_CHARS, and at most 8 well-formed integrity pins", function () {
      const pin = `sha384-${"A".repeat(64)}`;
      const url = "https://cdn.example/npm/zod@3.22.4/+esm";
      expect(toHostCall("import", { url, extra: 1 }, IPFS, limits)).to.deep.equal({ op: "import", url, integrity: [] });
      expect(toHostCall("import", { url, integrity: [pin] }, IPFS, limits)).to.deep.equal({ op: "import", url, integrity: [pin] });
      expect(toHostCall("import", { url, integrity: null }, IPFS, limits), "null: no pins, as undefined").to.deep.equal({ op: "import", url, integrity: [] });
      const eight = Array.from({ length: 8 }, () => pin);
      expect(toHostCall("import", { url, integrity: eight }, IPFS, limits)).to.deep.equal({ op: "import", url, integrity: eight });
      const refusal = ["TypeError", "import: integrity must be a list of at most 8 pins (sha384-<base64>)"];
      for (const integrity of [[...eight, pin], pin, {}, [[pin]], [pin, 7], [pin, "sha384-short"], ["md5-AAAA"], [`sha384-${"A".repeat(63)}`]]) {
        expect(thrown(() => toHostCall("import", { url, integrity }, IPFS, limits)), JSON.stringify(integrity)).to.deep.equal(refusal);
      }
      const long = `https://e/${"a".repeat(MAX_MODULE_URL_CHARS - 10)}`;
      expect((toHostCall("import", { url: long }, IPFS, limits) as Extract<HostCall, { op: "import" }>).url).to.equal(long);
      expect(thrown(() => toHostCall("import", { url: `${long}a` }, IPFS, limits))).to.deep.equal(["RangeError", `url is longer than ${MAX_MODULE_URL_CHARS} characters`]);
      expect(thrown(() => toHostCall("import", {}, IPFS, limits))).to.deep.equal(["TypeError", "url must be a string"]);
    });

    it("getRpcUrl: a chain name of at most 64 characters, nothing else passed on", function () {
      expect(toHostCall("getRpcUrl", { chain: "local", url: "x" }, IPFS, limits)).to.deep.equal({ op: "getRpcUrl", chain: "local" });
      expect(toHostCall("getRpcUrl", { chain: "c".repeat(64) }, IPFS, limits)).to.deep.equal({ op: "getRpcUrl", chain: "c".repeat(64) });
      expect(thrown(() => toHostCall("getRpcUrl", { chain: "c".repeat(65) }, IPFS, limits))).to.deep.equal(["RangeError", "chain is longer than 64 characters"]);
      expect(thrown(() => toHostCall("getRpcUrl", {}, IPFS, limits))).to.deep.equal(["TypeError", "chain must be a string"]);
    });

    it("an unknown operation is refused, its name cut to 64 characters", function () {
      expect(thrown(() => toHostCall("readFile", {}, IPFS, limits))).to.deep.equal(["TypeError", "unknown host operation readFile"]);
      expect(thrown(() => toHostCall("x".repeat(100), {}, IPFS, limits))).to.deep.equal(["TypeError", `unknown host operation ${"x".repeat(64)}`]);
    });
  });
});
