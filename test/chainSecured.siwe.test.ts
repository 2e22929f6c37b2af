import { expect } from "chai";
import { ethers } from "hardhat";
import { Wallet, type BaseWallet } from "ethers";
import { buildSiweMessage, type SiwePurpose } from "../protocol/siwe";
import { buildTypedData } from "../protocol/eip712";
import { signEnvelope } from "../scripts/lib/chainSecured";
import { call } from "./helpers/relayer";
import { suiteStack } from "./helpers/relayerChecks";
import { deploySafeInfrastructure, safeSignTypedData } from "./helpers/safe";
import { walletAccount } from "./helpers/wallets";
import { accountClient, expectRejected, ok, step, type Client } from "./helpers/relayerWorkflow";

const CREATE = "/create_wallet_with_signature";
const CONVERT = "/convert_to_chain_secured_account";
const now = () => Math.floor(Date.now() / 1000);
const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;

/** The purpose each endpoint takes, and the other one (whose messages it must refuse). */
const ENDPOINTS: { path: string; purpose: SiwePurpose; other: SiwePurpose }[] = [
  { path: CREATE, purpose: "CreateWallet", other: "ConvertAccount" },
  { path: CONVERT, purpose: "ConvertAccount", other: "CreateWallet" },
];

/**
 * Chipotle's signed-text form of create_wallet_with_signature and convert_to_chain_secured_account
 * (`{message, signature}`, EIP-191 personal_sign over the SDK's SIWE-style text), beside spec 2's
 * EIP-712 envelope: the same checks, each error row refused with a clear 4xx and nothing changed.
 */
