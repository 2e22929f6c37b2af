import { importer } from "ipfs-unixfs-importer";
import { MemoryBlockstore } from "blockstore-core/memory";
import { isWellFormed } from "../protocol/text";

/**
 * The CIDv0 that `ipfs add` with default settings gives for these bytes (or a string's UTF-8
 * bytes): dag-pb, 256 KiB fixed-size chunks, balanced layout, no raw leaves. A string that is not
 * well-formed Unicode has no UTF-8 bytes and is refused (see protocol/text.ts).
 */
export async function computeCid(code: string | Uint8Array): Promise<string> {
  if (typeof code === "string" && !isWellFormed(code)) throw new TypeError("computeCid: the text holds a lone surrogate; it has no UTF-8 bytes");
  const bytes = typeof code === "string" ? Buffer.from(code, "utf8") : code;
  let root: { cid: { toString(): string } } | undefined;
  for await (const entry of importer([{ content: bytes }], new MemoryBlockstore(), { cidVersion: 0, rawLeaves: false })) root = entry;
  if (!root) throw new Error("the IPFS importer produced no root");
  return root.cid.toString();
}
