// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Scope, AccountView, UsageKeyPermissions, UsageKeyView, GroupView, WalletView, ActionView} from "../types/AccountConfigTypes.sol";

/// @title IAccountConfig
/// @notice The on-chain permission model of Vesta: accounts, usage keys and their scopes, groups,
/// the PKP (wallet) registry and action metadata. The contract, not the relayer, is the authority.
///
/// Identities. Every credential is known by its hash (uint256 = keccak256 of the key's bytes).
/// An account is keyed by its `apiKeyHash`; a usage key by its own hash, which resolves to its
/// account. Every write takes, as first argument, the hash of the key that acts (the "actor"):
/// - Direct path: the account's admin wallet (EOA, Safe, any contract) calls the contract itself;
///   it has every right of the owner, whichever key hash of its account it names.
/// - Relay path (managed accounts only): an API payer submits on behalf of a key. The actor is the
///   account key (owner rights) or a usage key of the account (its scopes only). Relayed writes
///   for an unmanaged (ChainSecured) account revert with `AccountNotManaged`.
/// Owner-only operations (add, update, revoke usage keys; transfer ownership; action metadata) can
/// never be done by a usage key.
///
/// Nothing is pushed onto an address that did not act. An account changes admin wallet in two steps
/// (OpenZeppelin `Ownable2Step`): the owner proposes (`transferAccountOwnership`,
/// `convertToChainSecuredAccount`), the proposed wallet accepts from its own address
/// (`acceptAccountOwnership`); until then the admin, and so who pays, is unchanged. A usage key is
/// registered only with a proof of possession signed by the key itself (see `setUsageApiKey`). A
/// wallet (PKP) registration belongs to the account that made it: the same address registered by
/// another account is another record, so no account can block or take another's registration.
///
/// Limits (the same numbers are enforced at the HTTP edge): every name is at most `MAX_NAME_BYTES`
/// bytes of UTF-8, every description at most `MAX_DESCRIPTION_BYTES`; a group write lists at most
/// `MAX_GROUP_MEMBERS` PKPs and as many CID hashes; each permission list of a usage key names at
/// most `MAX_PERMISSION_GROUPS` groups. They bound the gas of every write.
///
/// Groups have ids that start at 1 per account and are never reused; 0 is the wildcard in
/// permission lists. PKPs are identified by their wallet address.
interface IAccountConfig {
    // ─────────────────────────────────────────── Events ───────────────────────────────────────────

    /// @notice An account was created (managed by an API payer, or ChainSecured by its wallet).
    event AccountCreated(uint256 indexed apiKeyHash, address indexed adminWalletAddress, bool managed, string name, string description);
    /// @notice The owner proposed `pendingAdmin` as the account's admin wallet (address(0): the
    /// proposal was cancelled); nothing changes until that wallet accepts.
    event AccountOwnershipTransferStarted(uint256 indexed apiKeyHash, address indexed currentAdmin, address indexed pendingAdmin);
    /// @notice A managed account's conversion to ChainSecured was proposed, with `pendingAdmin` as its
    /// admin wallet; it stays managed until that wallet accepts.
    event AccountConversionStarted(uint256 indexed apiKeyHash, address indexed currentAdmin, address indexed pendingAdmin);
    /// @notice A managed account became ChainSecured (managed = false): `newAdmin` accepted.
    event AccountConverted(uint256 indexed apiKeyHash, address indexed previousAdmin, address indexed newAdmin);
    /// @notice The admin wallet of an account changed: `newAdmin` accepted.
    event AccountOwnershipTransferred(uint256 indexed apiKeyHash, address indexed previousAdmin, address indexed newAdmin);

    /// @notice A usage key was added (`created`) or had its whole permission set replaced.
    event UsageApiKeySet(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash, bool created, uint256 expiration, uint256 balance);
    /// @notice Only the name and description of a usage key changed.
    event UsageApiKeyMetadataUpdated(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash, string name, string description);
    /// @notice A usage key was revoked; it authorizes nothing from this block on.
    event UsageApiKeyRemoved(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash);

