// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {IAccountConfigBase} from "./interfaces/IAccountConfigBase.sol";
import {Scope} from "./types/AccountConfigTypes.sol";

/// @title AccountConfigStorage
/// @notice The state of AccountConfig and the rules that both halves read: `AccountConfig` (writes)
/// and `AccountConfigViews` (reads, delegatecalled by AccountConfig's fallback) inherit it first,
/// so their storage layouts are this one; neither declares state of its own (a test compares the
/// layouts the compiler reports).
/// @dev Replace-all updates never loop over old state: a usage key's grants and a group's members
/// live under a version number that is bumped on update, so stale entries are simply unreachable.
abstract contract AccountConfigStorage is IAccountConfigBase {
    using EnumerableSet for EnumerableSet.UintSet;
    using EnumerableSet for EnumerableSet.AddressSet;

    uint256 internal constant _MAX_NAME_BYTES = 64;
    uint256 internal constant _MAX_DESCRIPTION_BYTES = 256;
    uint256 internal constant _MAX_GROUP_MEMBERS = 10;
    uint256 internal constant _MAX_PERMISSION_GROUPS = 10;

    uint8 internal constant _FIRST_GROUP_SCOPE = uint8(Scope.ManageActions);

    struct Account {
        address admin;
        bool managed;
        bool hasApiKey;
        uint64 lastGroupId;
        address pendingAdmin;
        bool pendingConversion;
        string name;
        string description;
    }

    struct UsageKey {
        uint64 expiration;
        uint128 balance;
        uint32 version;
        uint8 accountScopes; // bit i set = Scope(i) held, for the account-wide scopes
        uint8 wildcards; // bit i set = per-group Scope(i) held on all groups
        bool registered; // a usage key of its home account now (false before it is added and once removed)
        string name;
        string description;
        mapping(uint32 version => mapping(uint8 scope => uint64[] groupIds)) lists;
    }

    /// Members (PKP addresses as uint256, CID hashes) are listed per generation; `updateGroup` starts
    /// a new generation, so the previous lists are simply no longer read.
    struct Group {
        uint32 generation;
        string name;
        string description;
        mapping(uint32 generation => uint256[]) pkps;
        mapping(uint32 generation => uint256[]) cids;
    }

    /// One member (a CID hash, or a PKP address as uint256) of one group of an account, kept for the
    /// life of the contract: whether the group lists it now, where, and its links in the member's
    /// group index (see `MemberIndex`). One storage slot.
    struct Membership {
        uint32 listedIn; // the group's generation + 1 while the group lists the member, else 0
        uint64 position; // its index in that generation's member list (while listed)
        uint64 prevGroup; // its neighbours in the member's group index (0: none)
        uint64 nextGroup;
        bool linked; // in the member's group index
    }

    /// The head of a member's group index: the groups of the account that list it, as a doubly linked
    /// list through `Membership.prevGroup/nextGroup`, newest first.
    struct GroupIndex {
        uint64 firstGroup;
        bool opened; // set when the member is registered (a PKP, an action's metadata): its later listings write less
    }

    /// The execution check's index: for each member, the groups that list it, so that finding a group
    /// that lists a CID and a PKP walks their two indexes side by side (a group that lists both is in
    /// both, so the search ends with the shorter one), never the account's groups.
    /// A group leaves a member's index when it stops listing it (`removeActionFromGroup`,
    /// `removePkpFromGroup`) or, for its last `_MAX_GROUP_MEMBERS` members of each kind, when it is
    /// replaced (`updateGroup`) or removed (`removeGroup`); an entry left over (a group grown past that)
    /// is skipped by the check, which always verifies the listing itself.
    struct MemberIndex {
        mapping(uint256 member => mapping(uint64 groupId => Membership)) memberships;
        mapping(uint256 member => GroupIndex) groups;
    }

    struct Pkp {
        uint256 derivationPath; // never 0 once registered
        string name;
        string description;
    }

    struct ActionMeta {
        string name;
        string description;
    }

    /// The account each usage key hash belongs to, for ever, keyed by the key's seal (keccak256 of the
    /// hash): set when an API payer reserves the key (`authorizeUsageApiKey`) or when it is first
    /// registered without a reservation; the key acts for it while `UsageKey.registered`. Kept after
    /// removal: a revoked key is never re-pointed at another account by someone who holds it (its
    /// other holders would act there). An account's own hash never acts as a usage key: creating an
    /// account unregisters a usage key under its hash (see `_createAccount`), and an account wins.
    mapping(bytes32 usageApiKeySeal => uint256 apiKeyHash) internal _usageKeyHomes;
    mapping(uint256 apiKeyHash => Account) internal _accounts;

    mapping(uint256 usageApiKeyHash => UsageKey) internal _usageKeys;
    /// key = version << 128 | scope << 64 | groupId
    mapping(uint256 usageApiKeyHash => mapping(uint256 grantKey => bool)) internal _grants;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) internal _accountUsageKeys;

    mapping(uint256 apiKeyHash => mapping(uint64 groupId => Group)) internal _groups;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) internal _groupIds;
    mapping(uint256 apiKeyHash => MemberIndex) internal _cidIndex;
    mapping(uint256 apiKeyHash => MemberIndex) internal _pkpIndex;

    /// Per account: an address registered by one account is no record of another.
    mapping(uint256 apiKeyHash => mapping(address pkpId => Pkp)) internal _pkps;
    mapping(uint256 apiKeyHash => EnumerableSet.AddressSet) internal _accountPkps;

    mapping(uint256 apiKeyHash => mapping(uint256 cidHash => ActionMeta)) internal _actions;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) internal _accountActions;

    EnumerableSet.AddressSet internal _apiPayers;
    address internal _adminApiPayer;

    // ────────────────────────────────────────── Internals ──────────────────────────────────────────

    /// @dev An account exists when it has an admin (never zero, see the creation paths).
    function _isAccount(uint256 apiKeyHash) internal view returns (bool) {
        return _accounts[apiKeyHash].admin != address(0);
    }

    /// @dev The account a key hash acts for: itself when it is an account, else the usage key's
    /// account (0 when unknown).
    function _resolve(uint256 keyHash) internal view returns (uint256) {
        return _isAccount(keyHash) ? keyHash : _usageKeyAccount(keyHash);
    }

    /// @dev The account of a registered usage key (its home), or 0.
    function _usageKeyAccount(uint256 usageApiKeyHash) internal view returns (uint256) {
        return _usageKeys[usageApiKeyHash].registered ? _usageKeyHomes[_seal(usageApiKeyHash)] : 0;
    }

    function _account(uint256 apiKeyHash) internal view returns (Account storage) {
        if (!_isAccount(apiKeyHash)) revert AccountNotFound(apiKeyHash);
        return _accounts[apiKeyHash];
    }

    function _expired(UsageKey storage k) internal view returns (bool) {
        return k.expiration != 0 && block.timestamp >= k.expiration;
    }

    /// @dev Whether a usage key holds a scope (group existence is the caller's to check).
    function _holds(uint256 keyHash, Scope scope, uint64 groupId) internal view returns (bool) {
        UsageKey storage k = _usageKeys[keyHash];
        if (uint8(scope) < _FIRST_GROUP_SCOPE) return k.accountScopes & _bit(scope) != 0;
        if (k.wildcards & _bit(scope) != 0) return true;
        return _grants[keyHash][_grantKey(k.version, scope, groupId)];
    }

    function _bit(Scope scope) internal pure returns (uint8) {
        return uint8(1) << uint8(scope);
    }

    function _grantKey(uint32 version, Scope scope, uint64 groupId) internal pure returns (uint256) {
        return (uint256(version) << 128) | (uint256(uint8(scope)) << 64) | groupId;
    }

    /// @dev The group id of an existing group of the account (a uint256 of the ABI), or `GroupNotFound`.
    function _requireGroup(uint256 apiKeyHash, uint256 groupId) internal view returns (uint64) {
        if (groupId > type(uint64).max || !_groupIds[apiKeyHash].contains(groupId)) revert GroupNotFound(apiKeyHash, groupId);
        return uint64(groupId);
    }

    /// @dev Whether group `groupId` (known to exist) lists the CID and, when given, the PKP.
    function _groupLists(uint256 apiKeyHash, uint64 groupId, uint256 cidHash, address pkpId) internal view returns (bool) {
        uint32 tag = _groups[apiKeyHash][groupId].generation + 1;
        return _cidIndex[apiKeyHash].memberships[cidHash][groupId].listedIn == tag
            && (pkpId == address(0) || _pkpIndex[apiKeyHash].memberships[_pkpMember(pkpId)][groupId].listedIn == tag);
    }

    /// @dev A PKP address as a member of group lists and indexes.
    function _pkpMember(address pkpId) internal pure returns (uint256) {
        return uint256(uint160(pkpId));
    }

    /// @dev The seal of a usage key hash (see `authorizeUsageApiKey`).
    function _seal(uint256 usageApiKeyHash) internal pure returns (bytes32) {
        return keccak256(abi.encode(usageApiKeyHash));
    }
}
