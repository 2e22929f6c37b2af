import { expect } from "chai";
import { keccak256, recoverAddress, toUtf8Bytes, TypedDataEncoder, Wallet, type TypedDataField } from "ethers";
import { buildTypedData, DEFAULT_DOMAIN_NAME, PRIMARY_TYPES, STRUCT_FIELDS, type PrimaryType, type TypedData } from "../protocol/eip712";
import { NATIVE_SECP256K1, recoverSigner } from "../protocol/ecdsa";
import { SignedRequestError } from "../relayer/signed";
import { typedDataDigest, verifyTypedData as verifySignedRequest } from "../relayer/signed/eip712";

const CHAIN_ID = 31337n;
const NOW = 1_800_000_000;
const signer = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

/** Signs `td` as eth_signTypedData_v4 would (ethers leaves EIP712Domain out of `types`). */
async function sign(td: TypedData, wallet: { signTypedData: Wallet["signTypedData"] } = signer): Promise<string> {
  const { EIP712Domain: _d, ...types } = td.types;
  return wallet.signTypedData(td.domain, types, td.message);
}

const envelope = (primaryType: PrimaryType = "CreateWallet", issuedAt = NOW) =>
  buildTypedData(primaryType, { chainId: CHAIN_ID, address: signer.address, issuedAt });

const verify = (td: unknown, sig: unknown, primaryType: PrimaryType = "CreateWallet") =>
  verifySignedRequest(td, sig, { primaryType, domainName: DEFAULT_DOMAIN_NAME, chainId: CHAIN_ID, nowSeconds: NOW });

/** Expects a rejection with `status` and a message matching `why`. */
async function rejected(p: Promise<unknown>, status: 400 | 401, why: RegExp) {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(SignedRequestError);
    expect((err as SignedRequestError).status).to.equal(status);
    expect((err as Error).message).to.match(why);
    return;
  }
  expect.fail("the signed request was accepted");
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

