import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadConfig } from "../relayer/config";
import { createApp } from "../relayer/app";
import { call, newAccount } from "./helpers/relayer";
import { LIMITS } from "../protocol/limits";
import { ERROR_CODES, isErrorCode } from "../protocol/errors";
import {
  apiGroup,
  apiWallet,
  CID_V0,
  CID_V1,
  expectError,
  expectErrorBody,
  expectNoLeak,
  expectNothingChanged,
  ok,
  send,
  servedRoutes,
  suiteStack,
} from "./helpers/relayerChecks";

const HASH = ethers.keccak256(ethers.toUtf8Bytes(CID_V0));
const TWO_64 = "18446744073709551616";
const long = (n: number) => "x".repeat(n);

/** One request the API must refuse with 400, and the field its message must name. */
type Bad = { label: string; method: "GET" | "POST"; path: string; body?: unknown; rawBody?: string; field: string };
type Fixture = { key: string; group: number; wallet: string };

describe("relayer errors", function () {
  const stack = suiteStack();

  /** A fresh account holding one group and one wallet, so only the input under test can be wrong. */
  async function fixture(): Promise<Fixture> {
    const { apiKey } = await newAccount(stack());
    const [group, wallet] = await Promise.all([apiGroup(stack(), apiKey), apiWallet(stack(), apiKey)]);
    return { key: apiKey, group, wallet };
  }

  /** Sends each request of `cases` with the account key; each gets 400 naming its field, and nothing changes. */
  async function expectAllRefused(f: Fixture, cases: Bad[]) {
    await expectNothingChanged(stack(), f.key, async () => {
      for (const c of cases) {
        const r = await call(stack(), c.method, c.path, { key: f.key, body: c.body, rawBody: c.rawBody });
        try {
          expectError(r, 400, "invalid_request", c.field);
        } catch (e) {
          throw new Error(`${c.label} (${c.method} ${c.path}): ${(e as Error).message}`);
        }
      }
    });
  }

  describe("bodies that are not a JSON object", function () {
    for (const [label, rawBody] of [
      ["truncated JSON", '{"group_name": '],
      ["single quotes", "{'group_name': 'g'}"],
      ["trailing comma", '{"group_name": "g",}'],
      ["bare word", "undefined"],
    ]) {
      it(`answers 400 to malformed JSON (${label}) on every kind of endpoint`, async function () {
        const f = await fixture();
        await expectNothingChanged(stack(), f.key, async () => {
          for (const p of ["/add_group", "/create_wallet", "/new_account", "/add_usage_api_key"]) {
            expectError(await call(stack(), "POST", p, { key: f.key, rawBody }), 400, "invalid_request", "JSON");
          }
          // also before authentication: no key
          expectError(await call(stack(), "POST", "/add_group", { rawBody }), 400, "invalid_request", "JSON");
        });
      });
    }

    for (const rawBody of ['"x"', "[]", '[{"group_name":"g"}]', "42", "true"]) {
      it(`answers 400 to the JSON value ${rawBody}`, async function () {
        const f = await fixture();
        await expectNothingChanged(stack(), f.key, async () => {
          for (const p of ["/add_group", "/create_wallet", "/new_account", "/add_action", "/remove_group"]) {
            expectError(await call(stack(), "POST", p, { key: f.key, rawBody }), 400, "invalid_request");
          }
        });
      });
    }

    it("answers 400 to the JSON value null where every field is required", async function () {
      const f = await fixture();
      await expectNothingChanged(stack(), f.key, async () => {
        for (const p of ["/add_group", "/new_account", "/add_action", "/remove_group"]) {
          expectError(await call(stack(), "POST", p, { key: f.key, rawBody: "null" }), 400, "invalid_request");
        }
      });
    });

    // Regression (fixed): relayer/http/route.ts validates `req.body ?? {}`, so a JSON `null` body is taken
    // as `{}`; create_wallet (all fields optional) then creates a wallet instead of answering 400.
    it("answers 400 to the JSON value null on create_wallet (no wallet is created)", async function () {
      const f = await fixture();
      await expectNothingChanged(stack(), f.key, async () => {
        expectError(await call(stack(), "POST", "/create_wallet", { key: f.key, rawBody: "null" }), 400, "invalid_request");
      });
    });
  });

  describe("fields of the wrong type or shape", function () {
    it("refuses a bad group_id (not a positive u64) in every body and query that takes one", async function () {
      const f = await fixture();
      const bad: unknown[] = ["abc", -1, "-1", 0, "0", 1.5, "1.5", "1e3", TWO_64, null, true, [1], { id: 1 }, ""];
      const cases: Bad[] = bad.map((v) => ({ label: `group_id ${JSON.stringify(v)}`, method: "POST", path: "/remove_group", body: { group_id: v }, field: "group_id" }));
      cases.push(
        { label: "2^64 as a JSON number", method: "POST", path: "/remove_group", rawBody: `{"group_id": ${TWO_64}}`, field: "group_id" },
        { label: "update_group", method: "POST", path: "/update_group", body: { group_id: "abc", name: "n" }, field: "group_id" },
        { label: "add_pkp_to_group", method: "POST", path: "/add_pkp_to_group", body: { group_id: 0, pkp_id: f.wallet }, field: "group_id" },
        { label: "remove_pkp_from_group", method: "POST", path: "/remove_pkp_from_group", body: { group_id: -1, pkp_id: f.wallet }, field: "group_id" },
        { label: "add_action_to_group", method: "POST", path: "/add_action_to_group", body: { group_id: 1.5, action_ipfs_cid: CID_V0 }, field: "group_id" },
        { label: "remove_action_from_group", method: "POST", path: "/remove_action_from_group", body: { group_id: TWO_64, hashed_cid: HASH }, field: "group_id" },
      );
      for (const v of ["abc", "0", "-1", "1.5", TWO_64, ""]) {
        cases.push({ label: `query group_id=${v}`, method: "GET", path: `/list_wallets_in_group?group_id=${v}`, field: "group_id" });
        cases.push({ label: `query group_id=${v}`, method: "GET", path: `/list_actions?group_id=${v}`, field: "group_id" });
      }
      await expectAllRefused(f, cases);
    });

    it("refuses a pkp_id or pkp_ids_permitted entry that is not an address", async function () {
      const f = await fixture();
      // the wallet with the case of one hex letter flipped: a wrong EIP-55 checksum (a checksummed address
      // without any letter a-f has a one-in-10^8 chance; the EIP-55 example stands in for it then)
      const source = /[a-fA-F]/.test(f.wallet.slice(2)) ? f.wallet : "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
      const i = 2 + source.slice(2).search(/[a-fA-F]/);
      const flipped = source[i] === source[i].toLowerCase() ? source[i].toUpperCase() : source[i].toLowerCase();
      const badChecksum = source.slice(0, i) + flipped + source.slice(i + 1);
      expect(badChecksum.toLowerCase()).to.equal(source.toLowerCase());
      expect(badChecksum).to.not.equal(source);
      const bad = ["0x123", "not an address", 42, "", f.wallet + "00", f.wallet.slice(2) + "zz", badChecksum];
      const cases: Bad[] = bad.flatMap((v): Bad[] => [
        { label: `pkp_id ${JSON.stringify(v)}`, method: "POST", path: "/add_pkp_to_group", body: { group_id: f.group, pkp_id: v }, field: "pkp_id" },
        { label: `pkp_id ${JSON.stringify(v)}`, method: "POST", path: "/remove_pkp_from_group", body: { group_id: f.group, pkp_id: v }, field: "pkp_id" },
        { label: `pkp_ids_permitted [${JSON.stringify(v)}]`, method: "POST", path: "/add_group", body: { group_name: "g", pkp_ids_permitted: [f.wallet, v] }, field: "pkp_ids_permitted" },
      ]);
      cases.push(
        { label: "pkp_ids_permitted not an array", method: "POST", path: "/add_group", body: { group_name: "g", pkp_ids_permitted: f.wallet }, field: "pkp_ids_permitted" },
        {
          label: `${LIMITS.groupMembers + 1} pkp_ids_permitted`,
          method: "POST",
          path: "/update_group",
          body: { group_id: f.group, name: "g", pkp_ids_permitted: Array(LIMITS.groupMembers + 1).fill(f.wallet) },
          field: "pkp_ids_permitted",
        },
      );
      await expectAllRefused(f, cases);
    });

    it("refuses CID hashes that are not 32-byte hex and CIDs that are not IPFS CIDs", async function () {
      const f = await fixture();
      const badHashes: unknown[] = ["0x1234", "0x" + "zz".repeat(32), HASH + "00", HASH.slice(0, -1), "", 7, null];
      const badCids: unknown[] = ["not-a-cid", "", "Qm123", CID_V0 + "x", long(200), 42, null, HASH];
      const cases: Bad[] = [
        ...badHashes.flatMap((v): Bad[] => [
          { label: `cid_hashes_permitted [${JSON.stringify(v)}]`, method: "POST", path: "/add_group", body: { group_name: "g", cid_hashes_permitted: [v] }, field: "cid_hashes_permitted" },
          { label: `cid_hashes_permitted [${JSON.stringify(v)}]`, method: "POST", path: "/update_group", body: { group_id: f.group, name: "g", cid_hashes_permitted: [HASH, v] }, field: "cid_hashes_permitted" },
          { label: `hashed_cid ${JSON.stringify(v)}`, method: "POST", path: "/delete_action", body: { hashed_cid: v }, field: "hashed_cid" },
          { label: `hashed_cid ${JSON.stringify(v)}`, method: "POST", path: "/remove_action_from_group", body: { group_id: f.group, hashed_cid: v }, field: "hashed_cid" },
          { label: `hashed_cid ${JSON.stringify(v)}`, method: "POST", path: "/update_action_metadata", body: { hashed_cid: v, name: "n" }, field: "hashed_cid" },
        ]),
        ...badCids.flatMap((v): Bad[] => [
          { label: `action_ipfs_cid ${JSON.stringify(v)}`, method: "POST", path: "/add_action", body: { action_ipfs_cid: v }, field: "action_ipfs_cid" },
          { label: `action_ipfs_cid ${JSON.stringify(v)}`, method: "POST", path: "/add_action_to_group", body: { group_id: f.group, action_ipfs_cid: v }, field: "action_ipfs_cid" },
        ]),
        { label: "cid_hashes_permitted a string", method: "POST", path: "/add_group", body: { group_name: "g", cid_hashes_permitted: HASH }, field: "cid_hashes_permitted" },
      ];
      await expectAllRefused(f, cases);
    });

    it("refuses other fields of the wrong type", async function () {
      const f = await fixture();
      await expectAllRefused(f, [
        { label: "group_name a number", method: "POST", path: "/add_group", body: { group_name: 42 }, field: "group_name" },
        { label: "group_name empty", method: "POST", path: "/add_group", body: { group_name: "" }, field: "group_name" },
        { label: "group_description null", method: "POST", path: "/add_group", body: { group_name: "g", group_description: null }, field: "group_description" },
        { label: "account_name empty", method: "POST", path: "/new_account", body: { account_name: "" }, field: "account_name" },
        { label: "email not an e-mail", method: "POST", path: "/new_account", body: { account_name: "a", email: "nope" }, field: "email" },
        { label: "can_create_groups a string", method: "POST", path: "/add_usage_api_key", body: { can_create_groups: "yes" }, field: "can_create_groups" },
        { label: "execute_in_groups entry a word", method: "POST", path: "/add_usage_api_key", body: { execute_in_groups: ["x"] }, field: "execute_in_groups" },
        { label: "execute_in_groups entry negative", method: "POST", path: "/add_usage_api_key", body: { execute_in_groups: [-1] }, field: "execute_in_groups" },
        { label: "add_pkp_to_groups entry 2^64", method: "POST", path: "/add_usage_api_key", body: { add_pkp_to_groups: [TWO_64] }, field: "add_pkp_to_groups" },
        { label: "expiration negative", method: "POST", path: "/add_usage_api_key", body: { expiration: -1 }, field: "expiration" },
        { label: "usage_api_key a number", method: "POST", path: "/remove_usage_api_key", body: { usage_api_key: 5 }, field: "usage_api_key" },
        { label: "wallet name a number", method: "POST", path: "/create_wallet", body: { name: 5 }, field: "name" },
      ]);
    });
  });

  describe("unknown and missing fields", function () {
    it("refuses unknown fields, naming each", async function () {
      const f = await fixture();
      await expectAllRefused(f, [
        { label: "one unknown field", method: "POST", path: "/add_group", body: { group_name: "g", colour: "red" }, field: "colour" },
        { label: "two unknown fields", method: "POST", path: "/add_group", body: { group_name: "g", colour: "red", size: 3 }, field: "size" },
        { label: "an admin wallet on new_account", method: "POST", path: "/new_account", body: { account_name: "a", admin_wallet: f.wallet }, field: "admin_wallet" },
        { label: "a derivation path on create_wallet", method: "POST", path: "/create_wallet", body: { derivation_path: 5 }, field: "derivation_path" },
        { label: "a camelCase permission", method: "POST", path: "/add_usage_api_key", body: { canCreateGroups: true }, field: "canCreateGroups" },
        { label: "the documented name on add_group", method: "POST", path: "/add_group", body: { group_name: "g", name: "g" }, field: "name" },
        { label: "a query parameter on a list", method: "GET", path: "/list_groups?foo=1", field: "foo" },
        { label: "a query parameter on list_wallets_in_group", method: "GET", path: `/list_wallets_in_group?group_id=${f.group}&limit=5`, field: "limit" },
      ]);
    });

    it("refuses bodies without a required field, naming it", async function () {
      const f = await fixture();
      await expectAllRefused(f, [
        { label: "no body", method: "POST", path: "/add_group", field: "group_name" },
        { label: "empty object", method: "POST", path: "/add_group", body: {}, field: "group_name" },
        { label: "update_group without group_id", method: "POST", path: "/update_group", body: { name: "n" }, field: "group_id" },
        { label: "update_group without name", method: "POST", path: "/update_group", body: { group_id: f.group }, field: "name" },
        { label: "remove_group", method: "POST", path: "/remove_group", body: {}, field: "group_id" },
        { label: "add_pkp_to_group", method: "POST", path: "/add_pkp_to_group", body: { group_id: f.group }, field: "pkp_id" },
        { label: "add_action_to_group", method: "POST", path: "/add_action_to_group", body: { group_id: f.group }, field: "action_ipfs_cid" },
        { label: "remove_action_from_group", method: "POST", path: "/remove_action_from_group", body: { group_id: f.group }, field: "hashed_cid" },
        { label: "add_action", method: "POST", path: "/add_action", body: { name: "a" }, field: "action_ipfs_cid" },
        { label: "delete_action", method: "POST", path: "/delete_action", body: {}, field: "hashed_cid" },
        { label: "update_action_metadata", method: "POST", path: "/update_action_metadata", body: { hashed_cid: HASH }, field: "name" },
        { label: "new_account", method: "POST", path: "/new_account", body: { account_description: "d" }, field: "account_name" },
        { label: "remove_usage_api_key", method: "POST", path: "/remove_usage_api_key", body: {}, field: "usage_api_key" },
        { label: "update_usage_api_key", method: "POST", path: "/update_usage_api_key", body: { name: "n" }, field: "usage_api_key" },
        { label: "update_usage_api_key_metadata", method: "POST", path: "/update_usage_api_key_metadata", body: { usage_api_key: "k" }, field: "name" },
        { label: "list_wallets_in_group", method: "GET", path: "/list_wallets_in_group", field: "group_id" },
      ]);
    });
  });

  describe("paging", function () {
    const lists = (f: Fixture) => ["/list_groups?", "/list_wallets?", "/list_actions?", "/list_api_keys?", `/list_wallets_in_group?group_id=${f.group}&`];

    it("refuses a zero, negative, fractional, non-numeric or over-100 page_size", async function () {
      const f = await fixture();
      const bad = ["0", "-1", "101", "1000", "1" + "0".repeat(30), "abc", "1.5", "", "0x10"];
      await expectAllRefused(
        f,
        lists(f).flatMap((l) => bad.map((v): Bad => ({ label: `page_size=${v}`, method: "GET", path: `${l}page_size=${v}`, field: "page_size" }))),
      );
    });

    it("refuses a negative, fractional, non-numeric or huge page_number", async function () {
      const f = await fixture();
      const bad = ["-1", "1.5", "abc", "", "1000000001", "1" + "0".repeat(80)];
      await expectAllRefused(
        f,
        lists(f).flatMap((l) => bad.map((v): Bad => ({ label: `page_number=${v}`, method: "GET", path: `${l}page_number=${v}`, field: "page_number" }))),
      );
    });

    it("refuses a repeated paging parameter", async function () {
      const f = await fixture();
      await expectAllRefused(f, [{ label: "page_size twice", method: "GET", path: "/list_groups?page_size=1&page_size=2", field: "page_size" }]);
    });

    it("accepts page_size 100 (the cap) and a page past the end", async function () {
      const f = await fixture();
      for (const l of lists(f)) {
        expect(ok(await call(stack(), "GET", `${l}page_size=100&page_number=0`, { key: f.key }), l)).to.be.an("array");
        expect(ok(await call(stack(), "GET", `${l}page_size=1&page_number=1000000000`, { key: f.key }), l)).to.deep.equal([]);
      }
    });
  });

  describe("size limits", function () {
    it("answers 413 body_too_large to a body over the limit (256kb), before and after authentication", async function () {
      const f = await fixture();
      const huge = long(300 * 1024);
      await expectNothingChanged(stack(), f.key, async () => {
        expectError(await call(stack(), "POST", "/add_group", { key: f.key, body: { group_name: "g", group_description: huge } }), 413, "body_too_large");
        expectError(await call(stack(), "POST", "/create_wallet", { key: f.key, body: { name: huge } }), 413, "body_too_large");
        expectError(await call(stack(), "POST", "/new_account", { body: { account_name: huge } }), 413, "body_too_large");
      });
    });

    // Issue 16 finding 5: the same byte limits as the contract (relayer/limits.ts), refused before any work.
    const { nameBytes: NAME, descriptionBytes: DESCRIPTION } = LIMITS;
    /** Every string field of every write, with the rest of a valid body and its limit in bytes. */
    const stringFields = (f: Fixture): [string, Record<string, unknown>, string, number][] => [
      ["/new_account", {}, "account_name", NAME],
      ["/new_account", { account_name: "a" }, "account_description", DESCRIPTION],
      ["/add_group", {}, "group_name", NAME],
      ["/add_group", { group_name: "g" }, "group_description", DESCRIPTION],
      ["/update_group", { group_id: f.group }, "name", NAME],
      ["/update_group", { group_id: f.group, name: "n" }, "description", DESCRIPTION],
      ["/create_wallet", {}, "name", NAME],
      ["/create_wallet", {}, "description", DESCRIPTION],
      ["/add_action", { action_ipfs_cid: CID_V0 }, "name", NAME],
      ["/add_action", { action_ipfs_cid: CID_V0 }, "description", DESCRIPTION],
      ["/update_action_metadata", { hashed_cid: HASH }, "name", NAME],
      ["/update_action_metadata", { hashed_cid: HASH, name: "n" }, "description", DESCRIPTION],
      ["/add_usage_api_key", {}, "name", NAME],
      ["/add_usage_api_key", {}, "description", DESCRIPTION],
      ["/update_usage_api_key", { usage_api_key: "k" }, "name", NAME],
      ["/update_usage_api_key", { usage_api_key: "k" }, "description", DESCRIPTION],
      ["/update_usage_api_key_metadata", { usage_api_key: "k" }, "name", NAME],
      ["/update_usage_api_key_metadata", { usage_api_key: "k", name: "n" }, "description", DESCRIPTION],
    ];

    it("refuses a name or description one byte over the contract's limit on every endpoint, counted in bytes of UTF-8 (400, nothing sent)", async function () {
      const f = await fixture();
      // max + 1 bytes of two-byte characters: fewer characters than the limit, more bytes
      const overBytes = (max: number) => "é".repeat((max + 1) / 2 | 0) + (max % 2 === 0 ? "x" : "");
      await expectAllRefused(f, [
        ...stringFields(f).map(([p, base, field, max]): Bad => ({ label: `${field} of ${max + 1} chars`, method: "POST", path: p, body: { ...base, [field]: long(max + 1) }, field })),
        ...stringFields(f).map(([p, base, field, max]): Bad => ({ label: `${field} of ${max + 1} bytes`, method: "POST", path: p, body: { ...base, [field]: overBytes(max) }, field })),
      ]);
    });

    it("refuses a list one item over the contract's limit: group members and each permission list (400, nothing sent)", async function () {
      const f = await fixture();
      const cids = Array.from({ length: LIMITS.groupMembers + 1 }, (_, i) => ethers.keccak256(ethers.toUtf8Bytes(`cid ${i}`)));
      const groups = Array.from({ length: LIMITS.permissionGroups + 1 }, (_, i) => i + 1);
      const cases: Bad[] = [
        { label: "add_group pkps", method: "POST", path: "/add_group", body: { group_name: "g", pkp_ids_permitted: Array(LIMITS.groupMembers + 1).fill(f.wallet) }, field: "pkp_ids_permitted" },
        { label: "add_group cids", method: "POST", path: "/add_group", body: { group_name: "g", cid_hashes_permitted: cids }, field: "cid_hashes_permitted" },
        { label: "update_group cids", method: "POST", path: "/update_group", body: { group_id: f.group, name: "g", cid_hashes_permitted: cids }, field: "cid_hashes_permitted" },
      ];
      for (const field of ["manage_ipfs_ids_in_groups", "add_pkp_to_groups", "remove_pkp_from_groups", "execute_in_groups"]) {
        cases.push({ label: `add ${field}`, method: "POST", path: "/add_usage_api_key", body: { [field]: groups }, field });
        cases.push({ label: `update ${field}`, method: "POST", path: "/update_usage_api_key", body: { usage_api_key: "k", [field]: groups }, field });
      }
      await expectAllRefused(f, cases);
    });

    it("refuses an e-mail over 254 characters and a usage_api_key over 512 (400, nothing sent)", async function () {
      const f = await fixture();
      await expectAllRefused(f, [
        { label: "email", method: "POST", path: "/new_account", body: { account_name: "a", email: `${long(250)}@example.com` }, field: "email" },
        { label: "usage_api_key", method: "POST", path: "/remove_usage_api_key", body: { usage_api_key: long(513) }, field: "usage_api_key" },
      ]);
    });

    it("accepts names and descriptions of exactly the limits in bytes (multi-byte too), and lists of exactly the limits", async function () {
      const { apiKey } = await newAccount(stack(), long(NAME));
      const groupName = "名".repeat(Math.floor(NAME / 3)) + "x".repeat(NAME % 3); // exactly NAME bytes, mostly 3-byte characters
      const description = "é".repeat(DESCRIPTION / 2);
      const wallets = await Promise.all(Array.from({ length: LIMITS.groupMembers }, () => apiWallet(stack(), apiKey)));
      const cids = Array.from({ length: LIMITS.groupMembers }, (_, i) => ethers.keccak256(ethers.toUtf8Bytes(`exact cid ${i}`)));
      const id = await apiGroup(stack(), apiKey, groupName, { group_description: description, pkp_ids_permitted: wallets, cid_hashes_permitted: cids });
      const [g] = ok(await call(stack(), "GET", "/list_groups", { key: apiKey }), "list_groups");
      expect(g).to.deep.include({ id: String(id), name: groupName, description, pkp_count: LIMITS.groupMembers, cid_count: LIMITS.groupMembers });
      const groups = [id];
      ok(await call(stack(), "POST", "/add_usage_api_key", { key: apiKey, body: { name: long(NAME), description: long(DESCRIPTION), execute_in_groups: groups } }), "add_usage_api_key");
    });
  });

  describe("unknown paths and wrong methods", function () {
    it("answers 404 not_found to a path the API does not serve", async function () {
      await expectNothingChanged(stack(), undefined, async () => {
        for (const [method, p] of [
          ["GET", "/nope"],
          ["POST", "/nope"],
          ["GET", "/list_groups/extra"],
          ["POST", "/add_group/1"],
        ]) {
          expectError(await send(stack(), method, p, { body: method === "POST" ? {} : undefined }), 404, "not_found", p);
        }
        for (const url of ["/core/v2/list_groups", "/core/list_groups", "/favicon.ico", "/dashboard/nope", "/dashboard/assets/nope.js"]) {
          const r = await fetch(new URL(url, stack().relayer.url));
          expectError({ status: r.status, body: await r.json() }, 404, "not_found");
        }
        // The base URL is the dashboard's.
        const root = await fetch(stack().relayer.url, { redirect: "manual" });
        expect([root.status, root.headers.get("location")]).to.deep.equal([302, "/dashboard/"]);
      });
    });

    it("answers 404 not_found, naming method and path, to a method an endpoint does not take", async function () {
      const { apiKey } = await newAccount(stack());
      await expectNothingChanged(stack(), apiKey, async () => {
        for (const [method, p] of [
          ["GET", "/add_group"],
          ["GET", "/new_account"],
          ["GET", "/remove_group"],
          ["POST", "/list_groups"],
          ["POST", "/get_node_chain_config"],
          ["PUT", "/add_group"],
          ["DELETE", "/remove_group"],
          ["PATCH", "/update_group"],
          ["DELETE", "/list_groups"],
        ]) {
          const r = await send(stack(), method, p, { key: apiKey, body: method === "GET" ? undefined : { group_name: "g", group_id: 1 } });
          expectError(r, 404, "not_found", method, p);
        }
      });
    });
  });

  describe("authentication", function () {
    it("answers 401 invalid_api_key without a key, with an unknown or an over-long key", async function () {
      const { apiKey } = await newAccount(stack());
      await expectNothingChanged(stack(), apiKey, async () => {
        for (const key of [undefined, "not-a-key", long(600), apiKey + "x"]) {
          for (const bearer of [false, true]) {
            expectError(await call(stack(), "POST", "/add_group", { key, bearer, body: { group_name: "g" } }), 401, "invalid_api_key");
            expectError(await call(stack(), "GET", "/list_groups", { key, bearer }), 401, "invalid_api_key");
          }
        }
        expectError(await call(stack(), "POST", "/add_group", { headers: { authorization: `Basic ${apiKey}` }, body: { group_name: "g" } }), 401, "invalid_api_key");
      });
    });

    it("answers 403 to a usage key on an account-key endpoint and to one that lacks the scope", async function () {
      const f = await fixture();
      const usage = ok(await call(stack(), "POST", "/add_usage_api_key", { key: f.key, body: { name: "runner", execute_in_groups: [f.group] } }), "add_usage_api_key").usage_api_key;
      await expectNothingChanged(stack(), f.key, async () => {
        expectError(await call(stack(), "POST", "/add_usage_api_key", { key: usage, body: {} }), 403, "owner_only");
        expectError(await call(stack(), "GET", "/list_api_keys", { key: usage }), 403, "owner_only");
        const r = await call(stack(), "POST", "/add_group", { key: usage, body: { group_name: "g" } });
        expectError(r, 403, "missing_scope", "group:create");
        expect(r.body.details).to.deep.equal({ scope: "group:create" });
        expectError(await call(stack(), "POST", "/remove_group", { key: usage, body: { group_id: f.group } }), 403, "missing_scope", "group:delete");
        expectError(await call(stack(), "POST", "/add_action_to_group", { key: usage, body: { group_id: f.group, action_ipfs_cid: CID_V0 } }), 403, "missing_scope", "group:manageActions", `group ${f.group}`);
      });
    });
  });

  describe("writes the contract rejects", function () {
    it("answers 409 already_exists to adding an action or wallet a group already lists, or an action already registered, and sends no transaction", async function () {
      const f = await fixture();
      const group = await apiGroup(stack(), f.key, "full", { pkp_ids_permitted: [f.wallet], cid_hashes_permitted: [HASH] });
      ok(await call(stack(), "POST", "/add_action", { key: f.key, body: { action_ipfs_cid: CID_V1, name: "first" } }), "add_action");
      await expectNothingChanged(stack(), f.key, async () => {
        const again = await call(stack(), "POST", "/add_action_to_group", { key: f.key, body: { group_id: group, action_ipfs_cid: CID_V0 } });
        expectError(again, 409, "already_exists", HASH.replace(/^0x0*/, ""), `group ${group}`);
        // the same wallet in any spelling of its address
        for (const pkp of [f.wallet, f.wallet.toLowerCase()]) {
          expectError(await call(stack(), "POST", "/add_pkp_to_group", { key: f.key, body: { group_id: group, pkp_id: pkp } }), 409, "already_exists", f.wallet);
        }
        expectError(await call(stack(), "POST", "/add_action", { key: f.key, body: { action_ipfs_cid: CID_V1, name: "second" } }), 409, "already_exists");
      });
    });

    // Regression (fixed): relayer/chain/client.ts builds the JsonRpcProvider with ethers' default 250 ms
    // request cache, so the simulation (eth_estimateGas) of a write identical to one sent within
    // the last 250 ms returns the cached success: the repeat is sent, reverts on chain (a
    // transaction and its gas spent) and, on a Hardhat node, is answered 503 chain_unavailable.
    it("answers 409 already_exists to the same write sent twice in a row (a client's retry), and sends no transaction", async function () {
      const f = await fixture();
      const body = { group_id: f.group, action_ipfs_cid: CID_V0 };
      ok(await call(stack(), "POST", "/add_action_to_group", { key: f.key, body }), "add_action_to_group");
      await expectNothingChanged(stack(), f.key, async () => {
        expectError(await call(stack(), "POST", "/add_action_to_group", { key: f.key, body }), 409, "already_exists");
      });
    });

    it("answers 404 to writes naming a group, wallet, action or usage key that does not exist, and sends no transaction", async function () {
      const f = await fixture();
      const other = await fixture();
      const stranger = ethers.Wallet.createRandom().address;
      const otherUsage = ok(await call(stack(), "POST", "/add_usage_api_key", { key: other.key, body: {} }), "add_usage_api_key").usage_api_key;
      await expectNothingChanged(stack(), f.key, async () => {
        const cases: [string, unknown, number, string][] = [
          ["/remove_group", { group_id: 999 }, 404, "group_not_found"],
          ["/remove_group", { group_id: "18446744073709551615" }, 404, "group_not_found"],
          ["/update_group", { group_id: 999, name: "n" }, 404, "group_not_found"],
          ["/add_pkp_to_group", { group_id: f.group, pkp_id: stranger }, 404, "wallet_not_found"],
          ["/add_pkp_to_group", { group_id: f.group, pkp_id: other.wallet }, 404, "wallet_not_found"],
          ["/remove_pkp_from_group", { group_id: f.group, pkp_id: f.wallet }, 404, "wallet_not_in_group"],
          ["/remove_action_from_group", { group_id: f.group, hashed_cid: HASH }, 404, "action_not_in_group"],
          ["/delete_action", { hashed_cid: HASH }, 404, "action_not_found"],
          ["/update_action_metadata", { hashed_cid: HASH, name: "n" }, 404, "action_not_found"],
          ["/add_group", { group_name: "g", pkp_ids_permitted: [stranger] }, 404, "wallet_not_found"],
          ["/remove_usage_api_key", { usage_api_key: otherUsage }, 404, "usage_key_not_found"],
          ["/update_usage_api_key", { usage_api_key: otherUsage }, 404, "usage_key_not_found"],
          ["/update_usage_api_key_metadata", { usage_api_key: "no such key", name: "n" }, 404, "usage_key_not_found"],
        ];
        for (const [p, body, status, code] of cases) {
          const r = await call(stack(), "POST", p, { key: f.key, body });
          try {
            expectError(r, status, code);
          } catch (e) {
            throw new Error(`${p} ${JSON.stringify(body)}: ${(e as Error).message}`);
          }
        }
        expectError(await call(stack(), "GET", "/list_wallets_in_group?group_id=999", { key: f.key }), 404, "group_not_found");
        expectError(await call(stack(), "GET", "/list_actions?group_id=999", { key: f.key }), 404, "group_not_found");
      });
      // the other account is untouched by the attempts on its key and wallet
      expect(ok(await call(stack(), "GET", "/list_api_keys", { key: other.key }), "list_api_keys")).to.have.length(1);
    });

    it("answers 400 to permission lists the contract refuses, and sends no transaction", async function () {
      const f = await fixture();
      await expectNothingChanged(stack(), f.key, async () => {
        for (const body of [{ execute_in_groups: [0, f.group] }, { execute_in_groups: [f.group, f.group] }, { add_pkp_to_groups: [0, 0] }, { expiration: 1 }]) {
          expectError(await call(stack(), "POST", "/add_usage_api_key", { key: f.key, body }), 400, "invalid_request");
        }
      });
    });
  });

  describe("no request gets a 500", function () {
    it("answers every documented route, with and without a key, with garbage input by a 4xx error body and changes nothing", async function () {
      const f = await fixture();
      const doc = ok(await call(stack(), "GET", "/openapi.json"), "openapi.json");
      await expectNothingChanged(stack(), f.key, async () => {
        for (const [docPath, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
          const p = docPath.replace(/^\/core\/v1/, "");
          for (const method of Object.keys(ops)) {
            for (const key of [undefined, f.key]) {
              const attempts =
                method === "get"
                  ? [await call(stack(), "GET", `${p}?page_size=-1&group_id=x&junk=1`, { key })]
                  : await Promise.all(['{"junk":1}', "[]", '"s"', "{", '{"group_id":"x","pkp_id":1}'].map((rawBody) => call(stack(), "POST", p, { key, rawBody })));
              for (const r of attempts) {
                expect(r.status, `${method} ${p}: ${JSON.stringify(r.body)}`).to.be.below(500);
                if (r.status >= 400) expectErrorBody(r);
                else expectNoLeak(r);
              }
            }
          }
        }
      });
    });
  });

  describe("OpenAPI description and explorer", function () {
    /** The managed-mode endpoints of spec 1 that relayer/routes/*.ts serve, with their methods. */
    const ROUTES: Record<string, string[]> = {
      "/get_node_chain_config": ["get"],
      "/get_api_payers": ["get"],
      "/get_admin_api_payer": ["get"],
      "/billing/stripe_config": ["get"],
      "/billing/balance": ["get"],
      "/billing/create_payment_intent": ["post"],
      "/billing/confirm_payment": ["post"],
      "/billing/free_credit": ["post"],
      "/new_account": ["post"],
      "/account_exists": ["get"],
      "/add_usage_api_key": ["post"],
      "/update_usage_api_key": ["post"],
      "/update_usage_api_key_metadata": ["post"],
      "/remove_usage_api_key": ["post"],
      "/list_api_keys": ["get"],
      "/add_group": ["post"],
      "/update_group": ["post"],
      "/remove_group": ["post"],
      "/add_pkp_to_group": ["post"],
      "/remove_pkp_from_group": ["post"],
      "/add_action_to_group": ["post"],
      "/remove_action_from_group": ["post"],
      "/list_groups": ["get"],
      "/create_wallet": ["get", "post"],
      "/list_wallets": ["get"],
      "/list_wallets_in_group": ["get"],
      "/add_action": ["post"],
      "/delete_action": ["post"],
      "/update_action_metadata": ["post"],
      "/list_actions": ["get"],
      "/version": ["get"],
      "/get_lit_action_client_config": ["get"],
      "/get_chain_config_keys": ["get"],
    };
    let doc: any;
    before(async () => {
      doc = ok(await call(stack(), "GET", "/openapi.json"), "openapi.json");
    });

    /** Follows a local `$ref` (`#/components/...`) to what it names. */
    const deref = (node: any): any => {
      if (!node?.$ref) return node;
      expect(node.$ref).to.match(/^#\//);
      const target = node.$ref
        .slice(2)
        .split("/")
        .reduce((o: any, k: string) => o?.[k], doc);
      expect(target, `unresolved ${node.$ref}`).to.be.an("object");
      return deref(target);
    };

    it("is an OpenAPI 3.1 document listing exactly the routes the app serves, the managed-mode routes among them", function () {
      expect(doc.openapi).to.match(/^3\.1\.\d+$/);
      expect(doc.info.title).to.be.a("string").that.is.not.empty;
      expect(doc.info.version).to.be.a("string").that.is.not.empty;
      const documented = Object.fromEntries(Object.entries<object>(doc.paths).map(([p, ops]) => [p, Object.keys(ops).sort()]));
      const served = servedRoutes(createApp(stack().relayer.ctx));
      delete served["/core/v1/openapi.json"]; // the description does not list itself
      expect(documented).to.deep.equal(served);
      for (const [p, methods] of Object.entries(ROUTES)) expect(documented[`/core/v1${p}`], p).to.deep.equal(methods);
      const schemes = Object.keys(doc.components.securitySchemes);
      for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const where = `${method} ${p}`;
          expect(op.responses?.["200"], where).to.exist;
          expect(op.summary, where).to.be.a("string").that.is.not.empty;
          for (const s of op.security ?? []) expect(schemes, where).to.include.members(Object.keys(s));
          for (const [status, r] of Object.entries<any>(op.responses)) {
            // Every answer is JSON but stored code (get_action_code's 200 is the code as text/plain).
            const type = p === "/core/v1/get_action_code" && status === "200" ? "text/plain" : "application/json";
            expect(Object.keys(r.content ?? {}), `${where} ${status}`).to.deep.equal([type]);
            const schema = deref(r.content?.[type]?.schema);
            expect(schema, `${where} ${status}`).to.be.an("object");
            if (status !== "200") expect(schema.properties, `${where} ${status}`).to.have.keys("error", "code", "message", "details");
          }
        }
      }
    });

    it("documents each route's error codes under their catalogue status, 402 and 404 where a route answers them", function () {
      /** status → documented codes of one operation. */
      const codes = (method: string, p: string) =>
        Object.fromEntries(
          Object.entries<any>(doc.paths[`/core/v1${p}`][method].responses)
            .filter(([status]) => status !== "200")
            .map(([status, r]) => [status, deref(r.content["application/json"].schema).properties.code.enum as string[]]),
        );
      for (const [p, ops] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const method of Object.keys(ops)) {
          for (const [status, list] of Object.entries(codes(method, p.slice("/core/v1".length)))) {
            for (const c of list) expect(isErrorCode(c) && String(ERROR_CODES[c].status), `${method} ${p}: ${c}`).to.equal(status);
            expect(ops[method].responses[status].description, `${method} ${p} ${status}`).to.include(list[0]);
          }
        }
      }
      // Writes answer 402 (no credit) and their own 404s; runs answer 402, 404 and 429; reads of a group its 404.
      expect(codes("post", "/add_pkp_to_group")).to.include.keys("401", "402", "403", "404", "409", "413", "503");
      expect(codes("post", "/add_pkp_to_group")["404"]).to.include.members(["group_not_found", "wallet_not_found"]);
      expect(codes("post", "/add_pkp_to_group")["400"]).to.include.members(["invalid_request", "admin_wallet_not_a_pkp"]);
      expect(codes("post", "/lit_action")["402"]).to.deep.equal(["payment_required"]);
      expect(codes("post", "/lit_action")["404"]).to.deep.equal(["action_code_not_found"]);
      expect(codes("post", "/lit_action")["429"]).to.deep.equal(["rate_limited", "run_queue_full"]);
      expect(codes("get", "/list_wallets_in_group")["404"]).to.deep.equal(["group_not_found"]);
      expect(codes("post", "/remove_group")["402"]).to.deep.equal(["payment_required"]);
      expect(codes("post", "/convert_to_chain_secured_account")["409"]).to.include.members(["already_chain_secured", "signature_used"]);
      expect(codes("post", "/create_wallet_with_signature")["400"]).to.include.members(["invalid_typed_data", "invalid_signed_message"]);
      expect(codes("get", "/billing/balance")["404"]).to.deep.equal(["billing_not_configured"]);
      expect(codes("get", "/version")).to.deep.equal({ "400": ["invalid_request"], "500": ["internal_error"] });
    });

    it("documents the request bodies and queries with the zod schemas that validate them", function () {
      const body = (p: string) => {
        const content = doc.paths[`/core/v1${p}`].post.requestBody?.content?.["application/json"];
        expect(content?.schema?.$ref, p).to.match(/^#\/components\/schemas\//);
        return deref(content.schema);
      };
      const addGroup = body("/add_group");
      expect(addGroup.properties).to.have.keys("group_name", "group_description", "pkp_ids_permitted", "cid_hashes_permitted");
      expect(addGroup.required).to.deep.equal(["group_name"]);
      expect(addGroup.additionalProperties).to.equal(false);
      expect(addGroup.properties.group_name.maxLength).to.equal(LIMITS.nameBytes);
      expect(addGroup.properties.group_description.maxLength).to.equal(LIMITS.descriptionBytes);
      expect(addGroup.properties.pkp_ids_permitted.maxItems).to.equal(LIMITS.groupMembers);
      expect(body("/update_group").properties).to.have.keys("group_id", "name", "description", "pkp_ids_permitted", "cid_hashes_permitted");
      expect(body("/new_account").properties).to.have.keys("account_name", "account_description", "email");
      expect(body("/add_usage_api_key").properties).to.include.keys(
        "name",
        "description",
        "can_create_groups",
        "can_delete_groups",
        "can_create_pkps",
        "manage_ipfs_ids_in_groups",
        "add_pkp_to_groups",
        "remove_pkp_from_groups",
        "execute_in_groups",
      );
      expect(body("/update_usage_api_key").required).to.include("usage_api_key");
      expect(body("/add_action").properties).to.have.keys("action_ipfs_cid", "name", "description");
      expect(body("/remove_action_from_group").properties).to.have.keys("group_id", "hashed_cid");
      expect(body("/add_pkp_to_group").properties).to.have.keys("group_id", "pkp_id");
      for (const [p, methods] of Object.entries(ROUTES)) {
        if (methods.includes("post") && p !== "/create_wallet") body(p);
      }
      const query = (p: string) => (doc.paths[`/core/v1${p}`].get.parameters ?? []).filter((x: any) => x.in === "query").map((x: any) => x.name).sort();
      for (const p of ["/list_groups", "/list_wallets", "/list_api_keys"]) expect(query(p), p).to.deep.equal(["page_number", "page_size"]);
      expect(query("/list_wallets_in_group")).to.deep.equal(["group_id", "page_number", "page_size"]);
      expect(query("/list_actions")).to.deep.equal(["group_id", "page_number", "page_size"]);
    });

    it("every route it lists is served (none answers not_found)", async function () {
      for (const [p, ops] of Object.entries<object>(doc.paths)) {
        for (const method of Object.keys(ops)) {
          const r = await fetch(new URL(p, stack().relayer.url), { method: method.toUpperCase(), headers: { "x-api-key": "not-a-key" } });
          const b = await r.json();
          expect(b?.code, `${method} ${p}`).not.to.equal("not_found");
        }
      }
    });

    it("serves the API explorer at /core/v1/swagger-ui/", async function () {
      const r = await fetch(`${stack().api}/swagger-ui/`);
      expect(r.status).to.equal(200);
      expect(r.headers.get("content-type")).to.match(/^text\/html/);
      const html = await r.text();
      expect(html).to.include("swagger-ui");
      expect(html).to.include("Vesta core API");
      const init = await fetch(`${stack().api}/swagger-ui/swagger-ui-init.js`);
      expect(init.status).to.equal(200);
      expect(await init.text()).to.include("/core/v1/add_group");
    });
  });
});

