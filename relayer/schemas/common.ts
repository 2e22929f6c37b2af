import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { getAddress, isHexString } from "ethers";
import { z } from "zod";
import { LIMITS } from "../../protocol/limits";
import { text } from "../../protocol/textSchema";

extendZodWithOpenApi(z);
export { z };

/** A one-line string (a key, an id, a signature) of at most `maxChars` characters: well-formed, no control characters. */
export const token = (maxChars: number, what: string, min = 0) => text({ kind: "label", maxChars, min, emptyMessage: `${what} must not be empty` });

const U64_MAX = (1n << 64n) - 1n;
const U256_MAX = (1n << 256n) - 1n;

/** A non-negative integer given as a JSON number or a decimal string (and a 0x hex string with `hex`), as bigint, at most `max`. */
export const uintString = (max: bigint, what: string, opts: { hex?: boolean } = {}) =>
  z
    .union([
      z.number().int().nonnegative(),
      opts.hex
        ? token(80, what).regex(/^(\d{1,78}|0x[0-9a-fA-F]{1,64})$/, `${what} must be a non-negative integer (decimal or 0x hex)`)
        : token(80, what).regex(/^\d{1,78}$/, `${what} must be a non-negative integer`),
    ])
    .transform((v, ctx) => {
      const n = BigInt(v);
      if (n > max) {
        ctx.addIssue({ code: "custom", message: `${what} is too large` });
        return z.NEVER;
      }
      return n;
    });

/** A group id: a positive integer (JSON number or decimal string). */
export const groupId = uintString(U64_MAX, "group_id", { hex: true })
  .refine((n) => n > 0n, "group_id starts at 1")
  .openapi({ type: ["integer", "string"], example: 1, description: "Group id: a JSON number, or a decimal or 0x hex string (add_group answers it as a decimal string)." });

export const uint64 = (what: string) => uintString(U64_MAX, what);
export const uint256 = (what: string) => uintString(U256_MAX, what);
/** A uint256 identifier such as an account hash: decimal or 0x hex, as the API hands them out. */
export const hash256 = (what: string) => uintString(U256_MAX, what, { hex: true });

/** An EVM address, normalized to its checksum form. */
export const address = token(128, "address")
  .refine((s) => {
    try {
      getAddress(s);
      return true;
    } catch {
      return false;
    }
  }, "must be a 0x-prefixed 20-byte address")
  .transform((s) => getAddress(s))
  .openapi({ example: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });

/** A keccak256 hash as hex (0x optional), normalized to lower-case 0x form. */
export const hash32 = token(128, "hash")
  .transform((s) => (s.startsWith("0x") || s.startsWith("0X") ? "0x" + s.slice(2) : "0x" + s).toLowerCase())
  .refine((s) => isHexString(s, 32), "must be a 32-byte hex hash")
  .openapi({ example: "0x2b6a5dcf1cd2a1d4a1e1fe8d7a1fbc8ae1f71f6c5e1c5c0a2f4c6b8a6f1e0d3c" });

/** A name or description of at most `maxBytes` bytes of UTF-8 (the contract's own limit), well-formed and without control characters. */
const utf8Text = (kind: "label" | "text", maxBytes: number, what: string, minChars = 0, emptyMessage?: string) =>
  text({ kind, maxBytes, min: minChars, emptyMessage }).openapi({
    description: `${what}: at most ${maxBytes} bytes of UTF-8, well-formed${kind === "label" ? ", one line without control characters" : ", no control characters but tab and line breaks"}.`,
  });

export const name = utf8Text("label", LIMITS.nameBytes, "Name");
/** A name that must not be empty (`field` names it in the message). */
export const requiredName = (field: string) => utf8Text("label", LIMITS.nameBytes, "Name", 1, `${field} must not be empty`);
export const description = utf8Text("text", LIMITS.descriptionBytes, "Description");
/** A list of at most `max` items (`what` names it in the message). */
export const boundedList = <T extends z.ZodTypeAny>(item: T, max: number, what: string) => z.array(item).max(max, `${what}: at most ${max} items`);

export const paging = z
  .object({
    page_number: uintString(1_000_000_000n, "page_number").default(0n).openapi({ type: "integer", example: 0 }),
    page_size: uintString(100n, "page_size (1 to 100)")
      .refine((n) => n >= 1n, "page_size must be from 1 to 100")
      .default(20n)
      .openapi({ type: "integer", example: 20 }),
  })
  .strict();

export const success = z.object({ success: z.literal(true) });
