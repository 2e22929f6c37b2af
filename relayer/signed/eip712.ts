/**
 * Verification of spec 2's typed-data envelope (protocol/eip712.ts): ethers' typed-data hashing (no
 * hand-rolled encoding), the signer recovered natively, contract accounts (Safe, any ERC-1271
 * wallet) accepted through a bounded `isValidSignature` call.
 */
import { concat, getAddress, isHexString, keccak256, TypedDataEncoder, type TypedDataField } from "ethers";
import { DOMAIN_VERSION, EIP712_DOMAIN_FIELDS, ISSUED_AT_TOLERANCE_S, MAX_TYPED_DATA_BYTES, PRIMARY_TYPES, STRUCT_FIELDS, type PrimaryType } from "../../protocol/eip712";
import { SignedRequestError } from "./errors";
import { requireProof, signatureHex, withinWindow, type Expectation } from "./proof";

const bad = (message: string) => new SignedRequestError("invalid_typed_data", message);

const sameFields = (a: unknown, b: TypedDataField[]) =>
  Array.isArray(a) &&
  a.length === b.length &&
  a.every((f, i) => f && typeof f === "object" && Object.keys(f).length === 2 && f.name === b[i].name && f.type === b[i].type);

const onlyKeys = (o: unknown, keys: string[]) => o !== null && typeof o === "object" && !Array.isArray(o) && Object.keys(o).sort().join() === [...keys].sort().join();

/**
 * The EIP-712 digest of `value` (ethers' TypedDataEncoder.hash), with the parts that never change on
 * a node kept: each primary type's encoder and each domain's separator (bounded: a domain is a
 * checked name and chain id). A test checks it against TypedDataEncoder.hash.
 */
const encoders = new Map<PrimaryType, TypedDataEncoder>();
const separators = new Map<string, string>();
export function typedDataDigest(domain: { name: string; version: string; chainId: bigint }, primaryType: PrimaryType, value: { address: string; issuedAt: bigint }): string {
  let encoder = encoders.get(primaryType);
  if (!encoder) encoders.set(primaryType, (encoder = TypedDataEncoder.from({ [primaryType]: STRUCT_FIELDS })));
  const key = `${domain.name}\u0000${domain.version}\u0000${domain.chainId}`;
  let separator = separators.get(key);
  if (!separator) {
    separator = TypedDataEncoder.hashDomain(domain);
    if (separators.size < 16) separators.set(key, separator);
  }
  return keccak256(concat(["0x1901", separator, encoder.hash(value)]));
}

/** A uint given as a JSON number or a decimal/hex string, as bigint; undefined when it is not one. */
function toUint(v: unknown): bigint | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
  if (typeof v === "string" && /^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/.test(v)) return BigInt(v);
  return undefined;
}

/**
 * Checks an envelope and its signature against what the endpoint expects, in the order of spec 2's
 * "Errors" table: size, types, primaryType, domain, issuedAt window, chainId, signature. Returns the
 * proven address and the last second (unix) at which the same envelope would still be accepted.
 * Throws SignedRequestError (400 for a malformed or stale request, 401 for a signature that does not
 * prove the stated address).
 */
export async function verifyTypedData(typedData: unknown, signature: unknown, expect: Expectation & { primaryType: PrimaryType }): Promise<{ address: string; validUntil: number }> {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(typedData) ?? "", "utf8");
  } catch {
    throw bad("typed_data is not serialisable JSON");
  }
  if (size > MAX_TYPED_DATA_BYTES) throw bad(`typed_data is ${size} bytes of JSON; at most ${MAX_TYPED_DATA_BYTES}`);
  if (!onlyKeys(typedData, ["types", "domain", "primaryType", "message"])) throw bad("typed_data must have exactly types, domain, primaryType and message");
  const td = typedData as Record<string, unknown>;

  if (!PRIMARY_TYPES.includes(td.primaryType as PrimaryType)) throw bad(`primaryType must be one of ${PRIMARY_TYPES.join(", ")}`);
  if (td.primaryType !== expect.primaryType) throw bad(`this endpoint takes primaryType ${expect.primaryType}, not ${String(td.primaryType)}`);
  const types = td.types as Record<string, unknown>;
  if (!onlyKeys(types, ["EIP712Domain", expect.primaryType])) throw bad(`types must be exactly EIP712Domain and ${expect.primaryType}`);
  if (!sameFields(types.EIP712Domain, EIP712_DOMAIN_FIELDS)) throw bad("types.EIP712Domain must be [name string, version string, chainId uint256], in that order");
  if (!sameFields(types[expect.primaryType], STRUCT_FIELDS)) throw bad(`types.${expect.primaryType} must be [address address, issuedAt uint256], in that order`);

  const domain = td.domain as Record<string, unknown>;
  if (!onlyKeys(domain, ["name", "version", "chainId"])) throw bad("domain must have exactly name, version and chainId");
  if (domain.name !== expect.domainName) throw bad(`domain.name must be "${expect.domainName}"`);
  if (domain.version !== DOMAIN_VERSION) throw bad(`domain.version must be "${DOMAIN_VERSION}"`);
  const chainId = toUint(domain.chainId);
  if (chainId === undefined) throw bad("domain.chainId must be an unsigned integer");
  if (chainId !== expect.chainId) throw bad(`domain.chainId ${chainId} is not this node's chain ${expect.chainId}`);

  const message = td.message as Record<string, unknown>;
  if (!onlyKeys(message, ["address", "issuedAt"])) throw bad("message must have exactly address and issuedAt");
  if (typeof message.address !== "string" || !isHexString(message.address, 20)) throw bad("message.address must be a 0x-prefixed 20-byte address");
  const issuedAt = toUint(message.issuedAt);
  if (issuedAt === undefined) throw bad("message.issuedAt must be an unsigned integer (unix seconds)");
  if (!withinWindow(issuedAt, expect.nowSeconds, ISSUED_AT_TOLERANCE_S)) throw bad(`message.issuedAt must be within ${ISSUED_AT_TOLERANCE_S} s of the server's time (${expect.nowSeconds})`);

  const sig = signatureHex(signature, "invalid_typed_data");
  let address: string;
  try {
    address = getAddress(message.address);
  } catch {
    throw bad("message.address is not a valid address (bad checksum?)");
  }
  const domainForEthers = { name: expect.domainName, version: DOMAIN_VERSION, chainId };
  const value = { address, issuedAt };
  await requireProof(typedDataDigest(domainForEthers, expect.primaryType, value), address, sig, expect);
  return { address, validUntil: Number(issuedAt) + ISSUED_AT_TOLERANCE_S };
}
