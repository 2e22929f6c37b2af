/**
 * GET /core/v1/get_action_code?ipfs_id= (issue 23 item 6): the code stored under a CID, public as on
 * IPFS (no key), the exact bytes that hash to the CID, as text that no browser runs as a script of
 * this origin; unknown CID 404, malformed 400, bounded in size and per client.
 */
import http from "node:http";
import { expect } from "chai";
import { CID } from "multiformats/cid";
import { computeCid } from "../executor/cid";
import { call, type Stack } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, expectError, newCid, ok } from "./helpers/relayerWorkflow";

const codeUrl = (stack: Stack, cid: string) => `${stack.api}/get_action_code?ipfs_id=${encodeURIComponent(cid)}`;

describe("get_action_code: stored code by CID (issue 23)", function () {
  this.timeout(180_000);
  const stack = suiteStack();

  /** Runs `code` once with a fresh account key (which stores it) and answers its CID. */
  async function stored(code: string): Promise<string> {
    const owner = await accountClient(stack());
    const r = await ok(owner.post("/lit_action", { code }));
    return r.ipfs_id;
  }

  it("answers the exact stored bytes without a key, as text/plain UTF-8 with nosniff, cached for good by CID; its CIDv1 names it too", async function () {
    const code = `async function main() { return "héllo 🌍"; } // ${Date.now()}`;
    const cid = await stored(code);
    expect(cid).to.equal(await computeCid(code));
    const res = await fetch(codeUrl(stack(), cid));
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.status).to.equal(200);
    expect(bytes.equals(Buffer.from(code, "utf8"))).to.equal(true);
    expect(await computeCid(bytes)).to.equal(cid);
    expect(res.headers.get("content-type")).to.equal("text/plain; charset=utf-8");
    expect(res.headers.get("x-content-type-options")).to.equal("nosniff");
    expect(res.headers.get("content-security-policy")).to.equal("default-src 'none'; sandbox");
    expect(res.headers.get("cache-control")).to.equal("public, max-age=31536000, immutable");
    expect(res.headers.get("etag")).to.equal(`"${cid}"`);
    expect(res.headers.get("access-control-allow-origin")).to.equal("*");
    // A revalidation (node:http: fetch adds cache-control: no-cache to a conditional request, which asks for the body)
    const again = await new Promise<{ status?: number; body: string }>((resolve, reject) =>
      http.get(codeUrl(stack(), cid), { headers: { "if-none-match": `"${cid}"` } }, (r) => {
        let body = "";
        r.on("data", (c) => (body += c)).on("end", () => resolve({ status: r.statusCode, body }));
      }).on("error", reject),
    );
    expect(again).to.deep.equal({ status: 304, body: "" });
    const v1 = CID.parse(cid).toV1().toString();
    const byV1 = await fetch(codeUrl(stack(), v1));
    expect([byV1.status, await byV1.text()]).to.deep.equal([200, code]);
  });

  it("404 action_code_not_found for a CID nothing is stored under (a refused run stores nothing), never cached", async function () {
    const owner = await accountClient(stack());
    const key = await addUsageKey(stack(), owner, { name: "none", execute_in_groups: [await addGroup(owner, "g", [], [])] });
    const refused = `async function main() { return "refused"; } // ${Date.now()}`;
    await expectError(key.post("/lit_action", { code: refused }), 403, "not_permitted");
    for (const cid of [await computeCid(refused), await computeCid("never sent")]) {
      const r = await call(stack(), "GET", `/get_action_code?ipfs_id=${cid}`);
      await expectError(r, 404, "action_code_not_found", cid);
      const res = await fetch(codeUrl(stack(), cid));
      expect(String(res.headers.get("cache-control"))).not.to.contain("immutable");
      expect(res.headers.get("etag")).not.to.equal(`"${cid}"`);
    }
  });

  it("400 for a malformed CID, a CID of another kind, a missing, repeated or unknown parameter", async function () {
    const cid = await stored(`async function main() { return 1; } // ${Date.now()}`);
    const bad = [
      "",
      "?ipfs_id=",
      "?ipfs_id=abc",
      `?ipfs_id=${encodeURIComponent("Qm' OR 1=1 --")}`,
      `?ipfs_id=${encodeURIComponent(await newCid())}`, // a raw-codec CIDv1: no action the service computes
      `?ipfs_id=${cid.toLowerCase()}`,
      `?ipfs_id=${cid}&ipfs_id=${cid}`,
      `?ipfs_id=${cid}&code=1`,
      `?ipfs_id=${"Qm".padEnd(200, "a")}`,
    ];
    for (const q of bad) await expectError(call(stack(), "GET", `/get_action_code${q}`), 400, "invalid_request");
  });

  it("413 for stored code larger than the node now serves (its code limit lowered since)", async function () {
    const code = `async function main() { return 2; } /* ${"x".repeat(4000)} */`;
    const cid = await stored(code);
    const limits = stack().relayer.ctx.config.limits;
    const max = limits.maxCodeBytes;
    limits.maxCodeBytes = 2048;
    try {
      await expectError(call(stack(), "GET", `/get_action_code?ipfs_id=${cid}`), 413, "code_too_large", "2048");
    } finally {
      limits.maxCodeBytes = max;
    }
    expect((await fetch(codeUrl(stack(), cid))).status).to.equal(200);
  });

  it("is in the typed client (the text as it is)", async function () {
    const code = `async function main() { return "typed"; } // ${Date.now()}`;
    const cid = await stored(code);
    const { createVestaClient, unwrap } = await import("../client");
    const vesta = createVestaClient({ baseUrl: stack().relayer.url });
    const text: string = await unwrap(vesta.GET("/core/v1/get_action_code", { params: { query: { ipfs_id: cid } }, parseAs: "text" }));
    expect(text).to.equal(code);
  });
});

describe("get_action_code: the per-client limit", function () {
  this.timeout(180_000);
  const stack = suiteStack({ env: { VESTA_ACTION_CODE_RATE_LIMIT: "3", VESTA_TRUST_PROXY: "loopback" } });

  it("answers 429 rate_limited past VESTA_ACTION_CODE_RATE_LIMIT a minute from one client (before the store is read); another client has its own", async function () {
    const cid = await computeCid("never sent, and the limit counts it all the same");
    const from = (client: string) => call(stack(), "GET", `/get_action_code?ipfs_id=${cid}`, { headers: { "x-forwarded-for": client } });
    for (let i = 0; i < 3; i++) await expectError(from("203.0.113.9"), 404, "action_code_not_found");
    await expectError(from("203.0.113.9"), 429, "rate_limited", "action code reads", "at most 3 a minute");
    await expectError(from("203.0.113.10"), 404, "action_code_not_found");
  });
});
