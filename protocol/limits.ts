/**
 * The limits of every AccountConfig write, in one place. The contract enforces the same numbers
 * (MAX_NAME_BYTES, MAX_DESCRIPTION_BYTES, MAX_GROUP_MEMBERS, MAX_PERMISSION_GROUPS; a test checks
 * that they match) and the HTTP edge refuses anything beyond them before any work. Together they
 * bound the gas of every relayed write (bench/gas.ts prints the worst case of each).
 * Pure: the dashboard bundles it too.
 */
export const LIMITS = {
  /** Names of accounts, usage keys, groups, wallets and actions: bytes of UTF-8. */
  nameBytes: 64,
  /** Descriptions: bytes of UTF-8. */
  descriptionBytes: 256,
  /** PKPs, and CID hashes, listed by one group write (add_group, update_group). */
  groupMembers: 10,
  /** Group ids in each permission list of a usage key. */
  permissionGroups: 10,
} as const;

export const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** `s` cut to at most `maxBytes` bytes of UTF-8, never inside a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  let out = "";
  let bytes = 0;
  for (const ch of s) {
    bytes += utf8Length(ch);
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}
