import { expect } from "chai";
import pino from "pino";
import { Wallet } from "ethers";
import { loadConfig } from "../relayer/config";
import { startRelayer } from "../relayer/server";
import { buildTypedData } from "../protocol/eip712";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { suiteStack } from "./helpers/relayerChecks";
import { accountClient, addUsageKey, expectError, ok } from "./helpers/relayerWorkflow";
import { fundedWallet } from "./helpers/wallets";

const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const BASE = { VESTA_RPC_URL: "http://127.0.0.1:8545", VESTA_ACCOUNT_CONFIG_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3", VESTA_PAYER_KEYS: KEY };
const STRIPE = { STRIPE_SECRET_KEY: "sk_live_1", STRIPE_PUBLISHABLE_KEY: "pk_live_1", VESTA_GAS_TOKEN_PRICE_CENTS: "300000" };

/** The problem lines of the one error loadConfig throws for `env`. */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    const lines = (e as Error).message.split("\n");
    expect(lines[0]).to.match(/^bad relayer environment \(VESTA_MODE=/);
    return lines.slice(1).map((l) => l.replace(/^\s*- /, ""));
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe("VESTA_MODE: production unless said otherwise, and production fails closed", function () {
  it("a configuration that names no mode is production: without payment settings or a TEE it refuses to boot, naming every problem in one message", function () {
    let message = "";
    try {
      loadConfig(BASE);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).to.include("VESTA_MODE=production, the default");
    const lines = problems(BASE);
    expect(lines.map((l) => l.split(":")[0])).to.deep.equal(["VESTA_KEY_PROVIDER=dstack", "VESTA_GAS_TOKEN_PRICE_CENTS", "STRIPE_SECRET_KEY", "STRIPE_PUBLISHABLE_KEY"]);
    expect(lines[0]).to.include("no /var/run/dstack.sock");
    expect(lines[2]).to.include("required with VESTA_MODE=production");
  });

  it("production refuses local billing, free credit, the local key provider, development evidence and private fetches, all in one message", function () {
    const lines = problems({
      ...BASE,
      ...STRIPE,
      VESTA_MODE: "production",
      VESTA_BILLING: "local",
      VESTA_FREE_CREDIT_CENTS: "500",
      VESTA_KEY_PROVIDER: "local",
      VESTA_ATTESTATION_SOURCE: "development",
      VESTA_ACTION_FETCH_PRIVATE: "true",
    });
    expect(lines).to.have.length(5);
    for (const [i, needle] of ["VESTA_KEY_PROVIDER=local", "VESTA_ATTESTATION_SOURCE=development", "VESTA_ACTION_FETCH_PRIVATE=true", "VESTA_BILLING=local", "VESTA_FREE_CREDIT_CENTS"].entries()) {
      expect(lines[i]).to.include(needle).and.to.include("VESTA_MODE=development");
    }
    expect(problems({ ...BASE, ...STRIPE, VESTA_DSTACK_ENDPOINT: "/run/dstack.sock", VESTA_BILLING: "off" })).to.deep.equal([
      "VESTA_BILLING=off: billing off (nothing charged) exists only with VESTA_MODE=development; production bills through Stripe",
    ]);
    expect(problems({ ...BASE, ...STRIPE, VESTA_DSTACK_ENDPOINT: "/run/dstack.sock", VESTA_GAS_TOKEN_PRICE_CENTS: "0" })[0]).to.include("must be above 0 in production");
    expect(problems({ ...BASE, ...STRIPE, VESTA_DSTACK_ENDPOINT: "/run/dstack.sock", VESTA_IMPORT_CDN_URL: "http://127.0.0.1:8080/npm/" })).to.deep.equal([
      "VESTA_IMPORT_CDN_URL: production fetches modules over https only",
    ]);
  });

  it("a complete production configuration boots: Stripe billing with a gas price, keys and evidence from dstack, no free credit", function () {
    const c = loadConfig({ ...BASE, ...STRIPE, VESTA_DSTACK_ENDPOINT: "/run/dstack.sock" });
    expect(c).to.deep.include({ mode: "production", keyProvider: "dstack", fetchAllowPrivate: false, trustProxy: false });
    expect(c.attestation.source).to.equal("dstack");
    expect(c.billing).to.deep.include({ mode: "stripe", freeCreditCents: 0, gas: { tokenPriceCents: 300_000, marginPercent: 20 } });
  });

  it("development is said explicitly: local billing with free credit, the local key provider, development evidence", function () {
    const c = loadConfig({ ...BASE, VESTA_MODE: "development" });
    expect(c).to.deep.include({ mode: "development", keyProvider: "local" });
    expect(c.attestation.source).to.equal("development");
    expect(c.billing).to.deep.include({ mode: "local", freeCreditCents: 1000, freeCreditCapCents: 10_000 });
  });

  it("takes only development or production, and a trusted-proxy setting that names proxies (never 'true')", function () {
    expect(problems({ ...BASE, VESTA_MODE: "staging" })[0]).to.equal("VESTA_MODE: VESTA_MODE must be development or production");
    const dev = { ...BASE, VESTA_MODE: "development" };
    expect(problems({ ...dev, VESTA_TRUST_PROXY: "true" })[0]).to.include("would believe any X-Forwarded-For");
    expect(problems({ ...dev, VESTA_TRUST_PROXY: "10.0.0.0/8, not-an-ip" })[0]).to.include("not-an-ip");
    expect(loadConfig({ ...dev, VESTA_TRUST_PROXY: "10.0.0.0/8, loopback" }).trustProxy).to.equal("10.0.0.0/8, loopback");
    expect(loadConfig({ ...dev, VESTA_TRUST_PROXY: "1" }).trustProxy).to.equal(1);
  });
});

describe("free credit: development only, the owner only, capped", function () {
  this.timeout(120_000);
  const stack = suiteStack({ env: { VESTA_FREE_CREDIT_CENTS: "100", VESTA_FREE_CREDIT_CAP_CENTS: "1000" } });
  const balance = async (c: { get: (p: string) => Promise<{ status: number; body: any }> }) => (await ok(c.get("/billing/balance"))).credit_cents as number;

  it("a usage key, even one with no scopes, cannot add free credit (403 owner_only, nothing added)", async function () {
    const owner = await accountClient(stack());
    const usage = await addUsageKey(stack(), owner, { name: "no scopes" });
    await expectError(usage.post("/billing/free_credit", { amount_cents: 500 }), 403, "owner_only", "a usage key cannot");
    expect(await balance(owner)).to.equal(99); // 100, less the usage key's write
  });

  it("the old account key of a converted account adds nothing to its new admin wallet's balance (403 account_chain_secured)", async function () {
    const owner = await accountClient(stack());
    const wallet = await fundedWallet();
    const td = buildTypedData("ConvertAccount", { chainId: stack().relayer.ctx.chain.chainId, address: wallet.address, issuedAt: Math.floor(Date.now() / 1000) });
    await ok(owner.post("/convert_to_chain_secured_account", { new_admin_wallet_address: wallet.address, typed_data: td, signature: await signEnvelope(wallet, td) }));
    await (await stack().config.connect(wallet).acceptAccountOwnership(owner.hash)).wait(); // the conversion completes
    await stack().relayer.ctx.executor.permissions.sync();
    await expectError(owner.post("/billing/free_credit", { amount_cents: 500 }), 403, "account_chain_secured");
    await expectError(owner.get("/billing/balance"), 403, "account_chain_secured");
  });

  it("a top-up may not raise the balance above VESTA_FREE_CREDIT_CAP_CENTS (409, nothing added); racing top-ups cannot pass it together", async function () {
    const owner = await accountClient(stack());
    await expectError(owner.post("/billing/free_credit", { amount_cents: 901 }), 409, "free_credit_capped", "$10.00");
    expect(await balance(owner)).to.equal(100);
    const replies = await Promise.all(Array.from({ length: 10 }, () => owner.post("/billing/free_credit", { amount_cents: 300 })));
    expect(replies.map((r) => r.status).sort()).to.deep.equal([200, 200, 200, 409, 409, 409, 409, 409, 409, 409]);
    expect(await balance(owner)).to.equal(1000);
  });

  it("a relayer not in development mode gives no free credit, even with local billing (404 free_credit_unavailable)", async function () {
    const relayer = await startRelayer({ ...stack().relayerConfig, port: 0, mode: "production" }, pino({ level: "silent" }));
    try {
      const s = { ...stack(), api: `${relayer.url}/core/v1` };
      const owner = await accountClient(s);
      await expectError(owner.post("/billing/free_credit", { amount_cents: 5 }), 404, "free_credit_unavailable", "VESTA_MODE=development");
      expect(await balance(owner)).to.equal(100);
    } finally {
      await relayer.close();
    }
  });
});
