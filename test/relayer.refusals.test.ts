import { expect } from "chai";
import { costOf, suiteStack } from "./helpers/relayerChecks";
import { accountClient, addUsageKey, expectError, ok } from "./helpers/relayerWorkflow";

/** A refusal must not cost us more than it costs the caller: no simulation, fee read or key derivation for a request that cannot pay or is not permitted. */
describe("refusals are cheap for the service (red-team finding 6)", function () {
  this.timeout(120_000);
  // every new account starts with no credit: each write is refused for payment
  const stack = suiteStack({ env: { VESTA_FREE_CREDIT_CENTS: "0", VESTA_GAS_TOKEN_PRICE_CENTS: "300000" } });

  it("answers 402 to a write of an account that cannot pay without simulating it or reading fees", async function () {
    const owner = await accountClient(stack());
    await stack().relayer.ctx.executor.permissions.sync();
    await owner.get("/list_groups"); // the key's resolution is cached, as for any caller that retries
    const { rpc } = await costOf(stack(), () => expectError(owner.post("/add_group", { group_name: "g" }), 402, "payment_required"));
    expect(rpc.filter((m) => ["eth_estimateGas", "eth_gasPrice", "eth_maxPriorityFeePerGas", "eth_getBlockByNumber", "eth_sendRawTransaction"].includes(m))).to.deep.equal([]);
  });

  it("answers 402 to create_wallet of an account that cannot pay without deriving a key", async function () {
    const owner = await accountClient(stack());
    const { derived, rpc } = await costOf(stack(), () => expectError(owner.post("/create_wallet", {}), 402, "payment_required"));
    expect(derived).to.deep.equal([]);
    expect(rpc).to.not.include("eth_estimateGas");
  });

  it("answers 403 to create_wallet by a usage key without pkp:create before deriving a key", async function () {
    const owner = await accountClient(stack());
    await ok(owner.post("/billing/free_credit", { amount_cents: 1000 }));
    const usage = await addUsageKey(stack(), owner, { name: "no pkp:create" });
    const { derived } = await costOf(stack(), () => expectError(usage.post("/create_wallet", {}), 403, "missing_scope", "pkp:create"));
    expect(derived).to.deep.equal([]);
    const allowed = await addUsageKey(stack(), owner, { name: "pkp:create", can_create_pkps: true });
    const { derived: again } = await costOf(stack(), async () => ok(allowed.post("/create_wallet", {})));
    expect(again).to.have.length(1);
  });
});
