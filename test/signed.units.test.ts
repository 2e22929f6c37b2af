/**
 * relayer/signed, function by function: each refusal's exact status, code and message, each
 * boundary on both sides, both proof forms through verifySigned. Written against the mutants
 * `npm run mutate -- signed` left alive (README, "Mutation testing").
 */
import { expect } from "chai";
import { TypedDataEncoder, Wallet } from "ethers";
import { buildTypedData, DEFAULT_DOMAIN_NAME, PRIMARY_TYPES, STRUCT_FIELDS, type PrimaryType, type TypedData } from "../protocol/eip712";
import { buildSiweMessage, type SiwePurpose } from "../protocol/siwe";
import { recoverSigner } from "../protocol/ecdsa";
import { SignedRequestError, verifySigned, type SignedProof } from "../relayer/signed";
import { isValidContractSignature } from "../relayer/signed/erc1271";
import type { Provider } from "ethers";

const CHAIN_ID = 31337n;
const NOW = 1_800_000_000;
const signer = new Wallet("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba");

const expectation = (primaryType: PrimaryType, over: { domainName?: string; nowSeconds?: number } = {}) => ({
  primaryType,
  domainName: over.domainName ?? DEFAULT_DOMAIN_NAME,
  chainId: CHAIN_ID,
  nowSeconds: over.nowSeconds ?? NOW,
});

const envelope = (primaryType: PrimaryType = "CreateWallet", o: { issuedAt?: number; domainName?: string } = {}) =>
  buildTypedData(primaryType, { chainId: CHAIN_ID, address: signer.address, issuedAt: o.issuedAt ?? NOW, domainName: o.domainName });

async function sign(td: TypedData): Promise<string> {
  const { EIP712Domain: _d, ...types } = td.types;
  return signer.signTypedData(td.domain, types, td.message);
}

const text = (purpose: SiwePurpose, issuedAt = NOW, host = "localhost:3000") => buildSiweMessage(purpose, { host, address: signer.address, chainId: CHAIN_ID, issuedAt });

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/** The refusal `p` ends in: a SignedRequestError's status, code and message (anything else fails the test). */
async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const err = await p.then(
    (v) => expect.fail(`accepted: ${JSON.stringify(v)}`),
    (e: unknown) => e,
  );
  expect(err, String(err)).to.be.instanceOf(SignedRequestError);
  const { status, code, message } = err as SignedRequestError;
  return { status, code, message };
}

const typedRefusal = (message: string) => ({ status: 400, code: "invalid_typed_data", message });
const textRefusal = (message: string) => ({ status: 400, code: "invalid_signed_message", message });
const notProven = { status: 401, code: "invalid_signature", message: `the signature does not prove ${signer.address}` };

/** `td` with one value replaced (the signature stays the one of the untouched envelope). */
function withValue(td: TypedData, edit: (t: any) => void): unknown {
  const t = clone(td) as any;
  edit(t);
  return t;
}

