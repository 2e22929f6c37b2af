// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccountConfigBase} from "./IAccountConfigBase.sol";
import {Scope, AccountView, UsageKeyView, UsageKeyListItem, GroupView, WalletView, ActionView} from "../types/AccountConfigTypes.sol";

/// @title IAccountConfigViews
/// @notice Every read of AccountConfig, served at AccountConfig's address by `AccountConfigViews`
/// through the fallback (run in AccountConfig's storage; `msg.sender` is the caller's).
///
/// Lists are paginated: `pageNumber` starts at 0; a page past the end or a `pageSize` of 0 is empty;
/// each returns the total count after the page. The items start with Chipotle's fields in
/// Chipotle's order, so a client holding Chipotle's ABI (which returns the page alone) decodes them
/// unchanged. A list takes an account hash or a usage key hash (its account is listed); an unknown
/// hash lists nothing.
interface IAccountConfigViews is IAccountConfigBase {
    /// @notice Longest name, in bytes of UTF-8 (accounts, usage keys, groups, wallets, actions).
    function MAX_NAME_BYTES() external view returns (uint256);

    /// @notice Longest description, in bytes of UTF-8.
    function MAX_DESCRIPTION_BYTES() external view returns (uint256);

    /// @notice Most PKPs, and most CID hashes, one group write may list.
    function MAX_GROUP_MEMBERS() external view returns (uint256);

    /// @notice Most group ids in each permission list of a usage key.
    function MAX_PERMISSION_GROUPS() external view returns (uint256);

    // ─────────────────────────────────────────── Payers ───────────────────────────────────────────

    /// @notice The API payer addresses (`get_api_payers`).
    function getApiPayers() external view returns (address[] memory);

    /// @notice The API payer addresses: Chipotle's name for `getApiPayers`.
    function api_payers() external view returns (address[] memory);

    /// @notice The admin API payer (`get_admin_api_payer`).
    function getAdminApiPayer() external view returns (address);

    function isApiPayer(address account) external view returns (bool);

    // ───────────────────────────────────────── Accounts ───────────────────────────────────────────

    /// @notice Resolves a key hash: its account, whether it is the account's own key, and whether it
    /// may authenticate now (account key of an account that has one; unexpired usage key).
    function resolveApiKey(uint256 keyHash) external view returns (uint256 apiKeyHash, bool isAccountKey, bool active);

    function accountExists(uint256 apiKeyHash) external view returns (bool);

    /// @notice Chipotle's gate, for the caller: true when `keyHash` (an account or a usage key)
    /// resolves to an account and a write by msg.sender naming it would pass the caller check: the
    /// account's admin wallet, or an API payer for a managed account (with an unexpired usage key).
    function accountExistsAndIsMutable(uint256 keyHash) external view returns (bool);

    function getAccount(uint256 apiKeyHash) external view returns (AccountView memory);

    // ───────────────────────────────────────── Usage keys ─────────────────────────────────────────

    function getUsageApiKey(uint256 usageApiKeyHash) external view returns (UsageKeyView memory);

    /// @notice The seal an API payer authorizes for a usage key: keccak256(abi.encode(usageApiKeyHash)).
    function usageApiKeySeal(uint256 usageApiKeyHash) external pure returns (bytes32);

    /// @notice The account the usage key with this seal belongs to, for ever: the one an API payer
    /// reserved it for, or the one that first registered it (0: free).
    function usageApiKeyHome(bytes32 seal) external view returns (uint256 apiKeyHash);

    /// @notice True when `keyHash` holds `scope` (on `groupId` for per-group scopes) in its account.
    function hasScope(uint256 keyHash, Scope scope, uint64 groupId) external view returns (bool);

    // ────────────────────────────────────────── Execution ─────────────────────────────────────────

    /// @notice The execution question of spec 1, in O(1): may `keyHash` run action `cidHash`
    /// with PKP `pkpId` (address(0) = no PKP), proven by group `groupId`? The account key may run
    /// any action with its own account's PKPs (groupId is then ignored) while the account is managed;
    /// after conversion to ChainSecured only usage keys execute. A usage key needs
    /// `execute` on `groupId` (listed, or the wildcard 0) and the group must list the CID and the
    /// PKP; the wildcard widens the groups, it never skips the listing.
    function canExecute(uint256 keyHash, uint256 cidHash, address pkpId, uint64 groupId) external view returns (bool);

    /// @notice Finds a group that proves `canExecute` (pass its answer there); the relayer's check
    /// before every run. A key with a list looks at its listed groups (at most
    /// `MAX_PERMISSION_GROUPS`). A key with the wildcard looks only at groups that list the CID, and
    /// the PKP when one is given: it walks the CID's and the PKP's group indexes side by side (a group
    /// that lists both is in both), so its work does not depend on how many groups the account has,
    /// only on the shorter of those two indexes (for no PKP, on the CID's, and it stops at the first
    /// group found). Every group found is checked as `canExecute` checks it: the wildcard widens the
    /// groups, it never skips the listing. `allowed` is true with groupId 0 for an account key of a
    /// managed account.
    function findExecutionGroup(uint256 keyHash, uint256 cidHash, address pkpId) external view returns (bool allowed, uint64 groupId);

    // ─────────────────────────────────────── Single records ───────────────────────────────────────

    function getGroup(uint256 apiKeyHash, uint64 groupId) external view returns (GroupView memory);

    /// @notice A wallet the account registered (`PkpNotFound` otherwise).
    function getWallet(uint256 apiKeyHash, address walletAddress) external view returns (WalletView memory);

    // ──────────────────────────────────────────── Lists ───────────────────────────────────────────

    /// @notice The account's groups (Chipotle's clients decode id, name, description).
    function listGroups(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (GroupView[] memory items, uint256 total);

    /// @notice The account's wallets (PKPs), in registration order.
    function listWallets(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (WalletView[] memory items, uint256 total);

    /// @notice `listWallets` under Chipotle's name (its `PkpData`: id = the derivation path).
    function listPkps(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (WalletView[] memory items, uint256 total);

    /// @notice The wallets in a group (`GroupNotFound` for a group the account does not have).
    function listWalletsInGroup(uint256 apiKeyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (WalletView[] memory items, uint256 total);

    /// @notice The account's registered actions (metadata).
    function listActions(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (ActionView[] memory items, uint256 total);

    /// @notice The actions a group lists, with the account's metadata for each (`GroupNotFound`).
    function listActionsInGroup(uint256 apiKeyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (ActionView[] memory items, uint256 total);

    /// @notice The account's usage keys: hash, metadata and full permission set.
    function listUsageApiKeys(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyView[] memory items, uint256 total);

    /// @notice The account's usage keys in Chipotle's item shape (`listApiKeys`).
    function listApiKeys(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyListItem[] memory items, uint256 total);
}
