/**
 * The typed client (client/index.ts over client/generated/schema.ts): generated from the API as it
 * is, type-checked with everything that uses it, and behaving as documented against a live relayer.
 */
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";
import { createVestaClient, unwrap, VestaApiError } from "../client";
import { openApiDocument } from "../scripts/gen-client";
import { startStack, type Stack } from "./helpers/relayer";

const ROOT = path.join(__dirname, "..");
const run = promisify(execFile);

describe("typed client", function () {
  this.timeout(180_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  it("is generated from the document the relayer serves (the build output is current)", async function () {
    const served = await (await fetch(`${stack.api}/openapi.json`)).json();
    const generated = JSON.parse(fs.readFileSync(path.join(ROOT, "client", "generated", "openapi.json"), "utf8"));
    expect(generated).to.deep.equal(served);
    expect(JSON.parse(JSON.stringify(openApiDocument()))).to.deep.equal(served);
    const schema = fs.readFileSync(path.join(ROOT, "client", "generated", "schema.ts"), "utf8");
    for (const p of Object.keys(served.paths)) expect(schema, p).to.contain(`"${p}": {`);
  });

  it("type-checks the project (triggers service, scripts, tests) and the dashboard against the generated types", async function () {
    const tsc = path.join(ROOT, "node_modules", ".bin", "tsc");
    for (const project of [".", "dashboard"]) {
      const out = await run(tsc, ["--noEmit", "-p", project], { cwd: ROOT }).catch((err: { stdout: string }) => err);
      expect((out as { stdout: string }).stdout, `tsc -p ${project}`).to.equal("");
    }
  });

  it("authenticates with the key, returns typed data, and throws the API's error code and message", async function () {
    const anon = createVestaClient({ baseUrl: stack.relayer.url });
    const { api_key } = await unwrap(anon.POST("/core/v1/new_account", { body: { account_name: "client test" } }));
    const vesta = createVestaClient({ baseUrl: `${stack.relayer.url}/core/v1/`, apiKey: api_key }); // a /core/v1 suffix is tolerated
    const { group_id } = await unwrap(vesta.POST("/core/v1/add_group", { body: { group_name: "g" } }));
    const groups = await unwrap(vesta.GET("/core/v1/list_groups", { params: { query: { page_number: 0, page_size: 10 } } }));
    expect(groups.map((g) => [g.id, g.name])).to.deep.equal([[group_id, "g"]]);

    const err = await unwrap(vesta.POST("/core/v1/remove_group", { body: { group_id: 999 } })).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(VestaApiError);
    expect(err).to.include({ status: 404, code: "group_not_found" });
    const denied = await unwrap(anon.GET("/core/v1/list_groups", { params: { query: { page_number: 0, page_size: 10 } } })).catch((e: unknown) => e);
    expect(denied).to.include({ status: 401, code: "invalid_api_key" });
    expect((denied as Error).message).to.match(/API key is required/);
  });

  it("asks walletAuth for a header on every request, and reports an unreachable service as status 0", async function () {
    let asked = 0;
    const seen: string[] = [];
    const fetchSpy: typeof fetch = async (input, init) => {
      const req = input instanceof Request ? input : new Request(input, init);
      seen.push(req.headers.get("x-wallet-auth") ?? "");
      return fetch(req);
    };
    const vesta = createVestaClient({ baseUrl: stack.relayer.url, walletAuth: async () => `header-${++asked}`, fetch: fetchSpy });
    await vesta.GET("/core/v1/billing/balance");
    await vesta.GET("/core/v1/billing/balance");
    expect(seen).to.deep.equal(["header-1", "header-2"]);

    const down = createVestaClient({ baseUrl: "http://127.0.0.1:9" });
    const err = await unwrap(down.GET("/core/v1/get_node_chain_config")).catch((e: unknown) => e);
    expect(err).to.include({ status: 0, code: "unreachable" });
  });
});
