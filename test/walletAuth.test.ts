import { expect } from "chai";
import type { Request } from "express";
import { ethers } from "hardhat";
import type { Signer } from "ethers";
import { buildTypedData, type PrimaryType } from "../relayer/eip712";
import { billingIdentity, walletAuthHeader } from "../relayer/http/walletAuth";
import { AppError } from "../relayer/errors";
import { chainSecuredHash, hashOf } from "./helpers/accountConfig";
import { deploySafeInfrastructure } from "./helpers/safe";
import { call, newAccount, startStack, type Stack } from "./helpers/relayer";

/** A request carrying only `headers`, as the billing routes will see it. */
const req = (headers: Record<string, string>) => ({ get: (name: string) => headers[name.toLowerCase()] }) as unknown as Request;

const now = () => Math.floor(Date.now() / 1000);
/** protocol-kit's TYPED_DATA_V4 (the enum lives in a transitive package). */
const TYPED_DATA_V4 = "eth_signTypedData_v4" as never;

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
    for (const bad of ["not base64 !", Buffer.from("not json").toString("base64"), Buffer.from('{"typed_data":{}}').toString("base64"), Buffer.from("[1,2]").toString("base64")]) {
      const who = await identity({ "x-wallet-auth": bad, "x-api-key": apiKey });
      expect(who).to.include({ via: "api_key", accountHash: hashOf(apiKey), isAccountKey: true });
      await rejected(identity({ "x-wallet-auth": bad }), 401, "invalid_api_key", /^a valid API key is required/);
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

  it("accepts a Safe's ERC-1271 signature (two of three owners sign the BillingAuth message)", async function () {
    const kit = await deploySafeInfrastructure();
    const owners = (await ethers.getSigners()).slice(10, 13).map((s) => s.address);
    const safe = await kit.createSafe(owners, 2, String(Date.now()));
    await kit.proposeSignExecute(safe, [{ to: await stack.config.getAddress(), data: stack.config.interface.encodeFunctionData("newChainSecuredAccount", ["safe account", ""]) }], owners.slice(0, 2));
    const td = buildTypedData("BillingAuth", { chainId: 31337, address: safe, issuedAt: now() });
    let message = (await kit.connect(safe, owners[0])).createMessage(td as never);
    for (const owner of owners.slice(0, 2)) message = await (await kit.connect(safe, owner)).signMessage(message, TYPED_DATA_V4);
    const who = await identity({ "x-wallet-auth": walletAuthHeader(td, message.encodedSignatures()) });
    expect(who).to.deep.equal({ via: "wallet", accountHash: chainSecuredHash(safe), wallet: safe });

    // one owner's signature is not the Safe's
    let lone = (await kit.connect(safe, owners[0])).createMessage(td as never);
    lone = await (await kit.connect(safe, owners[0])).signMessage(lone, TYPED_DATA_V4);
    await rejected(identity({ "x-wallet-auth": walletAuthHeader(td, lone.encodedSignatures()) }), 401, "invalid_wallet_auth", /does not prove/);
  });
});
