import { expect } from "chai";
import fc from "fast-check";
import { computeCid } from "../executor/cid";

// The IPFS libraries are ESM-only; a real dynamic import (not compiled to require) loads them.
const esm = new Function("m", "return import(m)") as (m: string) => Promise<any>;

const CHUNK = 256 * 1024;

/**
 * An independent construction of what `ipfs add` (defaults: 256 KiB chunks, dag-pb leaves,
 * balanced layout, CIDv0) makes of `bytes`, for up to 174 chunks (one level of links).
 */
async function expectedCid(bytes: Uint8Array): Promise<string> {
  const dagPb = await esm("@ipld/dag-pb");
  const { UnixFS } = await esm("ipfs-unixfs");
  const { sha256 } = await esm("multiformats/hashes/sha2");
  const { CID } = await esm("multiformats/cid");
  const leaf = async (chunk: Uint8Array) => {
    const block = dagPb.encode({ Data: new UnixFS({ type: "file", data: chunk }).marshal(), Links: [] });
    return { cid: CID.createV0(await sha256.digest(block)), size: block.length, dataLength: chunk.length };
  };
  if (bytes.length <= CHUNK) return (await leaf(bytes)).cid.toString();
  const leaves = [];
  for (let i = 0; i < bytes.length; i += CHUNK) leaves.push(await leaf(bytes.subarray(i, i + CHUNK)));
  const root = new UnixFS({ type: "file" });
  for (const l of leaves) root.addBlockSize(BigInt(l.dataLength));
  const block = dagPb.encode({ Data: root.marshal(), Links: leaves.map((l) => ({ Hash: l.cid, Name: "", Tsize: l.size })) });
  return CID.createV0(await sha256.digest(block)).toString();
}

describe("computeCid (CIDv0 as `ipfs add` gives)", function () {
  it("matches the well-known CID of 'hello world\\n'", async function () {
    expect(await computeCid("hello world\n")).to.equal("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o");
  });

  it("hashes the UTF-8 bytes of the code", async function () {
    const code = "async function main() { return '✓ ünïcode'; }";
    expect(await computeCid(code)).to.equal(await expectedCid(new TextEncoder().encode(code)));
  });

  for (const size of [CHUNK, CHUNK + 1, 3 * CHUNK + 12345]) {
    it(`matches an independent dag-pb construction for ${size} bytes (${Math.ceil(size / CHUNK)} chunk(s))`, async function () {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
      expect(await computeCid(bytes)).to.equal(await expectedCid(bytes));
    });
  }

  it("gives different CIDs to different code and the same CID to the same code", async function () {
    const a = await computeCid("async function main() { return 1; }");
    expect(await computeCid("async function main() { return 2; }")).to.not.equal(a);
    expect(await computeCid("async function main() { return 1; }")).to.equal(a);
  });

  describe("one CID, one program (property)", function () {
    /** Strings of UTF-16 code units, awkward ones (lone and paired surrogates, U+FFFD, BOM, NUL, CR, LF) made likely. */
    const units = fc.array(
      fc.oneof(
        fc.integer({ min: 0, max: 0xffff }),
        fc.constantFrom(0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfffd, 0xfeff, 0x0000, 0x000d, 0x000a, 0x2028),
        fc.constantFrom(0x0022, 0x0061, 0x007b, 0x007d),
      ),
      { maxLength: 40 },
    );
    const text = units.map((u) => String.fromCharCode(...u));
    /** What any UTF-8 encoder would make of the text: a string is well-formed exactly when it survives the round trip. */
    const wellFormed = (s: string) => Buffer.from(s, "utf8").toString("utf8") === s;
    const cidOrRefused = (s: string) => computeCid(s).catch(() => "refused");

    it("refuses exactly the sources that are not well-formed", async function () {
      await fc.assert(
        fc.asyncProperty(text, async (s) => {
          expect((await cidOrRefused(s)) === "refused", JSON.stringify(s)).to.equal(!wellFormed(s));
        }),
        { numRuns: 300 },
      );
    });

    it("never gives two different accepted sources the same CID, also when they differ only where an encoder would substitute", async function () {
      const pair = fc.oneof(
        fc.tuple(text, text),
        // the same source with a lone surrogate, or with U+FFFD (what TextEncoder writes for one), at the same place
        fc.tuple(text, text, fc.constantFrom("\uD800", "\uDFFF", "\uDBFF")).map(([a, b, lone]) => [a + lone + b, `${a}\uFFFD${b}`] as [string, string]),
      );
      await fc.assert(
        fc.asyncProperty(pair, async ([a, b]) => {
          fc.pre(a !== b);
          const [ca, cb] = [await cidOrRefused(a), await cidOrRefused(b)];
          if (ca !== "refused" && cb !== "refused") expect(ca, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).to.not.equal(cb);
        }),
        { numRuns: 300 },
      );
    });
  });
});
