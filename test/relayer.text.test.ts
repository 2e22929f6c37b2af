import { expect } from "chai";
import { ethers } from "hardhat";
import { AbiCoder, concat, keccak256, ParamType, toUtf8Bytes, type Interface, type Signer } from "ethers";
import { call, newAccount } from "./helpers/relayer";
import { chainState, CID_V0, expectError, ok, suiteStack } from "./helpers/relayerChecks";
import { chainSecuredHash, flat, hashOf, perms, type AccountConfig } from "./helpers/accountConfig";
import { LIMITS } from "../protocol/limits";

/** Calls `method` of the contract from `signer` with `args`, each string argument sent as the raw bytes given (hex), as a wallet may. */
async function sendRaw(c: AccountConfig, signer: Signer, method: string, args: unknown[]) {
  const f = (c.interface as Interface).getFunction(method)!;
  const types = f.inputs.map((p) => ParamType.from(JSON.parse(p.format("json").replace(/"type":"string"/g, '"type":"bytes"'))));
  const data = concat([f.selector, AbiCoder.defaultAbiCoder().encode(types, args)]);
  await (await signer.sendTransaction({ to: await c.getAddress(), data })).wait();
}

const NOT_UTF8 = {
  byte: "0x61ff62", // a, 0xFF (never in UTF-8), b
  surrogate: "0x78eda080", // x, then a UTF-16 surrogate encoded as if it were a character (CESU-8)
  cut: "0x41c3", // A, then the first byte of a two-byte character
};