describe("relayer loadConfig", function () {
  const KEY1 = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
  const KEY2 = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
  const ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
  // Development: these tests are about the variables every mode shares (production's own checks: test/billing.failClosed.test.ts).
  const DEV = { VESTA_MODE: "development" };
  const valid = { ...DEV, VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: ADDRESS, VESTA_PAYER_KEYS: `${KEY1},${KEY2}` };
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-config-"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The message of the one error loadConfig throws for `env`. */
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
  };
  const lines = (msg: string) => msg.split("\n").filter((l) => l.trim().startsWith("- "));

  it("turns a valid environment into the config object, with defaults", function () {
    expect(loadConfig({ ...valid, VESTA_ACCOUNT_CONFIG_ADDRESS: ADDRESS.toLowerCase(), VESTA_PAYER_KEYS: ` ${KEY1.slice(2)} , ${KEY2} ` })).to.deep.include({
      rpcUrl: "http://127.0.0.1:8545",
      accountConfigAddress: ADDRESS,
      payerKeys: [KEY1, KEY2],
      host: "127.0.0.1",
      port: 8000,
      keyProvider: "local",
      localRootSecretFile: ".vesta/root-secret",
      dstackEndpoint: undefined,
      bodyLimit: "256kb",
      txTimeoutMs: 120_000,
      receiptPollMs: 100,
      newAccountRateLimitPerMinute: 30,
      logLevel: "info",
    });
    expect(loadConfig({ ...valid, VESTA_PORT: "0", VESTA_HOST: "0.0.0.0", VESTA_BODY_LIMIT: "1kb", VESTA_LOG_LEVEL: "silent" })).to.deep.include({
      port: 0,
      host: "0.0.0.0",
      bodyLimit: "1kb",
      logLevel: "silent",
    });
  });

  it("lists the missing RPC URL, contract address and payer keys in one error", function () {
    const msg = problems(DEV);
    expect(lines(msg)).to.have.length(3);
    expect(msg).to.include("VESTA_RPC_URL").and.include("VESTA_ACCOUNT_CONFIG_ADDRESS").and.include("VESTA_PAYER_KEYS");
    expect(msg).not.to.match(/\n\s+at /);
  });

  it("names a bad payer key by its position, without echoing it", function () {
    const msg = problems({ ...valid, VESTA_PAYER_KEYS: `${KEY1},0x1234,nothex` });
    expect(lines(msg)).to.have.length(2);
    expect(msg).to.include("entry 2").and.include("entry 3").and.not.include(KEY1);
  });

  it("refuses the same payer key twice (also spelled with and without 0x)", function () {
    for (const keys of [`${KEY1},${KEY1}`, `${KEY1},${KEY2},${KEY1.slice(2)}`]) {
      const msg = problems({ ...valid, VESTA_PAYER_KEYS: keys });
      expect(lines(msg), msg).to.have.length(1);
      expect(msg).to.include("VESTA_PAYER_KEYS").and.include("twice");
    }
  });

  it("refuses a bad contract address", function () {
    for (const address of ["0x1234", "nope", ADDRESS.toLowerCase().replace("a", "A")]) {
      const msg = problems({ ...valid, VESTA_ACCOUNT_CONFIG_ADDRESS: address });
      expect(lines(msg), msg).to.have.length(1);
      expect(msg).to.include("VESTA_ACCOUNT_CONFIG_ADDRESS");
    }
  });

  it("refuses an RPC URL that is not a URL", function () {
    expect(problems({ ...valid, VESTA_RPC_URL: "not a url" })).to.include("VESTA_RPC_URL must be a URL");
  });

  it("reads the import CDN and its limits (jsDelivr by default, as Chipotle); refuses a CDN URL that is not a base URL", function () {
    expect(loadConfig(valid).imports).to.deep.equal({
      source: { base: "https://cdn.jsdelivr.net/npm/", entry: "/+esm" },
      maxModuleBytes: 4 * 1024 * 1024,
      maxRunBytes: 16 * 1024 * 1024,
      cacheBytes: 64 * 1024 * 1024,
      cacheEntries: 1000,
    });
    const env = { VESTA_IMPORT_CDN_URL: "https://esm.sh/", VESTA_IMPORT_CDN_ENTRY: "", VESTA_IMPORT_MAX_MODULE_BYTES: "1024", VESTA_IMPORT_MAX_RUN_BYTES: "4096", VESTA_IMPORT_CACHE_BYTES: "0", VESTA_IMPORT_CACHE_ENTRIES: "0" };
    expect(loadConfig({ ...valid, ...env }).imports).to.deep.equal({ source: { base: "https://esm.sh/", entry: "" }, maxModuleBytes: 1024, maxRunBytes: 4096, cacheBytes: 0, cacheEntries: 0 });
    for (const [name, value, needle] of [
      ["VESTA_IMPORT_CDN_URL", "not a url", "is not a URL"],
      ["VESTA_IMPORT_CDN_URL", "https://cdn.jsdelivr.net/npm", 'ending with "/"'],
      ["VESTA_IMPORT_CDN_URL", "https://user:pw@cdn.jsdelivr.net/npm/", "without credentials"],
      ["VESTA_IMPORT_CDN_URL", "ftp://cdn.jsdelivr.net/npm/", "an http(s) URL"],
      ["VESTA_IMPORT_CDN_ENTRY", "+esm", 'must be "" or a path starting with "/"'],
      ["VESTA_IMPORT_MAX_MODULE_BYTES", String(9 * 1024 * 1024), "VESTA_IMPORT_MAX_MODULE_BYTES"],
      ["VESTA_IMPORT_MAX_RUN_BYTES", String(65 * 1024 * 1024), "VESTA_IMPORT_MAX_RUN_BYTES"],
    ]) {
      const msg = problems({ ...valid, [name]: value });
      expect(lines(msg), msg).to.have.length(1);
      expect(msg).to.include(name).and.include(needle);
    }
  });

  it("refuses a bad port", function () {
    for (const port of ["abc", "70000", "-1", "80.5"]) expect(problems({ ...valid, VESTA_PORT: port })).to.include("VESTA_PORT");
  });

  it("lists every problem of an environment with several", function () {
    const msg = problems({ ...DEV, VESTA_PORT: "abc", VESTA_PAYER_KEYS: "0x12" });
    for (const v of ["VESTA_PORT", "VESTA_RPC_URL", "VESTA_ACCOUNT_CONFIG_ADDRESS", "VESTA_PAYER_KEYS"]) expect(msg).to.include(v);
  });

  // Regression (fixed): relayer/config.ts falls back to `EnvSchema.parse({})` when any variable fails the
  // schema, so one bad value (e.g. VESTA_PORT) also reports the RPC URL, contract address and payer
  // keys as missing although they are set, and hides their real problems (e.g. a duplicate key).
  it("a bad port or RPC URL is the only problem reported when everything else is valid", function () {
    for (const env of [{ VESTA_PORT: "abc" }, { VESTA_RPC_URL: "not a url" }] as Record<string, string>[]) {
      const msg = problems({ ...valid, ...env });
      expect(lines(msg), msg).to.have.length(1);
    }
    const both = problems({ ...valid, VESTA_PORT: "70000", VESTA_PAYER_KEYS: `${KEY1},${KEY1}` });
    expect(lines(both), both).to.have.length(2);
    expect(both).to.include("twice");
  });

  it("takes the RPC URL and contract address from a deployment file; the variables win over it", function () {
    const file = path.join(dir, "deployment.json");
    fs.writeFileSync(file, JSON.stringify({ rpcUrl: "http://10.0.0.1:8545", accountConfig: ADDRESS.toLowerCase() }));
    const fromFile = loadConfig({ ...DEV, VESTA_DEPLOYMENT_FILE: file, VESTA_PAYER_KEYS: KEY1 });
    expect(fromFile).to.deep.include({ rpcUrl: "http://10.0.0.1:8545", accountConfigAddress: ADDRESS, payerKeys: [KEY1] });
    const other = ethers.Wallet.createRandom().address;
    expect(loadConfig({ ...DEV, VESTA_DEPLOYMENT_FILE: file, VESTA_PAYER_KEYS: KEY1, VESTA_RPC_URL: "http://x:1", VESTA_ACCOUNT_CONFIG_ADDRESS: other })).to.deep.include({
      rpcUrl: "http://x:1",
      accountConfigAddress: other,
    });
  });

  it("refuses a deployment file that is missing or not JSON", function () {
    const bad = path.join(dir, "bad.json");
    fs.writeFileSync(bad, "{ not json");
    for (const file of [path.join(dir, "missing.json"), bad]) {
      const msg = problems({ ...DEV, VESTA_DEPLOYMENT_FILE: file, VESTA_PAYER_KEYS: KEY1 });
      expect(msg).to.include("VESTA_DEPLOYMENT_FILE").and.include(file);
    }
  });
});