    /// @notice A group was created by `actorKeyHash`.
    event GroupCreated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description);
    /// @notice A group's metadata and member lists were replaced.
    event GroupUpdated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash);
    /// @notice A group was removed; its id is never reused.
    event GroupRemoved(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash);
    event PkpAddedToGroup(uint256 indexed apiKeyHash, uint64 indexed groupId, address indexed pkpId, uint256 actorKeyHash);
    event PkpRemovedFromGroup(uint256 indexed apiKeyHash, uint64 indexed groupId, address indexed pkpId, uint256 actorKeyHash);
    event ActionAddedToGroup(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 indexed cidHash, uint256 actorKeyHash);
    event ActionRemovedFromGroup(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 indexed cidHash, uint256 actorKeyHash);

    /// @notice A wallet (PKP) was registered to an account under its derivation path.
    event WalletRegistered(uint256 indexed apiKeyHash, address indexed walletAddress, uint256 derivationPath, uint256 actorKeyHash, string name, string description);

    event ActionAdded(uint256 indexed apiKeyHash, uint256 indexed cidHash, uint256 actorKeyHash, string name, string description);
    event ActionMetadataUpdated(uint256 indexed apiKeyHash, uint256 indexed cidHash, uint256 actorKeyHash, string name, string description);
    event ActionRemoved(uint256 indexed apiKeyHash, uint256 indexed cidHash, uint256 actorKeyHash);

    event ApiPayerAdded(address indexed payer);
    event ApiPayerRemoved(address indexed payer);
    event AdminApiPayerChanged(address indexed previousAdminPayer, address indexed newAdminPayer);

    // ─────────────────────────────────────────── Errors ───────────────────────────────────────────

    /// @notice No account or usage key is known under this hash (or the usage key was revoked).
    error UnknownApiKey(uint256 keyHash);
    /// @notice The hash is not an account's own hash (e.g. a usage key hash was given).
    error AccountNotFound(uint256 apiKeyHash);
    error AccountAlreadyExists(uint256 apiKeyHash);
    /// @notice The key hash is already used by an account or another usage key.
    error KeyHashInUse(uint256 keyHash);
    error InvalidKeyHash(uint256 keyHash);
    error ZeroAddress();
    /// @notice The caller is neither the account's admin wallet nor an API payer.
    error NotAuthorizedCaller(address caller, uint256 apiKeyHash);
    /// @notice A relayed write for an account that is not managed: only its admin wallet may write.
    error AccountNotManaged(uint256 apiKeyHash);
    /// @notice The operation is the owner's alone; `actorKeyHash` is a usage key.
    error OwnerOnly(uint256 apiKeyHash, uint256 actorKeyHash);
    /// @notice The acting usage key lacks `scope` (on `groupId` for per-group scopes, else 0).
    error MissingScope(uint256 actorKeyHash, Scope scope, uint64 groupId);
    error UsageApiKeyExpired(uint256 usageApiKeyHash, uint256 expiration);
    error UsageApiKeyNotFound(uint256 apiKeyHash, uint256 usageApiKeyHash);
    error InvalidExpiration(uint256 expiration);
    error BalanceTooLarge(uint256 balance);
    /// @notice A permission list mixes the wildcard 0 with group ids, or repeats a group id.
    error InvalidGroupList(Scope scope, uint64 groupId);

    /// @notice `caller` is not the pending admin wallet of the account (or none is pending).
    error NotPendingAdmin(address caller, uint256 apiKeyHash);
    /// @notice The proof of possession of a new usage key is missing or not signed by that key.
    error InvalidUsageKeyProof(uint256 apiKeyHash, uint256 usageApiKeyHash);

    error GroupNotFound(uint256 apiKeyHash, uint64 groupId);
    /// @notice The account has registered no wallet (PKP) with this address.
    error PkpNotFound(uint256 apiKeyHash, address pkpId);
    error PkpAlreadyRegistered(uint256 apiKeyHash, address pkpId);
    error InvalidDerivationPath();
    error PkpAlreadyInGroup(uint256 apiKeyHash, uint64 groupId, address pkpId);
    error PkpNotInGroup(uint256 apiKeyHash, uint64 groupId, address pkpId);
    error InvalidCidHash();
    error ActionAlreadyInGroup(uint256 apiKeyHash, uint64 groupId, uint256 cidHash);
    error ActionNotInGroup(uint256 apiKeyHash, uint64 groupId, uint256 cidHash);
    error ActionAlreadyExists(uint256 apiKeyHash, uint256 cidHash);
    error ActionNotFound(uint256 apiKeyHash, uint256 cidHash);
    /// @notice A list argument is longer than one call may carry.
    error TooManyItems(uint256 count, uint256 max);
    /// @notice A name is longer than `MAX_NAME_BYTES` bytes (UTF-8).
    error NameTooLong(uint256 length, uint256 max);
    /// @notice A description is longer than `MAX_DESCRIPTION_BYTES` bytes (UTF-8).
    error DescriptionTooLong(uint256 length, uint256 max);

    error NotApiPayerAdmin(address caller);
    error ApiPayerAlreadyAdded(address payer);
    error ApiPayerNotFound(address payer);
    error NotApiPayer(address caller);
    /// @notice The governance owner cannot be renounced: the payer set must keep an authority.
    error RenounceOwnershipDisabled();

    // ────────────────────────────────────────── Accounts ──────────────────────────────────────────

    /// @notice Creates a managed account for a server-generated key. Only an API payer.
    /// @param apiKeyHash keccak256 of the account key's UTF-8 bytes.
    /// @param adminWalletAddress the wallet derived from the account key's secret.
    function newAccount(uint256 apiKeyHash, address adminWalletAddress, string calldata name, string calldata description) external;

    /// @notice Creates a ChainSecured account owned by the caller (EOA, Safe or any contract):
    /// apiKeyHash = keccak256(abi.encodePacked(msg.sender)), managed = false. The hash is no credential.
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

    /// @notice Adds a usage key, or replaces the whole permission set, expiration and balance of an
    /// existing one of the same account (replace-all: nothing of the previous set survives). Owner only.
    /// @param apiKeyHash the account's hash (an account key, never a usage key).
    /// @param usageApiKeyHash the usage key's identity: a usage key is a secp256k1 keypair, and this
    /// is keccak256 of its 64-byte public key, so its low 160 bits are the key's address. Unique
    /// across all accounts, and never the hash of an existing account (`KeyHashInUse`); a removed
    /// key can be added again by the account that first registered it only.
    /// @param expiration unix seconds after which the key is invalid; 0 = never.
    /// @param proof when the key is new to the account: the key's own EIP-712 signature of
    /// `RegisterUsageApiKey(uint256 apiKeyHash,uint256 usageApiKeyHash)` in the domain
    /// {name "Vesta AccountConfig", version "1", chainId, verifyingContract this contract} (see
    /// `usageApiKeyProofDigest`), recovering to address(uint160(usageApiKeyHash)); else
    /// `InvalidUsageKeyProof`. Ignored on update. Only the key's holder can make it, so a hash seen
    /// in a pending transaction can be neither taken nor blocked by another account.
    function setUsageApiKey(
        uint256 apiKeyHash,
        uint256 usageApiKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        UsageKeyPermissions calldata permissions,
        bytes calldata proof
    ) external;

    /// @notice Changes only the name and description of a usage key. Owner only.
    function updateUsageApiKeyMetadata(uint256 apiKeyHash, uint256 usageApiKeyHash, string calldata name, string calldata description) external;

    /// @notice Revokes a usage key at once. Owner only.
    function removeUsageApiKey(uint256 apiKeyHash, uint256 usageApiKeyHash) external;

    // ─────────────────────────────────────────── Groups ───────────────────────────────────────────

    /// @notice Creates a group (scope group:create). Listed PKPs must belong to the account. Initial
    /// members need the same scopes as adding them later: group:addPkp for PKPs and
    /// group:manageActions for CIDs, on the new group (so, for a usage key, the wildcard).
    function addGroup(
        uint256 actorKeyHash,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external returns (uint64 groupId);

    /// @notice Replaces a group's name, description, PKPs and CIDs. The owner, or a key holding
    /// group:manageActions, group:addPkp and group:removePkp on that group.
    function updateGroup(
        uint256 actorKeyHash,
        uint64 groupId,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external;

    /// @notice Removes a group (scope group:delete). Its id is never reused, so usage keys whose
    /// lists still name it gain nothing; their stored lists are left as granted.
    function removeGroup(uint256 actorKeyHash, uint64 groupId) external;

    /// @notice Adds one of the account's PKPs to a group (scope group:addPkp on the group).
    function addPkpToGroup(uint256 actorKeyHash, uint64 groupId, address pkpId) external;

    /// @notice Removes a PKP from a group (scope group:removePkp on the group).
    function removePkpFromGroup(uint256 actorKeyHash, uint64 groupId, address pkpId) external;

    /// @notice Lists an action CID (by hash) in a group (scope group:manageActions on the group).
    function addActionToGroup(uint256 actorKeyHash, uint64 groupId, uint256 cidHash) external;

    /// @notice Removes an action CID from a group (scope group:manageActions on the group).
    function removeActionFromGroup(uint256 actorKeyHash, uint64 groupId, uint256 cidHash) external;

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
    /// (`OwnerOnly`).
    function addAction(uint256 actorKeyHash, uint256 cidHash, string calldata name, string calldata description) external;

    /// @notice Changes an action's metadata. Owner only.
    function updateActionMetadata(uint256 actorKeyHash, uint256 cidHash, string calldata name, string calldata description) external;

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

    // ─────────────────────────────────────────── Views ────────────────────────────────────────────

    /// @notice Longest name, in bytes of UTF-8 (accounts, usage keys, groups, wallets, actions).
    function MAX_NAME_BYTES() external view returns (uint256);

    /// @notice Longest description, in bytes of UTF-8.
    function MAX_DESCRIPTION_BYTES() external view returns (uint256);

    /// @notice Most PKPs, and most CID hashes, one group write may list.
    function MAX_GROUP_MEMBERS() external view returns (uint256);

    /// @notice Most group ids in each permission list of a usage key.
    function MAX_PERMISSION_GROUPS() external view returns (uint256);

    /// @notice The API payer addresses (`get_api_payers`).
    function getApiPayers() external view returns (address[] memory);

    /// @notice The admin API payer (`get_admin_api_payer`).
    function getAdminApiPayer() external view returns (address);

    function isApiPayer(address account) external view returns (bool);

    /// @notice Resolves a key hash: its account, whether it is the account's own key, and whether it
    /// may authenticate now (account key of an account that has one; unexpired usage key).
    function resolveApiKey(uint256 keyHash) external view returns (uint256 apiKeyHash, bool isAccountKey, bool active);

    function accountExists(uint256 apiKeyHash) external view returns (bool);

    function getAccount(uint256 apiKeyHash) external view returns (AccountView memory);

    function getUsageApiKey(uint256 usageApiKeyHash) external view returns (UsageKeyView memory);

    /// @notice True when `keyHash` holds `scope` (on `groupId` for per-group scopes) in its account.
    function hasScope(uint256 keyHash, Scope scope, uint64 groupId) external view returns (bool);

    function getGroup(uint256 apiKeyHash, uint64 groupId) external view returns (GroupView memory);

    /// @notice A wallet the account registered (`PkpNotFound` otherwise).
    function getWallet(uint256 apiKeyHash, address walletAddress) external view returns (WalletView memory);

    /// @notice The EIP-712 digest a new usage key signs as its proof of possession (see `setUsageApiKey`).
    function usageApiKeyProofDigest(uint256 apiKeyHash, uint256 usageApiKeyHash) external view returns (bytes32);

    /// @notice The execution question of spec 1, in O(1): may `keyHash` run action `cidHash`
    /// with PKP `pkpId` (address(0) = no PKP), proven by group `groupId`? The account key may run
    /// any action with its own account's PKPs (groupId is then ignored) while the account is managed;
    /// after conversion to ChainSecured only usage keys execute. A usage key needs
    /// `execute` on `groupId` (listed, or the wildcard 0) and the group must list the CID and the
    /// PKP; the wildcard widens the groups, it never skips the listing.
    function canExecute(uint256 keyHash, uint256 cidHash, address pkpId, uint64 groupId) external view returns (bool);

    /// @notice Finds a group that proves `canExecute`. Off-chain helper: its cost grows
    /// with the number of groups the key may execute in; pass its answer to `canExecute`.
    /// `allowed` is true with groupId 0 for an account key of a managed account.
    function findExecutionGroup(uint256 keyHash, uint256 cidHash, address pkpId) external view returns (bool allowed, uint64 groupId);

    /// @notice Paginated lists; `pageNumber` starts at 0; a page past the end or a `pageSize` of 0
    /// gives an empty page. Each returns the total count too.
    function listGroups(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (GroupView[] memory items, uint256 total);

    function listWallets(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (WalletView[] memory items, uint256 total);

    function listWalletsInGroup(uint256 apiKeyHash, uint64 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (WalletView[] memory items, uint256 total);

    function listActions(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (ActionView[] memory items, uint256 total);

    function listActionsInGroup(uint256 apiKeyHash, uint64 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (ActionView[] memory items, uint256 total);

    function listUsageApiKeys(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyView[] memory items, uint256 total);
}
