/**
 * The typed-data envelope of spec 2, defined once: the relayer verifies with it, scripts and tests
 * build and sign with it. Verification uses ethers' typed-data functions (no hand-rolled hashing);
 * contract accounts (Safe, any ERC-1271 wallet) are accepted through `isValidSignature`.
 */
import { Contract, getAddress, isHexString, TypedDataEncoder, verifyTypedData, type Provider, type TypedDataField } from "ethers";

export const DEFAULT_DOMAIN_NAME = "Vesta ChainSecured";
export const DOMAIN_VERSION = "1";
export const MAX_TYPED_DATA_BYTES = 4096;
export const ISSUED_AT_TOLERANCE_S = 300;

export const PRIMARY_TYPES = ["CreateWallet", "ConvertAccount", "AddUsageApiKey", "BillingAuth"] as const;
export type PrimaryType = (typeof PRIMARY_TYPES)[number];

/** Ordered fields of the domain and of every primary type: the order is part of the type hash. */
export const EIP712_DOMAIN_FIELDS: TypedDataField[] = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
];
export const STRUCT_FIELDS: TypedDataField[] = [
  { name: "address", type: "address" },
  { name: "issuedAt", type: "uint256" },
];

export type TypedData = {
  types: Record<string, TypedDataField[]>;
  domain: { name: string; version: string; chainId: number | string };
  primaryType: PrimaryType;
  message: { address: string; issuedAt: number | string };
};

/** The envelope for `primaryType`, proving `address` at `issuedAt` (unix seconds). */
export function buildTypedData(primaryType: PrimaryType, opts: { domainName?: string; chainId: bigint | number; address: string; issuedAt: number }): TypedData {
  return {
    types: { EIP712Domain: EIP712_DOMAIN_FIELDS, [primaryType]: STRUCT_FIELDS },
    domain: { name: opts.domainName ?? DEFAULT_DOMAIN_NAME, version: DOMAIN_VERSION, chainId: Number(opts.chainId) },
    primaryType,
    message: { address: getAddress(opts.address), issuedAt: opts.issuedAt },
  };
}

/** A rejected signed request: the relayer turns it into a 4xx with this code and message. */
export class SignedRequestError extends Error {
  constructor(
    readonly status: 400 | 401,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const bad = (message: string) => new SignedRequestError(400, "invalid_typed_data", message);

const sameFields = (a: unknown, b: TypedDataField[]) =>
  Array.isArray(a) &&
  a.length === b.length &&
  a.every((f, i) => f && typeof f === "object" && Object.keys(f).length === 2 && f.name === b[i].name && f.type === b[i].type);

const onlyKeys = (o: unknown, keys: string[]) => o !== null && typeof o === "object" && !Array.isArray(o) && Object.keys(o).sort().join() === [...keys].sort().join();

/** A uint given as a JSON number or a decimal/hex string, as bigint; undefined when it is not one. */
function toUint(v: unknown): bigint | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
  if (typeof v === "string" && /^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/.test(v)) return BigInt(v);
  return undefined;
}

export type Expectation = { primaryType: PrimaryType; domainName: string; chainId: bigint; nowSeconds: number; provider?: Provider };

/**
 * Checks an envelope and its signature against what the endpoint expects, in the order of spec 2's
 * "Errors" table: size, types, primaryType, domain, issuedAt window, chainId, signature. Returns the
 * proven address. Throws SignedRequestError (400 for a malformed or stale request, 401 for a
 * signature that does not prove the stated address).
 */
export async function verifySignedRequest(typedData: unknown, signature: unknown, expect: Expectation): Promise<{ address: string }> {
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
  const now = BigInt(expect.nowSeconds);
  const skew = issuedAt > now ? issuedAt - now : now - issuedAt;
  if (skew > BigInt(ISSUED_AT_TOLERANCE_S)) throw bad(`message.issuedAt must be within ${ISSUED_AT_TOLERANCE_S} s of the server's time (${now})`);

  if (typeof signature !== "string" || !isHexString(signature) || signature.length < 4) throw bad("signature must be a 0x-prefixed hex string");
  let address: string;
  try {
    address = getAddress(message.address);
  } catch {
    throw bad("message.address is not a valid address (bad checksum?)");
  }
  const domainForEthers = { name: expect.domainName, version: DOMAIN_VERSION, chainId };
  const typesForEthers = { [expect.primaryType]: STRUCT_FIELDS };
  const value = { address, issuedAt };

  if (isHexString(signature, 65)) {
    try {
      if (verifyTypedData(domainForEthers, typesForEthers, value, signature) === address) return { address };
    } catch {
      /* not a valid ECDSA signature: maybe a contract signature */
    }
  }
  if (expect.provider && (await expect.provider.getCode(address)) !== "0x") {
    const digest = TypedDataEncoder.hash(domainForEthers, typesForEthers, value);
    const wallet = new Contract(address, ["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"], expect.provider);
    try {
      if ((await wallet.isValidSignature(digest, signature)) === "0x1626ba7e") return { address };
    } catch {
      /* reverted: not valid */
    }
  }
  throw new SignedRequestError(401, "invalid_signature", `the signature does not prove ${address}`);
}
