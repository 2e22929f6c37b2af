import { keccak256, toUtf8Bytes } from "ethers";
import { CID } from "multiformats/cid";
import { token } from "./common";
import { text } from "../../protocol/textSchema";

/** A raw IPFS CID (v0 `Qm…` or v1), checked by parsing it. */
export const cidString = token(128, "an IPFS CID")
  .refine((s) => {
    try {
      CID.parse(s.trim());
      return true;
    } catch {
      return false;
    }
  }, "must be an IPFS CID (e.g. Qm… or bafy…)")
  .transform((s) => s.trim())
  .openapi({ example: "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB" });

/** keccak256 of the CID string's UTF-8 bytes: the hash the contract stores. */
export const cidHash = (cid: string): string => keccak256(toUtf8Bytes(cid));

/** The multicodec of dag-pb and the multihash code of SHA2-256: the only kind of CID the service computes. */
const DAG_PB = 0x70;
const SHA2_256 = 0x12;

/**
 * The CID of an action as this service computes it (get_action_ipfs_id): a CIDv0 (`Qm…`), or the
 * same dag-pb SHA2-256 identity written as a CIDv1 (`bafy…`), in its canonical spelling. Anything
 * else names no code the service could hold, and is refused at the edge before any work.
 */
// Well-formed text first (a lone surrogate is 400 invalid_text); any other non-CID, control characters too, 400 invalid_request.
export const actionCid = text({ kind: "code", maxChars: 128 })
  .refine((s) => {
    try {
      const cid = CID.parse(s);
      return cid.code === DAG_PB && cid.multihash.code === SHA2_256 && cid.multihash.size === 32 && cid.toString() === s;
    } catch {
      return false;
    }
  }, "must be an action's IPFS CID as get_action_ipfs_id answers it (a CIDv0 Qm…, or that CID as a CIDv1 bafy…)")
  .openapi({ example: "QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB" });