describe("signed requests in Chipotle's text form (personal_sign)", function () {
  this.timeout(180_000);
  const stack = suiteStack();
  const chainId = () => stack().relayer.ctx.chain.chainId;
  const admin = Wallet.createRandom();

  /** The SDK's message for `purpose`, signed by `admin` (or `over.by`), issued now unless said. */
  const text = (purpose: SiwePurpose, over: { host?: string; address?: string; chainId?: bigint | number; issuedAt?: number } = {}) =>
    buildSiweMessage(purpose, { host: over.host ?? "lit", address: over.address ?? admin.address, chainId: over.chainId ?? chainId(), issuedAt: over.issuedAt ?? now() });
  const signed = async (message: string, by: BaseWallet = admin) => ({ message, signature: await by.signMessage(message) });

  let owner: Client;
  let ownerAdmin: string;
  before(async () => {
    owner = await accountClient(stack());
    ownerAdmin = (await stack().config.getAccount(owner.hash)).adminWalletAddress;
  });

  /** POSTs `proof` to `path` (conversion: with the master key and new_admin_wallet_address). */
  const post = (path: string, proof: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    path === CONVERT
      ? call(stack(), "POST", path, { key: owner.key, body: { new_admin_wallet_address: admin.address, ...proof, ...extra } })
      : call(stack(), "POST", path, { body: { ...proof, ...extra } });

  /** Expects the request refused with status/code/words, no block mined, and the account still managed by its own admin. */
  async function refused(label: string, send: () => ReturnType<typeof call>, status: number, code: string, ...words: string[]) {
    await step(label, async () => {
      await expectRejected(stack(), [owner], send, status, code, ...words);
      const account = await stack().config.getAccount(owner.hash);
      expect([account.managed, account.adminWalletAddress]).to.deep.equal([true, ownerAdmin]);
    });
  }

  describe("accepted", function () {
    it("create_wallet_with_signature mints a wallet for the signer's own account from the SDK's exact message (host 'lit' or a browser's host)", async function () {
      for (const host of ["lit", "dashboard.example.com:8443", "[::1]:3000"]) {
        const minted = await ok(post(CREATE, await signed(text("CreateWallet", { host }))));
        expect(minted).to.have.all.keys("wallet_address", "derivation_path");
        expect(minted.derivation_path).to.match(/^0x[0-9a-f]{64}$/);
      }
    });

    it("create_wallet_with_signature with api_key_hash mints for an account the signer administers, and registration works from the wallet", async function () {
      const a = await walletAccount(stack());
      const minted = await ok(post(CREATE, await signed(text("CreateWallet", { address: a.wallet.address }), a.wallet), { api_key_hash: hex32(a.hash) }));
      await (await a.config.registerWalletDerivation(a.hash, minted.wallet_address, minted.derivation_path, "pkp", "")).wait();
      expect((await stack().config.getWallet(a.hash, minted.wallet_address)).derivationPath).to.equal(BigInt(minted.derivation_path));
    });

    it("convert_to_chain_secured_account proposes the signer; the account converts when it accepts on chain", async function () {
      const m = await accountClient(stack());
      const newAdmin = new Wallet(Wallet.createRandom().privateKey, ethers.provider);
      await (await (await ethers.getSigners())[0].sendTransaction({ to: newAdmin.address, value: ethers.parseEther("1") })).wait();
      const body = { new_admin_wallet_address: newAdmin.address, ...(await signed(text("ConvertAccount", { address: newAdmin.address }), newAdmin)) };
      expect(await ok(m.post(CONVERT, body))).to.deep.equal({ success: true, admin_wallet_address: newAdmin.address, api_key_hash: hex32(m.hash), pending_acceptance: true });
      expect((await stack().config.getAccount(m.hash)).managed).to.equal(true);
      await (await stack().config.connect(newAdmin).acceptAccountOwnership(m.hash)).wait();
      const account = await stack().config.getAccount(m.hash);
      expect([account.managed, account.adminWalletAddress]).to.deep.equal([false, newAdmin.address]);
    });
  });

  describe("Errors: the same rows as the envelope's, a clear 4xx, and nothing changes", function () {
    it("refuses a message over 1024 bytes (400)", async function () {
      for (const e of ENDPOINTS) {
        const message = text(e.purpose, { host: "h".repeat(1100) });
        await refused(e.path, async () => post(e.path, await signed(message)), 400, "invalid_signed_message", "at most 1024");
      }
    });

    it("refuses a message not in the SDK's exact form (400): extra or missing lines, CRLF, another order, a bad host, an unknown statement", async function () {
      const good = text("CreateWallet");
      const lines = good.split("\n");
      const variants: [string, string, string][] = [
        ["an extra line", `${good}\nNonce: 1`, "and nothing else"],
        ["no empty line", [lines[0], ...lines.slice(2)].join("\n"), "and nothing else"],
        ["CRLF", good.replaceAll("\n", "\r\n"), "\\n only"],
        ["lines swapped", [lines[0], "", lines[3], lines[2], lines[4]].join("\n"), 'line "Address: ..."'],
        ["a host with a space", good.replace(/^lit/, "evil site"), "host"],
        ["no host", good.replace(/^lit/, ""), "host must be"],
        ["no statement line", good.replace("lit wants you to", "lit asks you to"), 'read "<host> wants you to <statement>"'],
        ["an unknown statement", good.replace("create a new wallet for ChainSecured account.", "drain my wallet."), "statement must be one of"],
        ["a lower-case label", good.replace("Chain ID:", "chain id:"), 'line "Chain ID: ..."'],
        ["a bad checksum", good.replace(admin.address, admin.address.toLowerCase().replace(/[a-f]/, (c) => c.toUpperCase())), "checksum"],
        ["a short address", good.replace(admin.address, admin.address.slice(0, 40)), "20-byte address"],
        ["an empty message", "", "and nothing else"],
      ];
      for (const e of ENDPOINTS) {
        for (const [label, message, words] of variants) {
          const m = e.purpose === "ConvertAccount" ? message.replace("create a new wallet for ChainSecured account.", "take admin ownership of this account.") : message;
          await refused(`${e.path} ${label}`, async () => post(e.path, await signed(m)), 400, "invalid_signed_message", words);
        }
      }
    });

    it("refuses a message signed for the other endpoint (400), and one relabelled to this endpoint's statement (401)", async function () {
      for (const e of ENDPOINTS) {
        const other = text(e.other);
        const proof = await signed(other);
        await refused(`${e.path} other purpose`, () => post(e.path, proof), 400, "invalid_signed_message", "this endpoint takes");
        const relabelled = { message: text(e.purpose, { issuedAt: Number(other.split("Issued At: ")[1]) }), signature: proof.signature };
        await refused(`${e.path} relabelled`, () => post(e.path, relabelled), 401, "invalid_signature", `does not prove ${admin.address}`);
      }
    });

    it("refuses Issued At outside ±300 s, on either side, and values that are not unix seconds (400)", async function () {
      for (const e of ENDPOINTS) {
        for (const issuedAt of [now() - 400, now() + 400]) {
          await refused(`${e.path} ${issuedAt}`, async () => post(e.path, await signed(text(e.purpose, { issuedAt }))), 400, "invalid_signed_message", "Issued At must be within 300 s");
        }
        for (const value of ["-1", "1e9", "9".repeat(16), "soon", ""]) {
          const message = text(e.purpose).replace(/Issued At: \d+$/, `Issued At: ${value}`);
          await refused(`${e.path} ${value}`, async () => post(e.path, await signed(message)), 400, "invalid_signed_message", "Issued At must be unix seconds");
        }
      }
    });

    it("refuses another chain id (400), and one that is not a number", async function () {
      for (const e of ENDPOINTS) {
        await refused(e.path, async () => post(e.path, await signed(text(e.purpose, { chainId: 1 }))), 400, "invalid_signed_message", `Chain ID 1 is not this node's chain ${chainId()}`);
        const message = text(e.purpose).replace(/Chain ID: \d+/, "Chain ID: null");
        await refused(`${e.path} null`, async () => post(e.path, await signed(message)), 400, "invalid_signed_message", "Chain ID must be a decimal chain id");
      }
    });

    it("refuses a signature by another wallet than the message's Address (401)", async function () {
      for (const e of ENDPOINTS) {
        await refused(e.path, async () => post(e.path, await signed(text(e.purpose), Wallet.createRandom())), 401, "invalid_signature", `does not prove ${admin.address}`);
      }
    });

    it("refuses a signature that is not 0x-prefixed hex of whole bytes, or longer than 4096 bytes (400)", async function () {
      for (const e of ENDPOINTS) {
        for (const signature of ["0xzz", "ab".repeat(65), "0x", "", `0x${"ab".repeat(65)}0`]) {
          await refused(`${e.path} ${JSON.stringify(signature)}`, () => post(e.path, { message: text(e.purpose), signature }), 400, "invalid_signed_message", "signature must be");
        }
        await refused(`${e.path} long`, () => post(e.path, { message: text(e.purpose), signature: `0x${"ab".repeat(4097)}` }), 400, "invalid_signed_message", "at most 4096");
      }
    });

    it("refuses the other form's signature: an EIP-712 signature under the text, and a personal_sign signature under the envelope (401)", async function () {
      for (const e of ENDPOINTS) {
        const td = buildTypedData(e.purpose, { chainId: chainId(), address: admin.address, issuedAt: now() });
        const typedSignature = await signEnvelope(admin, td);
        await refused(`${e.path} typed signature`, () => post(e.path, { message: text(e.purpose), signature: typedSignature }), 401, "invalid_signature", "does not prove");
        const textSignature = (await signed(text(e.purpose))).signature;
        await refused(`${e.path} text signature`, () => post(e.path, { typed_data: td, signature: textSignature }), 401, "invalid_signature", "does not prove");
      }
    });

    it("refuses both forms at once, and neither (400)", async function () {
      for (const e of ENDPOINTS) {
        const td = buildTypedData(e.purpose, { chainId: chainId(), address: admin.address, issuedAt: now() });
        const proof = await signed(text(e.purpose));
        await refused(`${e.path} both`, () => post(e.path, { ...proof, typed_data: td }), 400, "invalid_request", "either typed_data");
        await refused(`${e.path} neither`, () => post(e.path, { signature: proof.signature }), 400, "invalid_request", "either typed_data");
        await refused(`${e.path} message not a string`, () => post(e.path, { message: 12, signature: proof.signature }), 400, "invalid_request", "message");
      }
    });

    it("conversion: refuses a message whose Address is not new_admin_wallet_address (400)", async function () {
      const proof = await signed(text("ConvertAccount"));
      const elsewhere = Wallet.createRandom().address;
      await refused(CONVERT, () => post(CONVERT, proof, { new_admin_wallet_address: elsewhere }), 400, "invalid_signed_message", `Address ${admin.address} is not new_admin_wallet_address ${elsewhere}`);
    });

    it("conversion: a signed message converts one account: the same message and signature cannot push a second account onto the wallet (409 signature_used)", async function () {
      const [first, second] = [await accountClient(stack()), await accountClient(stack())];
      const body = { new_admin_wallet_address: admin.address, ...(await signed(text("ConvertAccount"))) };
      expect(await ok(first.post(CONVERT, body))).to.include({ pending_acceptance: true });
      await expectRejected(stack(), [second, first], () => second.post(CONVERT, body), 409, "signature_used", "new one for each account");
      expect((await stack().config.getAccount(second.hash)).managed).to.equal(true);
    });

    it("mints: refuses api_key_hash of an account the signer does not administer (403)", async function () {
      await refused(CREATE, async () => post(CREATE, await signed(text("CreateWallet")), { api_key_hash: owner.hash.toString() }), 403, "not_account_admin", admin.address);
    });
  });

  describe("contract accounts (ERC-1271): a 2-of-3 Safe signs the text as a Safe message", function () {
    it("converts to the Safe with two owners' signatures over the message's EIP-191 digest; one owner's is refused (401)", async function () {
      const kit = await deploySafeInfrastructure();
      const signers = await ethers.getSigners();
      const owners = [signers[6].address, signers[7].address, signers[8].address];
      const safe = await kit.createSafe(owners, 2, String(Date.now()));
      const m = await accountClient(stack());
      const message = text("ConvertAccount", { address: safe });
      const weak = { new_admin_wallet_address: safe, message, signature: await safeSignTypedData(kit, safe, message, [owners[2]]) };
      await expectRejected(stack(), [m], () => m.post(CONVERT, weak), 401, "invalid_signature", safe);
      const strong = { new_admin_wallet_address: safe, message, signature: await safeSignTypedData(kit, safe, message, owners.slice(0, 2)) };
      expect(await ok(m.post(CONVERT, strong))).to.include({ admin_wallet_address: safe, pending_acceptance: true });
    });
  });
});
