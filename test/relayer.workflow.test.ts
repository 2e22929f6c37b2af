import { expect } from "chai";
import { ethers } from "hardhat";
import { call, chainKeys, startStack, type Stack } from "./helpers/relayer";
import { plain, Scope } from "./helpers/scenario";
import { flat, perms } from "./helpers/accountConfig";
import { deriveWallet, paths } from "../executor/keys/provider";
import {
  ALL_PERMISSIONS,
  NO_PERMISSIONS,
  keyItem,
  accountClient,
  addGroup,
  adminSigner,
  addUsageKey,
  client,
  createWallet,
  expectChanged,
  expectError,
  expectRejected,
  groupsFixture,
  hashCid,
  listedUsageKey,
  newCid,
  ok,
  onChain,
  step,
  updateUsageKey,
  type GroupsFixture,
  type RestPermissions,
} from "./helpers/relayerWorkflow";


/** The usage-key endpoints with a body naming `target` (all are the account key's alone). */
const usageKeyWrites = (target: string): [string, Record<string, unknown>][] => [
  ["/update_usage_api_key", { usage_api_key: target, name: "changed", execute_in_groups: [0] }],
  ["/update_usage_api_key_metadata", { usage_api_key: target, name: "changed", description: "changed" }],
  ["/remove_usage_api_key", { usage_api_key: target }],
];

