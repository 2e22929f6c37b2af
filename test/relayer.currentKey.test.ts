/**
 * GET /core/v1/get_current_api_key (issue 23 item 5): the dashboard, signed in with a usage key,
 * shows only what that key may do and names it. A key learns its own kind, hash and (a usage key)
 * its own permissions; never another key's, never a key value.
 */
import { expect } from "chai";
import { hex32 } from "../protocol/usageKeyShape";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, expectError, ok, client } from "./helpers/relayerWorkflow";

describe("get_current_api_key (issue 23)", function () {
  this.timeout(120_000);
  const stack = suiteStack();

  it("the account key: kind account and its hash, no usage key record", async function () {
    const owner = await accountClient(stack());
    expect(await ok(owner.get("/get_current_api_key"))).to.deep.equal({ key_kind: "account", api_key_hash: hex32(owner.hash) });
  });

  it("a usage key: its own name and permissions as list_api_keys shows them to the owner, and follows an update", async function () {
    const owner = await accountClient(stack());
    const g = await addGroup(owner, "g", [], []);
    const key = await addUsageKey(stack(), owner, { name: "ci bot", description: "runs CI", can_create_pkps: true, execute_in_groups: [g] });
    const other = await addUsageKey(stack(), owner, { name: "other", can_delete_groups: true });
    const listed = (await ok(owner.get("/list_api_keys?page_number=0&page_size=10"))).find((k: { id: string }) => k.id === hex32(key.hash));
    const me = await ok(key.get("/get_current_api_key"));
    expect(me).to.deep.equal({ key_kind: "usage", api_key_hash: hex32(key.hash), usage_api_key: listed });
    expect(me.usage_api_key).to.include({ name: "ci bot", can_create_pkps: true, can_delete_groups: false });
    expect(JSON.stringify(me)).not.to.contain(key.key);
    await ok(owner.post("/update_usage_api_key", { usage_api_key: key.key, name: "ci bot", execute_in_groups: [] }));
    expect((await ok(key.get("/get_current_api_key"))).usage_api_key.execute_in_groups).to.deep.equal([]);
    expect((await ok(other.get("/get_current_api_key"))).usage_api_key).to.include({ name: "other", can_delete_groups: true });
  });

  it("401 without a key, with an unknown key and with a removed one", async function () {
    const owner = await accountClient(stack());
    const key = await addUsageKey(stack(), owner, { name: "gone" });
    await ok(owner.post("/remove_usage_api_key", { usage_api_key: key.key }));
    await expectError(key.get("/get_current_api_key"), 401, "invalid_api_key");
    await expectError(client(stack(), "not-a-key").get("/get_current_api_key"), 401, "invalid_api_key");
    const res = await fetch(`${stack().api}/get_current_api_key`);
    expect(res.status).to.equal(401);
  });

  it("400 for a query field it does not have (nothing answered about the key)", async function () {
    const owner = await accountClient(stack());
    const key = await addUsageKey(stack(), owner, { name: "asker" });
    await expectError(key.get("/get_current_api_key?api_key_hash=0x01"), 400, "invalid_request", "api_key_hash");
  });
});
