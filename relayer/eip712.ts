/**
 * The typed-data envelope of spec 2, defined once: the relayer verifies with it, scripts and tests
 * build and sign with it. Verification uses ethers' typed-data functions (no hand-rolled hashing);
 * contract accounts (Safe, any ERC-1271 wallet) are accepted through `isValidSignature`.
 */
import { getAddress, Interface, isHexString, TypedDataEncoder, verifyTypedData, type Provider, type TypedDataField } from "ethers";

export const DEFAULT_DOMAIN_NAME = "Vesta ChainSecured";
export const DOMAIN_VERSION = "1";
export const MAX_TYPED_DATA_BYTES = 4096;
export const ISSUED_AT_TOLERANCE_S = 300;
/** Largest signature taken (bytes): an EOA's is 65, a Safe's 65 per owner; a contract's ERC-1271 payload beyond this is refused before any call. */
export const MAX_SIGNATURE_BYTES = 4096;
/**
 * Bounds of an ERC-1271 `isValidSignature` eth_call (the contract is the caller's choice, so its
 * cost is too). Measured with Safe 1.5.0 through its fallback handler (bench/signatures.ts, gas of
 * the eth_call including its 21k base): 2-of-3 ~54k, 5-of-7 ~76k, 10-of-12 ~113k; the cap leaves
 * room for larger Safes and nested contract owners.
 */
export const DEFAULT_ERC1271 = { gasLimit: 300_000, timeoutMs: 2_000 };
const ERC1271 = new Interface(["function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)"]);
const ERC1271_MAGIC = "0x1626ba7e";

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

export type Expectation = {
  primaryType: PrimaryType;
  domainName: string;
  chainId: bigint;
  nowSeconds: number;
  /** Where ERC-1271 signatures are checked; without it only ECDSA (EOA) signatures hold. */
  provider?: Provider;
  /** Gas cap and timeout of the isValidSignature call (DEFAULT_ERC1271 when absent). */
  erc1271?: { gasLimit: number; timeoutMs: number };
};

/**
 * Checks an envelope and its signature against what the endpoint expects, in the order of spec 2's
 * "Errors" table: size, types, primaryType, domain, issuedAt window, chainId, signature. Returns the
 * proven address and the last second (unix) at which the same envelope would still be accepted. Throws SignedRequestError (400 for a malformed or stale request, 401 for a
 * signature that does not prove the stated address).
 */
export async function verifySignedRequest(typedData: unknown, signature: unknown, expect: Expectation): Promise<{ address: string; validUntil: number }> {
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
  if ((signature.length - 2) / 2 > MAX_SIGNATURE_BYTES) throw bad(`signature is ${(signature.length - 2) / 2} bytes; at most ${MAX_SIGNATURE_BYTES}`);
  let address: string;
  try {
    address = getAddress(message.address);
  } catch {
    throw bad("message.address is not a valid address (bad checksum?)");
  }
  const domainForEthers = { name: expect.domainName, version: DOMAIN_VERSION, chainId };
  const typesForEthers = { [expect.primaryType]: STRUCT_FIELDS };
  const value = { address, issuedAt };
  const validUntil = Number(issuedAt) + ISSUED_AT_TOLERANCE_S;

  if (isHexString(signature, 65)) {
    try {
      if (verifyTypedData(domainForEthers, typesForEthers, value, signature) === address) return { address, validUntil };
    } catch {
      /* not a valid ECDSA signature: maybe a contract signature */
    }
  }
  if (expect.provider && (await isValidContractSignature(expect.provider, address, TypedDataEncoder.hash(domainForEthers, typesForEthers, value), signature, expect.erc1271 ?? DEFAULT_ERC1271))) {
    return { address, validUntil };
  }
  throw new SignedRequestError(401, "invalid_signature", `the signature does not prove ${address}`);
}

/**
 * ERC-1271: whether the contract at `address` (none: false) accepts `signature` over `digest`. The
 * call has a gas cap and a timeout, so a contract that burns gas or an RPC that stalls costs us at
 * most that; a revert, a timeout or any answer but the magic value is "not valid".
 */
async function isValidContractSignature(provider: Provider, address: string, digest: string, signature: string, bounds: { gasLimit: number; timeoutMs: number }): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), bounds.timeoutMs)));
  const call = async () => {
    if ((await provider.getCode(address)) === "0x") return false;
    const data = ERC1271.encodeFunctionData("isValidSignature", [digest, signature]);
    const answer = await provider.call({ to: address, data, gasLimit: BigInt(bounds.gasLimit) });
    return ERC1271.decodeFunctionResult("isValidSignature", answer)[0] === ERC1271_MAGIC;
  };
  try {
    const result = await Promise.race([call().catch(() => false), timeout]);
    if (result === "timeout") throw new SignedRequestError(401, "invalid_signature", `the contract at ${address} did not answer isValidSignature within ${bounds.timeoutMs} ms`);
    return result;
  } finally {
    clearTimeout(timer);
  }
}
