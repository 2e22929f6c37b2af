// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Scope} from "../types/AccountConfigTypes.sol";

/// @title IAccountConfigBase
/// @notice The events and errors of AccountConfig, shared by its two halves: `AccountConfig` (every
/// write, `IAccountConfigWrites`) and `AccountConfigViews` (every read, `IAccountConfigViews`),
/// which AccountConfig's fallback runs in its own storage. Clients use one address and one ABI,
/// `IAccountConfig`, which merges both.
///
/// Identities. Every credential is known by its hash: uint256 keccak256 of the key's UTF-8 bytes
/// (account keys and usage keys alike; spec 1). An account is keyed by its `apiKeyHash`; a usage key
/// by its own hash, which resolves to its account. Every write takes, as first argument, the hash of
/// the key that acts (the "actor"):
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
/// (`acceptAccountOwnership`); until then the admin, and so who pays, is unchanged. A wallet-owned
/// account is created by its wallet only. A wallet (PKP) registration belongs to the account that
/// made it: the same address registered by another account is another record.
///
/// Usage-key registrations cannot be taken or blocked from the mempool when Vesta mints the key: an
/// API payer first reserves it for its account under a seal (`authorizeUsageApiKey`: keccak256 of
/// the key hash), so the key hash is public only once it belongs to that account; the registration
/// follows. An admin wallet may also register a key it minted itself with no reservation (Chipotle's
/// sovereign flow): first registration wins, as in Chipotle, so a copier can make such a pending
/// registration revert (visibly) but never gets a key anyone presents.
///
/// Limits (the same numbers are enforced at the HTTP edge): every name is at most `MAX_NAME_BYTES`
/// bytes of UTF-8, every description at most `MAX_DESCRIPTION_BYTES`; a group write lists at most
/// `MAX_GROUP_MEMBERS` PKPs and as many CID hashes; each permission list of a usage key names at
/// most `MAX_PERMISSION_GROUPS` groups. They bound the gas of every write.
///
/// Groups have ids that start at 1 per account and are never reused; 0 is the wildcard in
/// permission lists. Group ids are uint256 in the ABI (Chipotle's) and uint64 in storage and events:
/// a larger id names no group. PKPs are identified by their wallet address.
interface IAccountConfigBase {
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

    /// @notice An API payer reserved a usage key for the account: `usageApiKeySeal` is keccak256 of
    /// the key hash (see `usageApiKeySeal`), so the hash itself stays unknown until it is registered.
    event UsageApiKeyAuthorized(uint256 indexed apiKeyHash, bytes32 indexed usageApiKeySeal);
    /// @notice A usage key was added (`created`) or had its whole permission set replaced.
    event UsageApiKeySet(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash, bool created, uint256 expiration, uint256 balance);
    /// @notice Only the name and description of a usage key changed.
    event UsageApiKeyMetadataUpdated(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash, string name, string description);
    /// @notice A usage key was revoked (or, registered under the hash of an account created since,
    /// dropped); it authorizes nothing from this block on.
    event UsageApiKeyRemoved(uint256 indexed apiKeyHash, uint256 indexed usageApiKeyHash);

    /// @notice A group was created by `actorKeyHash`.
    event GroupCreated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description);
    /// @notice A group's metadata and member lists were replaced.
    event GroupUpdated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash);
    /// @notice Only a group's name and description changed.
    event GroupMetadataUpdated(uint256 indexed apiKeyHash, uint64 indexed groupId, uint256 actorKeyHash, string name, string description);
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
    /// @notice A wallet-owned (unmanaged) account is created by its own wallet only: `apiKeyHash` must
    /// be keccak256(abi.encodePacked(msg.sender)) and `adminWalletAddress` msg.sender.
    error NotOwnChainSecuredAccount(uint256 apiKeyHash, address adminWalletAddress);
    /// @notice The key hash is already used by an account or another usage key, or reserved for
    /// another account.
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
    error InvalidGroupList(Scope scope, uint256 groupId);

    /// @notice `caller` is not the pending admin wallet of the account (or none is pending).
    error NotPendingAdmin(address caller, uint256 apiKeyHash);
    /// @notice A new usage key registered through an API payer needs an authorization for this
    /// account (see `authorizeUsageApiKey`); only the admin wallet, acting directly, may register a
    /// key it minted itself without one.
    error UsageApiKeyNotAuthorized(uint256 apiKeyHash, uint256 usageApiKeyHash);
    /// @notice This seal is authorized already (for this or another account).
    error UsageApiKeyAlreadyAuthorized(bytes32 usageApiKeySeal);

    error GroupNotFound(uint256 apiKeyHash, uint256 groupId);
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
    /// @notice The reads contract given at deployment has no code.
    error ViewsNotAContract(address views);
    /// @notice The governance owner cannot be renounced: the payer set must keep an authority.
    error RenounceOwnershipDisabled();
}
