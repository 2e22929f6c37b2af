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
