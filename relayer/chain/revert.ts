import type { ErrorDescription, Interface } from "ethers";
import { AppError } from "../errors";

const SCOPES = ["group:create", "group:delete", "pkp:create", "group:manageActions", "group:addPkp", "group:removePkp", "execute"];

type Args = readonly unknown[];
const hex = (v: unknown) => `0x${BigInt(v as bigint).toString(16)}`;

/** Custom errors of AccountConfig → the HTTP answer. */
const MAP: Record<string, (a: Args) => AppError> = {
  UnknownApiKey: () => new AppError(401, "invalid_api_key", "this API key is unknown or revoked"),
  UsageApiKeyExpired: () => new AppError(401, "invalid_api_key", "this usage key has expired"),
  OwnerOnly: () => new AppError(403, "owner_only", "only the account key can do this; a usage key cannot"),
  MissingScope: (a) => {
    const scope = SCOPES[Number(a[1])] ?? `scope ${a[1]}`;
    const group = BigInt(a[2] as bigint);
    return new AppError(403, "missing_scope", `this key lacks the ${scope} permission${group ? ` on group ${group}` : ""}`, {
      scope,
      ...(group ? { group_id: Number(group) } : {}),
    });
  },
  AccountNotManaged: () =>
    new AppError(403, "account_chain_secured", "this account is ChainSecured: admin writes must come from its admin wallet, not through the API"),
  NotAuthorizedCaller: () => new AppError(503, "payer_not_authorized", "the service's payer is not authorized on the contract; the operator has been told"),
  NotApiPayer: () => new AppError(503, "payer_not_authorized", "the service's payer is not an API payer on the contract; the operator has been told"),
  AccountNotFound: (a) => new AppError(404, "account_not_found", `no account ${hex(a[0])}`),
  GroupNotFound: (a) => new AppError(404, "group_not_found", `no group ${a[1]} in this account`, { group_id: Number(a[1]) }),
  PkpNotFound: (a) => new AppError(404, "wallet_not_found", `no wallet ${a[1]} is registered to this account`),
  NotPendingAdmin: () => new AppError(403, "not_pending_admin", "only the proposed admin wallet can accept the account, from its own address"),
  UsageApiKeyNotAuthorized: () =>
    new AppError(409, "write_rejected", "a new usage key registered through the API needs the service's authorization first; nothing changed"),
  UsageApiKeyAlreadyAuthorized: () => new AppError(409, "already_exists", "this usage key is already reserved"),
  NotOwnChainSecuredAccount: () => new AppError(403, "not_account_admin", "a wallet-owned account is created by its own wallet only"),
  PkpNotInGroup: (a) => new AppError(404, "wallet_not_in_group", `wallet ${a[2]} is not in group ${a[1]}`),
  ActionNotInGroup: (a) => new AppError(404, "action_not_in_group", `action ${hex(a[2])} is not in group ${a[1]}`),
  ActionNotFound: (a) => new AppError(404, "action_not_found", `no action ${hex(a[1])} in this account`),
  UsageApiKeyNotFound: () => new AppError(404, "usage_key_not_found", "no such usage key in this account"),
  AccountAlreadyExists: () => new AppError(409, "already_exists", "an account with this key already exists"),
  KeyHashInUse: () => new AppError(409, "already_exists", "this key is already in use"),
  PkpAlreadyRegistered: (a) => new AppError(409, "already_exists", `wallet ${a[1]} is already registered to this account`),
  PkpAlreadyInGroup: (a) => new AppError(409, "already_exists", `wallet ${a[2]} is already in group ${a[1]}`),
  ActionAlreadyInGroup: (a) => new AppError(409, "already_exists", `action ${hex(a[2])} is already in group ${a[1]}`),
  ActionAlreadyExists: (a) => new AppError(409, "already_exists", `action ${hex(a[1])} is already registered`),
  InvalidGroupList: (a) =>
    new AppError(400, "invalid_request", `invalid group list for ${SCOPES[Number(a[0])]}: use [0] alone for all groups, or distinct group ids (got ${a[1]})`),
  TooManyItems: (a) => new AppError(400, "invalid_request", `too many items: ${a[0]} (at most ${a[1]})`),
  NameTooLong: (a) => new AppError(400, "invalid_request", `the name is ${a[0]} bytes of UTF-8 (at most ${a[1]})`),
  DescriptionTooLong: (a) => new AppError(400, "invalid_request", `the description is ${a[0]} bytes of UTF-8 (at most ${a[1]})`),
  InvalidExpiration: (a) => new AppError(400, "invalid_request", `expiration ${a[0]} must be 0 (never) or a future unix time`),
  BalanceTooLarge: () => new AppError(400, "invalid_request", "balance is too large"),
  InvalidCidHash: () => new AppError(400, "invalid_request", "the CID hash must not be zero"),
  InvalidKeyHash: () => new AppError(400, "invalid_request", "invalid key"),
  ZeroAddress: () => new AppError(400, "invalid_request", "the address must not be zero"),
  InvalidDerivationPath: () => new AppError(400, "invalid_request", "invalid derivation path"),
};

/** The revert data carried by an ethers error, wherever the provider put it. */
function revertData(err: unknown): string | undefined {
  const e = err as { data?: unknown; info?: { error?: { data?: unknown } }; error?: { data?: unknown } };
  for (const d of [e?.data, e?.info?.error?.data, e?.error?.data]) {
    if (typeof d === "string" && d.startsWith("0x") && d.length >= 10) return d;
    if (d && typeof (d as { data?: unknown }).data === "string") return (d as { data: string }).data;
  }
  return undefined;
}

/** The contract's custom error in a revert (null when it carries none, or one `iface` does not know). */
export function revertOf(iface: Interface, err: unknown): ErrorDescription | null {
  const data = revertData(err);
  return data ? iface.parseError(data) : null;
}

/** Decodes a contract revert into the AppError the API answers with; other errors pass through. */
export function decodeRevert(iface: Interface, err: unknown): unknown {
  if (err instanceof AppError) return err;
  const data = revertData(err);
  if (!data) return err;
  const parsed = iface.parseError(data);
  if (!parsed) return new AppError(409, "write_rejected", "the contract rejected this write; nothing changed");
  const make = MAP[parsed.name];
  return make ? make(parsed.args) : new AppError(409, "write_rejected", `the contract rejected this write (${parsed.name}); nothing changed`);
}
