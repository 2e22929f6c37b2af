import { expect } from "chai";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ethers } from "hardhat";
import { Wallet, type BaseWallet } from "ethers";
import { buildTypedData } from "../protocol/eip712";
import { walletAuthHeader } from "../relayer/http/walletAuth";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { computeCid } from "../executor/cid";
import { call, startStack, type Stack } from "./helpers/relayer";
import { accountClient, addGroup, addUsageKey, expectError, expectRejected, ok, type Client } from "./helpers/relayerWorkflow";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";
import { chainSecuredHash } from "./helpers/accountConfig";
import { fundedWallet } from "./helpers/wallets";

const HELLO = `async function main() { return "hello"; }`;
const SLOW = `async function main() { await new Promise((r) => setTimeout(r, 1100)); return "slow"; }`;
const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;

/** How a billing request authenticates: an API key, or an X-Wallet-Auth header. */
type Who = { key: string } | { headers: Record<string, string> };
const as = (who: Who) => ("key" in who ? { key: who.key } : { headers: who.headers });

/** An X-Wallet-Auth header of `wallet` (BillingAuth, issued now), naming `account` when given. */
async function walletAuth(stack: Stack, wallet: BaseWallet, account?: bigint): Promise<Who> {
  const td = buildTypedData("BillingAuth", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
  return { headers: { "x-wallet-auth": walletAuthHeader(td, await signEnvelope(wallet, td), account) } };
}

describe("billing over HTTP (Stripe mode, against the Stripe test double)", function () {
  this.timeout(180_000);
  let double: StripeDouble;
  let stack: Stack;
  before(async () => {
    double = await startStripeDouble();
    stack = await startStack({ env: { ...double.env(), VESTA_BILLING_SETTLE_MS: "3600000" } }); // settled by the tests
  });
  after(async () => {
    await stack?.stop();
    await double?.close();
  });

  const get = (path: string, who: Who) => call(stack, "GET", path, as(who));
  const post = (path: string, who: Who, body: unknown) => call(stack, "POST", path, { ...as(who), body });
  const balance = async (who: Who) => (await ok(get("/billing/balance", who))).credit_cents as number;
  const createIntent = async (who: Who, amount_cents: number): Promise<string> => (await ok(post("/billing/create_payment_intent", who, { amount_cents }))).payment_intent_id;
  /** Pays `cents` as `who`: a payment intent, the card payment (the double), confirm_payment. */
  async function fund(who: Who, cents: number) {
    const id = await createIntent(who, cents);
    double.succeed(id);
    return ok(post("/billing/confirm_payment", who, { payment_intent_id: id }));
  }
  /** Credit at Stripe of the customer record of `payer`, and how many credits it received. */
  const atStripe = (payer: string) => {
    const c = double.customerOf(payer)!;
    return { credit: -c.balance, credits: double.transactionsOf(c.id).filter((t) => t.amount < 0).length };
  };
  const accountPayer = (c: Client) => `account:${hex32(c.hash)}`;
  const webhook = (payload: string, signature?: string) =>
    call(stack, "POST", "/billing/webhook", { rawBody: payload, headers: signature ? { "stripe-signature": signature } : {} });

  it("serves the publishable key without authentication", async function () {
    expect(await ok(call(stack, "GET", "/billing/stripe_config"))).to.deep.equal({ publishable_key: double.publishableKey });
  });

  it("gives no free credit where card payments are configured (404 free_credit_unavailable, balance unchanged)", async function () {
    const owner = await accountClient(stack);
    await expectError(owner.post("/billing/free_credit", { amount_cents: 500 }), 404, "free_credit_unavailable", "create_payment_intent");
    expect(await ok(get("/billing/balance", owner))).to.include({ credit_cents: 0 });
  });

  it("a new account has no credit: writes and runs get 402 before anything is done; reads stay free", async function () {
    const owner = await accountClient(stack);
    expect(await ok(get("/billing/balance", owner))).to.deep.equal({ balance_cents: 0, credit_cents: 0, balance_display: "No credits" });
    const body = await expectRejected(stack, [owner], () => owner.post("/add_group", { group_name: "g" }), 402, "payment_required", "$0.00", "create_payment_intent");
    expect(body.details).to.deep.equal({ credit_cents: 0, price_cents: 1 });
    let hits = 0;
    const probe = http.createServer((_req, res) => void (hits++, res.end("hit")));
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    try {
      const code = `async function main() { await fetch("http://127.0.0.1:${(probe.address() as AddressInfo).port}/"); return "ran"; }`;
      await expectError(owner.post("/lit_action", { code }), 402, "payment_required", "a run of up to 30 s (its time limit)", "$0.30");
      expect(hits, "the action ran").to.equal(0);
    } finally {
      probe.close();
    }
    for (const p of ["/list_groups", "/list_wallets", "/list_api_keys", "/account_exists"]) await ok(owner.get(p));
    expect(await balance(owner)).to.equal(0);
    await ok(call(stack, "GET", "/get_node_chain_config"));
  });

  it("create_payment_intent takes an integer amount_cents of at least 500, and an authenticated caller", async function () {
    const owner = await accountClient(stack);
    for (const amount_cents of [499, 500.5, "500", -500, null, 0]) {
      await expectError(post("/billing/create_payment_intent", owner, { amount_cents }), 400, "invalid_request", "amount_cents");
    }
    await expectError(post("/billing/create_payment_intent", owner, {}), 400, "invalid_request", "amount_cents");
    await expectError(post("/billing/create_payment_intent", owner, { amount_cents: 500, extra: 1 }), 400, "invalid_request", "extra");
    await expectError(call(stack, "POST", "/billing/create_payment_intent", { body: { amount_cents: 500 } }), 401, "invalid_api_key");
    const r = await ok(post("/billing/create_payment_intent", owner, { amount_cents: 500 }));
    expect(r.client_secret).to.match(new RegExp(`^${r.payment_intent_id}_secret_`));
    expect(double.intents.get(r.payment_intent_id)).to.include({ amount: 500, currency: "usd", customer: double.customerOf(accountPayer(owner))!.id });
  });

  it("confirm_payment credits a succeeded intent exactly once, and nothing for one not succeeded, unknown or another account's", async function () {
    const [owner, other] = [await accountClient(stack), await accountClient(stack)];
    const id = await createIntent(owner, 1500);
    await expectError(post("/billing/confirm_payment", owner, { payment_intent_id: id }), 409, "payment_not_succeeded", "requires_payment_method");
    double.succeed(id);
    await expectError(post("/billing/confirm_payment", other, { payment_intent_id: id }), 403, "payment_intent_not_yours");
    await expectError(post("/billing/confirm_payment", owner, { payment_intent_id: "pi_unknown" }), 404, "payment_intent_not_found");
    await expectError(post("/billing/confirm_payment", owner, { payment_intent_id: "cus_1" }), 400, "invalid_request", "payment_intent_id");
    expect(await balance(owner)).to.equal(0);
    const first = await ok(post("/billing/confirm_payment", owner, { payment_intent_id: id }));
    expect(first).to.deep.equal({ success: true, payment_intent_id: id, amount_cents: 1500, credited: true, balance_cents: -1500, credit_cents: 1500, balance_display: "$15.00 credit" });
    const again = await ok(post("/billing/confirm_payment", owner, { payment_intent_id: id }));
    expect(again).to.include({ credited: false, credit_cents: 1500 });
    expect(await balance(other)).to.equal(0);
    expect(atStripe(accountPayer(owner))).to.deep.equal({ credit: 1500, credits: 1 });
    expect(double.intents.get(id)!.metadata.vesta_credited).to.match(/^cbtxn_/);
  });

  it("a credit Stripe failed to apply answers 503 and is applied once when confirmed again", async function () {
    const owner = await accountClient(stack);
    const id = await createIntent(owner, 900);
    double.succeed(id);
    double.failNext("POST", /balance_transactions$/, "unavailable");
    await expectError(post("/billing/confirm_payment", owner, { payment_intent_id: id }), 503, "payment_provider_unavailable", "try again");
    expect(await balance(owner)).to.equal(0);
    expect(await ok(post("/billing/confirm_payment", owner, { payment_intent_id: id }))).to.include({ credited: true, credit_cents: 900 });
    expect(atStripe(accountPayer(owner))).to.deep.equal({ credit: 900, credits: 1 });
  });

  it("the webhook checks Stripe's signature over the raw body and credits payment_intent.succeeded once, with confirm_payment", async function () {
    const owner = await accountClient(stack);
    const id = await createIntent(owner, 700);
    const event = double.webhook("payment_intent.succeeded", double.succeed(id));
    await expectError(webhook(event.payload), 400, "invalid_webhook_signature", "Stripe-Signature");
    await expectError(webhook(event.payload.replace("700", "7000"), event.signature), 400, "invalid_webhook_signature");
    const forged = double.webhook("payment_intent.succeeded", double.intents.get(id)!, "whsec_not_the_secret");
    await expectError(webhook(forged.payload, forged.signature), 400, "invalid_webhook_signature");
    expect(await balance(owner)).to.equal(0);
    expect(await ok(webhook(event.payload, event.signature))).to.deep.equal({ received: true });
    expect(await balance(owner)).to.equal(700);
    await ok(webhook(event.payload, event.signature)); // Stripe redelivers
    expect(await ok(post("/billing/confirm_payment", owner, { payment_intent_id: id }))).to.include({ credited: false, credit_cents: 700 });
    const other = double.webhook("customer.created", double.customerOf(accountPayer(owner))!);
    await ok(webhook(other.payload, other.signature)); // acknowledged, nothing to do
    expect(atStripe(accountPayer(owner))).to.deep.equal({ credit: 700, credits: 1 });
  });

  it("charges a cent per management call and per started second of execution, settled to the Stripe customer in one batch", async function () {
    const owner = await accountClient(stack);
    await fund(owner, 1000);
    await addGroup(owner, "paid"); // 1 cent
    for (const p of ["/list_groups", "/list_wallets", "/account_exists"]) await ok(owner.get(p));
    expect(await balance(owner)).to.equal(999);
    expect((await ok(owner.post("/lit_action", { code: SLOW }))).response).to.equal("slow"); // 2 started seconds
    expect(await balance(owner)).to.equal(997);
    expect((await ok(owner.post("/lit_action", { code: HELLO }))).response).to.equal("hello"); // 1
    expect(await ok(get("/billing/balance", owner))).to.deep.equal({ balance_cents: -996, credit_cents: 996, balance_display: "$9.96 credit" });
    const customer = double.customerOf(accountPayer(owner))!;
    expect(double.transactionsOf(customer.id).filter((t) => t.amount > 0), "nothing settled yet").to.have.length(0);
    await stack.relayer.ctx.billing!.settle();
    const debits = double.transactionsOf(customer.id).filter((t) => t.amount > 0);
    expect(debits.map((t) => [t.amount, t.metadata.vesta_debits])).to.deep.equal([[4, "3"]]);
    expect(atStripe(accountPayer(owner)).credit).to.equal(996);
    expect(await balance(owner)).to.equal(996);
  });

  it("a usage key sees its account's balance, and pays from it", async function () {
    const owner = await accountClient(stack);
    await fund(owner, 500);
    const group = await addGroup(owner, "run", [], [await computeCid(HELLO)]);
    const runner = await addUsageKey(stack, owner, { name: "runner", execute_in_groups: [group] });
    expect(await balance(runner)).to.equal(498);
    await ok(runner.post("/lit_action", { code: HELLO }));
    expect(await balance(owner)).to.equal(497);
  });

  it("a usage key cannot add credit: payment intents and confirmations are the owner's (403 owner_only, nothing created at Stripe)", async function () {
    const owner = await accountClient(stack);
    await fund(owner, 500);
    const runner = await addUsageKey(stack, owner, { name: "no scopes" }); // 1 cent
    const paid = await createIntent(owner, 500);
    double.succeed(paid);
    const intents = double.intents.size;
    await expectError(post("/billing/create_payment_intent", runner, { amount_cents: 500 }), 403, "owner_only", "a usage key cannot");
    await expectError(post("/billing/confirm_payment", runner, { payment_intent_id: paid }), 403, "owner_only");
    expect(double.intents.size, "no intent created").to.equal(intents);
    expect(await balance(runner), "nothing credited").to.equal(499);
    expect(await ok(post("/billing/confirm_payment", owner, { payment_intent_id: paid }))).to.include({ credited: true, credit_cents: 999 });
  });

  it("a wallet-owned account pays through X-Wallet-Auth, into its admin wallet's customer record", async function () {
    const wallet = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
    const who = await walletAuth(stack, wallet);
    await expectError(get("/billing/balance", who), 401, "invalid_wallet_auth", "not the admin wallet"); // no account yet
    const [funder] = await ethers.getSigners();
    await (await funder.sendTransaction({ to: wallet.address, value: ethers.parseEther("1") })).wait();
    await (await stack.config.connect(wallet).newChainSecuredAccount("wallet-owned", "")).wait();
    expect(await balance(who)).to.equal(0);
    expect(await fund(who, 800)).to.include({ credited: true, credit_cents: 800, balance_display: "$8.00 credit" });
    expect(double.customerOf(`wallet:${wallet.address}`)!.metadata).to.deep.equal({ vesta_payer: `wallet:${wallet.address}`, vesta_account: hex32(chainSecuredHash(wallet.address)) });
    await expectError(get("/billing/balance", { headers: { "x-wallet-auth": "not base64 !" } }), 401, "invalid_api_key"); // a malformed header falls back to the API key
  });

  it("add_usage_api_key_with_signature reserves the key on chain at the account's cost: 402 without credit (nothing written), then one management call", async function () {
    const wallet = await fundedWallet();
    await (await stack.config.connect(wallet).newChainSecuredAccount("wallet-owned", "")).wait();
    const who = await walletAuth(stack, wallet);
    const mint = async (issuedAt: number) => {
      const typed_data = buildTypedData("AddUsageApiKey", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt });
      return call(stack, "POST", "/add_usage_api_key_with_signature", { body: { typed_data, signature: await signEnvelope(wallet, typed_data) } });
    };
    const now = Math.floor(Date.now() / 1000);
    const block = await ethers.provider.getBlockNumber();
    await expectError(mint(now), 402, "payment_required", "$0.00");
    expect(await ethers.provider.getBlockNumber(), "nothing written").to.equal(block);
    await fund(who, 500);
    const minted = await ok(mint(now - 1));
    expect(await stack.config.usageApiKeyHome(await stack.config.usageApiKeySeal(BigInt(minted.usage_api_key_hash)))).to.equal(chainSecuredHash(wallet.address));
    expect(await balance(who), "one management call: its fixed price (its gas rounds to nothing here)").to.equal(499);
  });

  it("conversion re-routes billing to the new admin wallet's customer record, which must be funded again", async function () {
    const owner = await accountClient(stack);
    await fund(owner, 1000);
    const cid = await computeCid(HELLO);
    const group = await addGroup(owner, "run", [], [cid]);
    const runner = await addUsageKey(stack, owner, { name: "runner", execute_in_groups: [group] });
    await ok(runner.post("/lit_action", { code: HELLO }));
    expect(await balance(owner)).to.equal(997);

    const wallet = await fundedWallet();
    const td = buildTypedData("ConvertAccount", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    await ok(owner.post("/convert_to_chain_secured_account", { new_admin_wallet_address: wallet.address, typed_data: td, signature: await signEnvelope(wallet, td) }));
    // Billing moves only once the wallet accepted the account, from its own address.
    expect(await balance(runner)).to.equal(996);
    await (await stack.config.connect(wallet).acceptAccountOwnership(owner.hash)).wait();
    await stack.relayer.ctx.executor.permissions.sync();

    // The same account now pays as its admin wallet, whose customer record holds nothing yet; the
    // usage key pays from it and reads it; the old account key pays for nothing, so it reads and funds nothing.
    const admin = await walletAuth(stack, wallet, owner.hash);
    for (const who of [runner, admin]) expect(await ok(get("/billing/balance", who))).to.deep.equal({ balance_cents: 0, credit_cents: 0, balance_display: "No credits" });
    const intents = double.intents.size;
    await expectError(get("/billing/balance", owner), 403, "account_chain_secured", "old account key");
    await expectError(post("/billing/create_payment_intent", owner, { amount_cents: 500 }), 403, "account_chain_secured");
    await expectError(post("/billing/create_payment_intent", runner, { amount_cents: 500 }), 403, "owner_only");
    expect(double.intents.size, "no intent created").to.equal(intents);
    await expectError(runner.post("/lit_action", { code: HELLO }), 402, "payment_required");
    // A named CID's permission is checked first (no group lists it); inline code's needs its hash, which waits for credit.
    await expectError(runner.post("/lit_action", { ipfs_id: await computeCid(SLOW) }), 403, "not_permitted");
    await expectError(runner.post("/lit_action", { code: SLOW }), 402, "payment_required");
    const walletCustomer = double.customerOf(`wallet:${wallet.address}`)!;
    expect(walletCustomer.metadata).to.deep.equal({ vesta_payer: `wallet:${wallet.address}`, vesta_account: hex32(owner.hash) });

    // The old record keeps its credit (less the conversion, a management call): carry-over is not automatic.
    await stack.relayer.ctx.billing!.settle();
    expect(atStripe(accountPayer(owner)).credit).to.equal(996);

    expect(await fund(admin, 600)).to.include({ credited: true, credit_cents: 600 });
    await ok(runner.post("/lit_action", { code: HELLO }));
    expect(await balance(admin)).to.equal(599);
    expect(await balance(runner)).to.equal(599);
    await expectError(get("/billing/balance", owner), 403, "account_chain_secured");
  });

  it("a ConvertAccount signature converts one account: it cannot push a second account onto the same wallet (409 signature_used, nothing changed)", async function () {
    const [first, second] = [await accountClient(stack), await accountClient(stack)];
    await fund(first, 500);
    await fund(second, 700);
    const wallet = Wallet.createRandom();
    const td = buildTypedData("ConvertAccount", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    const body = { new_admin_wallet_address: wallet.address, typed_data: td, signature: await signEnvelope(wallet, td) };
    await ok(first.post("/convert_to_chain_secured_account", body));
    await expectRejected(stack, [second], () => second.post("/convert_to_chain_secured_account", body), 409, "signature_used", "new one for each account");
    expect((await stack.config.getAccount(second.hash)).managed, "still managed").to.equal(true);
    expect(await balance(second), "still pays as itself, charged nothing").to.equal(700);
  });
});
