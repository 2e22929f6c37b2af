/**
 * One CID, one program: an action's identity is the CID of its UTF-8 bytes, and those very bytes
 * are what the sandbox hands to QuickJS (worker.ts decodes them strictly and QuickJS re-encodes a
 * well-formed string to the same bytes). Code that is not well-formed Unicode has no such bytes and
 * is refused; a leading BOM, NULs and any line endings are kept as they are, in the hash and in the run.
 */
import { isWellFormed, loneSurrogate } from "../protocol/text";
import { computeCid } from "./cid";
import { RunRefused } from "./errors";

export type ActionCode = { bytes: Uint8Array; cid: string };

/** The checked bytes of `code` (at most `maxCodeBytes`), or a RunRefused saying why not. */
export function actionBytes(code: string, maxCodeBytes: number): Uint8Array {
  if (!isWellFormed(code)) {
    const at = loneSurrogate(code)!;
    throw new RunRefused(
      "code_not_well_formed",
      `the action code is not well-formed Unicode: a lone surrogate ${at.unit} at character ${at.index} has no UTF-8 encoding (send the code as UTF-8 text)`,
    );
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit: only a string that might be too large is measured.
  if (code.length * 3 > maxCodeBytes) {
    const size = Buffer.byteLength(code, "utf8");
    if (size > maxCodeBytes) throw new RunRefused("code_too_large", `the action code is ${size} bytes; at most ${maxCodeBytes}`);
  }
  return Buffer.from(code, "utf8");
}

/** The checked bytes of `code` and their CID (what `ipfs add` gives for a file holding them). */
export async function actionCode(code: string, maxCodeBytes: number): Promise<ActionCode> {
  const bytes = actionBytes(code, maxCodeBytes);
  return { bytes, cid: await computeCid(bytes) };
}