describe("strings at the edge: well-formed Unicode in, tolerant decoding out", function () {
  this.timeout(180_000);
  const stack = suiteStack();

  describe("every string a request carries is well-formed", function () {
    let apiKey: string;
    before(async () => {
      apiKey = (await newAccount(stack())).apiKey;
    });

    it("answers 400 to a lone surrogate in any field of every POST route (never 5xx), naming the field, and changes nothing", async function () {
      const doc = (await call(stack(), "GET", "/openapi.json")).body;
      const before = await chainState(stack(), apiKey);
      let checked = 0;
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        const schema = item.post?.requestBody?.content?.["application/json"]?.schema;
        if (!schema) continue;
        const body = schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
        const route = path.replace("/core/v1", "");
        const bodies: [string, unknown][] = body.type === "string" ? [["body", "x\uD800"]] : Object.keys(body.properties).map((f) => [f, { [f]: "x\uD800" }]);
        for (const [field, b] of bodies) {
          const r = await call(stack(), "POST", route, { key: apiKey, body: b });
          const where = `${route} ${field}: ${r.status} ${JSON.stringify(r.body)}`;
          expect(r.status, where).to.equal(400);
          expect(r.body.message, where).to.include(`${field}: must be well-formed Unicode: a lone surrogate \\uD800 at character 1`);
          checked++;
        }
      }
      expect(checked).to.be.greaterThan(40);
      expect(await chainState(stack(), apiKey)).to.deep.equal(before);
    });

    it("answers 400 invalid_text to the red team's cases (names, descriptions, keys, CIDs), where they answered 500 or wrote a broken name", async function () {
      const account = await call(stack(), "POST", "/new_account", { rawBody: '{"account_name":"a\\ud800"}' });
      expectError(account, 400, "invalid_text", "account_name: must be well-formed Unicode: a lone surrogate \\uD800 at character 1");
      const usage = ok(await call(stack(), "POST", "/add_usage_api_key", { key: apiKey, body: { name: "creator", can_create_groups: true } }), "usage key").usage_api_key;
      const before = await chainState(stack(), apiKey);
      const cases: [string, string, string][] = [
        ["/add_group", '{"group_name":"g\\udc00"}', "group_name"],
        ["/add_group", '{"group_name":"g","group_description":"\\ud83d"}', "group_description"],
        ["/create_wallet", '{"name":"w","description":"\\ud83d"}', "description"],
        ["/create_wallet", '{"name":"\\udfff"}', "name"],
        ["/add_usage_api_key", '{"name":"\\ud83d"}', "name"],
        ["/remove_usage_api_key", '{"usage_api_key":"k\\ud800"}', "usage_api_key"],
        ["/update_usage_api_key_metadata", '{"usage_api_key":"k\\ud800","name":"a"}', "usage_api_key"],
        ["/update_usage_api_key", '{"usage_api_key":"\\udfff"}', "usage_api_key"],
        ["/add_action", `{"action_ipfs_cid":"${CID_V0}","name":"\\ud800x"}`, "name"],
        ["/add_action", `{"action_ipfs_cid":"${CID_V0}","name":"\\udc00"}`, "name"],
        ["/check_execute_permission", '{"ipfs_id":"\\ud800"}', "ipfs_id"],
        ["/lit_action", '{"ipfs_id":"\\ud800"}', "ipfs_id"],
        // strings no field's schema names: free-form params, envelopes, object keys
        ["/lit_action", '{"code":"async function main(p) { return 1 }","js_params":{"a":["ok","\\udc00"]}}', "js_params.a.1"],
        ["/lit_action", '{"code":"async function main(p) { return 1 }","js_params":{"\\ud800":1}}', "js_params.\uD800 (the key)"],
        ["/create_wallet_with_signature", '{"typed_data":{"domain":{"name":"\\ud800"}},"signature":"0x"}', "typed_data.domain.name"],
      ];
      for (const [route, rawBody, field] of cases) {
        expectError(await call(stack(), "POST", route, { key: apiKey, rawBody }), 400, "invalid_text", `${field}: must be well-formed Unicode: a lone surrogate`);
      }
      // a usage key that may create groups wrote a name no list could read back
      expectError(await call(stack(), "POST", "/add_group", { key: usage, rawBody: '{"group_name":"x\\udc00"}' }), 400, "invalid_text", "group_name: must be well-formed Unicode");
      expect(await chainState(stack(), apiKey)).to.deep.equal(before);
      expect(ok(await call(stack(), "GET", "/list_groups", { key: apiKey }), "list_groups")).to.deep.equal([]);
    });

    it("refuses control characters in names (400 invalid_text), takes tab and line breaks in descriptions, and counts bytes of UTF-8 as the contract does", async function () {
      const before = await chainState(stack(), apiKey);
      for (const name of ["a\u0000b", "a\u001b[31mred", "line\nbreak", "tab\there", "\u007f", "\u0085", "admin\u202Egnp.exe", "a\u2066b", "a\u2028b"]) {
        const r = await call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: name } });
        expectError(r, 400, "invalid_text", "group_name: must not hold control characters");
      }
      for (const description of ["a\u0000b", "a\u001bb", "a\u202Eb"]) {
        expectError(await call(stack(), "POST", "/create_wallet", { key: apiKey, body: { description } }), 400, "invalid_text", "description: must not hold control characters");
      }
      const tooLong = "é".repeat(LIMITS.nameBytes / 2) + "x"; // 65 bytes in 33 characters
      expectError(await call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: tooLong } }), 400, "invalid_request", `group_name: at most ${LIMITS.nameBytes} bytes of UTF-8`);
      expect(await chainState(stack(), apiKey)).to.deep.equal(before);
      const name = "😀".repeat(LIMITS.nameBytes / 4); // exactly 64 bytes, with surrogate pairs (well-formed)
      const description = "first line\r\n\tsecond line";
      ok(await call(stack(), "POST", "/add_group", { key: apiKey, body: { group_name: name, group_description: description } }), "add_group");
      const [g] = ok(await call(stack(), "GET", "/list_groups", { key: apiKey }), "list_groups");
      expect([g.name, g.description]).to.deep.equal([name, description]);
    });
  });

  describe("names a wallet wrote on chain as bytes that are not UTF-8 (the ChainSecured path bypasses the API)", function () {
    let wallet: Signer;
    let usageKey: string;
    const pkp = "0x00000000000000000000000000000000000000c0";

    before(async () => {
      wallet = (await ethers.getSigners())[12];
      const c = stack().config.connect(wallet);
      const account = chainSecuredHash(await wallet.getAddress());
      await sendRaw(c, wallet, "newChainSecuredAccount", [NOT_UTF8.byte, NOT_UTF8.cut]);
      await sendRaw(c, wallet, "registerWalletDerivation", [account, pkp, 7n, NOT_UTF8.surrogate, NOT_UTF8.byte]);
      await sendRaw(c, wallet, "addGroup", [account, NOT_UTF8.byte, NOT_UTF8.surrogate, [], [pkp]]);
      await sendRaw(c, wallet, "addGroup", [account, "0x" + Buffer.from("plain").toString("hex"), "0x", [], []]);
      await sendRaw(c, wallet, "addAction", [account, NOT_UTF8.cut, NOT_UTF8.surrogate, keccak256(toUtf8Bytes(CID_V0))]);
      usageKey = "reader-" + Date.now();
      const h = hashOf(usageKey);
      await sendRaw(c, wallet, "setUsageApiKey", [account, h, 0n, 0n, NOT_UTF8.byte, NOT_UTF8.cut, ...flat(perms({ executeInGroups: [0] }))]);
    });

    it("lists them with U+FFFD for each bad sequence, and everything else intact", async function () {
      const groups = ok(await call(stack(), "GET", "/list_groups", { key: usageKey }), "list_groups");
      expect(groups.map((g: any) => [g.name, g.description, g.pkp_count])).to.deep.equal([
        ["a\uFFFDb", "x\uFFFD", 1],
        ["plain", "", 0],
      ]);
      const wallets = ok(await call(stack(), "GET", "/list_wallets", { key: usageKey }), "list_wallets");
      expect(wallets.map((w: any) => [w.wallet_address, w.name, w.description])).to.deep.equal([[ethers.getAddress(pkp), "x\uFFFD", "a\uFFFDb"]]);
      const inGroup = ok(await call(stack(), "GET", `/list_wallets_in_group?group_id=${groups[0].id}`, { key: usageKey }), "list_wallets_in_group");
      expect(inGroup.map((w: any) => w.name)).to.deep.equal(["x\uFFFD"]);
      const actions = ok(await call(stack(), "GET", "/list_actions", { key: usageKey }), "list_actions");
      expect(actions.map((a: any) => [a.name, a.description])).to.deep.equal([["A\uFFFD", "x\uFFFD"]]);
    });
  });
});
