import { importer } from "ipfs-unixfs-importer";
import { MemoryBlockstore } from "blockstore-core/memory";

/**
 * The CIDv0 that `ipfs add` with default settings gives for `code`'s UTF-8 bytes: dag-pb,
 * 256 KiB fixed-size chunks, balanced layout, no raw leaves. Multi-chunk code hashes like IPFS does.
 */
export async function computeCid(code: string | Uint8Array): Promise<string> {
  const bytes = typeof code === "string" ? new TextEncoder().encode(code) : code;
  let root: { cid: { toString(): string } } | undefined;
  for await (const entry of importer([{ content: bytes }], new MemoryBlockstore(), { cidVersion: 0, rawLeaves: false })) root = entry;
  if (!root) throw new Error("the IPFS importer produced no root");
  return root.cid.toString();
}
