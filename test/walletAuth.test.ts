import { expect } from "chai";
import type { Request } from "express";
import { ethers } from "hardhat";
import type { Signer } from "ethers";
import { buildTypedData, type PrimaryType } from "../protocol/eip712";
import { billingIdentity, walletAuthHeader } from "../relayer/http/walletAuth";
import { AppError } from "../protocol/errors";
import { chainSecuredHash, hashOf } from "./helpers/accountConfig";
import { deploySafeInfrastructure, safeSignTypedData } from "./helpers/safe";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";
import { expectError } from "./helpers/relayerChecks";
import { DEFAULT_ERC1271, SignedRequestError } from "../relayer/signed";
import { isValidContractSignature } from "../relayer/signed/erc1271";
import { startRelayer } from "../relayer/server";
import pino from "pino";

/** A request carrying only `headers`, as the billing routes will see it. */
const req = (headers: Record<string, string>) => ({ get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;

const now = () => Math.floor(Date.now() / 1000);

async function signedHeader(signer: Signer, primaryType: PrimaryType = "BillingAuth", apiKeyHash?: bigint, issuedAt = now()) {
  const td = buildTypedData(primaryType, { chainId: 31337, address: await signer.getAddress(), issuedAt });
  const { EIP712Domain: _d, ...types } = td.types;
  return walletAuthHeader(td, await signer.signTypedData(td.domain, types, td.message), apiKeyHash);
}

async function rejected(p: Promise<unknown>, status: number, code: string, why: RegExp) {
  const err = await p.then(
    () => expect.fail("accepted"),
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(AppError);
  expect([(err as AppError).status, (err as AppError).code]).to.deep.equal([status, code]);
  expect((err as AppError).message).to.match(why);
}

describe("X-Wallet-Auth (billing identity)", function () {
  this.timeout(120_000);
  let stack: Stack;
  let wallet: Signer;
  let stranger: Signer;
  before(async () => {
    stack = await startStack();
    [, , , , , , wallet, stranger] = await ethers.getSigners();
    await (await stack.config.connect(wallet).newChainSecuredAccount("billing wallet", "")).wait();
  });
  after(async () => stack?.stop());

  const identity = (headers: Record<string, string>) => billingIdentity(stack.relayer.ctx, req(headers));

  it("identifies the signing wallet's own ChainSecured account", async function () {
    const who = await identity({ "x-wallet-auth": await signedHeader(wallet) });
    expect(who).to.deep.equal({ via: "wallet", accountHash: chainSecuredHash(await wallet.getAddress()), wallet: await wallet.getAddress() });
  });

  it("identifies a converted account its admin names with api_key_hash, and nothing it does not administer", async function () {
    const { apiKey } = await newAccount(stack);
    const account = hashOf(apiKey);
    const admin = stranger;
    const td = buildTypedData("ConvertAccount", { chainId: 31337, address: await admin.getAddress(), issuedAt: now() });
    const { EIP712Domain: _d, ...types } = td.types;
    const conv = await call(stack, "POST", "/convert_to_chain_secured_account", {
      key: apiKey,
      body: { new_admin_wallet_address: await admin.getAddress(), typed_data: td, signature: await admin.signTypedData(td.domain, types, td.message) },
    });
    expect(conv.status, JSON.stringify(conv.body)).to.equal(200);
    await (await stack.config.connect(admin).acceptAccountOwnership(account)).wait(); // the new admin accepts from its own address
    await stack.relayer.ctx.executor.permissions.sync();
    expect(await identity({ "x-wallet-auth": await signedHeader(admin, "BillingAuth", account) })).to.deep.equal({
      via: "wallet",
      accountHash: account,
      wallet: await admin.getAddress(),
    });
    // the same wallet naming an account it does not administer, or its own (absent) account
    await rejected(identity({ "x-wallet-auth": await signedHeader(admin, "BillingAuth", chainSecuredHash(await wallet.getAddress())) }), 401, "invalid_wallet_auth", /not the admin/);
    await rejected(identity({ "x-wallet-auth": await signedHeader(admin) }), 401, "invalid_wallet_auth", /not the admin/);
  });

  it("answers 401 to a well-formed header whose signature does not hold", async function () {
    const td = buildTypedData("BillingAuth", { chainId: 31337, address: await wallet.getAddress(), issuedAt: now() });
    const { EIP712Domain: _d, ...types } = td.types;
    const forged = walletAuthHeader(td, await stranger.signTypedData(td.domain, types, td.message));
    await rejected(identity({ "x-wallet-auth": forged }), 401, "invalid_wallet_auth", /does not prove/);
    await rejected(identity({ "x-wallet-auth": await signedHeader(wallet, "CreateWallet") }), 401, "invalid_wallet_auth", /primaryType BillingAuth/);
    await rejected(identity({ "x-wallet-auth": await signedHeader(wallet, "BillingAuth", undefined, now() - 301) }), 401, "invalid_wallet_auth", /within 300 s/);
  });

  it("falls back to API-key auth when the header is not well-formed", async function () {
    const { apiKey } = await newAccount(stack);
    const valid = await signedHeader(wallet);
    const envelope = JSON.parse(Buffer.from(valid, "base64").toString("utf8"));
    const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64");
    // A valid envelope, padded with JSON whitespace: within 16 KiB it is read (below), past it not.
    const padded = (bytes: number) => {
      const text = JSON.stringify(envelope);
      return b64(text.slice(0, -1) + " ".repeat(bytes - text.length) + "}");
    };
    const over = padded(12 * 1024 + 3); // 16,388 characters of base64
    const notWellFormed: [string, string][] = [
      ["not base64", "not base64 !"],
      ["a valid envelope after a character base64 does not have", `!${valid}`],
      ["a valid envelope before a character base64 does not have", `${valid}!`],
      ["longer than 16 KiB", over],
      ["not JSON", b64("not json")],
      ["JSON null", b64("null")],
      ["a JSON string", b64('"typed_data signature"')],
      ["a JSON array", b64("[1,2]")],
      ["no signature", b64({ typed_data: envelope.typed_data })],
      ["no typed_data", b64({ signature: envelope.signature })],
      ["another field", b64({ ...envelope, account: "0x1" })],
      ["a lone surrogate in a string (nothing to hash or verify)", b64({ ...envelope, signature: `${envelope.signature}\ud800` })],
      ["nested past the JSON depth limit", b64({ ...envelope, typed_data: { ...envelope.typed_data, message: { ...envelope.typed_data.message, deep: JSON.parse("[".repeat(70) + "]".repeat(70)) } } })],
    ];
    expect(over.length).to.be.greaterThan(16 * 1024);
    for (const [what, bad] of notWellFormed) {
      const who = await identity({ "x-wallet-auth": bad, "x-api-key": apiKey });
      expect(who, what).to.include({ via: "api_key", accountHash: hashOf(apiKey), isAccountKey: true });
      await rejected(identity({ "x-wallet-auth": bad }), 401, "invalid_api_key", /^a valid API key is required/);
    }
    // the same envelope within the size limit, or wrapped in whitespace, is read as the header
    const within = padded(12 * 1024); // exactly 16 KiB of base64
    expect(within.length).to.equal(16 * 1024);
    for (const header of [within, `  ${valid} `]) {
      expect(await identity({ "x-wallet-auth": header, "x-api-key": apiKey })).to.include({ via: "wallet", wallet: await wallet.getAddress() });
    }
  });

  it("answers 401 to an api_key_hash that is not a uint256", async function () {
    const envelope = JSON.parse(Buffer.from(await signedHeader(wallet), "base64").toString("utf8"));
    const why = /^X-Wallet-Auth: api_key_hash must be a uint256 \(decimal or 0x hex\)$/;
    const max = (1n << 256n) - 1n;
    for (const h of ["0x", "0xzz", `0x${"1".repeat(65)}`, "1".repeat(79), "9".repeat(78), (max + 1n).toString(), "-1", "1e3", " 1", "1 ", 1.5, true, null, ["1"], { h: 1 }]) {
      const header = Buffer.from(JSON.stringify({ ...envelope, api_key_hash: h })).toString("base64");
      await rejected(identity({ "x-wallet-auth": header }), 401, "invalid_wallet_auth", why);
    }
    // the widest forms it takes: 64 hex digits, 2^256 - 1 in 78 decimal digits (naming accounts the wallet does not administer)
    for (const h of [`0x${"f".repeat(64)}`, max.toString(), 7]) {
      const header = Buffer.from(JSON.stringify({ ...envelope, api_key_hash: h })).toString("base64");
      await rejected(identity({ "x-wallet-auth": header }), 401, "invalid_wallet_auth", /is not the admin wallet of account/);
    }
  });

  it("never takes a bare account hash as a credential", async function () {
    const hash = chainSecuredHash(await wallet.getAddress());
    // as an API key (its own hash is no account), as a header with no signature, as api_key_hash alone
    await rejected(identity({ "x-api-key": `0x${hash.toString(16)}` }), 401, "invalid_api_key", /^this API key is unknown, revoked or expired$/);
    await rejected(identity({ "x-api-key": hash.toString() }), 401, "invalid_api_key", /^this API key is unknown, revoked or expired$/);
    const noSig = Buffer.from(JSON.stringify({ typed_data: null, signature: "0x", api_key_hash: `0x${hash.toString(16)}` })).toString("base64");
    await rejected(identity({ "x-wallet-auth": noSig }), 401, "invalid_wallet_auth", /^X-Wallet-Auth: typed_data must have exactly types, domain, primaryType and message$/);
  });

  it("accepts a Safe's ERC-1271 signature (2 of 3, and 5 of 7 owners, under the default gas cap) and refuses one owner's alone", async function () {
    const kit = await deploySafeInfrastructure();
    const signers = (await ethers.getSigners()).map((s) => s.address);
    for (const [threshold, owners] of [[2, signers.slice(10, 13)], [5, signers.slice(10, 17)]] as const) {
      const safe = await kit.createSafe([...owners], threshold, String(Date.now()));
      await kit.proposeSignExecute(safe, [{ to: await stack.config.getAddress(), data: stack.config.interface.encodeFunctionData("newChainSecuredAccount", ["safe account", ""]) }], owners.slice(0, threshold));
      const td = buildTypedData("BillingAuth", { chainId: 31337, address: safe, issuedAt: now() });
      const who = await identity({ "x-wallet-auth": walletAuthHeader(td, await safeSignTypedData(kit, safe, td, owners.slice(0, threshold))) });
      expect(who, `${threshold} of ${owners.length}`).to.deep.equal({ via: "wallet", accountHash: chainSecuredHash(safe), wallet: safe });
      const lone = await safeSignTypedData(kit, safe, td, owners.slice(0, 1)); // one owner's signature is not the Safe's
      await rejected(identity({ "x-wallet-auth": walletAuthHeader(td, lone) }), 401, "invalid_wallet_auth", /does not prove/);
    }
  });

  describe("ERC-1271 calls are bounded (a contract the caller chose)", function () {
    let burner: string;
    before(async () => {
      burner = await (await (await ethers.getContractFactory("GasBurningSigner")).deploy()).getAddress();
      // The burner holds a ChainSecured account, so an accepted signature would identify it.
      await ethers.provider.send("hardhat_impersonateAccount", [burner]);
      await ethers.provider.send("hardhat_setBalance", [burner, ethers.toQuantity(ethers.parseEther("1"))]);
      await (await stack.config.connect(await ethers.getSigner(burner)).newChainSecuredAccount("burner", "")).wait();
    });
    const burnerHeader = () => walletAuthHeader(buildTypedData("BillingAuth", { chainId: 31337, address: burner, issuedAt: now() }), "0x00");

    /** Records every eth_call the relayer makes while `fn` runs (the request and how long it took). */
    async function watchCalls(fn: () => Promise<unknown>, delayMs = 0) {
      const provider = stack.relayer.ctx.chain.provider;
      const original = provider.call.bind(provider);
      const calls: { to: string; gasLimit?: bigint }[] = [];
      provider.call = async (tx) => {
        calls.push({ to: String(tx.to), gasLimit: tx.gasLimit === undefined || tx.gasLimit === null ? undefined : BigInt(tx.gasLimit) });
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        return original(tx);
      };
      try {
        await fn();
      } finally {
        provider.call = original;
      }
      return calls;
    }

    it("an RPC node that fails during isValidSignature is no verdict: the node's error goes on (503 at the edge), never 401 invalid_wallet_auth", async function () {
      const provider = stack.relayer.ctx.chain.provider;
      const original = provider.call.bind(provider);
      const outage = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), { code: "ECONNREFUSED" });
      provider.call = async () => Promise.reject(outage);
      try {
        const err = await identity({ "x-wallet-auth": burnerHeader() }).then(
          () => expect.fail("accepted"),
          (e: unknown) => e,
        );
        expect(err).to.equal(outage);
      } finally {
        provider.call = original;
      }
    });

    it("caps the gas of isValidSignature: a contract that burns all it is given is refused, having burnt at most the cap", async function () {
      const calls = await watchCalls(() => rejected(identity({ "x-wallet-auth": burnerHeader() }), 401, "invalid_wallet_auth", /does not prove/));
      expect(calls).to.deep.equal([{ to: burner, gasLimit: BigInt(DEFAULT_ERC1271.gasLimit) }]);
    });

    it("times out an isValidSignature call that does not answer (401, the request does not wait for the RPC)", async function () {
      const bounds = stack.relayer.ctx.config.erc1271;
      stack.relayer.ctx.config.erc1271 = { ...bounds, timeoutMs: 200 };
      try {
        const t0 = Date.now();
        await watchCalls(() => rejected(identity({ "x-wallet-auth": burnerHeader() }), 401, "invalid_wallet_auth", /did not answer isValidSignature within 200 ms/), 2_000);
        expect(Date.now() - t0, "answered at the timeout, not after the stalled call").to.be.lessThan(1_500);
      } finally {
        stack.relayer.ctx.config.erc1271 = bounds;
      }
    });

    it("makes no contract call for a signature that does not recover to an address without code (an EOA)", async function () {
      const td = buildTypedData("BillingAuth", { chainId: 31337, address: await wallet.getAddress(), issuedAt: now() });
      const { EIP712Domain: _d, ...types } = td.types;
      for (const signature of [await stranger.signTypedData(td.domain, types, td.message), "0x00", `0x${"ab".repeat(200)}`]) {
        const calls = await watchCalls(() => rejected(identity({ "x-wallet-auth": walletAuthHeader(td, signature) }), 401, "invalid_wallet_auth", /does not prove/));
        expect(calls, signature.slice(0, 10)).to.deep.equal([]);
      }
    });

    it("isValidContractSignature: a refusal, a revert and no code are each exactly false, and its timer is cleared when it answers", async function () {
      const provider = stack.relayer.ctx.chain.provider;
      const digest = `0x${"11".repeat(32)}`;
      const timeoutMs = 4_321; // tells its timer from any other
      const { setTimeout: realSet, clearTimeout: realClear } = globalThis;
      const made: unknown[] = [];
      const cleared: unknown[] = [];
      Object.assign(globalThis, {
        setTimeout: (fn: () => void, ms?: number) => {
          const t = realSet(fn, ms);
          if (ms === timeoutMs) made.push(t);
          return t;
        },
        clearTimeout: (t: NodeJS.Timeout) => (cleared.push(t), realClear(t)),
      });
      let answers: unknown[];
      try {
        answers = [
          await isValidContractSignature(provider, burner, digest, "0x00", { gasLimit: DEFAULT_ERC1271.gasLimit, timeoutMs }), // answers bytes4(0)
          await isValidContractSignature(provider, await stack.config.getAddress(), digest, "0x00", { gasLimit: DEFAULT_ERC1271.gasLimit, timeoutMs }), // no such function: the call reverts
          await isValidContractSignature(provider, await wallet.getAddress(), digest, "0x00", { gasLimit: DEFAULT_ERC1271.gasLimit, timeoutMs }), // no code
        ];
      } finally {
        Object.assign(globalThis, { setTimeout: realSet, clearTimeout: realClear });
      }
      expect(answers).to.deep.equal([false, false, false]);
      expect(made).to.have.length(3);
      expect(made.filter((t) => cleared.includes(t))).to.deep.equal(made);
    });

    it("isValidContractSignature: a call that does not answer in time is a 401 invalid_signature", async function () {
      const provider = stack.relayer.ctx.chain.provider;
      let err: unknown;
      await watchCalls(async () => {
        err = await isValidContractSignature(provider, burner, `0x${"11".repeat(32)}`, "0x00", { gasLimit: DEFAULT_ERC1271.gasLimit, timeoutMs: 100 }).then(
          (v) => expect.fail(`answered ${v}`),
          (e: unknown) => e,
        );
      }, 1_000);
      expect(err).to.be.instanceOf(SignedRequestError);
      const { status, code, message } = err as SignedRequestError;
      expect({ status, code, message }).to.deep.equal({ status: 401, code: "invalid_signature", message: `the contract at ${burner} did not answer isValidSignature within 100 ms` });
    });

    it("refuses a signature larger than 4096 bytes before any call", async function () {
      const td = buildTypedData("BillingAuth", { chainId: 31337, address: burner, issuedAt: now() });
      const calls = await watchCalls(() => rejected(identity({ "x-wallet-auth": walletAuthHeader(td, "0x" + "ab".repeat(4097)) }), 401, "invalid_wallet_auth", /at most 4096/));
      expect(calls).to.deep.equal([]);
    });
  });

  it("caches a verified BillingAuth for its validity window: the same Safe header checked again makes no ERC-1271 call", async function () {
    const kit = await deploySafeInfrastructure();
    const owners = (await ethers.getSigners()).slice(10, 13).map((s) => s.address);
    const safe = await kit.createSafe(owners, 2, String(Date.now()));
    await kit.proposeSignExecute(safe, [{ to: await stack.config.getAddress(), data: stack.config.interface.encodeFunctionData("newChainSecuredAccount", ["cached", ""]) }], owners.slice(0, 2));
    const td = buildTypedData("BillingAuth", { chainId: 31337, address: safe, issuedAt: now() });
    const header = walletAuthHeader(td, await safeSignTypedData(kit, safe, td, owners.slice(0, 2)));
    const provider = stack.relayer.ctx.chain.provider;
    const original = provider.call.bind(provider);
    let toSafe = 0;
    provider.call = async (tx) => ((toSafe += String(tx.to).toLowerCase() === safe.toLowerCase() ? 1 : 0), original(tx));
    try {
      for (let i = 0; i < 5; i++) expect(await identity({ "x-wallet-auth": header })).to.include({ wallet: safe });
    } finally {
      provider.call = original;
    }
    expect(toSafe, "isValidSignature calls").to.equal(1);
  });

  it("rate-limits every signature-checking route per client address, sharing one budget; API-key billing calls are not counted", async function () {
    const relayer = await startRelayer({ ...stack.relayerConfig, port: 0, signatureRateLimitPerMinute: 3 }, pino({ level: "silent" }));
    try {
      const s = { ...stack, api: `${relayer.url}/core/v1` };
      const { apiKey } = await newAccount(stack);
      for (let i = 0; i < 3; i++) {
        const r = await call(s, "GET", "/billing/balance", { headers: { "x-wallet-auth": await signedHeader(wallet) } });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
      }
      expectError(await call(s, "GET", "/billing/balance", { headers: { "x-wallet-auth": await signedHeader(wallet) } }), 429, "rate_limited", "signed requests");
      const td = buildTypedData("CreateWallet", { chainId: 31337, address: await wallet.getAddress(), issuedAt: now() });
      const { EIP712Domain: _d, ...types } = td.types;
      const signature = await wallet.signTypedData(td.domain, types, td.message);
      for (const path of ["/create_wallet_with_signature", "/add_usage_api_key_with_signature"]) {
        expectError(await call(s, "POST", path, { body: { typed_data: td, signature } }), 429, "rate_limited");
      }
      expectError(await call(s, "POST", "/convert_to_chain_secured_account", { key: apiKey, body: { new_admin_wallet_address: await wallet.getAddress(), typed_data: td, signature } }), 429, "rate_limited");
      expect((await call(s, "GET", "/billing/balance", { key: apiKey })).status, "an API-key billing call").to.equal(200);
    } finally {
      await relayer.close();
    }
  });
});
