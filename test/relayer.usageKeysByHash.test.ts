/**
 * Keys the owner can always revoke (issue 23 item 5): a usage key is updated, removed or rotated by
 * its hash (list_api_keys' api_key_hash) without its value, by the account key only; a hash that is
 * not a usage key of the caller's account is 404 and nothing changes.
 */
import { expect } from "chai";
import { ethers } from "hardhat";
import { computeCid } from "../executor/cid";
import { hex32 } from "../protocol/usageKeyShape";
import { suiteStack } from "./helpers/relayerChecks";
import { call, startStack, type Stack } from "./helpers/relayer";
import { hashOf } from "./helpers/accountConfig";
import {
  accountClient,
  addGroup,
  addUsageKey,
  ALL_PERMISSIONS,
  client,
  expectError,
  expectRejected,
  keyItem,
  listedUsageKey,
  ok,
  type Client,
} from "./helpers/relayerWorkflow";

const HELLO = `async function main() { return "hello"; }`;

describe("usage keys by hash: update, remove, rotate (issue 23)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  const byHash = (who: Client, path: string, key: Client | bigint, extra: Record<string, unknown> = {}) =>
    who.post(path, { api_key_hash: hex32(typeof key === "bigint" ? key : key.hash), ...extra });
  /** Whether `key` still authenticates (a call any active key may make). */
  const works = async (key: Client) => (await key.get("/list_runs")).status === 200;

  async function fixture() {
    const owner = await accountClient(stack());
    const cid = await computeCid(HELLO);
    const g1 = await addGroup(owner, "g1", [], [cid]);
    const g2 = await addGroup(owner, "g2", [], [cid]);
    const key = await addUsageKey(stack(), owner, { name: "ci", description: "the CI runner", execute_in_groups: [g1, g2], can_create_pkps: true });
    const other = await addUsageKey(stack(), owner, { name: "other" });
    const stranger = await accountClient(stack());
    const strangerKey = await addUsageKey(stack(), stranger, { name: "theirs" });
    return { owner, cid, g1, g2, key, other, stranger, strangerKey };
  }

  describe("remove_usage_api_key_by_hash", function () {
    it("revokes the key at once, the other keys untouched", async function () {
      const { owner, key, other } = await fixture();
      expect(await works(key)).to.equal(true);
      expect(await ok(byHash(owner, "/remove_usage_api_key_by_hash", key))).to.deep.equal({ success: true });
      expect(await works(key)).to.equal(false);
      expect(await listedUsageKey(owner, key)).to.equal(undefined);
      expect((await stack().config.resolveApiKey(key.hash)).apiKeyHash).to.equal(0n);
      expect(await works(other)).to.equal(true);
      await expectError(byHash(owner, "/remove_usage_api_key_by_hash", key), 404, "usage_key_not_found"); // removed already
    });

    it("404 and nothing changed for another account's key, the account key, an unknown hash; 400 for a malformed one", async function () {
      const { owner, key, stranger, strangerKey } = await fixture();
      for (const h of [strangerKey.hash, stranger.hash, owner.hash, 12345n]) {
        await expectRejected(stack(), [owner, stranger], () => byHash(owner, "/remove_usage_api_key_by_hash", h), 404, "usage_key_not_found");
      }
      expect(await works(strangerKey)).to.equal(true);
      for (const bad of ["0x1234", "0x" + "g".repeat(64), 5, null, "0x" + "0".repeat(64) + "00"]) {
        await expectRejected(stack(), [owner], () => owner.post("/remove_usage_api_key_by_hash", { api_key_hash: bad }), 400, "invalid_request", "api_key_hash");
      }
      await expectRejected(stack(), [owner], () => owner.post("/remove_usage_api_key_by_hash", { api_key_hash: hex32(key.hash), usage_api_key: key.key }), 400, "invalid_request");
      expect(await works(key)).to.equal(true);
    });

    it("403 owner_only for a usage key, even with every permission and for its own hash; nothing changed", async function () {
      const { owner, key, other } = await fixture();
      const mighty = await addUsageKey(stack(), owner, { name: "mighty", ...ALL_PERMISSIONS });
      for (const [who, target] of [[mighty, key], [mighty, mighty], [key, key], [other, key]] as const) {
        for (const path of ["/remove_usage_api_key_by_hash", "/rotate_usage_api_key", "/update_usage_api_key_by_hash"]) {
          await expectRejected(stack(), [owner], () => byHash(who, path, target), 403, "owner_only");
        }
      }
      expect([await works(key), await works(mighty)]).to.deep.equal([true, true]);
    });
  });

  describe("update_usage_api_key_by_hash", function () {
    it("replaces the permission set as update_usage_api_key does (name, description, expiration, balance kept when omitted)", async function () {
      const { owner, key, g1 } = await fixture();
      await ok(byHash(owner, "/update_usage_api_key_by_hash", key, { can_create_groups: true, execute_in_groups: [g1] }));
      expect(await listedUsageKey(owner, key)).to.deep.equal(keyItem(key.hash, { name: "ci", description: "the CI runner", can_create_groups: true, execute_in_groups: [g1] }));
      await ok(byHash(owner, "/update_usage_api_key_by_hash", key, { name: "renamed" }));
      expect(await listedUsageKey(owner, key)).to.deep.equal(keyItem(key.hash, { name: "renamed", description: "the CI runner" }));
      expect(await works(key)).to.equal(true);
    });

    it("404 and nothing changed for another account's key or the account key; what the contract refuses is refused before a write", async function () {
      const { owner, key, stranger, strangerKey } = await fixture();
      for (const h of [strangerKey.hash, owner.hash]) {
        await expectRejected(stack(), [owner, stranger], () => byHash(owner, "/update_usage_api_key_by_hash", h, { name: "taken", ...ALL_PERMISSIONS }), 404, "usage_key_not_found");
      }
      await expectRejected(stack(), [owner], () => byHash(owner, "/update_usage_api_key_by_hash", key, { execute_in_groups: [999] }), 404, "group_not_found");
    });

    it("does not bring a removed key back (its hash is public, its value may be in someone's hands)", async function () {
      const { owner, key } = await fixture();
      await ok(byHash(owner, "/remove_usage_api_key_by_hash", key));
      await expectRejected(stack(), [owner], () => byHash(owner, "/update_usage_api_key_by_hash", key, { name: "back", ...ALL_PERMISSIONS }), 404, "usage_key_not_found");
      expect(await works(key)).to.equal(false);
    });
    it("an update racing the removal never brings the key back: each pair ends with the key revoked, the update answered 200 or 404", async function () {
      const owner = await accountClient(stack());
      const keys = await Promise.all(Array.from({ length: 6 }, (_, i) => addUsageKey(stack(), owner, { name: `raced ${i}` })));
      const outcomes = await Promise.all(
        keys.map(async (key) => {
          const [update, remove] = await Promise.all([
            byHash(owner, "/update_usage_api_key_by_hash", key, { name: "back", ...ALL_PERMISSIONS }),
            byHash(owner, "/remove_usage_api_key_by_hash", key),
          ]);
          return { update: update.status, remove: remove.status };
        }),
      );
      for (const [i, o] of outcomes.entries()) {
        expect(o.remove, `pair ${i}`).to.equal(200);
        expect([200, 404], `pair ${i}: update ${o.update}`).to.include(o.update);
        expect(await works(keys[i]), `pair ${i}: the key stays revoked`).to.equal(false);
        expect((await stack().config.resolveApiKey(keys[i].hash)).active, `pair ${i}: on chain`).to.equal(false);
        expect(await listedUsageKey(owner, keys[i])).to.equal(undefined);
      }
    });
  });

  describe("rotate_usage_api_key", function () {
    it("mints a replacement with the same permissions and metadata, revokes the old key, and answers the new key once", async function () {
      const { owner, key, other, cid, g1, g2 } = await fixture();
      const expiration = (await ethers.provider.getBlock("latest"))!.timestamp + 86_400;
      await ok(byHash(owner, "/update_usage_api_key_by_hash", key, { execute_in_groups: [g1, g2], can_create_pkps: true, expiration, balance: 42 }));
      await ok(owner.post("/remove_group", { group_id: g2 })); // a grant on a deleted group grants nothing: not carried over
      const r = await ok(byHash(owner, "/rotate_usage_api_key", key));
      expect(Object.keys(r).sort()).to.deep.equal(["api_key_hash", "replaced_api_key_hash", "success", "usage_api_key"]);
      const fresh = client(stack(), r.usage_api_key);
      expect([r.success, r.api_key_hash, r.replaced_api_key_hash]).to.deep.equal([true, hex32(fresh.hash), hex32(key.hash)]);
      expect(r.usage_api_key).not.to.equal(key.key);
      expect(await works(key)).to.equal(false);
      expect(await works(fresh)).to.equal(true);
      expect(await works(other)).to.equal(true);
      expect(await listedUsageKey(owner, key)).to.equal(undefined);
      expect(await listedUsageKey(owner, fresh)).to.deep.equal(
        keyItem(fresh.hash, { name: "ci", description: "the CI runner", expiration: String(expiration), balance: 42, can_create_pkps: true, execute_in_groups: [g1] }),
      );
      expect((await fresh.post("/lit_action", { code: HELLO })).body.response).to.equal("hello");
      expect((await key.post("/lit_action", { ipfs_id: cid })).status).to.equal(401);
    });

    it("404 and nothing changed (no key minted) for another account's key, the account key, a removed key", async function () {
      const { owner, key, stranger, strangerKey } = await fixture();
      await ok(byHash(owner, "/remove_usage_api_key_by_hash", key));
      const listed = async () => ok(owner.get("/list_api_keys?page_size=100"));
      const before = await listed();
      for (const h of [strangerKey.hash, stranger.hash, owner.hash, key.hash]) {
        await expectRejected(stack(), [owner, stranger], () => byHash(owner, "/rotate_usage_api_key", h), 404, "usage_key_not_found");
      }
      expect(await listed()).to.deep.equal(before);
      expect(await works(strangerKey)).to.equal(true);
    });

    it("an expired key is refused before anything is written (its replacement could not expire in the past)", async function () {
      const { owner, key } = await fixture();
      const soon = (await ethers.provider.getBlock("latest"))!.timestamp + 5;
      await ok(byHash(owner, "/update_usage_api_key_by_hash", key, { expiration: soon }));
      await ethers.provider.send("evm_increaseTime", [60]);
      await ethers.provider.send("evm_mine", []);
      await expectRejected(stack(), [owner], () => byHash(owner, "/rotate_usage_api_key", key), 400, "invalid_request", "expiration");
    });
  });
});

