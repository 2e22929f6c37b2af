/**
 * The typed-data envelope of spec 2, defined once: the relayer verifies with it
 * (relayer/signed/eip712.ts), the dashboard, scripts and tests build and sign with it. Pure.
 */
import { getAddress, type TypedDataField } from "ethers";

export const DEFAULT_DOMAIN_NAME = "Vesta ChainSecured";
export const DOMAIN_VERSION = "1";
export const MAX_TYPED_DATA_BYTES = 4096;
export const ISSUED_AT_TOLERANCE_S = 300;
/** Largest signature taken (bytes): an EOA's is 65, a Safe's 65 per owner; a contract's ERC-1271 payload beyond this is refused before any call. */
export const MAX_SIGNATURE_BYTES = 4096;

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
