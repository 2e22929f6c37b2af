// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice Capabilities a usage key can hold. The per-group ones are granted as lists of group ids.
/// @dev The numeric values are part of the ABI of the error `MissingScope`: append only.
enum Scope {
    CreateGroups, // group:create (account-wide)
    DeleteGroups, // group:delete (account-wide)
    CreatePkps, // pkp:create (account-wide)
    ManageActions, // group:manageActions (per group)
    AddPkp, // group:addPkp (per group)
    RemovePkp, // group:removePkp (per group)
    Execute // execute (per group)
}

/// @notice An account as returned by `getAccount`.
struct AccountView {
    uint256 apiKeyHash;
    address adminWalletAddress;
    bool managed;
    /// true when the account was created with a server-generated API key (managed origin); a
    /// ChainSecured account created by its wallet has no account key, and its hash is no credential.
    bool hasApiKey;
    /// the wallet proposed as admin that has not accepted yet (address(0): none).
    address pendingAdminWalletAddress;
    /// true when the pending proposal is a conversion to ChainSecured.
    bool pendingConversion;
    string name;
    string description;
}

/// @notice The permission set of a usage key, in the shape of the REST fields of spec 1.
/// In each list, the single element 0 means all groups; an empty list grants nothing.
struct UsageKeyPermissions {
    bool canCreateGroups;
    bool canDeleteGroups;
    bool canCreatePkps;
    uint64[] manageIpfsIdsInGroups;
    uint64[] addPkpToGroups;
    uint64[] removePkpFromGroups;
    uint64[] executeInGroups;
}

/// @notice A usage key as returned by the views: its hash, metadata and full permission set.
struct UsageKeyView {
    uint256 usageApiKeyHash;
    uint256 expiration;
    uint256 balance;
    string name;
    string description;
    UsageKeyPermissions permissions;
}

/// @notice A group as returned by the list view (member counts; members have their own paginated views).
/// It starts with Chipotle's `Metadata` (id, name, description), so its clients decode it unchanged.
struct GroupView {
    uint64 id;
    string name;
    string description;
    uint256 pkpCount;
    uint256 cidCount;
}

/// @notice A wallet (PKP) registered to an account. The field order is Chipotle's `PkpData`
/// (id, pkpId, name, description), so its clients decode the list views unchanged.
struct WalletView {
    uint256 derivationPath;
    address walletAddress;
    string name;
    string description;
}

/// @notice An action (by keccak256 of its CID) with the account's metadata for it, if any: the
/// layout of Chipotle's `Metadata` (id = the CID hash).
struct ActionView {
    uint256 cidHash;
    string name;
    string description;
}

/// @notice An id with a name and a description: Chipotle's `Metadata`.
struct Metadata {
    uint256 id;
    string name;
    string description;
}

/// @notice A usage key in the shape of Chipotle's `listApiKeys` items (`UsageApiKeyReturn`):
/// `metadata.id` and `apiKeyHash` are both the key's hash (keccak256 of the key's bytes). Group ids
/// are uint64 here and uint256 in Chipotle's ABI, which encode alike.
struct UsageKeyListItem {
    Metadata metadata;
    uint256 apiKeyHash;
    uint256 expiration;
    uint256 balance;
    uint64[] executeInGroups;
    bool createGroups;
    bool deleteGroups;
    bool createPKPs;
    uint64[] manageIPFSIdsInGroups;
    uint64[] addPkpToGroups;
    uint64[] removePkpFromGroups;
}