describe("usage keys by hash on an identity-owned account (issue 21's sessions)", function () {
  this.timeout(180_000);
  let stack: Stack;
  const mails = new Map<string, string>();
  before(async () => {
    stack = await startStack({ env: { VESTA_EMAIL_CODES: "log" } });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.set(email, code);
  });
  after(async () => stack?.stop());

  it("rotate and remove by hash with the session: written by the identity wallet (the account's admin), the old keys refused", async function () {
    await call(stack, "POST", "/identity/email/send_code", { body: { email: "carol@example.com" } });
    const signedIn = await call(stack, "POST", "/identity/email/sign_in", { body: { email: "carol@example.com", code: mails.get("carol@example.com") } });
    expect(signedIn.status, JSON.stringify(signedIn.body)).to.equal(200);
    const { session_token: token, admin_wallet_address: wallet } = signedIn.body;
    const as = (path: string, body: unknown) => call(stack, "POST", path, { key: token, bearer: true, body });
    const works = async (key: string) => (await call(stack, "GET", "/list_runs", { key })).status === 200;
    const key = (await as("/add_usage_api_key", { name: "k" })).body.usage_api_key as string;
    const rotated = await as("/rotate_usage_api_key", { api_key_hash: hex32(hashOf(key)) });
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    expect([await works(key), await works(rotated.body.usage_api_key)]).to.deep.equal([false, true]);
    const removed = await stack.config.queryFilter(stack.config.filters.UsageApiKeyRemoved());
    expect((await ethers.provider.getTransaction(removed[removed.length - 1].transactionHash))!.from).to.equal(wallet);
    expect((await as("/remove_usage_api_key_by_hash", { api_key_hash: rotated.body.api_key_hash })).status).to.equal(200);
    expect(await works(rotated.body.usage_api_key)).to.equal(false);
  });
});
