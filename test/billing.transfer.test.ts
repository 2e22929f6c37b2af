import { expect } from "chai";
import { ethers } from "hardhat";
import { Wallet, type BaseWallet, type Contract } from "ethers";
import { buildTypedData } from "../protocol/eip712";
import { walletAuthHeader } from "../relayer/http/walletAuth";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { computeCid } from "../executor/cid";
import { call, startStack, type Stack } from "./helpers/relayer";
import { accountClient, addGroup, addUsageKey, expectError, ok } from "./helpers/relayerWorkflow";
import { startStripeDouble, type StripeDouble } from "./helpers/stripeDouble";

const HELLO = `async function main() { return "hello"; }`;

/**
 * Issue 16, finding 1 (billing side): billing charges an unmanaged account to its admin wallet's
 * customer record, so the admin must be a wallet that accepted the account. The contract moves
 * ownership in two steps (transferAccountOwnership proposes, the new admin accepts from its own
 * address); billing reads only the admin the contract holds (billing/charges.ts payerOf), never a
 * proposed one. This test turns green with the contract's two-step transfer.
 */
describe("billing follows only an admin wallet that accepted the account (Stripe mode)", function () {
  this.timeout(180_000);
  let double: StripeDouble;
  let stack: Stack;
  before(async () => {
    double = await startStripeDouble();
    stack = await startStack({ env: { ...double.env(), VESTA_BILLING_SETTLE_MS: "3600000" } });
  });
  after(async () => {
    await stack?.stop();
    await double?.close();
  });

  const walletAuth = async (wallet: BaseWallet, account?: bigint) => {
    const td = buildTypedData("BillingAuth", { chainId: stack.relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    return { "x-wallet-auth": walletAuthHeader(td, await signEnvelope(wallet, td), account) };
  };
  const funded = async () => {
    const w = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
    const [funder] = await ethers.getSigners();
    await (await funder.sendTransaction({ to: w.address, value: ethers.parseEther("1") })).wait();
    return w;
  };

  it("an account proposed to a victim wallet is not charged to the victim, and its usage key does not read the victim's balance", async function () {
    // The victim: a wallet-owned account with $10 of credit in its wallet's customer record.
    const victim = await funded();
    await (await stack.config.connect(victim).newChainSecuredAccount("victim", "")).wait();
    const victimAuth = await walletAuth(victim);
    const intent = (await ok(call(stack, "POST", "/billing/create_payment_intent", { headers: victimAuth, body: { amount_cents: 1000 } }))).payment_intent_id;
    double.succeed(intent);
    await ok(call(stack, "POST", "/billing/confirm_payment", { headers: victimAuth, body: { payment_intent_id: intent } }));

    // The attacker: an account with a usage key that runs an action, converted to the attacker's wallet.
    const owner = await accountClient(stack);
    const paid = (await ok(owner.post("/billing/create_payment_intent", { amount_cents: 500 }))).payment_intent_id;
    double.succeed(paid);
    await ok(owner.post("/billing/confirm_payment", { payment_intent_id: paid })); // the attacker's account pays for its own writes
    const group = await addGroup(owner, "run", [], [await computeCid(HELLO)]);
    const runner = await addUsageKey(stack, owner, { name: "runner", execute_in_groups: [group] });
    const attacker = await funded();
    const td = buildTypedData("ConvertAccount", { chainId: stack.relayer.ctx.chain.chainId, address: attacker.address, issuedAt: Math.floor(Date.now() / 1000) });
    await ok(owner.post("/convert_to_chain_secured_account", { new_admin_wallet_address: attacker.address, typed_data: td, signature: await signEnvelope(attacker, td) }));
    await (await stack.config.connect(attacker).acceptAccountOwnership(owner.hash)).wait(); // the conversion completes when the attacker accepts

    // The attacker hands the account to the victim, who never accepts.
    const transfer = (stack.config.connect(attacker) as unknown as Contract).getFunction("transferAccountOwnership");
    await (await transfer(owner.hash, victim.address)).wait();
    await new Promise((r) => setTimeout(r, 300)); // past the relayer's event poll

    const victimBalance = async () => (await ok(call(stack, "GET", "/billing/balance", { headers: await walletAuth(victim) }))).credit_cents;
    expect(await victimBalance()).to.equal(1000);
    expect((await ok(runner.get("/billing/balance"))).credit_cents, "the usage key reads the attacker's record, not the victim's").to.equal(0);
    await expectError(runner.post("/lit_action", { code: HELLO }), 402, "payment_required", "$0.00");
    expect(await victimBalance(), "the victim paid nothing").to.equal(1000);
    await stack.relayer.ctx.billing!.settle();
    const customer = double.customerOf(`wallet:${victim.address}`)!;
    expect(double.transactionsOf(customer.id).filter((t) => t.amount > 0), "no debit at Stripe").to.have.length(0);
  });
});