describe("relayer: the managed-mode API end to end", function () {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => stack?.stop());

  describe("workflow order (spec 1 steps 1, 3-6)", function () {
    for (const bearer of [false, true]) {
      it(`creates an account, a usage key, wallets, a group and an action, and links them (${bearer ? "Authorization: Bearer" : "X-Api-Key"})`, async function () {
        // 1. Create and verify an account.
        const created = await ok(call(stack, "POST", "/new_account", { body: { account_name: "workflow", account_description: "the workflow", email: "ops@example.com" } }));
        expect(created).to.have.all.keys("api_key", "wallet_address");
        const apiKey: string = created.api_key;
        expect(Buffer.from(apiKey, "base64")).to.have.length(32);
        expect(Buffer.from(apiKey, "base64").toString("base64")).to.equal(apiKey);
        const owner = client(stack, apiKey, bearer);
        const account = await stack.config.getAccount(owner.hash);
        expect(account.adminWalletAddress).to.equal(created.wallet_address);
        expect(account.managed).to.equal(true);
        expect(account.hasApiKey).to.equal(true);
        expect([account.name, account.description]).to.deep.equal(["workflow", "the workflow"]);
        expect((await deriveWallet(stack.relayer.ctx.keys, paths.accountAdmin(owner.hash))).address).to.equal(created.wallet_address);

        expect(await ok(owner.get("/account_exists"))).to.equal(true);
        expect(await ok(client(stack, "no-such-key", bearer).get("/account_exists"))).to.equal(false);
        await expectError(call(stack, "GET", "/account_exists"), 401, "invalid_api_key");

        // 3. Add a usage key (execute on every group: the groups come later).
        const usage = await addUsageKey(stack, owner, { name: "runner", description: "runs actions", execute_in_groups: [0] });
        expect(await ok(usage.get("/account_exists"))).to.equal(true);
        const keys = await owner.get("/list_api_keys");
        expect(await ok(keys)).to.deep.equal([keyItem(usage.hash, { name: "runner", description: "runs actions", execute_in_groups: [0] })]);
        expect(keys.body[0].api_key_hash, "Chipotle's SDK matches keccak256 of the key's bytes").to.equal(ethers.keccak256(ethers.toUtf8Bytes(usage.key)));
        expect(JSON.stringify(keys.body)).not.to.include(usage.key);

        // 4. Create wallets: GET without metadata, POST with it; each is registered to the account.
        const plainWallet = (await ok(owner.get("/create_wallet"))).wallet_address;
        const named = await ok(owner.post("/create_wallet", { name: "signer", description: "signs things" }));
        expect(named).to.have.all.keys("wallet_address");
        const wallet: string = named.wallet_address;
        expect(wallet).to.equal(ethers.getAddress(wallet)).and.not.equal(plainWallet);
        for (const [address, name, description] of [[plainWallet, "", ""], [wallet, "signer", "signs things"]]) {
          const view = await stack.config.getWallet(owner.hash, address);
          expect([view.walletAddress, view.name, view.description]).to.deep.equal([address, name, description]);
          // The wallet's key is derived from (account hash, derivation path).
          expect((await deriveWallet(stack.relayer.ctx.keys, paths.pkp(owner.hash, view.derivationPath))).address).to.equal(address);
        }
        expect(await ok(owner.get("/list_wallets"))).to.deep.equal([
          { id: plainWallet, name: "", description: "", wallet_address: plainWallet },
          { id: wallet, name: "signer", description: "signs things", wallet_address: wallet },
        ]);

        // 5. Add a group and register an action.
        const groupBody = { group_name: "signers", group_description: "who signs", pkp_ids_permitted: [], cid_hashes_permitted: [] };
        expect(await ok(owner.post("/add_group", groupBody))).to.deep.equal({ success: true, group_id: "1" });
        const cid = await newCid();
        const hashed = hashCid(cid);
        expect(await ok(owner.post("/add_action", { action_ipfs_cid: cid, name: "sign", description: "signs a message" }))).to.deep.equal({ success: true, hashed_cid: hashed });
        const action = { id: hashed, hashed_cid: hashed, name: "sign", description: "signs a message" };
        expect(await ok(owner.get("/list_actions"))).to.deep.equal([action]);
        expect(await ok(owner.post("/add_action_to_group", { group_id: 1, action_ipfs_cid: cid }))).to.deep.equal({ success: true, hashed_cid: hashed });
        expect(await ok(owner.get("/list_actions?group_id=1"))).to.deep.equal([action]);
        expect(await stack.config.canExecute(usage.hash, hashed, wallet, 1)).to.equal(false);

        // 6. Add the wallet to the group: now the usage key may run the action with it.
        expect(await ok(owner.post("/add_pkp_to_group", { group_id: 1, pkp_id: wallet }))).to.deep.equal({ success: true });
        expect(await ok(owner.get("/list_wallets_in_group?group_id=1"))).to.deep.equal([
          { id: wallet, name: "signer", description: "signs things", wallet_address: wallet },
        ]);
        const groups = [{ id: "1", name: "signers", description: "who signs", pkp_count: 1, cid_count: 1 }];
        expect(await ok(owner.get("/list_groups"))).to.deep.equal(groups);
        expect(await ok(usage.get("/list_groups"))).to.deep.equal(groups);
        expect(await stack.config.canExecute(usage.hash, hashed, wallet, 1)).to.equal(true);
        expect(await stack.config.canExecute(usage.hash, hashed, plainWallet, 1)).to.equal(false);
        expect(plain(await stack.config.findExecutionGroup(usage.hash, hashed, wallet))).to.deep.equal({ allowed: true, groupId: 1n });
      });
    }
  });

  describe("authentication headers", function () {
    it("every authenticated endpoint takes X-Api-Key and Authorization: Bearer; a missing or malformed key is 401", async function () {
      const doc = await ok(call(stack, "GET", "/openapi.json"));
      const owner = await accountClient(stack);
      const endpoints: [method: "GET" | "POST", path: string][] = [];
      for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
        for (const [method, op] of Object.entries(item)) {
          if (op.security?.length) endpoints.push([method.toUpperCase() as "GET" | "POST", p.replace(/^\/core\/v1/, "")]);
        }
      }
      expect(endpoints.map(([, p]) => p)).to.include.members(["/list_api_keys", "/add_usage_api_key", "/add_group", "/create_wallet", "/add_action", "/list_actions"]);
      const malformed = [`Basic ${owner.key}`, "Bearer", `Bearer${owner.key}`, owner.key, `Token ${owner.key}`];
      for (const [method, path] of endpoints) {
        await step(`${method} ${path}`, async () => {
          // A field no schema has: the request passes authentication, then fails validation (400).
          const [target, body] = method === "GET" ? [`${path}?bogus=1`, undefined] : [path, { bogus: 1 }];
          for (const bearer of [false, true]) {
            await expectError(call(stack, method, target, { key: owner.key, bearer, body }), 400, "invalid_request", "bogus");
          }
          await expectError(call(stack, method, target, { body }), 401, "invalid_api_key");
          for (const authorization of malformed) {
            await expectError(call(stack, method, target, { body, headers: { authorization } }), 401, "invalid_api_key");
          }
        });
      }
    });
  });

  describe("usage keys", function () {
    it("add, update (replaces the whole permission set), update metadata and remove", async function () {
      const f = await groupsFixture(stack);
      const owner = f.owner;
      const other = await addUsageKey(stack, owner, { name: "other", execute_in_groups: [f.g1] });

      // add: the value is returned once; the list shows its hash and permissions, never the value.
      const added = await ok(owner.post("/add_usage_api_key", { name: "ci", description: "ci key", can_create_groups: true, execute_in_groups: [f.g1] }));
      expect(added).to.have.all.keys("success", "usage_api_key");
      expect(Buffer.from(added.usage_api_key, "base64")).to.have.length(32);
      const key = client(stack, added.usage_api_key, false);
      expect(await listedUsageKey(owner, key)).to.deep.equal(keyItem(key.hash, { name: "ci", description: "ci key", can_create_groups: true, execute_in_groups: [f.g1] }));
      const list = await owner.get("/list_api_keys");
      expect(list.body).to.have.length(2);
      for (const k of [key, other]) expect(JSON.stringify(list.body)).not.to.include(k.key);
      await ok(key.post("/add_group", { group_name: "by ci" }));

      // update: only execute [g2] given, so can_create_groups resets to false and execute moves to g2.
      await updateUsageKey(owner, key, { name: "ci", description: "ci key", execute_in_groups: [f.g2] });
      expect(await listedUsageKey(owner, key)).to.deep.equal(keyItem(key.hash, { name: "ci", description: "ci key", execute_in_groups: [f.g2] }));
      await expectRejected(stack, [owner], () => key.post("/add_group", { group_name: "again" }), 403, "missing_scope", "group:create");
      expect(await stack.config.hasScope(key.hash, Scope.Execute, f.g1)).to.equal(false);
      expect(await stack.config.hasScope(key.hash, Scope.Execute, f.g2)).to.equal(true);

      // update metadata: only name and description change.
      await ok(owner.post("/update_usage_api_key_metadata", { usage_api_key: key.key, name: "renamed", description: "new words" }));
      expect(await listedUsageKey(owner, key)).to.deep.equal(keyItem(key.hash, { name: "renamed", description: "new words", execute_in_groups: [f.g2] }));

      // remove: the key fails authentication on its very next request; nothing else is affected.
      const otherBefore = await listedUsageKey(owner, other);
      await ok(owner.post("/remove_usage_api_key", { usage_api_key: key.key }));
      await expectError(key.get("/list_groups"), 401, "invalid_api_key");
      await expectError(key.post("/create_wallet", {}), 401, "invalid_api_key");
      await expectError(client(stack, key.key, true).get("/list_wallets"), 401, "invalid_api_key");
      expect(await ok(key.get("/account_exists"))).to.equal(false);
      expect(await listedUsageKey(owner, key)).to.equal(undefined);
      expect(await listedUsageKey(owner, other)).to.deep.equal(otherBefore);
      expect(await ok(other.get("/list_groups"))).to.have.length(3);
      expect(await ok(owner.get("/list_api_keys"))).to.have.length(1);
    });

    it("usage-key endpoints take the account key only: a usage key (even with every scope) gets 403 and nothing changes", async function () {
      const owner = await accountClient(stack);
      const target = await addUsageKey(stack, owner, { name: "target" });
      const strong = await addUsageKey(stack, owner, { name: "strong", ...ALL_PERMISSIONS });
      const writes = [["/add_usage_api_key", { name: "sneaky", ...ALL_PERMISSIONS }], ...usageKeyWrites(target.key), ...usageKeyWrites(strong.key)] as const;
      for (const [path, body] of writes) {
        await step(path, () => expectRejected(stack, [owner], () => strong.post(path, body), 403, "owner_only", "account key"));
      }
      await expectError(strong.get("/list_api_keys"), 403, "owner_only");
    });

    it("an unknown usage_api_key, or the account key given as one, is 404 usage_key_not_found", async function () {
      const owner = await accountClient(stack);
      await addUsageKey(stack, owner, { name: "bystander" });
      for (const target of ["AAAAnot-a-key-of-this-account", owner.key]) {
        for (const [path, body] of usageKeyWrites(target)) {
          await step(path, () => expectRejected(stack, [owner], () => owner.post(path, body), 404, "usage_key_not_found"));
        }
      }
      expect(await ok(owner.get("/account_exists"))).to.equal(true);
    });

    it("a usage key of another account is 404 usage_key_not_found, and stays as it was", async function () {
      const a = await accountClient(stack);
      const b = await accountClient(stack);
      const theirs = await addUsageKey(stack, b, { name: "b's key", description: "b's", can_create_pkps: true, execute_in_groups: [0] });
      const before = await listedUsageKey(b, theirs);
      for (const [path, body] of usageKeyWrites(theirs.key)) {
        await step(path, () => expectRejected(stack, [a, b], () => a.post(path, body), 404, "usage_key_not_found"));
      }
      expect(await listedUsageKey(b, theirs)).to.deep.equal(before);
      expect(await ok(theirs.get("/account_exists"))).to.equal(true);
      await ok(theirs.post("/create_wallet", { name: "still works" }));
    });
  });

  describe("scopes over HTTP", function () {
    type ScopeCase = {
      path: string;
      scope: string;
      field: keyof RestPermissions;
      /** The request body, aimed at `group` where the operation names one. */
      body: (f: GroupsFixture, group: number) => Record<string, unknown>;
    };
    const cases: ScopeCase[] = [
      { path: "/add_group", scope: "group:create", field: "can_create_groups", body: () => ({ group_name: "new group" }) },
      { path: "/remove_group", scope: "group:delete", field: "can_delete_groups", body: (_f, g) => ({ group_id: g }) },
      { path: "/create_wallet", scope: "pkp:create", field: "can_create_pkps", body: () => ({ name: "new wallet" }) },
      { path: "/add_action_to_group", scope: "group:manageActions", field: "manage_ipfs_ids_in_groups", body: (f, g) => ({ group_id: g, action_ipfs_cid: f.cid2 }) },
      { path: "/remove_action_from_group", scope: "group:manageActions", field: "manage_ipfs_ids_in_groups", body: (f, g) => ({ group_id: g, hashed_cid: hashCid(f.cid) }) },
      { path: "/add_pkp_to_group", scope: "group:addPkp", field: "add_pkp_to_groups", body: (f, g) => ({ group_id: g, pkp_id: f.w2 }) },
      { path: "/remove_pkp_from_group", scope: "group:removePkp", field: "remove_pkp_from_groups", body: (f, g) => ({ group_id: g, pkp_id: f.w1 }) },
    ];

    for (const c of cases) {
      const perGroup = Array.isArray(NO_PERMISSIONS[c.field]);
      it(`${c.path} needs ${c.scope}${perGroup ? " on that group (or [0])" : ""}: without it 403 missing_scope and nothing changes`, async function () {
        const f = await groupsFixture(stack);
        // Every other scope on every group: only the one under test is missing.
        const grant = (value: boolean | number[]) => ({ name: "scoped", ...ALL_PERMISSIONS, [c.field]: value });
        const key = await addUsageKey(stack, f.owner, grant(perGroup ? [] : false));
        const send = (group: number) => () => key.post(c.path, c.body(f, group));
        const regrant = async (value: boolean | number[]) => {
          await updateUsageKey(f.owner, key, grant(value));
        };

        const denied = await expectRejected(stack, [f.owner], send(f.g1), 403, "missing_scope", c.scope, ...(perGroup ? [`group ${f.g1}`] : []));
        expect(denied.details).to.deep.equal({ scope: c.scope, ...(perGroup ? { group_id: f.g1 } : {}) });
        if (!perGroup) {
          await regrant(true);
          await expectChanged(stack, f.owner, send(f.g1));
          return;
        }
        await regrant([f.g1]);
        await expectRejected(stack, [f.owner], send(f.g2), 403, "missing_scope", c.scope, `group ${f.g2}`);
        await expectChanged(stack, f.owner, send(f.g1));
        await regrant([0]);
        await expectChanged(stack, f.owner, send(f.g2));
      });
    }

    // Regression: the relayer's provider once cached identical calls (estimateGas too) for 250 ms,
    // so a retry right after a grant was simulated against the old state.
    it("a write retried right after the owner grants the missing scope on chain succeeds", async function () {
      const owner = await accountClient(stack);
      const key = await addUsageKey(stack, owner, { name: "late grant" });
      const admin = await adminSigner(stack, owner);
      await expectError(key.post("/add_group", { group_name: "retried" }), 403, "missing_scope", "group:create");
      await (await stack.config.connect(admin).setUsageApiKey(owner.hash, key.hash, 0, 0, "late grant", "", ...flat(perms({ canCreateGroups: true })))).wait();
      expect(await stack.config.hasScope(key.hash, Scope.CreateGroups, 0)).to.equal(true);
      expect(await ok(key.post("/add_group", { group_name: "retried" }))).to.deep.equal({ success: true, group_id: "1" });
    });

    it("a usage key acts only within its own account: another account's group ids do not exist for it", async function () {
      const a = await groupsFixture(stack);
      const b = await groupsFixture(stack);
      const bOnly = await addGroup(b.owner, "b only");
      const key = await addUsageKey(stack, a.owner, ALL_PERMISSIONS);
      const both = [a.owner, b.owner];
      const writes: [string, Record<string, unknown>][] = [
        ["/add_action_to_group", { group_id: bOnly, action_ipfs_cid: a.cid2 }],
        ["/add_pkp_to_group", { group_id: bOnly, pkp_id: a.w2 }],
        ["/remove_group", { group_id: bOnly }],
      ];
      for (const [path, body] of writes) {
        await step(path, () => expectRejected(stack, both, () => key.post(path, body), 404, "group_not_found", `group ${bOnly}`));
      }
      await expectError(key.get(`/list_wallets_in_group?group_id=${bOnly}`), 404, "group_not_found");

      // The ids both accounts share name the key's own account's groups.
      const bBefore = await onChain(stack, b.owner);
      await ok(key.post("/add_action_to_group", { group_id: a.g1, action_ipfs_cid: a.cid2 }));
      expect(await onChain(stack, b.owner)).to.deep.equal(bBefore);
      expect((await ok(a.owner.get(`/list_actions?group_id=${a.g1}`))).map((x: { hashed_cid: string }) => x.hashed_cid)).to.include(hashCid(a.cid2));
      expect(await ok(key.get("/list_groups"))).to.deep.equal(await ok(a.owner.get("/list_groups")));
      expect(await ok(key.get("/list_wallets"))).to.deep.equal(await ok(a.owner.get("/list_wallets")));
    });
  });

  describe("operations on missing things", function () {
    it("an unknown or removed group is 404 group_not_found on every group operation, and nothing changes", async function () {
      const f = await groupsFixture(stack);
      await ok(f.owner.post("/remove_group", { group_id: f.g2 }));
      for (const g of [999, f.g2]) {
        const writes: [string, Record<string, unknown>][] = [
          ["/remove_group", { group_id: g }],
          ["/update_group", { group_id: g, name: "renamed" }],
          ["/add_pkp_to_group", { group_id: g, pkp_id: f.w2 }],
          ["/remove_pkp_from_group", { group_id: g, pkp_id: f.w1 }],
          ["/add_action_to_group", { group_id: g, action_ipfs_cid: f.cid2 }],
          ["/remove_action_from_group", { group_id: g, hashed_cid: hashCid(f.cid) }],
        ];
        for (const [path, body] of writes) {
          await step(`${path} ${g}`, async () => {
            const e = await expectRejected(stack, [f.owner], () => f.owner.post(path, body), 404, "group_not_found", `group ${g}`);
            expect(e.details).to.deep.equal({ group_id: g });
          });
        }
        for (const path of [`/list_wallets_in_group?group_id=${g}`, `/list_actions?group_id=${g}`]) {
          await step(path, () => expectError(f.owner.get(path), 404, "group_not_found"));
        }
      }
    });

    // Regression: the same stale-simulation cache answered the second removal with 503.
    it("removing the same group twice in a row answers the second time 404 group_not_found", async function () {
      const f = await groupsFixture(stack);
      await ok(f.owner.post("/remove_group", { group_id: f.g2 }));
      await expectRejected(stack, [f.owner], () => f.owner.post("/remove_group", { group_id: f.g2 }), 404, "group_not_found", `group ${f.g2}`);
    });

    it("removing a PKP or an action that is not in the group is 404", async function () {
      const f = await groupsFixture(stack);
      await expectRejected(stack, [f.owner], () => f.owner.post("/remove_pkp_from_group", { group_id: f.g1, pkp_id: f.w2 }), 404, "wallet_not_in_group", f.w2);
      await expectRejected(stack, [f.owner], () => f.owner.post("/remove_action_from_group", { group_id: f.g1, hashed_cid: hashCid(f.cid2) }), 404, "action_not_in_group");
    });

    it("a PKP of another account (or an unregistered address) cannot be put in a group: 404 wallet_not_found", async function () {
      const a = await groupsFixture(stack);
      const theirs = await createWallet(await accountClient(stack), "theirs");
      const unregistered = ethers.Wallet.createRandom().address;
      for (const pkp of [theirs, unregistered]) {
        await step(pkp, async () => {
          await expectRejected(stack, [a.owner], () => a.owner.post("/add_pkp_to_group", { group_id: a.g1, pkp_id: pkp }), 404, "wallet_not_found", pkp);
          await expectRejected(stack, [a.owner], () => a.owner.post("/add_group", { group_name: "x", pkp_ids_permitted: [pkp] }), 404, "wallet_not_found", pkp);
        });
      }
      await expect(stack.config.getWallet(a.owner.hash, theirs)).to.be.revertedWithCustomError(stack.config, "PkpNotFound");
    });

    it("adding an action or a PKP that is already in the group is 409 already_exists", async function () {
      const f = await groupsFixture(stack);
      await expectRejected(stack, [f.owner], () => f.owner.post("/add_action_to_group", { group_id: f.g1, action_ipfs_cid: f.cid }), 409, "already_exists", `group ${f.g1}`);
      await expectRejected(stack, [f.owner], () => f.owner.post("/add_pkp_to_group", { group_id: f.g1, pkp_id: f.w1 }), 409, "already_exists", f.w1);
    });
  });

  describe("unauthenticated endpoints", function () {
    it("get_node_chain_config names the chain and the deployed contract", async function () {
      const cfg = await ok(call(stack, "GET", "/get_node_chain_config"));
      expect(cfg).to.include({ chain_id: 31337, contract_address: await stack.config.getAddress() });
    });

    it("get_api_payers lists the 4 payers and get_admin_api_payer the admin payer", async function () {
      const payers = chainKeys(1, 4).map((k) => new ethers.Wallet(k).address);
      expect(await ok(call(stack, "GET", "/get_api_payers"))).to.have.members(payers).and.have.length(4);
      const [owner] = await ethers.getSigners();
      expect(await ok(call(stack, "GET", "/get_admin_api_payer"))).to.equal(owner.address).and.equal(await stack.config.getAdminApiPayer());
    });

    it("billing/stripe_config is 404 stripe_not_configured in local billing mode", async function () {
      await expectError(call(stack, "GET", "/billing/stripe_config"), 404, "stripe_not_configured", "local mode");
    });
  });
});