describe("EIP-712 envelope (spec 2)", function () {
  it("builds the envelope of spec 2: EIP712Domain [name, version, chainId] and [address, issuedAt]", function () {
    const td = envelope("ConvertAccount");
    expect(td.types.EIP712Domain.map((f: TypedDataField) => `${f.name}:${f.type}`)).to.deep.equal(["name:string", "version:string", "chainId:uint256"]);
    expect(td.types.ConvertAccount.map((f: TypedDataField) => `${f.name}:${f.type}`)).to.deep.equal(["address:address", "issuedAt:uint256"]);
    expect(td.domain).to.deep.equal({ name: "Vesta ChainSecured", version: "1", chainId: 31337 });
  });

  for (const pt of PRIMARY_TYPES) {
    it(`accepts a valid ${pt} signature and returns the proven address`, async function () {
      const td = envelope(pt);
      expect(await verify(td, await sign(td), pt)).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
    });
  }

  it("accepts issuedAt and chainId given as decimal strings", async function () {
    const td = envelope();
    const sig = await sign(td);
    const s = clone(td) as any;
    s.message.issuedAt = String(NOW);
    s.domain.chainId = "31337";
    expect(await verify(s, sig)).to.deep.equal({ address: signer.address, validUntil: NOW + 300 });
  });

  describe("Errors of spec 2", function () {
    it("rejects a payload over 4 KiB of serialised JSON", async function () {
      const td = clone(envelope()) as any;
      td.domain.name = "x".repeat(5000);
      await rejected(verify(td, await sign(envelope())), 400, /at most 4096/);
    });

    const typeMutations: [string, (t: any) => void][] = [
      ["an extra field in the struct", (t) => t.types.CreateWallet.push({ name: "nonce", type: "uint256" })],
      ["a missing field in the struct", (t) => t.types.CreateWallet.pop()],
      ["struct fields in another order", (t) => t.types.CreateWallet.reverse()],
      ["a field of another type", (t) => (t.types.CreateWallet[1].type = "uint64")],
      ["a renamed field", (t) => (t.types.CreateWallet[0].name = "wallet")],
      ["domain fields in another order", (t) => t.types.EIP712Domain.reverse()],
      ["an extra domain field type", (t) => t.types.EIP712Domain.push({ name: "verifyingContract", type: "address" })],
      ["an extra type", (t) => (t.types.Extra = [{ name: "a", type: "uint256" }])],
      ["a missing EIP712Domain", (t) => delete t.types.EIP712Domain],
      ["an extra key in a field", (t) => (t.types.CreateWallet[0].indexed = true)],
    ];
    for (const [what, mutate] of typeMutations) {
      it(`rejects types with ${what}`, async function () {
        const td = clone(envelope()) as any;
        const sig = await sign(envelope());
        mutate(td);
        await rejected(verify(td, sig), 400, /types/);
      });
    }

    it("rejects a signature made for one primaryType at every other endpoint", async function () {
      for (const made of PRIMARY_TYPES) {
        const td = envelope(made);
        const sig = await sign(td);
        for (const endpoint of PRIMARY_TYPES.filter((p) => p !== made)) {
          await rejected(verify(td, sig, endpoint), 400, new RegExp(`takes primaryType ${endpoint}`));
          // relabelled to the endpoint's primaryType, the same signature no longer proves anything
          const relabelled = buildTypedData(endpoint, { chainId: CHAIN_ID, address: signer.address, issuedAt: NOW });
          await rejected(verify(relabelled, sig, endpoint), 401, /does not prove/);
        }
      }
    });

    it("rejects an unknown primaryType", async function () {
      const td = clone(envelope()) as any;
      td.primaryType = "Transfer";
      await rejected(verify(td, await sign(envelope())), 400, /primaryType must be one of/);
    });

    for (const [label, issuedAt] of [
      ["301 s in the past", NOW - 301],
      ["301 s in the future", NOW + 301],
    ] as const) {
      it(`rejects issuedAt ${label}`, async function () {
        const td = envelope("CreateWallet", issuedAt);
        await rejected(verify(td, await sign(td)), 400, /within 300 s/);
      });
    }

    it("accepts issuedAt exactly 300 s either side", async function () {
      for (const t of [NOW - 300, NOW + 300]) {
        const td = envelope("CreateWallet", t);
        expect(await verify(td, await sign(td)), "valid until issuedAt + 300 s").to.deep.equal({ address: signer.address, validUntil: t + 300 });
      }
    });

    for (const [label, value] of [
      ["2^256 - 1", ((1n << 256n) - 1n).toString()],
      ["2^256 (overflows uint256)", (1n << 256n).toString()],
      ["a 100-digit number", "9".repeat(100)],
      ["negative", -5],
      ["a float", NOW + 0.5],
      ["1e30 as a JSON number", 1e30],
      ["not a number", "soon"],
      ["null", null],
    ] as const) {
      it(`rejects an absurd issuedAt (${label}) without overflowing`, async function () {
        const td = clone(envelope()) as any;
        td.message.issuedAt = value;
        await rejected(verify(td, await sign(envelope())), 400, /issuedAt/);
      });
    }

    it("rejects another chain id", async function () {
      const td = buildTypedData("CreateWallet", { chainId: 1, address: signer.address, issuedAt: NOW });
      await rejected(verify(td, await sign(td)), 400, /not this node's chain 31337/);
    });

    it("rejects another domain name or version, and extra domain fields", async function () {
      const sig = await sign(envelope());
      const named = clone(envelope()) as any;
      named.domain.name = "Lit Protocol";
      await rejected(verify(named, sig), 400, /domain.name/);
      const versioned = clone(envelope()) as any;
      versioned.domain.version = "2";
      await rejected(verify(versioned, sig), 400, /domain.version/);
      const extra = clone(envelope()) as any;
      extra.domain.verifyingContract = "0x0000000000000000000000000000000000000001";
      await rejected(verify(extra, sig), 400, /exactly name, version and chainId/);
    });

    it("rejects a signature that does not recover to the stated address (401)", async function () {
      const td = envelope();
      await rejected(verify(td, await sign(td, Wallet.createRandom())), 401, /does not prove/);
      const other = clone(td);
      other.message.address = Wallet.createRandom().address;
      await rejected(verify(other, await sign(td)), 401, /does not prove/);
    });

    for (const [label, sig] of [
      ["not hex", "0xzz"],
      ["without 0x", "ab".repeat(65)],
      ["a number", 12345],
      ["empty", "0x"],
    ] as const) {
      it(`rejects a malformed signature (${label})`, async function () {
        await rejected(verify(envelope(), sig), 400, /signature must be/);
      });
    }

    it("rejects a 65-byte signature that is not a valid ECDSA signature as not proving the address", async function () {
      await rejected(verify(envelope(), "0x" + "00".repeat(65)), 401, /does not prove/);
    });

    it("rejects malformed message and envelope shapes", async function () {
      const sig = await sign(envelope());
      for (const [mutate, why] of [
        [(t: any) => (t.message.extra = 1), "message must have exactly address and issuedAt"],
        [(t: any) => (t.message.address = "0x1234"), "message.address must be a 0x-prefixed 20-byte address"],
        [(t: any) => (t.message.address = 42), "message.address must be a 0x-prefixed 20-byte address"],
        [(t: any) => delete t.message.issuedAt, "message must have exactly address and issuedAt"],
        [(t: any) => (t.extra = true), "typed_data must have exactly types, domain, primaryType and message"],
        [(t: any) => delete t.domain, "typed_data must have exactly types, domain, primaryType and message"],
      ] as const) {
        const td = clone(envelope()) as any;
        mutate(td);
        await rejected(verify(td, sig), 400, new RegExp(`^${why.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
      }
      await rejected(verify(null, sig), 400, /exactly types, domain, primaryType and message/);
      await rejected(verify("a string", sig), 400, /exactly types/);
    });
  });

  describe("digest and recovery", function () {
    it("computes the digest ethers' TypedDataEncoder.hash computes, for every primary type and domain", function () {
      for (const primaryType of PRIMARY_TYPES) {
        for (const [name, chainId] of [[DEFAULT_DOMAIN_NAME, 31337n], ["Another", 1n], [DEFAULT_DOMAIN_NAME, 8453n]] as const) {
          const value = { address: signer.address, issuedAt: BigInt(NOW) };
          const domain = { name, version: "1", chainId };
          expect(typedDataDigest(domain, primaryType, value), `${primaryType} ${name} ${chainId}`).to.equal(TypedDataEncoder.hash(domain, { [primaryType]: STRUCT_FIELDS }, value));
        }
      }
    });

    it("recovers signers natively as ethers does, and refuses what ethers refuses (high s)", function () {
      expect(NATIVE_SECP256K1, "the libsecp256k1 binding loads on this platform").to.equal(true);
      for (let i = 0; i < 20; i++) {
        const w = Wallet.createRandom();
        const digest = keccak256(toUtf8Bytes(`message ${i}`));
        const sig = w.signingKey.sign(digest);
        expect(recoverSigner(digest, sig.serialized)).to.equal(w.address);
        expect(recoverSigner(digest, sig.serialized)).to.equal(recoverAddress(digest, sig.serialized));
        const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
        const highS = `0x${sig.r.slice(2)}${(N - BigInt(sig.s)).toString(16).padStart(64, "0")}${sig.v === 27 ? "1c" : "1b"}`;
        expect(() => recoverAddress(digest, highS)).to.throw(/non-canonical s/);
        expect(() => recoverSigner(digest, highS)).to.throw(/non-canonical s/);
      }
    });
  });
});
