import { expect } from "chai";
import fc from "fast-check";
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import Database from "better-sqlite3";
import { computeCid } from "../executor/cid";
import { CodeStore } from "../executor/codeStore";

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

  describe("the code store: what runs by ipfs_id is what its CID names", function () {
    let dir: string;
    beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "vesta-codes-"))));
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("keeps the exact bytes (BOM, NUL, CR) and reads them back", async function () {
      const bytes = Buffer.from("\uFEFFasync function main() { return '\u0000\r' }\r\n", "utf8");
      const cid = await computeCid(bytes);
      const store = new CodeStore(path.join(dir, "actions.sqlite"), { bytesPerPayer: 1024 * 1024 });
      store.put(cid, bytes, "account:a");
      store.close();
      const again = new CodeStore(path.join(dir, "actions.sqlite"), { bytesPerPayer: 1024 * 1024 });
      expect(Buffer.from((await again.get(cid))!).equals(bytes)).to.equal(true);
      again.close();
    });

    /** A code store whose file already holds `rows` (cid → TEXT or BLOB), as written behind its back. */
    function storeWith(rows: [string, string | Buffer][], onMismatch?: (cid: string, problem: string) => void): CodeStore {
      const file = path.join(dir, "actions.sqlite");
      new CodeStore(file, { bytesPerPayer: 1024 * 1024 }).close();
      const db = new Database(file);
      for (const [cid, code] of rows) db.prepare("INSERT INTO action_code (cid, code, stored_at) VALUES (?, ?, 0)").run(cid, code);
      db.close();
      return new CodeStore(file, { bytesPerPayer: 1024 * 1024, onMismatch });
    }

    it("reads a row that does not hash to its CID, or is not UTF-8, as missing, and says so", async function () {
      const cid = await computeCid("async function main() { return 'audited' }");
      const other = await computeCid("x");
      const problems: string[] = [];
      const store = storeWith(
        [
          [cid, "async function main() { return 'swapped' }"],
          [other, Buffer.from([0x78, 0xff])],
        ],
        (c, p) => problems.push(`${c}: ${p}`),
      );
      expect(await store.get(cid)).to.equal(undefined);
      expect(await store.get(other)).to.equal(undefined);
      expect(problems).to.deep.equal([`${cid}: the stored code hashes to ${await computeCid("async function main() { return 'swapped' }")}`, `${other}: the stored code is not valid UTF-8`]);
      store.close();
    });

    it("keeps each payer within its bytes, dropping its least recently used code first; a CID another payer holds stays", async function () {
      const store = new CodeStore(path.join(dir, "actions.sqlite"), { bytesPerPayer: 2000 });
      const codes = await Promise.all(
        [1, 2, 3, 4].map(async (n) => {
          const bytes = Buffer.from(`async function main() { return ${n} }\n//${"x".repeat(900)}`, "utf8"); // ~937 bytes: two fit
          return { bytes, cid: await computeCid(bytes) };
        }),
      );
      const [a, b, c, d] = codes;
      store.put(a.cid, a.bytes, "account:attacker");
      store.put(b.cid, b.bytes, "account:attacker");
      store.put(b.cid, b.bytes, "wallet:0xOther"); // the same code, stored by another payer too
      store.touch(a.cid, "account:attacker"); // a was run again: b is now the attacker's least recently used
      store.put(c.cid, c.bytes, "account:attacker"); // past 2000 bytes: b leaves the attacker's (stays the other's)
      store.put(d.cid, d.bytes, "account:attacker"); // and now a goes (no one else holds it: deleted)
      expect(store.heldBy("account:attacker")).to.deep.equal({ bytes: c.bytes.length + d.bytes.length, cids: 2 });
      expect(store.heldBy("wallet:0xOther")).to.deep.equal({ bytes: b.bytes.length, cids: 1 });
      const kept = await Promise.all(codes.map(async (x) => (await store.get(x.cid)) !== undefined));
      expect(kept).to.deep.equal([false, true, true, true]);
      store.close();
      // An account that stores one new action after another keeps a fixed amount, and the file only that.
      const again = new CodeStore(path.join(dir, "actions.sqlite"), { bytesPerPayer: 3000 });
      for (let n = 0; n < 200; n++) {
        const bytes = Buffer.from(`async function main() { return "${n}" }\n//${"y".repeat(500)}`, "utf8");
        again.put(await computeCid(bytes), bytes, "account:flood");
      }
      expect(again.heldBy("account:flood").bytes).to.be.at.most(3000);
      again.close();
      const db = new Database(path.join(dir, "actions.sqlite"), { readonly: true });
      expect(db.prepare("SELECT COUNT(*) AS n FROM action_code").get()).to.deep.equal({ n: 3 + 5 }); // b, c, d; and the flood's last five (about 540 bytes each)
      db.close();
    });

    it("reads rows an older version stored as text by their UTF-8 bytes", async function () {
      const code = "async function main() { return '✓' }";
      const store = storeWith([[await computeCid(code), code]]);
      expect(Buffer.from((await store.get(await computeCid(code)))!).toString("utf8")).to.equal(code);
      store.close();
    });
  });
});
