/**
 * A usage key's permission set in its two shapes: the REST fields of spec 1 (snake_case, group ids
 * as numbers) and the contract's (setUsageApiKey's arguments; the UsageKeyPermissions of its views).
 * Pure (no Node APIs): the relayer and the dashboard's wallet mode (which writes to the contract
 * itself) convert with the same code.
 */
/** A uint256 as 0x-prefixed 64-digit hex (account hashes, derivation paths, CID hashes on the wire). */
export const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, "0")}`;

/** Group ids are numbers on the wire and bigints once the relayer's schemas parsed them. */
export type RestPermissions<Id extends bigint | number = number> = {
  can_create_groups: boolean;
  can_delete_groups: boolean;
  can_create_pkps: boolean;
  manage_ipfs_ids_in_groups: Id[];
  add_pkp_to_groups: Id[];
  remove_pkp_from_groups: Id[];
  execute_in_groups: Id[];
};

type Ids = readonly (bigint | number)[];
export type ContractPermissions<L extends Ids = Ids> = {
  canCreateGroups: boolean;
  canDeleteGroups: boolean;
  canCreatePkps: boolean;
  manageIpfsIdsInGroups: L;
  addPkpToGroups: L;
  removePkpFromGroups: L;
  executeInGroups: L;
};

/**
 * The permission arguments of `setUsageApiKey` (Chipotle's signature), in order: the three
 * account-wide flags, then the four group lists.
 */
export const toPermissionArgs = <Id extends bigint | number>(b: RestPermissions<Id>) =>
  [
    b.can_create_groups,
    b.can_delete_groups,
    b.can_create_pkps,
    b.manage_ipfs_ids_in_groups,
    b.add_pkp_to_groups,
    b.remove_pkp_from_groups,
    b.execute_in_groups,
  ] as const;

/**
 * A UsageKeyView from the contract as the REST list item of `list_api_keys`: Chipotle's fields with
 * Chipotle's types (`api_key_hash` = keccak256 of the key, the value its SDK matches on; `expiration`
 * a decimal string; `balance` a number; the `can_*` lists), and the field names of spec 1 beside
 * them (`manage_ipfs_ids_in_groups`, ...), which Vesta's own clients read.
 */
export function toRestUsageKey(k: { usageApiKeyHash: bigint; name: string; description: string; expiration: bigint; balance: bigint; permissions: ContractPermissions }) {
  const ids = (l: Ids) => l.map(Number);
  const p = k.permissions;
  return {
    id: hex32(k.usageApiKeyHash),
    api_key_hash: hex32(k.usageApiKeyHash),
    name: k.name,
    description: k.description,
    expiration: k.expiration.toString(),
    balance: Number(k.balance),
    can_create_groups: p.canCreateGroups,
    can_delete_groups: p.canDeleteGroups,
    can_create_pkps: p.canCreatePkps,
    can_manage_ipfs_ids_in_groups: ids(p.manageIpfsIdsInGroups),
    can_add_pkp_to_groups: ids(p.addPkpToGroups),
    can_remove_pkp_from_groups: ids(p.removePkpFromGroups),
    can_execute_in_groups: ids(p.executeInGroups),
    manage_ipfs_ids_in_groups: ids(p.manageIpfsIdsInGroups),
    add_pkp_to_groups: ids(p.addPkpToGroups),
    remove_pkp_from_groups: ids(p.removePkpFromGroups),
    execute_in_groups: ids(p.executeInGroups),
  };
}
