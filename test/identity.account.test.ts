import { expect } from "chai";
import { ethers } from "hardhat";
import { base64url } from "jose";
import { call, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { accountState } from "./helpers/scenario";
import { deploySafeInfrastructure } from "./helpers/safe";

type Session = { token: string; account: bigint; wallet: string };

describe("identity: the identity-owned account (issue 21)", function () {
  this.timeout(180_000);
  let stack: Stack;
  const mails = new Map<string, string>();
  before(async () => {
    stack = await startStack({ env: { VESTA_EMAIL_CODES: "log", VESTA_GAS_TOKEN_PRICE_CENTS: "300000" } });
    stack.relayer.ctx.identity.email!.mailer = (email, code) => void mails.set(email, code);
  });
  after(async () => stack?.stop());

  async function signIn(email: string): Promise<Session> {
    expect((await call(stack, "POST", "/identity/email/send_code", { body: { email } })).status).to.equal(200);
    const r = await call(stack, "POST", "/identity/email/sign_in", { body: { email, code: mails.get(email) } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return { token: r.body.session_token, account: BigInt(r.body.api_key_hash), wallet: r.body.admin_wallet_address };
  }
  const as = (s: Session | string, method: "GET" | "POST", path: string, body?: unknown) =>
    call(stack, method, path, { key: typeof s === "string" ? s : s.token, bearer: true, body });
  /** The sender of the transaction that emitted AccountConfig's latest `event` for `account`. */
  async function senderOfLatest(event: "GroupCreated" | "WalletRegistered" | "UsageApiKeySet", account: bigint): Promise<string> {
    const filter = (stack.config.filters as any)[event](account);
    const logs = await stack.config.queryFilter(filter);
    const tx = await ethers.provider.getTransaction(logs[logs.length - 1].transactionHash);
    return tx!.from;
  }

  let alice: Session;
  let bob: Session;
  before(async () => {
    alice = await signIn("alice@example.com");
    bob = await signIn("bob@example.com");
  });

  it("the identity wallet is the account's on-chain admin, and the account is not managed", async () => {
    const a = await stack.config.getAccount(alice.account);
    expect(a.adminWalletAddress).to.equal(alice.wallet);
    expect(a.managed).to.equal(false);
    expect(alice.wallet).not.to.equal(bob.wallet);
    const created = await stack.config.queryFilter(stack.config.filters.AccountCreated(alice.account));
    expect((await ethers.provider.getTransaction(created[0].transactionHash))!.from, "sent by the identity wallet itself").to.equal(alice.wallet);
  });

  it("admin writes with the session land from the identity wallet, and are charged to the account like relayed writes", async () => {
    const before = (await as(alice, "GET", "/billing/balance")).body.credit_cents;
    const g = await as(alice, "POST", "/add_group", { group_name: "g", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] });
    expect(g.status, JSON.stringify(g.body)).to.equal(200);
    expect(await senderOfLatest("GroupCreated", alice.account)).to.equal(alice.wallet);
    const after = (await as(alice, "GET", "/billing/balance")).body.credit_cents;
    expect(before - after, "the fixed price and the gas of the top-up and the write").to.be.greaterThan(stack.relayerConfig.billing.writeCents);

    const w = await as(alice, "POST", "/create_wallet", { name: "w" });
    expect(w.status, JSON.stringify(w.body)).to.equal(200);
    expect(await senderOfLatest("WalletRegistered", alice.account)).to.equal(alice.wallet);
    const listed = await as(alice, "GET", "/list_wallets");
    expect(listed.body.map((x: { wallet_address: string }) => x.wallet_address)).to.deep.equal([w.body.wallet_address]);

    const k = await as(alice, "POST", "/add_usage_api_key", { name: "k", execute_in_groups: [g.body.group_id] });
    expect(k.status, JSON.stringify(k.body)).to.equal(200);
    expect(await senderOfLatest("UsageApiKeySet", alice.account)).to.equal(alice.wallet);
    expect((await call(stack, "GET", "/account_exists", { key: k.body.usage_api_key })).body).to.equal(true);
  });

  it("another identity cannot act on the account: its session acts on its own account only", async () => {
    const aliceBefore = await accountState(stack.config, alice.account);
    const g = await as(bob, "POST", "/add_group", { group_name: "bob's", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] });
    expect(g.status).to.equal(200);
    expect(await accountState(stack.config, alice.account)).to.deep.equal(aliceBefore);
    expect((await as(bob, "GET", "/list_groups")).body.map((x: { name: string }) => x.name)).to.deep.equal(["bob's"]);
  });

  it("a session altered to name another identity is refused (401), and nothing changes", async () => {
    const aliceId = JSON.parse(Buffer.from(alice.token.split(".")[1], "base64url").toString()).sub;
    const [h, p, s] = bob.token.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const forged = `${h}.${base64url.encode(JSON.stringify({ ...claims, sub: aliceId }))}.${s}`;
    const before = await accountState(stack.config, alice.account);
    const block = await ethers.provider.getBlockNumber();
    await expectError(await as(forged, "POST", "/add_group", { group_name: "x", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] }), 401, "invalid_session", "sign in again");
    expect(await accountState(stack.config, alice.account)).to.deep.equal(before);
    expect(await ethers.provider.getBlockNumber()).to.equal(block);
  });

  it("a usage key of the identity's account cannot do the owner's writes", async () => {
    const g = await as(alice, "POST", "/add_group", { group_name: "k", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] });
    const k = await as(alice, "POST", "/add_usage_api_key", { name: "runner", execute_in_groups: [g.body.group_id] });
    const before = await accountState(stack.config, alice.account);
    await expectError(await call(stack, "POST", "/add_usage_api_key", { key: k.body.usage_api_key, body: { name: "escalate" } }), 403, "owner_only");
    await expectError(
      await call(stack, "POST", "/add_group", { key: k.body.usage_api_key, body: { group_name: "x", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] } }),
      403,
      "account_chain_secured",
    );
    expect(await accountState(stack.config, alice.account)).to.deep.equal(before);
  });

  it("a session of another node (another MAC key) is refused", async () => {
    const { Sessions } = await import("../relayer/identity/session");
    const { LocalKeyProvider } = await import("../executor/keys/local");
    const os = await import("node:os");
    const path = await import("node:path");
    const fs = await import("node:fs");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-other-"));
    const other = LocalKeyProvider.open(path.join(dir, "root"), (await import("pino")).default({ level: "silent" }));
    const aliceId = JSON.parse(Buffer.from(alice.token.split(".")[1], "base64url").toString()).sub;
    const foreign = await new Sessions(other, `${stack.relayer.ctx.chain.chainId}:${stack.relayerConfig.accountConfigAddress}`, 900).issue(aliceId, { method: "email", issuer: "email", subject: "alice@example.com" }, 0);
    await expectError(await as(foreign.token, "GET", "/list_groups"), 401, "invalid_session");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("leaving: the identity hands the account to a Safe in two steps; then its session and its sign-in are refused and it signs nothing", async () => {
    const carol = await signIn("carol@example.com");
    const g = await as(carol, "POST", "/add_group", { group_name: "kept", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] });
    expect(g.status).to.equal(200);
    const kit = await deploySafeInfrastructure();
    const signers = await ethers.getSigners();
    const owners = [signers[6].address, signers[7].address, signers[8].address];
    const safe = await kit.createSafe(owners, 2, String(Date.now()));
    await expectError(await as(carol, "POST", "/identity/transfer_account", { new_admin_wallet_address: carol.wallet }), 400, "invalid_request", "own wallet");
    const t = await as(carol, "POST", "/identity/transfer_account", { new_admin_wallet_address: safe });
    expect(t.status, JSON.stringify(t.body)).to.equal(200);
    expect((await stack.config.getAccount(carol.account)).adminWalletAddress, "nothing moves before the Safe accepts").to.equal(carol.wallet);
    await kit.proposeSignExecute(safe, [{ to: await stack.config.getAddress(), data: stack.config.interface.encodeFunctionData("acceptAccountOwnership", [carol.account]) }], [owners[0], owners[1]]);
    const record = await stack.config.getAccount(carol.account);
    expect(record.adminWalletAddress).to.equal(safe);
    expect(record.managed).to.equal(false);

    const before = await accountState(stack.config, carol.account);
    const nonceBefore = await ethers.provider.getTransactionCount(carol.wallet);
    const write = () => as(carol, "POST", "/add_group", { group_name: "after", group_description: "", pkp_ids_permitted: [], cid_hashes_permitted: [] });
    let r = await write();
    for (let i = 0; i < 40 && r.body.code !== "identity_not_owner"; i++) {
      await new Promise((res) => setTimeout(res, 100)); // the event-synced cache sees the Safe's acceptance
      r = await write();
    }
    await expectError(r, 403, "identity_not_owner", "handed over");
    expect(await accountState(stack.config, carol.account)).to.deep.equal(before);
    expect(await ethers.provider.getTransactionCount(carol.wallet), "the identity wallet sent nothing more").to.equal(nonceBefore);
    // Signing in again gives no session and no second account.
    expect((await call(stack, "POST", "/identity/email/send_code", { body: { email: "carol@example.com" } })).status).to.equal(200);
    await expectError(await call(stack, "POST", "/identity/email/sign_in", { body: { email: "carol@example.com", code: mails.get("carol@example.com") } }), 403, "identity_not_owner");
    expect((await stack.config.queryFilter(stack.config.filters.AccountCreated(carol.account))).length).to.equal(1);
  });
});
