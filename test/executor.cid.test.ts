import { expect } from "chai";
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
});