describe("signed requests, unit by unit (relayer/signed)", function () {
  describe("verifySigned: one proof form per request", function () {
    it("takes the text form for CreateWallet and ConvertAccount, valid until issuedAt + 300 s", async function () {
      for (const purpose of ["CreateWallet", "ConvertAccount"] as const) {
        for (const issuedAt of [NOW, NOW - 300, NOW + 300]) {
          const message = text(purpose, issuedAt);
          expect(await verifySigned({ message, signature: await signer.signMessage(message) }, expectation(purpose)), `${purpose} at ${issuedAt}`).to.deep.equal({
            address: signer.address,
            validUntil: issuedAt + 300,
          });
        }
      }
    });

    it("refuses both forms at once, and neither, with the endpoint's wording", async function () {
      const td = envelope();
      const message = text("CreateWallet");
      const both: SignedProof = { typed_data: td, message, signature: await signer.signMessage(message) };
      expect(await refusal(verifySigned(both, expectation("CreateWallet")))).to.deep.equal(typedRefusal("send either typed_data (EIP-712) or message (signed text), not both"));
      both.signature = await sign(td);
      expect(await refusal(verifySigned(both, expectation("CreateWallet")))).to.deep.equal(typedRefusal("send either typed_data (EIP-712) or message (signed text), not both"));
      for (const pt of ["CreateWallet", "ConvertAccount"] as const) {
        expect(await refusal(verifySigned({ signature: "0x00" }, expectation(pt)))).to.deep.equal(typedRefusal("send typed_data (the EIP-712 envelope) or message (the signed text), with signature"));
      }
      for (const pt of ["AddUsageApiKey", "BillingAuth"] as const) {
        expect(await refusal(verifySigned({ signature: "0x00" }, expectation(pt)))).to.deep.equal(typedRefusal("typed_data (the EIP-712 envelope) is required"));
      }
    });

    it("refuses a signed text where only typed data exists (AddUsageApiKey, BillingAuth), even one validly signed", async function () {
      const message = text("CreateWallet");
      const signature = await signer.signMessage(message);
      for (const pt of ["AddUsageApiKey", "BillingAuth"] as const) {
        expect(await refusal(verifySigned({ message, signature }, expectation(pt)))).to.deep.equal(textRefusal(`${pt} has no signed-text form: send typed_data (EIP-712)`));
      }
    });
  });

  describe("the signed text (relayer/signed/siwe.ts)", function () {
    it("refuses a message that is not a string", async function () {
      for (const message of [5, null, {}, ["a"], true]) {
        expect(await refusal(verifySigned({ message, signature: "0x00" }, expectation("CreateWallet"))), JSON.stringify(message)).to.deep.equal(textRefusal("message must be a string (the signed text)"));
      }
    });

    it("takes 1024 bytes to the parser and refuses 1025 by size (bytes of UTF-8, not characters)", async function () {
      const base = text("CreateWallet", NOW, "");
      const hostRule = "the host must be a host name (letters, digits, . - : [ ]), at most 255 characters";
      const sized = (bytes: number) => text("CreateWallet", NOW, "a".repeat(bytes - base.length));
      expect(Buffer.byteLength(sized(1024))).to.equal(1024);
      expect(await refusal(verifySigned({ message: sized(1024), signature: "0x00" }, expectation("CreateWallet")))).to.deep.equal(textRefusal(hostRule));
      expect(await refusal(verifySigned({ message: sized(1025), signature: "0x00" }, expectation("CreateWallet")))).to.deep.equal(textRefusal("message is 1025 bytes; at most 1024"));
      // 2-byte characters: fewer than 1024 characters, more than 1024 bytes
      const wide = text("CreateWallet", NOW, "é".repeat(Math.ceil((1025 - base.length) / 2)));
      const wideBytes = Buffer.byteLength(wide);
      expect([wide.length < 1024, wideBytes > 1024]).to.deep.equal([true, true]);
      expect(await refusal(verifySigned({ message: wide, signature: "0x00" }, expectation("CreateWallet")))).to.deep.equal(textRefusal(`message is ${wideBytes} bytes; at most 1024`));
    });
  });

  describe("the typed-data envelope (relayer/signed/eip712.ts)", function () {
    const verify = (td: unknown, signature: unknown, primaryType: PrimaryType = "CreateWallet", over: { domainName?: string; nowSeconds?: number } = {}) =>
      verifySigned({ typed_data: td, signature }, expectation(primaryType, over));

    it("takes exactly 4096 bytes of JSON and refuses 4097 (spec 2: at most 4 KiB), counting bytes of UTF-8", async function () {
      const base = Buffer.byteLength(JSON.stringify(envelope("CreateWallet", { domainName: "" })));
      // 2-byte characters: fewer than 4096 characters of JSON, more than 4096 bytes
      for (const domainName of ["n".repeat(4096 - base), "n".repeat(4097 - base), "é".repeat(Math.ceil((4097 - base) / 2))]) {
        const td = envelope("CreateWallet", { domainName });
        const bytes = Buffer.byteLength(JSON.stringify(td));
        expect(JSON.stringify(td).length, "characters").to.be.at.most(4097);
        const outcome = verify(td, await sign(td), "CreateWallet", { domainName });
        if (bytes <= 4096) expect(await outcome).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
        else expect(await refusal(outcome), `${bytes} bytes`).to.deep.equal(typedRefusal(`typed_data is ${bytes} bytes of JSON; at most 4096`));
      }
      expect(Buffer.byteLength(JSON.stringify(envelope("CreateWallet", { domainName: "n".repeat(4096 - base) })))).to.equal(4096);
    });

    it("refuses typed data that JSON cannot serialise (a bigint, a cycle) as such", async function () {
      const sig = await sign(envelope());
      const big = withValue(envelope(), (t) => (t.message.issuedAt = BigInt(NOW)));
      const cyclic = withValue(envelope(), (t) => (t.domain.self = t.domain));
      for (const td of [big, cyclic]) expect(await refusal(verify(td, sig))).to.deep.equal(typedRefusal("typed_data is not serialisable JSON"));
    });

    it("refuses typed data or type fields that are not plain objects, even carrying the right keys", async function () {
      const td = envelope();
      const sig = await sign(td);
      expect(await verify(td, sig), "the envelope itself holds").to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
      const fnWith = (props: Record<string, unknown>) =>
        Object.defineProperties(() => undefined, Object.fromEntries(Object.entries(props).map(([k, value]) => [k, { value, enumerable: true }])));
      for (const outer of [fnWith(clone(td)), Object.assign([], clone(td))]) {
        expect(await refusal(verify(outer, sig))).to.deep.equal(typedRefusal("typed_data must have exactly types, domain, primaryType and message"));
      }
      const structRule = "types.CreateWallet must be [address address, issuedAt uint256], in that order";
      for (const field of [null, "ab", 7, ["address", "address"], fnWith({ name: "address", type: "address" })]) {
        const t = clone(td) as any;
        t.types.CreateWallet[0] = field;
        expect(await refusal(verify(t, sig)), String(field)).to.deep.equal(typedRefusal(structRule));
      }
      const nullDomainField = withValue(td, (t) => (t.types.EIP712Domain[2] = null));
      expect(await refusal(verify(nullDomainField, sig))).to.deep.equal(typedRefusal("types.EIP712Domain must be [name string, version string, chainId uint256], in that order"));
    });

    it("takes uints as JSON numbers from 0, decimal strings (leading zeros too) and 0x hex of 1 to 64 digits", async function () {
      const td = envelope();
      const sig = await sign(td);
      const ok = { address: signer.address, validUntil: NOW + 300 };
      for (const [chainId, issuedAt] of [
        ["0x7a69", `0x${NOW.toString(16)}`],
        ["0x0000000000000000000000000000000000000000000000000000000000007A69", `0x${NOW.toString(16).toUpperCase()}`],
        ["0031337", `000${NOW}`],
      ]) {
        expect(await verify(withValue(td, (t) => ((t.domain.chainId = chainId), (t.message.issuedAt = issuedAt))), sig), `${chainId} ${issuedAt}`).to.deep.equal(ok);
      }
      const atZero = envelope("CreateWallet", { issuedAt: 0 });
      expect(await verify(atZero, await sign(atZero), "CreateWallet", { nowSeconds: 0 })).to.deep.equal({ address: signer.address, validUntil: 300 });
    });

    it("refuses every other issuedAt or chainId as not an unsigned integer", async function () {
      const td = envelope();
      const sig = await sign(td);
      const malformed: unknown[] = [-1, -0.5, NOW + 0.5, [NOW], [String(NOW)], ` ${NOW}`, `${NOW} `, `x${NOW}`, `${NOW}x`, `+${NOW}`, `${NOW}.0`, "0x", `0X${NOW.toString(16)}`, `0x${"f".repeat(65)}`, "1".repeat(79), `${NOW}n`, true, null, {}];
      for (const issuedAt of malformed) {
        expect(await refusal(verify(withValue(td, (t) => (t.message.issuedAt = issuedAt)), sig)), JSON.stringify(issuedAt)).to.deep.equal(typedRefusal("message.issuedAt must be an unsigned integer (unix seconds)"));
      }
      for (const chainId of [-1, [31337], ["31337"], " 31337", "31337 ", "abc", "0x", "0x7g69", null]) {
        expect(await refusal(verify(withValue(td, (t) => (t.domain.chainId = chainId)), sig)), JSON.stringify(chainId)).to.deep.equal(typedRefusal("domain.chainId must be an unsigned integer"));
      }
    });

    it("words each remaining refusal exactly", async function () {
      const td = envelope();
      const sig = await sign(td);
      expect(await refusal(verify(withValue(td, (t) => (t.primaryType = "Transfer")), sig))).to.deep.equal(typedRefusal("primaryType must be one of CreateWallet, ConvertAccount, AddUsageApiKey, BillingAuth"));
      // a mixed-case address whose checksum is wrong: the first letter's case flipped
      const i = signer.address.slice(2).search(/[a-fA-F]/) + 2;
      const flipped = signer.address.slice(0, i) + (signer.address[i] === signer.address[i].toUpperCase() ? signer.address[i].toLowerCase() : signer.address[i].toUpperCase()) + signer.address.slice(i + 1);
      expect(flipped.toLowerCase()).to.equal(signer.address.toLowerCase());
      expect(flipped).to.not.equal(signer.address);
      expect(await refusal(verify(withValue(td, (t) => (t.message.address = flipped)), sig))).to.deep.equal(typedRefusal("message.address is not a valid address (bad checksum?)"));
      // the all-lowercase form has no checksum to get wrong, and proves the same address
      expect(await verify(withValue(td, (t) => (t.message.address = signer.address.toLowerCase())), sig)).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
    });

    it("computes ethers' digest on a cold cache: a freshly loaded module, first call per primary type and domain", async function () {
      const id = require.resolve("../relayer/signed/eip712");
      const loaded = require.cache[id];
      delete require.cache[id];
      try {
        const fresh = require(id) as typeof import("../relayer/signed/eip712");
        for (const primaryType of PRIMARY_TYPES) {
          for (const [name, chainId] of [[DEFAULT_DOMAIN_NAME, 31337n], ["Another", 1n]] as const) {
            const value = { address: signer.address, issuedAt: BigInt(NOW) };
            const domain = { name, version: "1", chainId };
            const want = TypedDataEncoder.hash(domain, { [primaryType]: STRUCT_FIELDS }, value);
            expect(fresh.typedDataDigest(domain, primaryType, value), `${primaryType} ${name} ${chainId}, first call`).to.equal(want);
            expect(fresh.typedDataDigest(domain, primaryType, value), `${primaryType} ${name} ${chainId}, cached`).to.equal(want);
          }
        }
        const td = envelope("BillingAuth");
        expect(await fresh.verifyTypedData(td, await sign(td), expectation("BillingAuth"))).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
      } finally {
        require.cache[id] = loaded;
      }
    });
  });

  describe("ERC-1271 (relayer/signed/erc1271.ts): a node that fails is no verdict on the signature", function () {
    const digest = `0x${"11".repeat(32)}`;
    const contract = `0x${"22".repeat(20)}`;
    const bounds = { gasLimit: 300_000, timeoutMs: 2_000 };
    const failing = (err: Error & { code?: string }) => ({ getCode: async () => "0x6001", call: async () => Promise.reject(err) }) as unknown as Provider;

    it("an RPC node that cannot be reached is thrown (the caller answers 503), never read as an invalid signature", async function () {
      const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), { code: "ECONNREFUSED" });
      let thrown: unknown;
      await isValidContractSignature(failing(refused), contract, digest, "0x00", bounds).catch((e) => (thrown = e));
      expect(thrown).to.equal(refused);
    });

    it("a contract that reverts is exactly false", async function () {
      const reverted = Object.assign(new Error("execution reverted"), { code: "CALL_EXCEPTION" });
      expect(await isValidContractSignature(failing(reverted), contract, digest, "0x00", bounds)).to.equal(false);
    });
  });

  describe("the signature (relayer/signed/proof.ts)", function () {
    const forms = async (signature: string) => {
      const td = envelope();
      const message = text("CreateWallet");
      return [
        [verifySigned({ typed_data: td, signature }, expectation("CreateWallet")), "invalid_typed_data"],
        [verifySigned({ message, signature }, expectation("CreateWallet")), "invalid_signed_message"],
      ] as const;
    };

    it("takes 4096 bytes to the proof and refuses 4097 by size, in both forms", async function () {
      for (const [outcome] of await forms(`0x${"ab".repeat(4096)}`)) expect(await refusal(outcome)).to.deep.equal(notProven);
      for (const [outcome, code] of await forms(`0x${"ab".repeat(4097)}`)) expect(await refusal(outcome)).to.deep.equal({ status: 400, code, message: "signature is 4097 bytes; at most 4096" });
    });

    it("refuses a signature that is not hex of whole bytes, with the form's code", async function () {
      for (const bad of ["0xabc", `0x${"ab".repeat(65)}0`, "0x", "0xzz", "ab".repeat(65), 12345, null]) {
        for (const [outcome, code] of await forms(bad as string)) {
          expect(await refusal(outcome), JSON.stringify(bad)).to.deep.equal({ status: 400, code, message: "signature must be a 0x-prefixed hex string of whole bytes" });
        }
      }
    });

    it("takes ECDSA signatures of 65 bytes only: the signer's own 64-byte compact (EIP-2098) form does not prove it", async function () {
      const td = envelope();
      const digest = TypedDataEncoder.hash(td.domain, { CreateWallet: STRUCT_FIELDS }, td.message);
      const sig = signer.signingKey.sign(digest);
      expect(recoverSigner(digest, sig.compactSerialized), "the compact form recovers the signer").to.equal(signer.address);
      expect(await verifySigned({ typed_data: td, signature: sig.serialized }, expectation("CreateWallet"))).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
      expect(await refusal(verifySigned({ typed_data: td, signature: sig.compactSerialized }, expectation("CreateWallet")))).to.deep.equal(notProven);
    });
  });

  it("SignedRequestError: 401 for invalid_signature, 400 for the others, named for logs", function () {
    const cases = [
      ["invalid_signature", 401],
      ["invalid_typed_data", 400],
      ["invalid_signed_message", 400],
    ] as const;
    for (const [code, status] of cases) {
      const err = new SignedRequestError(code, "why");
      expect([err.status, err.code, err.message, err.name, String(err)]).to.deep.equal([status, code, "why", "SignedRequestError", "SignedRequestError: why"]);
    }
  });
});
