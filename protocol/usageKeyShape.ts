/**
 * A usage key's permission set in its two shapes: the REST fields of spec 1 (snake_case, group ids
 * as numbers) and the contract's UsageKeyPermissions struct. Pure (no Node APIs): the relayer and
 * the dashboard's wallet mode (which writes to the contract itself) convert with the same code.
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

export const toContractPermissions = <Id extends bigint | number>(b: RestPermissions<Id>): ContractPermissions<Id[]> => ({
  canCreateGroups: b.can_create_groups,
  canDeleteGroups: b.can_delete_groups,
  canCreatePkps: b.can_create_pkps,
  manageIpfsIdsInGroups: b.manage_ipfs_ids_in_groups,
  addPkpToGroups: b.add_pkp_to_groups,
  removePkpFromGroups: b.remove_pkp_from_groups,
  executeInGroups: b.execute_in_groups,
});

/** A UsageKeyView from the contract as the REST list item of `list_api_keys`. */
export function toRestUsageKey(k: { usageApiKeyHash: bigint; name: string; description: string; expiration: bigint; balance: bigint; permissions: ContractPermissions }) {
  const ids = (l: Ids) => l.map(Number);
  return {
    id: hex32(k.usageApiKeyHash),
    name: k.name,
    description: k.description,
    expiration: Number(k.expiration),
    balance: k.balance.toString(),
    can_create_groups: k.permissions.canCreateGroups,
    can_delete_groups: k.permissions.canDeleteGroups,
    can_create_pkps: k.permissions.canCreatePkps,
    manage_ipfs_ids_in_groups: ids(k.permissions.manageIpfsIdsInGroups),
    add_pkp_to_groups: ids(k.permissions.addPkpToGroups),
    remove_pkp_from_groups: ids(k.permissions.removePkpFromGroups),
    execute_in_groups: ids(k.permissions.executeInGroups),
  };
}
