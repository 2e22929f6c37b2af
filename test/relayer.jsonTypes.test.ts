import { expect } from "chai";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

/**
 * Every route that accepts a body takes the JSON media types route() accepts: application/json and
 * any application/*+json. The run and CID routes have body parsers of their own (larger limits);
 * a parser that skipped a +json body left the route an empty body (a misleading 400).
 */
describe("JSON bodies: application/json and +json on the run and CID routes", function () {
  this.timeout(120_000);
  let stack: Stack;
  let apiKey: string;
  const CODE = "async function main(params) { return params.n * 2 }";
  before(async () => {
    stack = await startStack();
    ({ apiKey } = await newAccount(stack, "json types"));
  });
  after(async () => stack?.stop());

  for (const type of ["application/json", "application/vnd.api+json", "application/merge-patch+json; charset=utf-8"]) {
    it(`${type}: runs, permission checks and CIDs read the body`, async function () {
      const headers = { "content-type": type };
      const cid = await call(stack, "POST", "/get_action_ipfs_id", { rawBody: JSON.stringify(CODE), headers }); // Chipotle's body: the code as a JSON string
      expect(cid.status, JSON.stringify(cid.body)).to.equal(200);
      const ran = await call(stack, "POST", "/lit_action", { key: apiKey, rawBody: JSON.stringify({ code: CODE, js_params: { n: 21 } }), headers });
      expect([ran.status, ran.body.response, ran.body.ipfs_id], JSON.stringify(ran.body)).to.deep.equal([200, 42, cid.body]);
      const checked = await call(stack, "POST", "/check_execute_permission", { key: apiKey, rawBody: JSON.stringify({ ipfs_id: ran.body.ipfs_id }), headers });
      expect([checked.status, checked.body.can_execute], JSON.stringify(checked.body)).to.deep.equal([200, true]);
    });
  }

  it("another media type is refused (415) on each of them, nothing run", async function () {
    for (const path of ["/get_action_ipfs_id", "/lit_action", "/check_execute_permission"]) {
      const r = await call(stack, "POST", path, { key: apiKey, rawBody: JSON.stringify(path === "/get_action_ipfs_id" ? CODE : { code: CODE }), headers: { "content-type": "text/plain" } });
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).to.equal(415);
    }
  });
});
