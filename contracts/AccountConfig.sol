// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {IAccountConfig} from "./interfaces/IAccountConfig.sol";
import {Scope, AccountView, UsageKeyPermissions, UsageKeyView, GroupView, WalletView, ActionView} from "./types/AccountConfigTypes.sol";
import {Pagination} from "./libraries/Pagination.sol";

/// @title AccountConfig
/// @notice Accounts, usage keys and scopes, groups, the PKP registry, action metadata and the API
/// payer set of Vesta. Every rule of the permission matrix is enforced here.
/// @dev Replace-all updates never loop over old state: a usage key's grants and a group's members
/// live under a version number that is bumped on update, so stale entries are simply unreachable.
contract AccountConfig is IAccountConfig, Ownable2Step {
    using EnumerableSet for EnumerableSet.UintSet;
    using EnumerableSet for EnumerableSet.AddressSet;

    /// @inheritdoc IAccountConfig
    uint256 public constant MAX_NAME_BYTES = 64;
    /// @inheritdoc IAccountConfig
    uint256 public constant MAX_DESCRIPTION_BYTES = 256;
    /// @inheritdoc IAccountConfig
    uint256 public constant MAX_GROUP_MEMBERS = 10;
    /// @inheritdoc IAccountConfig
    uint256 public constant MAX_PERMISSION_GROUPS = 10;

    bytes32 private constant _DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant _DOMAIN_NAME_HASH = keccak256("Vesta AccountConfig");
    bytes32 private constant _DOMAIN_VERSION_HASH = keccak256("1");
    bytes32 private constant _REGISTER_USAGE_KEY_TYPEHASH = keccak256("RegisterUsageApiKey(uint256 apiKeyHash,uint256 usageApiKeyHash)");

    uint8 private constant _FIRST_GROUP_SCOPE = uint8(Scope.ManageActions);

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
        string name;
        string description;
        mapping(uint32 version => mapping(uint8 scope => uint64[] groupIds)) lists;
    }

    struct Group {
        uint32 generation;
        string name;
        string description;
        mapping(uint32 generation => EnumerableSet.AddressSet) pkps;
        mapping(uint32 generation => EnumerableSet.UintSet) cids;
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

    /// Usage keys only. An account's own hash is never stored here: an account record always wins
    /// (see `_resolve`), so a usage key cannot squat the hash of a future ChainSecured account.
    mapping(uint256 usageApiKeyHash => uint256 apiKeyHash) private _keyToAccount;
    /// The account that first registered a usage key, kept after removal: a revoked key is never
    /// re-pointed at another account by someone who holds it (its other holders would act there).
    mapping(uint256 usageApiKeyHash => uint256 apiKeyHash) private _usageKeyHome;
    mapping(uint256 apiKeyHash => Account) private _accounts;

    mapping(uint256 usageApiKeyHash => UsageKey) private _usageKeys;
    /// key = version << 128 | scope << 64 | groupId
    mapping(uint256 usageApiKeyHash => mapping(uint256 grantKey => bool)) private _grants;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) private _accountUsageKeys;

    mapping(uint256 apiKeyHash => mapping(uint64 groupId => Group)) private _groups;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) private _groupIds;

    /// Per account: an address registered by one account is no record of another.
    mapping(uint256 apiKeyHash => mapping(address pkpId => Pkp)) private _pkps;
    mapping(uint256 apiKeyHash => EnumerableSet.AddressSet) private _accountPkps;

    mapping(uint256 apiKeyHash => mapping(uint256 cidHash => ActionMeta)) private _actions;
    mapping(uint256 apiKeyHash => EnumerableSet.UintSet) private _accountActions;

    EnumerableSet.AddressSet private _apiPayers;
    address private _adminApiPayer;

    /// @param initialOwner the governance owner (a Safe multisig in production).
    /// @param adminApiPayer manages the API payer set beside the owner.
    /// @param apiPayers the initial API payers, which relay writes for managed accounts.
    constructor(address initialOwner, address adminApiPayer, address[] memory apiPayers) Ownable(initialOwner) {
        _adminApiPayer = adminApiPayer;
        emit AdminApiPayerChanged(address(0), adminApiPayer);
        for (uint256 i = 0; i < apiPayers.length; ++i) _addApiPayer(apiPayers[i]);
    }

    // ─────────────────────────────────────────── Accounts ──────────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function newAccount(uint256 apiKeyHash, address adminWalletAddress, string calldata name, string calldata description) external {
        if (!_apiPayers.contains(msg.sender)) revert NotApiPayer(msg.sender);
        if (adminWalletAddress == address(0)) revert ZeroAddress();
        _createAccount(apiKeyHash, adminWalletAddress, true, name, description);
    }

    /// @inheritdoc IAccountConfig
    function newChainSecuredAccount(string calldata name, string calldata description) external returns (uint256 apiKeyHash) {
        apiKeyHash = uint256(keccak256(abi.encodePacked(msg.sender)));
        _createAccount(apiKeyHash, msg.sender, false, name, description);
    }

    /// @inheritdoc IAccountConfig
    function convertToChainSecuredAccount(uint256 apiKeyHash, address newAdminWalletAddress) external {
        Account storage a = _account(apiKeyHash);
        if (msg.sender != a.admin && !_apiPayers.contains(msg.sender)) revert NotAuthorizedCaller(msg.sender, apiKeyHash);
        if (!a.managed) revert AccountNotManaged(apiKeyHash);
        if (newAdminWalletAddress == address(0)) revert ZeroAddress();
        a.pendingAdmin = newAdminWalletAddress;
        a.pendingConversion = true;
        emit AccountConversionStarted(apiKeyHash, a.admin, newAdminWalletAddress);
    }

    /// @inheritdoc IAccountConfig
    function transferAccountOwnership(uint256 apiKeyHash, address newAdminWalletAddress) external {
        _requireOwner(apiKeyHash);
        Account storage a = _accounts[apiKeyHash];
        a.pendingAdmin = newAdminWalletAddress;
        a.pendingConversion = false;
        emit AccountOwnershipTransferStarted(apiKeyHash, a.admin, newAdminWalletAddress);
    }

    /// @inheritdoc IAccountConfig
    function acceptAccountOwnership(uint256 apiKeyHash) external {
        Account storage a = _accounts[apiKeyHash];
        if (msg.sender != a.pendingAdmin || msg.sender == address(0)) revert NotPendingAdmin(msg.sender, apiKeyHash);
        address previous = a.admin;
        bool conversion = a.pendingConversion;
        a.admin = msg.sender;
        a.pendingAdmin = address(0);
        a.pendingConversion = false;
        if (conversion) {
            a.managed = false;
            emit AccountConverted(apiKeyHash, previous, msg.sender);
        } else {
            emit AccountOwnershipTransferred(apiKeyHash, previous, msg.sender);
        }
    }

    // ────────────────────────────────────────── Usage keys ─────────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function setUsageApiKey(
        uint256 apiKeyHash,
        uint256 usageApiKeyHash,
        uint256 expiration,
        uint256 balance,
        string calldata name,
        string calldata description,
        UsageKeyPermissions calldata permissions,
        bytes calldata proof
    ) external {
        _requireOwner(apiKeyHash);
        _checkText(name, description);
        if (usageApiKeyHash == 0) revert InvalidKeyHash(usageApiKeyHash);
        if (expiration > type(uint64).max || (expiration != 0 && expiration <= block.timestamp)) revert InvalidExpiration(expiration);
        if (balance > type(uint128).max) revert BalanceTooLarge(balance);

        if (_isAccount(usageApiKeyHash)) revert KeyHashInUse(usageApiKeyHash);
        uint256 owner_ = _keyToAccount[usageApiKeyHash];
        bool created = owner_ == 0;
        if (created) {
            _checkKeyProof(apiKeyHash, usageApiKeyHash, proof);
            uint256 home = _usageKeyHome[usageApiKeyHash];
            if (home == 0) _usageKeyHome[usageApiKeyHash] = apiKeyHash;
            else if (home != apiKeyHash) revert KeyHashInUse(usageApiKeyHash);
            _keyToAccount[usageApiKeyHash] = apiKeyHash;
            _accountUsageKeys[apiKeyHash].add(usageApiKeyHash);
        } else if (owner_ != apiKeyHash) {
            revert KeyHashInUse(usageApiKeyHash);
        }

        UsageKey storage k = _usageKeys[usageApiKeyHash];
        uint32 version = k.version + 1;
        k.version = version;
        k.expiration = uint64(expiration);
        k.balance = uint128(balance);
        k.accountScopes = (permissions.canCreateGroups ? uint8(1) << uint8(Scope.CreateGroups) : 0)
            | (permissions.canDeleteGroups ? uint8(1) << uint8(Scope.DeleteGroups) : 0)
            | (permissions.canCreatePkps ? uint8(1) << uint8(Scope.CreatePkps) : 0);
        k.wildcards = _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.ManageActions, permissions.manageIpfsIdsInGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.AddPkp, permissions.addPkpToGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.RemovePkp, permissions.removePkpFromGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.Execute, permissions.executeInGroups);
        k.name = name;
        k.description = description;
        emit UsageApiKeySet(apiKeyHash, usageApiKeyHash, created, expiration, balance);
    }

    /// @inheritdoc IAccountConfig
    function updateUsageApiKeyMetadata(uint256 apiKeyHash, uint256 usageApiKeyHash, string calldata name, string calldata description) external {
        _requireOwner(apiKeyHash);
        _checkText(name, description);
        _requireUsageKeyOf(apiKeyHash, usageApiKeyHash);
        UsageKey storage k = _usageKeys[usageApiKeyHash];
        k.name = name;
        k.description = description;
        emit UsageApiKeyMetadataUpdated(apiKeyHash, usageApiKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfig
    function removeUsageApiKey(uint256 apiKeyHash, uint256 usageApiKeyHash) external {
        _requireOwner(apiKeyHash);
        _requireUsageKeyOf(apiKeyHash, usageApiKeyHash);
        delete _keyToAccount[usageApiKeyHash];
        _accountUsageKeys[apiKeyHash].remove(usageApiKeyHash);
        UsageKey storage k = _usageKeys[usageApiKeyHash];
        // The version survives (and moves on) so that grants of the removed key never come back.
        k.version += 1;
        k.expiration = 0;
        k.balance = 0;
        k.accountScopes = 0;
        k.wildcards = 0;
        delete k.name;
        delete k.description;
        emit UsageApiKeyRemoved(apiKeyHash, usageApiKeyHash);
    }

    // ──────────────────────────────────────────── Groups ───────────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function addGroup(
        uint256 actorKeyHash,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external returns (uint64 groupId) {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        if (!isOwner) _requireScope(actorKeyHash, Scope.CreateGroups, 0);
        _checkText(name, description);
        Account storage a = _accounts[apiKeyHash];
        groupId = a.lastGroupId + 1;
        a.lastGroupId = groupId;
        if (!isOwner && pkpIds.length != 0) _requireScope(actorKeyHash, Scope.AddPkp, groupId);
        if (!isOwner && cidHashes.length != 0) _requireScope(actorKeyHash, Scope.ManageActions, groupId);
        _groupIds[apiKeyHash].add(groupId);
        Group storage g = _groups[apiKeyHash][groupId];
        g.name = name;
        g.description = description;
        emit GroupCreated(apiKeyHash, groupId, actorKeyHash, name, description);
        _addMembers(apiKeyHash, groupId, g, 0, pkpIds, cidHashes, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function updateGroup(
        uint256 actorKeyHash,
        uint64 groupId,
        string calldata name,
        string calldata description,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes
    ) external {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        _requireGroup(apiKeyHash, groupId);
        if (!isOwner) {
            _requireScope(actorKeyHash, Scope.ManageActions, groupId);
            _requireScope(actorKeyHash, Scope.AddPkp, groupId);
            _requireScope(actorKeyHash, Scope.RemovePkp, groupId);
        }
        _checkText(name, description);
        Group storage g = _groups[apiKeyHash][groupId];
        uint32 generation = g.generation + 1;
        g.generation = generation;
        g.name = name;
        g.description = description;
        emit GroupUpdated(apiKeyHash, groupId, actorKeyHash);
        _addMembers(apiKeyHash, groupId, g, generation, pkpIds, cidHashes, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function removeGroup(uint256 actorKeyHash, uint64 groupId) external {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        if (!isOwner) _requireScope(actorKeyHash, Scope.DeleteGroups, 0);
        if (!_groupIds[apiKeyHash].remove(groupId)) revert GroupNotFound(apiKeyHash, groupId);
        emit GroupRemoved(apiKeyHash, groupId, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function addPkpToGroup(uint256 actorKeyHash, uint64 groupId, address pkpId) external {
        (uint256 apiKeyHash, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.AddPkp);
        _addPkp(apiKeyHash, groupId, g, g.generation, pkpId, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function removePkpFromGroup(uint256 actorKeyHash, uint64 groupId, address pkpId) external {
        (uint256 apiKeyHash, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.RemovePkp);
        if (!g.pkps[g.generation].remove(pkpId)) revert PkpNotInGroup(apiKeyHash, groupId, pkpId);
        emit PkpRemovedFromGroup(apiKeyHash, groupId, pkpId, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function addActionToGroup(uint256 actorKeyHash, uint64 groupId, uint256 cidHash) external {
        (uint256 apiKeyHash, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.ManageActions);
        _addCid(apiKeyHash, groupId, g, g.generation, cidHash, actorKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function removeActionFromGroup(uint256 actorKeyHash, uint64 groupId, uint256 cidHash) external {
        (uint256 apiKeyHash, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.ManageActions);
        if (!g.cids[g.generation].remove(cidHash)) revert ActionNotInGroup(apiKeyHash, groupId, cidHash);
        emit ActionRemovedFromGroup(apiKeyHash, groupId, cidHash, actorKeyHash);
    }

    // ───────────────────────────────────── Wallets and actions ─────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function registerWalletDerivation(
        uint256 actorKeyHash,
        address walletAddress,
        uint256 derivationPath,
        string calldata name,
        string calldata description
    ) external {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        if (!isOwner) _requireScope(actorKeyHash, Scope.CreatePkps, 0);
        _checkText(name, description);
        if (walletAddress == address(0)) revert ZeroAddress();
        if (derivationPath == 0) revert InvalidDerivationPath();
        Pkp storage p = _pkps[apiKeyHash][walletAddress];
        if (p.derivationPath != 0) revert PkpAlreadyRegistered(apiKeyHash, walletAddress);
        p.derivationPath = derivationPath;
        p.name = name;
        p.description = description;
        _accountPkps[apiKeyHash].add(walletAddress);
        emit WalletRegistered(apiKeyHash, walletAddress, derivationPath, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfig
    function addAction(uint256 actorKeyHash, uint256 cidHash, string calldata name, string calldata description) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        _checkText(name, description);
        if (cidHash == 0) revert InvalidCidHash();
        if (!_accountActions[apiKeyHash].add(cidHash)) revert ActionAlreadyExists(apiKeyHash, cidHash);
        ActionMeta storage m = _actions[apiKeyHash][cidHash];
        m.name = name;
        m.description = description;
        emit ActionAdded(apiKeyHash, cidHash, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfig
    function updateActionMetadata(uint256 actorKeyHash, uint256 cidHash, string calldata name, string calldata description) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        _checkText(name, description);
        if (!_accountActions[apiKeyHash].contains(cidHash)) revert ActionNotFound(apiKeyHash, cidHash);
        ActionMeta storage m = _actions[apiKeyHash][cidHash];
        m.name = name;
        m.description = description;
        emit ActionMetadataUpdated(apiKeyHash, cidHash, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfig
    function removeAction(uint256 actorKeyHash, uint256 cidHash) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        if (!_accountActions[apiKeyHash].remove(cidHash)) revert ActionNotFound(apiKeyHash, cidHash);
        delete _actions[apiKeyHash][cidHash];
        emit ActionRemoved(apiKeyHash, cidHash, actorKeyHash);
    }

    // ──────────────────────────────────────────── Payers ───────────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function addApiPayer(address payer) external {
        _requirePayerAdmin();
        _addApiPayer(payer);
    }

    /// @inheritdoc IAccountConfig
    function removeApiPayer(address payer) external {
        _requirePayerAdmin();
        if (!_apiPayers.remove(payer)) revert ApiPayerNotFound(payer);
        emit ApiPayerRemoved(payer);
    }

    /// @inheritdoc IAccountConfig
    function setAdminApiPayer(address adminPayer) external onlyOwner {
        address previous = _adminApiPayer;
        _adminApiPayer = adminPayer;
        emit AdminApiPayerChanged(previous, adminPayer);
    }

    /// @notice Always reverts with `RenounceOwnershipDisabled`.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceOwnershipDisabled();
    }

    // ──────────────────────────────────────────── Views ────────────────────────────────────────────

    /// @inheritdoc IAccountConfig
    function getApiPayers() external view returns (address[] memory) {
        return _apiPayers.values();
    }

    /// @inheritdoc IAccountConfig
    function getAdminApiPayer() external view returns (address) {
        return _adminApiPayer;
    }

    /// @inheritdoc IAccountConfig
    function isApiPayer(address account) external view returns (bool) {
        return _apiPayers.contains(account);
    }

    /// @inheritdoc IAccountConfig
    function resolveApiKey(uint256 keyHash) external view returns (uint256 apiKeyHash, bool isAccountKey, bool active) {
        apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return (0, false, false);
        isAccountKey = keyHash == apiKeyHash;
        active = isAccountKey ? _accounts[apiKeyHash].hasApiKey : !_expired(_usageKeys[keyHash]);
    }

    /// @inheritdoc IAccountConfig
    function accountExists(uint256 apiKeyHash) external view returns (bool) {
        return _isAccount(apiKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function getAccount(uint256 apiKeyHash) external view returns (AccountView memory) {
        Account storage a = _account(apiKeyHash);
        return AccountView(apiKeyHash, a.admin, a.managed, a.hasApiKey, a.pendingAdmin, a.pendingConversion, a.name, a.description);
    }

    /// @inheritdoc IAccountConfig
    function getUsageApiKey(uint256 usageApiKeyHash) external view returns (UsageKeyView memory) {
        uint256 apiKeyHash = _resolve(usageApiKeyHash);
        if (apiKeyHash == 0 || apiKeyHash == usageApiKeyHash) revert UsageApiKeyNotFound(apiKeyHash, usageApiKeyHash);
        return _usageKeyView(usageApiKeyHash);
    }

    /// @inheritdoc IAccountConfig
    function hasScope(uint256 keyHash, Scope scope, uint64 groupId) external view returns (bool) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return false;
        if (uint8(scope) >= _FIRST_GROUP_SCOPE && !_groupIds[apiKeyHash].contains(groupId)) return false;
        if (keyHash == apiKeyHash) return _accounts[apiKeyHash].managed;
        return !_expired(_usageKeys[keyHash]) && _holds(keyHash, scope, groupId);
    }

    /// @inheritdoc IAccountConfig
    function getGroup(uint256 apiKeyHash, uint64 groupId) external view returns (GroupView memory) {
        _requireGroup(apiKeyHash, groupId);
        return _groupView(apiKeyHash, groupId);
    }

    /// @inheritdoc IAccountConfig
    function getWallet(uint256 apiKeyHash, address walletAddress) external view returns (WalletView memory) {
        if (_pkps[apiKeyHash][walletAddress].derivationPath == 0) revert PkpNotFound(apiKeyHash, walletAddress);
        return _walletView(apiKeyHash, walletAddress);
    }

    /// @inheritdoc IAccountConfig
    function usageApiKeyProofDigest(uint256 apiKeyHash, uint256 usageApiKeyHash) public view returns (bytes32) {
        bytes32 domain = keccak256(abi.encode(_DOMAIN_TYPEHASH, _DOMAIN_NAME_HASH, _DOMAIN_VERSION_HASH, block.chainid, address(this)));
        return MessageHashUtils.toTypedDataHash(domain, keccak256(abi.encode(_REGISTER_USAGE_KEY_TYPEHASH, apiKeyHash, usageApiKeyHash)));
    }

    /// @inheritdoc IAccountConfig
    function canExecute(uint256 keyHash, uint256 cidHash, address pkpId, uint64 groupId) public view returns (bool) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return false;
        if (keyHash == apiKeyHash) {
            return _accounts[apiKeyHash].managed && (pkpId == address(0) || _pkps[apiKeyHash][pkpId].derivationPath != 0);
        }
        if (_expired(_usageKeys[keyHash])) return false;
        return _groupIds[apiKeyHash].contains(groupId) && _holds(keyHash, Scope.Execute, groupId)
            && _groupLists(apiKeyHash, groupId, cidHash, pkpId);
    }

    /// @inheritdoc IAccountConfig
    function findExecutionGroup(uint256 keyHash, uint256 cidHash, address pkpId) external view returns (bool allowed, uint64 groupId) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return (false, 0);
        if (keyHash == apiKeyHash) return (canExecute(keyHash, cidHash, pkpId, 0), 0);
        UsageKey storage k = _usageKeys[keyHash];
        if (_expired(k)) return (false, 0);
        if (k.wildcards & _bit(Scope.Execute) != 0) {
            EnumerableSet.UintSet storage ids = _groupIds[apiKeyHash];
            uint256 n = ids.length();
            for (uint256 i = 0; i < n; ++i) {
                uint64 id = uint64(ids.at(i));
                if (_groupLists(apiKeyHash, id, cidHash, pkpId)) return (true, id);
            }
        } else {
            uint64[] storage list = k.lists[k.version][uint8(Scope.Execute)];
            uint256 n = list.length;
            for (uint256 i = 0; i < n; ++i) {
                uint64 id = list[i];
                if (_groupIds[apiKeyHash].contains(id) && _groupLists(apiKeyHash, id, cidHash, pkpId)) return (true, id);
            }
        }
        return (false, 0);
    }

    /// @inheritdoc IAccountConfig
    function listGroups(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (GroupView[] memory items, uint256 total) {
        EnumerableSet.UintSet storage ids = _groupIds[apiKeyHash];
        total = ids.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new GroupView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _groupView(apiKeyHash, uint64(ids.at(i)));
    }

    /// @inheritdoc IAccountConfig
    function listWallets(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (WalletView[] memory items, uint256 total) {
        return _walletPage(apiKeyHash, _accountPkps[apiKeyHash], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfig
    function listWalletsInGroup(uint256 apiKeyHash, uint64 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (WalletView[] memory items, uint256 total)
    {
        _requireGroup(apiKeyHash, groupId);
        Group storage g = _groups[apiKeyHash][groupId];
        return _walletPage(apiKeyHash, g.pkps[g.generation], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfig
    function listActions(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (ActionView[] memory items, uint256 total) {
        return _actionPage(apiKeyHash, _accountActions[apiKeyHash], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfig
    function listActionsInGroup(uint256 apiKeyHash, uint64 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (ActionView[] memory items, uint256 total)
    {
        _requireGroup(apiKeyHash, groupId);
        Group storage g = _groups[apiKeyHash][groupId];
        return _actionPage(apiKeyHash, g.cids[g.generation], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfig
    function listUsageApiKeys(uint256 apiKeyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyView[] memory items, uint256 total) {
        EnumerableSet.UintSet storage keys = _accountUsageKeys[apiKeyHash];
        total = keys.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new UsageKeyView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _usageKeyView(keys.at(i));
    }

    // ────────────────────────────────────────── Internals ──────────────────────────────────────────

    function _createAccount(uint256 apiKeyHash, address admin, bool managed, string calldata name, string calldata description) private {
        _checkText(name, description);
        if (apiKeyHash == 0) revert InvalidKeyHash(apiKeyHash);
        if (_isAccount(apiKeyHash)) revert AccountAlreadyExists(apiKeyHash);
        // A managed account's hash comes from a server-generated secret: a clash with a usage key
        // means the secret is not fresh. A ChainSecured hash is fixed by its wallet and shadows
        // any usage key that took it before (that key then authorizes nothing).
        if (managed && _keyToAccount[apiKeyHash] != 0) revert KeyHashInUse(apiKeyHash);
        Account storage a = _accounts[apiKeyHash];
        a.admin = admin;
        a.managed = managed;
        a.hasApiKey = managed;
        a.name = name;
        a.description = description;
        emit AccountCreated(apiKeyHash, admin, managed, name, description);
    }

    /// @dev Resolves the acting key and checks the caller: the account's admin wallet acts as owner;
    /// an API payer acts for the key, only on a managed account, and a usage key must be unexpired.
    function _actor(uint256 keyHash) private view returns (uint256 apiKeyHash, bool isOwner) {
        apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) revert UnknownApiKey(keyHash);
        Account storage a = _accounts[apiKeyHash];
        if (msg.sender == a.admin) return (apiKeyHash, true);
        if (!_apiPayers.contains(msg.sender)) revert NotAuthorizedCaller(msg.sender, apiKeyHash);
        if (!a.managed) revert AccountNotManaged(apiKeyHash);
        if (keyHash == apiKeyHash) return (apiKeyHash, true);
        UsageKey storage k = _usageKeys[keyHash];
        if (_expired(k)) revert UsageApiKeyExpired(keyHash, k.expiration);
        return (apiKeyHash, false);
    }

    /// @dev Owner-only operations name the account itself; a usage key can never pass here.
    function _requireOwner(uint256 apiKeyHash) private view {
        (uint256 account, bool isOwner) = _actor(apiKeyHash);
        if (!isOwner || account != apiKeyHash) revert OwnerOnly(account, apiKeyHash);
    }

    function _requireScope(uint256 keyHash, Scope scope, uint64 groupId) private view {
        if (!_holds(keyHash, scope, groupId)) revert MissingScope(keyHash, scope, uint8(scope) >= _FIRST_GROUP_SCOPE ? groupId : 0);
    }

    /// @dev Whether a usage key holds a scope (group existence is the caller's to check).
    function _holds(uint256 keyHash, Scope scope, uint64 groupId) private view returns (bool) {
        UsageKey storage k = _usageKeys[keyHash];
        if (uint8(scope) < _FIRST_GROUP_SCOPE) return k.accountScopes & _bit(scope) != 0;
        if (k.wildcards & _bit(scope) != 0) return true;
        return _grants[keyHash][_grantKey(k.version, scope, groupId)];
    }

    function _expired(UsageKey storage k) private view returns (bool) {
        return k.expiration != 0 && block.timestamp >= k.expiration;
    }

    function _bit(Scope scope) private pure returns (uint8) {
        return uint8(1) << uint8(scope);
    }

    function _grantKey(uint32 version, Scope scope, uint64 groupId) private pure returns (uint256) {
        return (uint256(version) << 128) | (uint256(uint8(scope)) << 64) | groupId;
    }

    /// @dev Validates one permission list and writes its grants under `version`; returns the
    /// wildcard bit when the list is exactly [0].
    function _writeGrants(uint256 apiKeyHash, uint256 keyHash, UsageKey storage k, uint32 version, Scope scope, uint64[] calldata ids)
        private
        returns (uint8 wildcard)
    {
        uint256 n = ids.length;
        if (n > MAX_PERMISSION_GROUPS) revert TooManyItems(n, MAX_PERMISSION_GROUPS);
        if (n == 0) return 0;
        k.lists[version][uint8(scope)] = ids;
        if (n == 1 && ids[0] == 0) return _bit(scope);
        mapping(uint256 => bool) storage grants = _grants[keyHash];
        for (uint256 i = 0; i < n; ++i) {
            uint64 id = ids[i];
            if (id == 0) revert InvalidGroupList(scope, id);
            _requireGroup(apiKeyHash, id);
            uint256 key = _grantKey(version, scope, id);
            if (grants[key]) revert InvalidGroupList(scope, id);
            grants[key] = true;
        }
        return 0;
    }

    function _groupWrite(uint256 actorKeyHash, uint64 groupId, Scope scope) private view returns (uint256 apiKeyHash, Group storage g) {
        bool isOwner;
        (apiKeyHash, isOwner) = _actor(actorKeyHash);
        _requireGroup(apiKeyHash, groupId);
        if (!isOwner) _requireScope(actorKeyHash, scope, groupId);
        g = _groups[apiKeyHash][groupId];
    }

    /// @dev Writes that are the owner's alone but name an acting key (action metadata): the admin
    /// wallet, or the account key through an API payer; a usage key gets `OwnerOnly`.
    function _ownerActor(uint256 actorKeyHash) private view returns (uint256 apiKeyHash) {
        bool isOwner;
        (apiKeyHash, isOwner) = _actor(actorKeyHash);
        if (!isOwner) revert OwnerOnly(apiKeyHash, actorKeyHash);
    }

    /// @dev The byte limits of every name and description.
    function _checkText(string calldata name, string calldata description) private pure {
        if (bytes(name).length > MAX_NAME_BYTES) revert NameTooLong(bytes(name).length, MAX_NAME_BYTES);
        if (bytes(description).length > MAX_DESCRIPTION_BYTES) revert DescriptionTooLong(bytes(description).length, MAX_DESCRIPTION_BYTES);
    }

    /// @dev A new usage key proves possession: its own signature over (account, key) in this
    /// contract's EIP-712 domain, which binds the chain and the contract.
    function _checkKeyProof(uint256 apiKeyHash, uint256 usageApiKeyHash, bytes calldata proof) private view {
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecoverCalldata(usageApiKeyProofDigest(apiKeyHash, usageApiKeyHash), proof);
        if (err != ECDSA.RecoverError.NoError || signer != address(uint160(usageApiKeyHash))) revert InvalidUsageKeyProof(apiKeyHash, usageApiKeyHash);
    }

    function _addMembers(
        uint256 apiKeyHash,
        uint64 groupId,
        Group storage g,
        uint32 generation,
        address[] calldata pkpIds,
        uint256[] calldata cidHashes,
        uint256 actorKeyHash
    ) private {
        if (pkpIds.length > MAX_GROUP_MEMBERS) revert TooManyItems(pkpIds.length, MAX_GROUP_MEMBERS);
        if (cidHashes.length > MAX_GROUP_MEMBERS) revert TooManyItems(cidHashes.length, MAX_GROUP_MEMBERS);
        for (uint256 i = 0; i < pkpIds.length; ++i) _addPkp(apiKeyHash, groupId, g, generation, pkpIds[i], actorKeyHash);
        for (uint256 i = 0; i < cidHashes.length; ++i) _addCid(apiKeyHash, groupId, g, generation, cidHashes[i], actorKeyHash);
    }

    function _addPkp(uint256 apiKeyHash, uint64 groupId, Group storage g, uint32 generation, address pkpId, uint256 actorKeyHash) private {
        if (_pkps[apiKeyHash][pkpId].derivationPath == 0) revert PkpNotFound(apiKeyHash, pkpId);
        if (!g.pkps[generation].add(pkpId)) revert PkpAlreadyInGroup(apiKeyHash, groupId, pkpId);
        emit PkpAddedToGroup(apiKeyHash, groupId, pkpId, actorKeyHash);
    }

    function _addCid(uint256 apiKeyHash, uint64 groupId, Group storage g, uint32 generation, uint256 cidHash, uint256 actorKeyHash) private {
        if (cidHash == 0) revert InvalidCidHash();
        if (!g.cids[generation].add(cidHash)) revert ActionAlreadyInGroup(apiKeyHash, groupId, cidHash);
        emit ActionAddedToGroup(apiKeyHash, groupId, cidHash, actorKeyHash);
    }

    /// @dev Whether group `groupId` (known to exist) lists the CID and, when given, the PKP.
    function _groupLists(uint256 apiKeyHash, uint64 groupId, uint256 cidHash, address pkpId) private view returns (bool) {
        Group storage g = _groups[apiKeyHash][groupId];
        uint32 generation = g.generation;
        return g.cids[generation].contains(cidHash) && (pkpId == address(0) || g.pkps[generation].contains(pkpId));
    }

    function _requireUsageKeyOf(uint256 apiKeyHash, uint256 usageApiKeyHash) private view {
        if (_keyToAccount[usageApiKeyHash] != apiKeyHash) revert UsageApiKeyNotFound(apiKeyHash, usageApiKeyHash);
    }

    function _requireGroup(uint256 apiKeyHash, uint64 groupId) private view {
        if (!_groupIds[apiKeyHash].contains(groupId)) revert GroupNotFound(apiKeyHash, groupId);
    }

    /// @dev An account exists when it has an admin (never zero, see the creation paths).
    function _isAccount(uint256 apiKeyHash) private view returns (bool) {
        return _accounts[apiKeyHash].admin != address(0);
    }

    /// @dev The account a key hash acts for: itself when it is an account, else the usage key's
    /// account (0 when unknown).
    function _resolve(uint256 keyHash) private view returns (uint256) {
        return _isAccount(keyHash) ? keyHash : _keyToAccount[keyHash];
    }

    function _account(uint256 apiKeyHash) private view returns (Account storage) {
        if (!_isAccount(apiKeyHash)) revert AccountNotFound(apiKeyHash);
        return _accounts[apiKeyHash];
    }

    function _requirePayerAdmin() private view {
        if (msg.sender != owner() && msg.sender != _adminApiPayer) revert NotApiPayerAdmin(msg.sender);
    }

    function _addApiPayer(address payer) private {
        if (payer == address(0)) revert ZeroAddress();
        if (!_apiPayers.add(payer)) revert ApiPayerAlreadyAdded(payer);
        emit ApiPayerAdded(payer);
    }

    function _usageKeyView(uint256 keyHash) private view returns (UsageKeyView memory v) {
        UsageKey storage k = _usageKeys[keyHash];
        mapping(uint8 => uint64[]) storage lists = k.lists[k.version];
        v.usageApiKeyHash = keyHash;
        v.expiration = k.expiration;
        v.balance = k.balance;
        v.name = k.name;
        v.description = k.description;
        v.permissions = UsageKeyPermissions(
            k.accountScopes & _bit(Scope.CreateGroups) != 0,
            k.accountScopes & _bit(Scope.DeleteGroups) != 0,
            k.accountScopes & _bit(Scope.CreatePkps) != 0,
            lists[uint8(Scope.ManageActions)],
            lists[uint8(Scope.AddPkp)],
            lists[uint8(Scope.RemovePkp)],
            lists[uint8(Scope.Execute)]
        );
    }

    function _groupView(uint256 apiKeyHash, uint64 groupId) private view returns (GroupView memory) {
        Group storage g = _groups[apiKeyHash][groupId];
        return GroupView(groupId, g.name, g.description, g.pkps[g.generation].length(), g.cids[g.generation].length());
    }

    function _walletView(uint256 apiKeyHash, address walletAddress) private view returns (WalletView memory) {
        Pkp storage p = _pkps[apiKeyHash][walletAddress];
        return WalletView(walletAddress, p.derivationPath, p.name, p.description);
    }

    function _walletPage(uint256 apiKeyHash, EnumerableSet.AddressSet storage set, uint256 pageNumber, uint256 pageSize)
        private
        view
        returns (WalletView[] memory items, uint256 total)
    {
        total = set.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new WalletView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _walletView(apiKeyHash, set.at(i));
    }

    function _actionPage(uint256 apiKeyHash, EnumerableSet.UintSet storage set, uint256 pageNumber, uint256 pageSize)
        private
        view
        returns (ActionView[] memory items, uint256 total)
    {
        total = set.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new ActionView[](end - start);
        for (uint256 i = start; i < end; ++i) {
            uint256 cidHash = set.at(i);
            ActionMeta storage m = _actions[apiKeyHash][cidHash];
            items[i - start] = ActionView(cidHash, m.name, m.description);
        }
    }
}
