import crypto from "node:crypto";
import { keccak256, toUtf8Bytes } from "ethers";
import { importer } from "ipfs-unixfs-importer";
import { MemoryBlockstore } from "blockstore-core/memory";
import { isWellFormed } from "../protocol/text";
import { Lru } from "../protocol/lru";

/**
 * CIDs computed lately, by the SHA-256 of the bytes: the same body (a client asking the CID and
 * then running the code, a trigger sending its code on every run) is imported once; a repeat costs
 * one SHA-256 pass (several times cheaper than the import). The CID is itself a SHA-256 of the same
 * bytes' blocks, so the memo trusts nothing the CID does not.
 */
const memo = new Lru<string, string>(4096);

/**
 * The CIDv0 that `ipfs add` with default settings gives for these bytes (or a string's UTF-8
 * bytes): dag-pb, 256 KiB fixed-size chunks, balanced layout, no raw leaves. A string that is not
 * well-formed Unicode has no UTF-8 bytes and is refused (see protocol/text.ts).
 */
export async function computeCid(code: string | Uint8Array): Promise<string> {
  if (typeof code === "string" && !isWellFormed(code)) throw new TypeError("computeCid: the text holds a lone surrogate; it has no UTF-8 bytes");
  const bytes = typeof code === "string" ? Buffer.from(code, "utf8") : code;
  const digest = crypto.createHash("sha256").update(bytes).digest("base64");
  const known = memo.get(digest);
  if (known) return known;
  let root: { cid: { toString(): string } } | undefined;
  for await (const entry of importer([{ content: bytes }], new MemoryBlockstore(), { cidVersion: 0, rawLeaves: false })) root = entry;
  if (!root) throw new Error("the IPFS importer produced no root");
  const cid = root.cid.toString();
  memo.set(digest, cid);
  return cid;
}

/** keccak256 of CIDs used lately (a CID is public: nothing secret is kept). */
const hashes = new Lru<string, string>(4096);

/** The on-chain hash of a CID, keccak256 of its text (JavaScript keccak: each a few tens of us; a run asks twice). */
export function cidHash(cid: string): string {
  let hash = hashes.get(cid);
  if (hash === undefined) {
    hash = keccak256(toUtf8Bytes(cid));
    hashes.set(cid, hash);
  }
  return hash;
}
