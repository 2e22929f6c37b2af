// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {IAccountConfigWrites} from "./interfaces/IAccountConfigWrites.sol";
import {AccountConfigStorage} from "./AccountConfigStorage.sol";
import {Scope} from "./types/AccountConfigTypes.sol";

/// @title AccountConfig
/// @notice Accounts, usage keys and scopes, groups, the PKP registry, action metadata and the API
/// payer set of Vesta. Every rule of the permission matrix is enforced here. This contract holds the
/// state and every write; every read (`IAccountConfigViews`) is served at this address by
/// `AccountConfigViews`, which the fallback runs in this contract's storage. Clients use the merged
/// ABI `IAccountConfig`.
contract AccountConfig is AccountConfigStorage, IAccountConfigWrites, Ownable2Step {
    using EnumerableSet for EnumerableSet.UintSet;
    using EnumerableSet for EnumerableSet.AddressSet;

    /// @notice The contract that serves the reads; fixed at deployment (no upgrade path).
    address public immutable VIEWS;

    /// @param initialOwner the governance owner (a Safe multisig in production).
    /// @param adminApiPayer manages the API payer set beside the owner.
    /// @param apiPayers the initial API payers, which relay writes for managed accounts.
    /// @param views the deployed `AccountConfigViews` (view functions only, no state of its own).
    constructor(address initialOwner, address adminApiPayer, address[] memory apiPayers, address views) Ownable(initialOwner) {
        if (views.code.length == 0) revert ViewsNotAContract(views);
        VIEWS = views;
        _adminApiPayer = adminApiPayer;
        emit AdminApiPayerChanged(address(0), adminApiPayer);
        for (uint256 i = 0; i < apiPayers.length; ++i) _addApiPayer(apiPayers[i]);
    }

    /// @notice Serves the reads: runs `AccountConfigViews` in this contract's storage (delegatecall,
    /// so `msg.sender` is the caller's) and answers or reverts with what it returned. A selector
    /// neither contract has reverts. Sends no ether anywhere (not payable).
    fallback() external {
        address views = VIEWS;
        assembly ("memory-safe") {
            let ptr := mload(0x40)
            calldatacopy(ptr, 0, calldatasize())
            let ok := delegatecall(gas(), views, ptr, calldatasize(), 0, 0)
            returndatacopy(ptr, 0, returndatasize())
            if iszero(ok) { revert(ptr, returndatasize()) }
            return(ptr, returndatasize())
        }
    }

    // ─────────────────────────────────────────── Accounts ──────────────────────────────────────────

    /// @inheritdoc IAccountConfigWrites
    function newAccount(uint256 apiKeyHash, bool managed, string calldata name, string calldata description, address adminWalletAddress) external {
        if (managed) {
            if (!_apiPayers.contains(msg.sender)) revert NotApiPayer(msg.sender);
            if (adminWalletAddress == address(0)) revert ZeroAddress();
        } else if (adminWalletAddress != msg.sender || apiKeyHash != _walletAccountHash(msg.sender)) {
            revert NotOwnChainSecuredAccount(apiKeyHash, adminWalletAddress);
        }
        _createAccount(apiKeyHash, adminWalletAddress, managed, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function newChainSecuredAccount(string calldata name, string calldata description) external returns (uint256 apiKeyHash) {
        apiKeyHash = _walletAccountHash(msg.sender);
        _createAccount(apiKeyHash, msg.sender, false, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function convertToChainSecuredAccount(uint256 apiKeyHash, address newAdminWalletAddress) external {
        Account storage a = _account(apiKeyHash);
        if (msg.sender != a.admin && !_apiPayers.contains(msg.sender)) revert NotAuthorizedCaller(msg.sender, apiKeyHash);
        if (!a.managed) revert AccountNotManaged(apiKeyHash);
        if (newAdminWalletAddress == address(0)) revert ZeroAddress();
        a.pendingAdmin = newAdminWalletAddress;
        a.pendingConversion = true;
        emit AccountConversionStarted(apiKeyHash, a.admin, newAdminWalletAddress);
    }

    /// @inheritdoc IAccountConfigWrites
    function transferAccountOwnership(uint256 apiKeyHash, address newAdminWalletAddress) external {
        _requireOwner(apiKeyHash);
        Account storage a = _accounts[apiKeyHash];
        a.pendingAdmin = newAdminWalletAddress;
        a.pendingConversion = false;
        emit AccountOwnershipTransferStarted(apiKeyHash, a.admin, newAdminWalletAddress);
    }

    /// @inheritdoc IAccountConfigWrites
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

    /// @inheritdoc IAccountConfigWrites
    function authorizeUsageApiKey(uint256 apiKeyHash, bytes32 usageApiKeySeal) external {
        if (!_apiPayers.contains(msg.sender)) revert NotApiPayer(msg.sender);
        if (apiKeyHash == 0) revert InvalidKeyHash(apiKeyHash);
        if (_usageKeyHomes[usageApiKeySeal] != 0) revert UsageApiKeyAlreadyAuthorized(usageApiKeySeal);
        _usageKeyHomes[usageApiKeySeal] = apiKeyHash;
        emit UsageApiKeyAuthorized(apiKeyHash, usageApiKeySeal);
    }

    /// @inheritdoc IAccountConfigWrites
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
    ) external {
        _requireOwner(apiKeyHash);
        _checkText(name, description);
        if (usageApiKeyHash == 0) revert InvalidKeyHash(usageApiKeyHash);
        if (expiration > type(uint64).max || (expiration != 0 && expiration <= block.timestamp)) revert InvalidExpiration(expiration);
        if (balance > type(uint128).max) revert BalanceTooLarge(balance);

        if (_isAccount(usageApiKeyHash)) revert KeyHashInUse(usageApiKeyHash);
        UsageKey storage k = _usageKeys[usageApiKeyHash];
        bool created = !k.registered;
        bool unreserved; // registered for the first time, with no reservation: the admin wallet's own key
        bytes32 seal = _seal(usageApiKeyHash);
        uint256 home = _usageKeyHomes[seal];
        if (home == 0) {
            unreserved = true;
            _usageKeyHomes[seal] = apiKeyHash;
        } else if (home != apiKeyHash) {
            revert KeyHashInUse(usageApiKeyHash);
        }
        // Removed (registered once: its version moved on): revoked for good, so an update racing the removal cannot bring it back.
        if (created && k.version != 0) revert UsageApiKeyNotFound(apiKeyHash, usageApiKeyHash);
        if (created) _accountUsageKeys[apiKeyHash].add(usageApiKeyHash);

        uint32 version = k.version + 1;
        k.version = version;
        k.registered = true;
        k.expiration = uint64(expiration);
        k.balance = uint128(balance);
        k.accountScopes = (canCreateGroups ? _bit(Scope.CreateGroups) : 0) | (canDeleteGroups ? _bit(Scope.DeleteGroups) : 0)
            | (canCreatePkps ? _bit(Scope.CreatePkps) : 0);
        k.wildcards = _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.ManageActions, manageIpfsIdsInGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.AddPkp, addPkpToGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.RemovePkp, removePkpFromGroups)
            | _writeGrants(apiKeyHash, usageApiKeyHash, k, version, Scope.Execute, executeInGroups);
        k.name = name;
        k.description = description;
        // Last, so that a relayed simulation failing here proves everything else valid (see the interface).
        if (unreserved && msg.sender != _accounts[apiKeyHash].admin) revert UsageApiKeyNotAuthorized(apiKeyHash, usageApiKeyHash);
        emit UsageApiKeySet(apiKeyHash, usageApiKeyHash, created, expiration, balance);
    }

    /// @inheritdoc IAccountConfigWrites
    function updateUsageApiKeyMetadata(uint256 apiKeyHash, uint256 usageApiKeyHash, string calldata name, string calldata description) external {
        _requireOwner(apiKeyHash);
        _checkText(name, description);
        _requireUsageKeyOf(apiKeyHash, usageApiKeyHash);
        UsageKey storage k = _usageKeys[usageApiKeyHash];
        k.name = name;
        k.description = description;
        emit UsageApiKeyMetadataUpdated(apiKeyHash, usageApiKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function removeUsageApiKey(uint256 apiKeyHash, uint256 usageApiKeyHash) external {
        _requireOwner(apiKeyHash);
        _requireUsageKeyOf(apiKeyHash, usageApiKeyHash);
        _accountUsageKeys[apiKeyHash].remove(usageApiKeyHash);
        UsageKey storage k = _usageKeys[usageApiKeyHash];
        // The version survives (and moves on) so that grants of the removed key never come back.
        k.registered = false;
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

    /// @inheritdoc IAccountConfigWrites
    function addGroup(
        uint256 actorKeyHash,
        string calldata name,
        string calldata description,
        uint256[] calldata cidHashes,
        address[] calldata pkpIds
    ) external returns (uint256) {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        if (!isOwner) _requireScope(actorKeyHash, Scope.CreateGroups, 0);
        _checkText(name, description);
        Account storage a = _accounts[apiKeyHash];
        uint64 groupId = a.lastGroupId + 1;
        a.lastGroupId = groupId;
        if (!isOwner && pkpIds.length != 0) _requireScope(actorKeyHash, Scope.AddPkp, groupId);
        if (!isOwner && cidHashes.length != 0) _requireScope(actorKeyHash, Scope.ManageActions, groupId);
        _groupIds[apiKeyHash].add(groupId);
        Group storage g = _groups[apiKeyHash][groupId];
        g.name = name;
        g.description = description;
        emit GroupCreated(apiKeyHash, groupId, actorKeyHash, name, description);
        _addMembers(apiKeyHash, groupId, g, 0, pkpIds, cidHashes, actorKeyHash);
        return groupId;
    }

    /// @inheritdoc IAccountConfigWrites
    function updateGroup(
        uint256 actorKeyHash,
        uint256 groupId,
        string calldata name,
        string calldata description,
        uint256[] calldata cidHashes,
        address[] calldata pkpIds
    ) external {
        (uint256 apiKeyHash, uint64 id, Group storage g) = _groupRewrite(actorKeyHash, groupId, name, description);
        uint32 previous = g.generation;
        uint32 generation = previous + 1;
        g.generation = generation;
        emit GroupUpdated(apiKeyHash, id, actorKeyHash);
        _addMembers(apiKeyHash, id, g, generation, pkpIds, cidHashes, actorKeyHash);
        _unindexDropped(apiKeyHash, id, g, previous, generation + 1);
    }

    /// @inheritdoc IAccountConfigWrites
    function updateGroupMetadata(uint256 actorKeyHash, uint256 groupId, string calldata name, string calldata description) external {
        (uint256 apiKeyHash, uint64 id,) = _groupRewrite(actorKeyHash, groupId, name, description);
        emit GroupMetadataUpdated(apiKeyHash, id, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function removeGroup(uint256 actorKeyHash, uint256 groupId) external {
        (uint256 apiKeyHash, bool isOwner) = _actor(actorKeyHash);
        if (!isOwner) _requireScope(actorKeyHash, Scope.DeleteGroups, 0);
        if (groupId > type(uint64).max || !_groupIds[apiKeyHash].remove(groupId)) revert GroupNotFound(apiKeyHash, groupId);
        Group storage g = _groups[apiKeyHash][uint64(groupId)];
        _unindexDropped(apiKeyHash, uint64(groupId), g, g.generation, 0);
        emit GroupRemoved(apiKeyHash, uint64(groupId), actorKeyHash);
    }

    /// @inheritdoc IAccountConfigWrites
    function addPkpToGroup(uint256 actorKeyHash, uint256 groupId, address pkpId) external {
        (uint256 apiKeyHash, uint64 id, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.AddPkp);
        _addPkp(apiKeyHash, id, g, g.generation, pkpId, actorKeyHash);
    }

    /// @inheritdoc IAccountConfigWrites
    function removePkpFromGroup(uint256 actorKeyHash, uint256 groupId, address pkpId) external {
        (uint256 apiKeyHash, uint64 id, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.RemovePkp);
        if (!_delist(_pkpIndex[apiKeyHash], g.pkps, g.generation, id, _pkpMember(pkpId))) revert PkpNotInGroup(apiKeyHash, id, pkpId);
        emit PkpRemovedFromGroup(apiKeyHash, id, pkpId, actorKeyHash);
    }

    /// @inheritdoc IAccountConfigWrites
    function addActionToGroup(uint256 actorKeyHash, uint256 groupId, uint256 cidHash) external {
        (uint256 apiKeyHash, uint64 id, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.ManageActions);
        _addCid(apiKeyHash, id, g, g.generation, cidHash, actorKeyHash);
    }

    /// @inheritdoc IAccountConfigWrites
    function removeActionFromGroup(uint256 actorKeyHash, uint256 groupId, uint256 cidHash) external {
        (uint256 apiKeyHash, uint64 id, Group storage g) = _groupWrite(actorKeyHash, groupId, Scope.ManageActions);
        if (!_delist(_cidIndex[apiKeyHash], g.cids, g.generation, id, cidHash)) revert ActionNotInGroup(apiKeyHash, id, cidHash);
        emit ActionRemovedFromGroup(apiKeyHash, id, cidHash, actorKeyHash);
    }

    // ───────────────────────────────────── Wallets and actions ─────────────────────────────────────

    /// @inheritdoc IAccountConfigWrites
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
        _pkpIndex[apiKeyHash].groups[_pkpMember(walletAddress)].opened = true; // what `_addPkp` checks
        emit WalletRegistered(apiKeyHash, walletAddress, derivationPath, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function addAction(uint256 actorKeyHash, string calldata name, string calldata description, uint256 cidHash) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        _checkText(name, description);
        if (cidHash == 0) revert InvalidCidHash();
        if (!_accountActions[apiKeyHash].add(cidHash)) revert ActionAlreadyExists(apiKeyHash, cidHash);
        _cidIndex[apiKeyHash].groups[cidHash].opened = true; // its listings in groups then write a little less
        ActionMeta storage m = _actions[apiKeyHash][cidHash];
        m.name = name;
        m.description = description;
        emit ActionAdded(apiKeyHash, cidHash, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function updateActionMetadata(uint256 actorKeyHash, uint256 cidHash, uint256, string calldata name, string calldata description) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        _checkText(name, description);
        if (!_accountActions[apiKeyHash].contains(cidHash)) revert ActionNotFound(apiKeyHash, cidHash);
        ActionMeta storage m = _actions[apiKeyHash][cidHash];
        m.name = name;
        m.description = description;
        emit ActionMetadataUpdated(apiKeyHash, cidHash, actorKeyHash, name, description);
    }

    /// @inheritdoc IAccountConfigWrites
    function removeAction(uint256 actorKeyHash, uint256 cidHash) external {
        uint256 apiKeyHash = _ownerActor(actorKeyHash);
        if (!_accountActions[apiKeyHash].remove(cidHash)) revert ActionNotFound(apiKeyHash, cidHash);
        delete _actions[apiKeyHash][cidHash];
        emit ActionRemoved(apiKeyHash, cidHash, actorKeyHash);
    }

    // ──────────────────────────────────────────── Payers ───────────────────────────────────────────

    /// @inheritdoc IAccountConfigWrites
    function addApiPayer(address payer) external {
        _requirePayerAdmin();
        _addApiPayer(payer);
    }

    /// @inheritdoc IAccountConfigWrites
    function removeApiPayer(address payer) external {
        _requirePayerAdmin();
        if (!_apiPayers.remove(payer)) revert ApiPayerNotFound(payer);
        emit ApiPayerRemoved(payer);
    }

    /// @inheritdoc IAccountConfigWrites
    function setAdminApiPayer(address adminPayer) external onlyOwner {
        address previous = _adminApiPayer;
        _adminApiPayer = adminPayer;
        emit AdminApiPayerChanged(previous, adminPayer);
    }

    /// @notice Always reverts with `RenounceOwnershipDisabled`.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceOwnershipDisabled();
    }

    // ────────────────────────────────────────── Internals ──────────────────────────────────────────

    function _walletAccountHash(address wallet) private pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(wallet)));
    }

    function _createAccount(uint256 apiKeyHash, address admin, bool managed, string calldata name, string calldata description) private {
        _checkText(name, description);
        if (apiKeyHash == 0) revert InvalidKeyHash(apiKeyHash);
        if (_isAccount(apiKeyHash)) revert AccountAlreadyExists(apiKeyHash);
        uint256 holder = _usageKeyAccount(apiKeyHash);
        if (managed) {
            // The hash of a secret an API payer just generated, reserved before it was shown
            // (`authorizeUsageApiKey`, which no usage key registration passes): a usage key under it
            // means the secret is not fresh.
            if (holder != 0) revert KeyHashInUse(apiKeyHash);
        } else if (holder != 0) {
            // A wallet's hash is public before its account exists: a usage key that took it is dropped.
            _usageKeys[apiKeyHash].registered = false;
            _accountUsageKeys[holder].remove(apiKeyHash);
            emit UsageApiKeyRemoved(holder, apiKeyHash);
        }
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

    /// @dev Validates one permission list and writes its grants under `version`; returns the
    /// wildcard bit when the list is exactly [0].
    function _writeGrants(uint256 apiKeyHash, uint256 keyHash, UsageKey storage k, uint32 version, Scope scope, uint256[] calldata ids)
        private
        returns (uint8 wildcard)
    {
        uint256 n = ids.length;
        if (n > _MAX_PERMISSION_GROUPS) revert TooManyItems(n, _MAX_PERMISSION_GROUPS);
        if (n == 0) return 0;
        uint64[] storage list = k.lists[version][uint8(scope)];
        if (n == 1 && ids[0] == 0) {
            list.push(0);
            return _bit(scope);
        }
        mapping(uint256 => bool) storage grants = _grants[keyHash];
        for (uint256 i = 0; i < n; ++i) {
            if (ids[i] == 0) revert InvalidGroupList(scope, 0);
            uint64 id = _requireGroup(apiKeyHash, ids[i]);
            uint256 key = _grantKey(version, scope, id);
            if (grants[key]) revert InvalidGroupList(scope, id);
            grants[key] = true;
            list.push(id);
        }
        return 0;
    }

    /// @dev The common part of `updateGroup` and `updateGroupMetadata`: the owner, or a key with the
    /// three per-group scopes; the name and description are replaced.
    function _groupRewrite(uint256 actorKeyHash, uint256 groupId, string calldata name, string calldata description)
        private
        returns (uint256 apiKeyHash, uint64 id, Group storage g)
    {
        bool isOwner;
        (apiKeyHash, isOwner) = _actor(actorKeyHash);
        id = _requireGroup(apiKeyHash, groupId);
        if (!isOwner) {
            _requireScope(actorKeyHash, Scope.ManageActions, id);
            _requireScope(actorKeyHash, Scope.AddPkp, id);
            _requireScope(actorKeyHash, Scope.RemovePkp, id);
        }
        _checkText(name, description);
        g = _groups[apiKeyHash][id];
        g.name = name;
        g.description = description;
    }

    function _groupWrite(uint256 actorKeyHash, uint256 groupId, Scope scope) private view returns (uint256 apiKeyHash, uint64 id, Group storage g) {
        bool isOwner;
        (apiKeyHash, isOwner) = _actor(actorKeyHash);
        id = _requireGroup(apiKeyHash, groupId);
        if (!isOwner) _requireScope(actorKeyHash, scope, id);
        g = _groups[apiKeyHash][id];
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
        if (bytes(name).length > _MAX_NAME_BYTES) revert NameTooLong(bytes(name).length, _MAX_NAME_BYTES);
        if (bytes(description).length > _MAX_DESCRIPTION_BYTES) revert DescriptionTooLong(bytes(description).length, _MAX_DESCRIPTION_BYTES);
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
        if (pkpIds.length > _MAX_GROUP_MEMBERS) revert TooManyItems(pkpIds.length, _MAX_GROUP_MEMBERS);
        if (cidHashes.length > _MAX_GROUP_MEMBERS) revert TooManyItems(cidHashes.length, _MAX_GROUP_MEMBERS);
        for (uint256 i = 0; i < pkpIds.length; ++i) _addPkp(apiKeyHash, groupId, g, generation, pkpIds[i], actorKeyHash);
        for (uint256 i = 0; i < cidHashes.length; ++i) _addCid(apiKeyHash, groupId, g, generation, cidHashes[i], actorKeyHash);
    }

    function _addPkp(uint256 apiKeyHash, uint64 groupId, Group storage g, uint32 generation, address pkpId, uint256 actorKeyHash) private {
        MemberIndex storage ix = _pkpIndex[apiKeyHash];
        uint256 member = _pkpMember(pkpId);
        GroupIndex storage head = ix.groups[member];
        // Opened exactly when the PKP is registered to the account (`registerWalletDerivation`).
        if (!head.opened) revert PkpNotFound(apiKeyHash, pkpId);
        if (!_list(ix, head, g.pkps[generation], groupId, generation, member)) revert PkpAlreadyInGroup(apiKeyHash, groupId, pkpId);
        emit PkpAddedToGroup(apiKeyHash, groupId, pkpId, actorKeyHash);
    }

    function _addCid(uint256 apiKeyHash, uint64 groupId, Group storage g, uint32 generation, uint256 cidHash, uint256 actorKeyHash) private {
        if (cidHash == 0) revert InvalidCidHash();
        MemberIndex storage ix = _cidIndex[apiKeyHash];
        if (!_list(ix, ix.groups[cidHash], g.cids[generation], groupId, generation, cidHash)) revert ActionAlreadyInGroup(apiKeyHash, groupId, cidHash);
        emit ActionAddedToGroup(apiKeyHash, groupId, cidHash, actorKeyHash);
    }

    // ───────────────────────────────────── Group lists and indexes ─────────────────────────────────

    /// @dev Lists `member` in group `groupId` at `generation` (appended to `list`, that generation's
    /// list), and links the group into the member's index unless it is there already. False when the
    /// group lists it already.
    function _list(MemberIndex storage ix, GroupIndex storage head, uint256[] storage list, uint64 groupId, uint32 generation, uint256 member)
        private
        returns (bool)
    {
        Membership storage m = ix.memberships[member][groupId];
        uint32 tag = generation + 1;
        if (m.listedIn == tag) return false;
        uint256 position = list.length;
        list.push(member);
        if (m.linked) {
            (m.listedIn, m.position) = (tag, uint64(position));
        } else {
            uint64 first = head.firstGroup;
            if (first != 0) ix.memberships[member][first].prevGroup = groupId;
            head.firstGroup = groupId;
            (m.listedIn, m.position, m.nextGroup, m.linked) = (tag, uint64(position), first, true); // prevGroup is 0: first in the index
        }
        return true;
    }

    /// @dev Drops `member` from group `groupId`'s list at `generation` (the last entry takes its place)
    /// and from its index. False when the group does not list it.
    function _delist(MemberIndex storage ix, mapping(uint32 => uint256[]) storage lists, uint32 generation, uint64 groupId, uint256 member)
        private
        returns (bool)
    {
        Membership storage m = ix.memberships[member][groupId];
        if (m.listedIn != generation + 1) return false;
        uint256[] storage list = lists[generation];
        uint64 position = m.position;
        uint256 last = list[list.length - 1];
        if (last != member) {
            list[position] = last;
            ix.memberships[last][groupId].position = position;
        }
        list.pop();
        m.listedIn = 0;
        _unlink(ix, groupId, member);
        return true;
    }

    /// @dev Takes group `groupId` out of `member`'s index (a no-op when it is not linked).
    function _unlink(MemberIndex storage ix, uint64 groupId, uint256 member) private {
        mapping(uint64 => Membership) storage ms = ix.memberships[member];
        Membership storage m = ms[groupId];
        if (!m.linked) return;
        (uint64 prev, uint64 next) = (m.prevGroup, m.nextGroup);
        GroupIndex storage head = ix.groups[member];
        if (prev == 0) head.firstGroup = next;
        else ms[prev].nextGroup = next;
        if (next != 0) ms[next].prevGroup = prev;
        (m.linked, m.prevGroup, m.nextGroup) = (false, 0, 0);
    }

    /// @dev After `updateGroup` (the group now lists at `liveTag`) or `removeGroup` (`liveTag` 0):
    /// unlinks from their indexes the members of the `generation` lists the group no longer lists,
    /// the last `_MAX_GROUP_MEMBERS` of each kind at most, so the write stays bounded (an entry left
    /// over is skipped by the execution check, which verifies every listing).
    function _unindexDropped(uint256 apiKeyHash, uint64 groupId, Group storage g, uint32 generation, uint32 liveTag) private {
        _unindexDropped(_cidIndex[apiKeyHash], g.cids[generation], groupId, liveTag);
        _unindexDropped(_pkpIndex[apiKeyHash], g.pkps[generation], groupId, liveTag);
    }

    function _unindexDropped(MemberIndex storage ix, uint256[] storage list, uint64 groupId, uint32 liveTag) private {
        uint256 n = list.length;
        uint256 stop = n > _MAX_GROUP_MEMBERS ? n - _MAX_GROUP_MEMBERS : 0;
        for (uint256 i = n; i > stop; --i) {
            uint256 member = list[i - 1];
            if (liveTag == 0 || ix.memberships[member][groupId].listedIn != liveTag) _unlink(ix, groupId, member);
        }
    }

    function _requireUsageKeyOf(uint256 apiKeyHash, uint256 usageApiKeyHash) private view {
        if (_usageKeyAccount(usageApiKeyHash) != apiKeyHash) revert UsageApiKeyNotFound(apiKeyHash, usageApiKeyHash);
    }

    function _requirePayerAdmin() private view {
        if (msg.sender != owner() && msg.sender != _adminApiPayer) revert NotApiPayerAdmin(msg.sender);
    }

    function _addApiPayer(address payer) private {
        if (payer == address(0)) revert ZeroAddress();
        if (!_apiPayers.add(payer)) revert ApiPayerAlreadyAdded(payer);
        emit ApiPayerAdded(payer);
    }
}
