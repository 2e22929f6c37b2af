import { expect } from "chai";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

describe("relayer smoke", function () {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  it("creates an account and lists its (empty) groups", async function () {
    const { apiKey } = await newAccount(stack);
    const r = await call(stack, "GET", "/list_groups", { key: apiKey });
    expect(r).to.deep.equal({ status: 200, body: [] });
  });
});

describe("relayer body content types", function () {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  it("refuses a non-JSON body with 415 and does nothing", async function () {
    const { apiKey } = await newAccount(stack);
    const r = await call(stack, "POST", "/create_wallet", { key: apiKey, rawBody: "name=x", headers: { "content-type": "text/plain" } });
    expect([r.status, r.body.code]).to.deep.equal([415, "unsupported_media_type"]);
    expect((await call(stack, "GET", "/list_wallets", { key: apiKey })).body).to.deep.equal([]);
  });

  it("takes a POST without any body as an empty object", async function () {
    const { apiKey } = await newAccount(stack);
    const r = await call(stack, "POST", "/create_wallet", { key: apiKey });
    expect(r.status).to.equal(200);
    expect((await call(stack, "GET", "/list_wallets", { key: apiKey })).body).to.have.length(1);
  });
});
