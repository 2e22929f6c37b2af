import { expect } from "chai";
import { hex32 } from "../protocol/usageKeyShape";
import { keyHash } from "../protocol/usageKeySeal";
import { call, newAccount } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addGroup, addUsageKey, expectError, newCid, ok } from "./helpers/relayerWorkflow";

type Entry = { event: string; args: Record<string, string | boolean>; actor_key_hash: string | null; sender: string; tx_hash: string; block_number: number; log_index: number; time: string };

describe("GET /list_audit_events: the account's administrative history from the contract's events", function () {
  this.timeout(120_000);
  const stack = suiteStack({ env: { VESTA_AUDIT_RATE_LIMIT: "1000" } }); // every request of this suite comes from one address

  it("answers who, what, when and the transaction, newest first, for this account only", async function () {
    const owner = await accountClient(stack(), false, "audited");
    const other = await accountClient(stack(), false, "bystander");
    const group = await addGroup(owner, "ops");
    await addGroup(other, "not mine");
    const cid = await newCid();
    await ok(owner.post("/add_action", { action_ipfs_cid: cid, name: "act", description: "" }));
    await ok(owner.post("/remove_group", { group_id: group }));
    const page = await ok(owner.get("/list_audit_events"));
    const events: Entry[] = page.events;
    expect(page.next_cursor).to.equal(null);
    expect(events.map((e) => e.event)).to.deep.equal(["GroupRemoved", "ActionAdded", "GroupCreated", "AccountCreated", "UsageApiKeyAuthorized"]);
    const [removed, action, created, account] = events;
    expect(created.args).to.deep.equal({ groupId: String(group), name: "ops", description: "ops description" });
    expect(created.actor_key_hash).to.equal(hex32(owner.hash));
    expect(action.args).to.deep.equal({ cidHash: hex32(keyHash(cid)), name: "act", description: "" });
    expect(account.actor_key_hash).to.equal(null);
    expect(account.args).to.include({ managed: true, name: "audited" });
    // Each entry is its transaction's log: block, sender and time as the chain has them.
    const provider = stack().relayer.ctx.chain.provider;
    for (const e of events) {
      const receipt = (await provider.getTransactionReceipt(e.tx_hash))!;
      expect([receipt.blockNumber, receipt.from]).to.deep.equal([e.block_number, e.sender]);
      expect(receipt.logs.some((l) => l.index === e.log_index)).to.equal(true);
      expect(e.time).to.equal(new Date(Number((await provider.getBlock(e.block_number))!.timestamp) * 1000).toISOString());
    }
    expect(removed.block_number).to.be.greaterThan(created.block_number);
    // The bystander sees its own two entries, none of the owner's.
    expect((await ok(other.get("/list_audit_events"))).events.map((e: Entry) => e.event)).to.deep.equal(["GroupCreated", "AccountCreated", "UsageApiKeyAuthorized"]);
  });

  it("pages with next_cursor: the pages, joined, are the whole history, each entry once", async function () {
    const owner = await accountClient(stack());
    for (const name of ["a", "b", "c", "d"]) await addGroup(owner, name);
    const all: Entry[] = (await ok(owner.get("/list_audit_events?limit=50"))).events;
    expect(all.map((e) => e.event)).to.deep.equal(["GroupCreated", "GroupCreated", "GroupCreated", "GroupCreated", "AccountCreated", "UsageApiKeyAuthorized"]);
    const joined: Entry[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { events: Entry[]; next_cursor: string | null } = await ok(owner.get(`/list_audit_events?limit=2${cursor ? `&cursor=${cursor}` : ""}`));
      joined.push(...page.events);
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(joined.map((e) => `${e.tx_hash}:${e.log_index}`)).to.deep.equal(all.map((e) => `${e.tx_hash}:${e.log_index}`));
    expect(pages).to.equal(3);
  });

  it("a cursor past the chain's head answers the newest entries (no RPC range past the head, no 5xx)", async function () {
    const owner = await accountClient(stack());
    const newest: Entry[] = (await ok(owner.get("/list_audit_events"))).events;
    const far = await ok(owner.get("/list_audit_events?cursor=999999999999999:0"));
    expect(far.events.map((e: Entry) => e.tx_hash)).to.deep.equal(newest.map((e) => e.tx_hash));
    expect(far.next_cursor).to.equal(null);
  });

  it("is the owner's: 403 for a usage key, 401 without a key; 400 for a bad cursor or limit", async function () {
    const owner = await accountClient(stack());
    const usage = await addUsageKey(stack(), owner);
    const r = await usage.get("/list_audit_events");
    expect(r.status).to.equal(403);
    expect((await call(stack(), "GET", "/list_audit_events")).status).to.equal(401);
    for (const q of ["cursor=abc", "cursor=1:", "cursor=-1:0", "cursor=1:2:3", "limit=0", "limit=51", "limit=x", "page=2"]) {
      await expectError(owner.get(`/list_audit_events?${q}`), 400, "invalid_request");
    }
  });
});

describe("GET /list_audit_events: rate limited (each page may cost the chain's node 50 log queries)", function () {
  this.timeout(120_000);
  // Clients named by X-Forwarded-For from the loopback proxy (the test).
  const stack = suiteStack({ env: { VESTA_AUDIT_RATE_LIMIT: "3", VESTA_AUDIT_TOTAL_RATE_LIMIT: "5", VESTA_TRUST_PROXY: "loopback" } });
  const page = (key: string, client: string) => call(stack(), "GET", "/list_audit_events", { key, headers: { "x-forwarded-for": client } });

  it("answers 429 rate_limited past VESTA_AUDIT_RATE_LIMIT a minute per client, and past VESTA_AUDIT_TOTAL_RATE_LIMIT for all clients together", async function () {
    const owner = (await newAccount(stack(), "audited")).apiKey;
    for (let i = 0; i < 3; i++) expect((await page(owner, "203.0.113.1")).status).to.equal(200);
    await expectError(page(owner, "203.0.113.1"), 429, "rate_limited"); // this client's 4th
    // another client: its own budget (the 4th and 5th pages answered in all; a refused one is not counted)
    for (let i = 0; i < 2; i++) expect((await page(owner, "203.0.113.2")).status).to.equal(200);
    const refused = await page(owner, "203.0.113.3"); // a third client's first page, the 6th in all
    expect([refused.status, refused.body.code, refused.body.message]).to.deep.equal([429, "rate_limited", "too many audit log pages from all clients together (at most 5 a minute); try again in a minute"]);
  });
});
