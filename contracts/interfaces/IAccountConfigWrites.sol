// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccountConfigBase} from "./IAccountConfigBase.sol";

/// @title IAccountConfigWrites
/// @notice Every write of AccountConfig (see `IAccountConfigBase` for identities and rules). Where
/// Chipotle's AccountConfig has a function of the same name, this is its signature (argument order,
/// uint256 group ids, return type), with Vesta's permission rules, limits and events.
interface IAccountConfigWrites is IAccountConfigBase {
    // ────────────────────────────────────────── Accounts ──────────────────────────────────────────

    /// @notice Creates an account (Chipotle's signature). Managed: only an API payer, for a
    /// server-generated key (`apiKeyHash` = keccak256 of the key's UTF-8 bytes, `adminWalletAddress`
    /// the wallet derived from its secret). Unmanaged (ChainSecured): only the wallet itself, with
    /// `apiKeyHash` = keccak256(abi.encodePacked(msg.sender)) and `adminWalletAddress` = msg.sender
    /// (`NotOwnChainSecuredAccount`), as `newChainSecuredAccount`. An account's hash is never a usage
    /// key: a managed account's is reserved by the payer before it is shown (`authorizeUsageApiKey`
    /// for the account's own hash), and one a usage key holds reverts (`KeyHashInUse`);
    /// a wallet's hash is public before its account exists, so a usage key registered under it is
    /// dropped (`UsageApiKeyRemoved`).
    function newAccount(uint256 apiKeyHash, bool managed, string calldata name, string calldata description, address adminWalletAddress) external;

    /// @notice Creates a ChainSecured account owned by the caller (EOA, Safe or any contract):
    /// apiKeyHash = keccak256(abi.encodePacked(msg.sender)), managed = false. The hash is no
    /// credential; a usage key registered under it before is dropped (`UsageApiKeyRemoved`).
    function newChainSecuredAccount(string calldata name, string calldata description) external returns (uint256 apiKeyHash);

    /// @notice Proposes to make a managed account ChainSecured with `newAdminWalletAddress` as its
    /// admin. Callable by an API payer or the account's admin wallet; the account stays managed (and
    /// keeps its admin) until `newAdminWalletAddress` calls `acceptAccountOwnership`, which makes it
    /// the admin and managed false. Groups, PKPs, action metadata and usage keys are preserved. There
    /// is no way back once accepted. A new proposal replaces a pending one.
    function convertToChainSecuredAccount(uint256 apiKeyHash, address newAdminWalletAddress) external;

    /// @notice Proposes another admin wallet for the account (owner only); `newAdminWalletAddress`
    /// becomes the admin when it calls `acceptAccountOwnership`. address(0) cancels a pending
    /// transfer or conversion. A new proposal replaces a pending one.
    function transferAccountOwnership(uint256 apiKeyHash, address newAdminWalletAddress) external;

    /// @notice Completes a pending transfer or conversion: the caller must be the pending admin wallet
    /// (`NotPendingAdmin`), and becomes the account's admin (a conversion also makes it unmanaged).
    function acceptAccountOwnership(uint256 apiKeyHash) external;

    // ───────────────────────────────────────── Usage keys ─────────────────────────────────────────

    /// @notice Reserves a key that Vesta minted, before its hash is public. Only an API payer: it does
    /// so for a key it generated itself, a usage key of the account `apiKeyHash` (managed:
    /// `add_usage_api_key`; ChainSecured, after verifying the admin wallet's signature:
    /// `add_usage_api_key_with_signature`), or the account key of a managed account about to be
    /// created, under its own hash (`new_account`). From then on no other account can register that
    /// hash as a usage key (it stays the account's home, see `usageApiKeyHome`).
    /// @param usageApiKeySeal keccak256(abi.encode(usageApiKeyHash)) (see `usageApiKeySeal`):
    /// the key hash itself is not shown, so nobody can register it elsewhere first. A seal is
    /// authorized once, and never after its key was registered (`UsageApiKeyAlreadyAuthorized`).
    function authorizeUsageApiKey(uint256 apiKeyHash, bytes32 usageApiKeySeal) external;

    /// @notice Adds a usage key, or replaces the whole permission set, expiration and balance of an
    /// existing one of the same account (replace-all: nothing of the previous set survives). Owner
    /// only. Chipotle's signature.
    /// @param apiKeyHash the account's hash (an account key, never a usage key).
    /// @param usageApiKeyHash keccak256 of the usage key's UTF-8 bytes. Unique across all accounts,
    /// never the hash of an account (`KeyHashInUse`). A removed key is revoked for good: it is never
    /// registered again, by any account (`UsageApiKeyNotFound` for its own, so an update racing its
    /// removal cannot bring it back). A key new to the
    /// contract is registered when an API payer authorized its seal for this account (authorized
    /// for another account: `KeyHashInUse`), or, with no authorization, when the admin wallet calls
    /// directly (a key it minted itself: first registration wins). A relayed one without
    /// authorization reverts with `UsageApiKeyNotAuthorized`, checked after every other rule, so a
    /// simulation that reverts with it shows that the registration is valid once authorized.
    /// @param expiration unix seconds after which the key is invalid; 0 = never.
    /// @param balance stored and shown as given (at most 2^128 - 1); credits are billed off-chain.
    /// @param manageIpfsIdsInGroups group ids where the key may add or remove actions; in each list,
    /// [0] alone = all groups, [] = none, else distinct existing groups (at most `MAX_PERMISSION_GROUPS`).
    function setUsageApiKey(
        uint256 apiKeyHash,
        uint256 usageApiKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        bool canCreateGroups,
        bool canDeleteGroups,
        bool canCreatePkps,
        uint256[] calldata manageIpfsIdsInGroups,
        uint256[] calldata addPkpToGroups,
        uint256[] calldata removePkpFromGroups,
        uint256[] calldata executeInGroups
    ) external;

