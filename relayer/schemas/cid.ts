import { keccak256, toUtf8Bytes } from "ethers";
import { CID } from "multiformats/cid";
import { token } from "./common";

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
