/**
 * The signed text message of Chipotle's SDK (core_sdk.js), accepted beside spec 2's EIP-712
 * envelope on create_wallet_with_signature and convert_to_chain_secured_account: an EIP-191
 * personal_sign over exactly
 *
 *   <host> wants you to <statement>\n\nAddress: <address>\nChain ID: <chain id>\nIssued At: <unix seconds>
 *
 * The statement names the purpose, so a message signed for one endpoint is refused by the other
 * (the role primaryType plays in the envelope). Defined once: the relayer parses and verifies with
 * it, the dashboard, scripts and tests build with it. Pure.
 */
import { getAddress } from "ethers";
import type { PrimaryType } from "./eip712";

/** The statement of each purpose that has a text form (Chipotle's own wording). */
export const SIWE_STATEMENTS = {
  CreateWallet: "create a new wallet for ChainSecured account.",
  ConvertAccount: "take admin ownership of this account.",
} as const satisfies Partial<Record<PrimaryType, string>>;
export type SiwePurpose = keyof typeof SIWE_STATEMENTS;

/** Largest message taken (bytes of UTF-8): the SDK's are under 250. */
export const MAX_SIWE_MESSAGE_BYTES = 1024;
/** Longest `<host>` (a host name and port). */
const MAX_HOST_LENGTH = 255;
/** A host as browsers write `location.host` (name or address, optional port), or Chipotle's "lit" outside a browser. */
const HOST = /^[A-Za-z0-9.\-[\]:]+$/;
const HEAD = / wants you to /;

export type SiweFields = { host: string; address: string; chainId: bigint | number; issuedAt: number };

/** The message for `purpose`, as Chipotle's SDK writes it. */
export function buildSiweMessage(purpose: SiwePurpose, f: SiweFields): string {
  return `${f.host} wants you to ${SIWE_STATEMENTS[purpose]}\n\nAddress: ${getAddress(f.address)}\nChain ID: ${f.chainId}\nIssued At: ${f.issuedAt}`;
}

export type ParsedSiwe = { host: string; purpose: SiwePurpose; address: string; chainId: bigint; issuedAt: bigint };

/** Why a message is refused (the relayer answers 400 with it). */
export class SiweFormatError extends Error {}

const bad = (why: string) => new SiweFormatError(why);

function field(line: string | undefined, name: string, pattern: RegExp, what: string): string {
  const prefix = `${name}: `;
  if (line === undefined || !line.startsWith(prefix)) throw bad(`the message's line "${name}: ..." is missing or out of place`);
  const value = line.slice(prefix.length);
  if (!pattern.test(value)) throw bad(`${name} must be ${what}`);
  return value;
}

/**
 * The fields of a message in exactly the SDK's form (five lines, in order, `\n` only, nothing more):
 * a stricter reading than Chipotle's, which skips lines it does not know, so that what was signed
 * has one meaning. Throws SiweFormatError.
 */
export function parseSiweMessage(message: string): ParsedSiwe {
  if (message.includes("\r")) throw bad("lines end with \\n only");
  const lines = message.split("\n");
  if (lines.length !== 5 || lines[1] !== "") throw bad('the message must be "<host> wants you to <statement>", an empty line, then the Address, Chain ID and Issued At lines, and nothing else');
  const head = HEAD.exec(lines[0]);
  if (!head) throw bad('the first line must read "<host> wants you to <statement>"');
  const host = lines[0].slice(0, head.index);
  const statement = lines[0].slice(head.index + head[0].length);
  if (!host || host.length > MAX_HOST_LENGTH || !HOST.test(host)) throw bad(`the host must be a host name (letters, digits, . - : [ ]), at most ${MAX_HOST_LENGTH} characters`);
  const purpose = (Object.keys(SIWE_STATEMENTS) as SiwePurpose[]).find((p) => SIWE_STATEMENTS[p] === statement);
  if (!purpose) throw bad(`the statement must be one of: ${Object.values(SIWE_STATEMENTS).map((s) => `"${s}"`).join(", ")}`);
  const rawAddress = field(lines[2], "Address", /^0x[0-9a-fA-F]{40}$/, "a 0x-prefixed 20-byte address");
  let address: string;
  try {
    address = getAddress(rawAddress);
  } catch {
    throw bad("Address is not a valid address (bad checksum?)");
  }
  const chainId = BigInt(field(lines[3], "Chain ID", /^[0-9]{1,20}$/, "a decimal chain id"));
  const issuedAt = BigInt(field(lines[4], "Issued At", /^[0-9]{1,15}$/, "unix seconds (decimal)"));
  return { host, purpose, address, chainId, issuedAt };
}