    /// @notice Changes only the name and description of a usage key. Owner only.
    function updateUsageApiKeyMetadata(uint256 apiKeyHash, uint256 usageApiKeyHash, string calldata name, string calldata description) external;

    /// @notice Revokes a usage key at once. Owner only.
    function removeUsageApiKey(uint256 apiKeyHash, uint256 usageApiKeyHash) external;

    // ─────────────────────────────────────────── Groups ───────────────────────────────────────────

    /// @notice Creates a group (scope group:create) and returns its id. Listed PKPs must belong to the
    /// account (no wildcard member: the zero CID hash is refused). Initial members need the same
    /// scopes as adding them later: group:addPkp for PKPs and group:manageActions for CIDs, on the
    /// new group (so, for a usage key, the wildcard). Chipotle's signature (CIDs before PKPs).
    function addGroup(
        uint256 actorKeyHash,
        string calldata name,
        string calldata description,
        uint256[] calldata cidHashes,
        address[] calldata pkpIds
    ) external returns (uint256 groupId);

    /// @notice Replaces a group's name, description, CIDs and PKPs. The owner, or a key holding
    /// group:manageActions, group:addPkp and group:removePkp on that group. Chipotle's signature.
    /// Members it drops leave the execution index (`findExecutionGroup`), the last
    /// `MAX_GROUP_MEMBERS` of each kind at most so that the write stays bounded; one left there is
    /// never found (every listing is checked).
    function updateGroup(
        uint256 actorKeyHash,
        uint256 groupId,
        string calldata name,
        string calldata description,
        uint256[] calldata cidHashes,
        address[] calldata pkpIds
    ) external;

    /// @notice Replaces only a group's name and description; the same rights as `updateGroup`.
    function updateGroupMetadata(uint256 actorKeyHash, uint256 groupId, string calldata name, string calldata description) external;

    /// @notice Removes a group (scope group:delete). Its id is never reused, so usage keys whose
    /// lists still name it gain nothing; their stored lists are left as granted. Its members leave
    /// the execution index as in `updateGroup`.
    function removeGroup(uint256 actorKeyHash, uint256 groupId) external;

    /// @notice Adds one of the account's PKPs to a group (scope group:addPkp on the group).
    function addPkpToGroup(uint256 actorKeyHash, uint256 groupId, address pkpId) external;

    /// @notice Removes a PKP from a group (scope group:removePkp on the group).
    function removePkpFromGroup(uint256 actorKeyHash, uint256 groupId, address pkpId) external;

    /// @notice Lists an action CID (by hash) in a group (scope group:manageActions on the group).
    function addActionToGroup(uint256 actorKeyHash, uint256 groupId, uint256 cidHash) external;

    /// @notice Removes an action CID from a group (scope group:manageActions on the group).
    function removeActionFromGroup(uint256 actorKeyHash, uint256 groupId, uint256 cidHash) external;

    // ──────────────────────────────────── Wallets and actions ─────────────────────────────────────

    /// @notice Registers a minted PKP to the actor's account (scope pkp:create). The wallet's key is
    /// derived inside the TEE from (account hash, derivation path), so a registration only ever
    /// yields a key to the account it was derived for. Registrations are per account: an address
    /// registered by another account neither blocks this one nor gives that account anything.
    function registerWalletDerivation(
        uint256 actorKeyHash,
        address walletAddress,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) external;

    /// @notice Registers action metadata for a CID. Owner only: metadata is account-wide, and a usage
    /// key's group:manageActions covers the CID lists of the groups it was granted on, nothing else
    /// (`OwnerOnly`). Chipotle's signature (the CID hash last).
    function addAction(uint256 actorKeyHash, string calldata name, string calldata description, uint256 cidHash) external;

    /// @notice Changes an action's metadata. Owner only. Chipotle's signature: `groupId` is not used
    /// (metadata is account-wide; Chipotle's clients pass 0).
    function updateActionMetadata(uint256 actorKeyHash, uint256 cidHash, uint256 groupId, string calldata name, string calldata description) external;

    /// @notice Deletes an action's metadata from the account; groups that list the CID are unchanged. Owner only.
    function removeAction(uint256 actorKeyHash, uint256 cidHash) external;

    // ─────────────────────────────────────────── Payers ───────────────────────────────────────────

    /// @notice Adds an API payer (the contract owner or the admin API payer).
    function addApiPayer(address payer) external;

    /// @notice Removes an API payer (the contract owner or the admin API payer).
    function removeApiPayer(address payer) external;

    /// @notice Sets the admin API payer, which manages the payer set (contract owner only);
    /// address(0) leaves the payer set to the owner alone.
    function setAdminApiPayer(address adminPayer) external;
}
