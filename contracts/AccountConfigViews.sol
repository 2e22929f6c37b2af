// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {EnumerableSet} from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";
import {IAccountConfigViews} from "./interfaces/IAccountConfigViews.sol";
import {AccountConfigStorage} from "./AccountConfigStorage.sol";
import {
    Scope,
    AccountView,
    UsageKeyPermissions,
    UsageKeyView,
    UsageKeyListItem,
    Metadata,
    GroupView,
    WalletView,
    ActionView
} from "./types/AccountConfigTypes.sol";
import {Pagination} from "./libraries/Pagination.sol";

/// @title AccountConfigViews
/// @notice Every read of AccountConfig. AccountConfig's fallback delegatecalls it, so it reads
/// AccountConfig's storage (same layout, `AccountConfigStorage`) with the caller as `msg.sender`.
/// View functions only (a test checks its ABI): it can never change AccountConfig's state. Called
/// at its own address it reads its own, empty, storage.
contract AccountConfigViews is AccountConfigStorage, IAccountConfigViews {
    using EnumerableSet for EnumerableSet.UintSet;
    using EnumerableSet for EnumerableSet.AddressSet;

    /// @inheritdoc IAccountConfigViews
    uint256 public constant MAX_NAME_BYTES = _MAX_NAME_BYTES;
    /// @inheritdoc IAccountConfigViews
    uint256 public constant MAX_DESCRIPTION_BYTES = _MAX_DESCRIPTION_BYTES;
    /// @inheritdoc IAccountConfigViews
    uint256 public constant MAX_GROUP_MEMBERS = _MAX_GROUP_MEMBERS;
    /// @inheritdoc IAccountConfigViews
    uint256 public constant MAX_PERMISSION_GROUPS = _MAX_PERMISSION_GROUPS;

    // ──────────────────────────────────────────── Payers ───────────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
    function getApiPayers() public view returns (address[] memory) {
        return _apiPayers.values();
    }

    /// @inheritdoc IAccountConfigViews
    function api_payers() external view returns (address[] memory) {
        return getApiPayers();
    }

    /// @inheritdoc IAccountConfigViews
    function getAdminApiPayer() external view returns (address) {
        return _adminApiPayer;
    }

    /// @inheritdoc IAccountConfigViews
    function isApiPayer(address account) external view returns (bool) {
        return _apiPayers.contains(account);
    }

    // ─────────────────────────────────────────── Accounts ──────────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
    function resolveApiKey(uint256 keyHash) external view returns (uint256 apiKeyHash, bool isAccountKey, bool active) {
        apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return (0, false, false);
        isAccountKey = keyHash == apiKeyHash;
        active = isAccountKey ? _accounts[apiKeyHash].hasApiKey : !_expired(_usageKeys[keyHash]);
    }

    /// @inheritdoc IAccountConfigViews
    function accountExists(uint256 apiKeyHash) external view returns (bool) {
        return _isAccount(apiKeyHash);
    }

    /// @inheritdoc IAccountConfigViews
    function accountExistsAndIsMutable(uint256 keyHash) external view returns (bool) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return false;
        Account storage a = _accounts[apiKeyHash];
        if (msg.sender == a.admin) return true;
        if (!a.managed || !_apiPayers.contains(msg.sender)) return false;
        return keyHash == apiKeyHash || !_expired(_usageKeys[keyHash]);
    }

    /// @inheritdoc IAccountConfigViews
    function getAccount(uint256 apiKeyHash) external view returns (AccountView memory) {
        Account storage a = _account(apiKeyHash);
        return AccountView(apiKeyHash, a.admin, a.managed, a.hasApiKey, a.pendingAdmin, a.pendingConversion, a.name, a.description);
    }

    // ────────────────────────────────────────── Usage keys ─────────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
    function getUsageApiKey(uint256 usageApiKeyHash) external view returns (UsageKeyView memory) {
        uint256 apiKeyHash = _resolve(usageApiKeyHash);
        if (apiKeyHash == 0 || apiKeyHash == usageApiKeyHash) revert UsageApiKeyNotFound(apiKeyHash, usageApiKeyHash);
        return _usageKeyView(usageApiKeyHash);
    }

    /// @inheritdoc IAccountConfigViews
    function usageApiKeySeal(uint256 usageApiKeyHash) external pure returns (bytes32) {
        return _seal(usageApiKeyHash);
    }

    /// @inheritdoc IAccountConfigViews
    function usageApiKeyHome(bytes32 seal) external view returns (uint256) {
        return _usageKeyHomes[seal];
    }

    /// @inheritdoc IAccountConfigViews
    function hasScope(uint256 keyHash, Scope scope, uint64 groupId) external view returns (bool) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return false;
        if (uint8(scope) >= _FIRST_GROUP_SCOPE && !_groupIds[apiKeyHash].contains(groupId)) return false;
        if (keyHash == apiKeyHash) return _accounts[apiKeyHash].managed;
        return !_expired(_usageKeys[keyHash]) && _holds(keyHash, scope, groupId);
    }

    // ─────────────────────────────────────────── Execution ─────────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
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

    /// @inheritdoc IAccountConfigViews
    function findExecutionGroup(uint256 keyHash, uint256 cidHash, address pkpId) external view returns (bool allowed, uint64 groupId) {
        uint256 apiKeyHash = _resolve(keyHash);
        if (apiKeyHash == 0) return (false, 0);
        if (keyHash == apiKeyHash) return (canExecute(keyHash, cidHash, pkpId, 0), 0);
        UsageKey storage k = _usageKeys[keyHash];
        if (_expired(k)) return (false, 0);
        if (k.wildcards & _bit(Scope.Execute) != 0) {
            // Any group: the CID's and the PKP's indexes side by side; a group that lists both is in
            // both, so the search is over when either index is.
            MemberIndex storage cids = _cidIndex[apiKeyHash];
            MemberIndex storage pkps = _pkpIndex[apiKeyHash];
            uint256 pkp = _pkpMember(pkpId);
            uint64 a = cids.groups[cidHash].firstGroup;
            uint64 b = pkpId == address(0) ? 0 : pkps.groups[pkp].firstGroup;
            while (a != 0 && (b != 0 || pkpId == address(0))) {
                if (_executesIn(apiKeyHash, a, cidHash, pkpId)) return (true, a);
                a = cids.memberships[cidHash][a].nextGroup;
                if (pkpId == address(0)) continue;
                if (_executesIn(apiKeyHash, b, cidHash, pkpId)) return (true, b);
                b = pkps.memberships[pkp][b].nextGroup;
            }
        } else {
            uint64[] storage list = k.lists[k.version][uint8(Scope.Execute)];
            uint256 n = list.length;
            for (uint256 i = 0; i < n; ++i) {
                if (_executesIn(apiKeyHash, list[i], cidHash, pkpId)) return (true, list[i]);
            }
        }
        return (false, 0);
    }

    // ──────────────────────────────────────── Single records ───────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
    function getGroup(uint256 apiKeyHash, uint64 groupId) external view returns (GroupView memory) {
        return _groupView(apiKeyHash, _requireGroup(apiKeyHash, groupId));
    }

    /// @inheritdoc IAccountConfigViews
    function getWallet(uint256 apiKeyHash, address walletAddress) external view returns (WalletView memory) {
        if (_pkps[apiKeyHash][walletAddress].derivationPath == 0) revert PkpNotFound(apiKeyHash, walletAddress);
        return _walletView(apiKeyHash, walletAddress);
    }

    // ───────────────────────────────────────────── Lists ───────────────────────────────────────────

    /// @inheritdoc IAccountConfigViews
    function listGroups(uint256 keyHash, uint256 pageNumber, uint256 pageSize) external view returns (GroupView[] memory items, uint256 total) {
        uint256 apiKeyHash = _listed(keyHash);
        EnumerableSet.UintSet storage ids = _groupIds[apiKeyHash];
        total = ids.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new GroupView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _groupView(apiKeyHash, uint64(ids.at(i)));
    }

    /// @inheritdoc IAccountConfigViews
    function listWallets(uint256 keyHash, uint256 pageNumber, uint256 pageSize) public view returns (WalletView[] memory items, uint256 total) {
        uint256 apiKeyHash = _listed(keyHash);
        return _walletPage(apiKeyHash, _accountPkps[apiKeyHash], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfigViews
    function listPkps(uint256 keyHash, uint256 pageNumber, uint256 pageSize) external view returns (WalletView[] memory items, uint256 total) {
        return listWallets(keyHash, pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfigViews
    function listWalletsInGroup(uint256 keyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (WalletView[] memory items, uint256 total)
    {
        uint256 apiKeyHash = _listed(keyHash);
        Group storage g = _groups[apiKeyHash][_requireGroup(apiKeyHash, groupId)];
        uint256[] storage list = g.pkps[g.generation];
        total = list.length;
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new WalletView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _walletView(apiKeyHash, address(uint160(list[i])));
    }

    /// @inheritdoc IAccountConfigViews
    function listActions(uint256 keyHash, uint256 pageNumber, uint256 pageSize) external view returns (ActionView[] memory items, uint256 total) {
        uint256 apiKeyHash = _listed(keyHash);
        return _actionPage(apiKeyHash, _accountActions[apiKeyHash], pageNumber, pageSize);
    }

    /// @inheritdoc IAccountConfigViews
    function listActionsInGroup(uint256 keyHash, uint256 groupId, uint256 pageNumber, uint256 pageSize)
        external
        view
        returns (ActionView[] memory items, uint256 total)
    {
        uint256 apiKeyHash = _listed(keyHash);
        Group storage g = _groups[apiKeyHash][_requireGroup(apiKeyHash, groupId)];
        uint256[] storage list = g.cids[g.generation];
        total = list.length;
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new ActionView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _actionView(apiKeyHash, list[i]);
    }

    /// @inheritdoc IAccountConfigViews
    function listUsageApiKeys(uint256 keyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyView[] memory items, uint256 total) {
        EnumerableSet.UintSet storage keys = _accountUsageKeys[_listed(keyHash)];
        total = keys.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new UsageKeyView[](end - start);
        for (uint256 i = start; i < end; ++i) items[i - start] = _usageKeyView(keys.at(i));
    }

    /// @inheritdoc IAccountConfigViews
    function listApiKeys(uint256 keyHash, uint256 pageNumber, uint256 pageSize) external view returns (UsageKeyListItem[] memory items, uint256 total) {
        EnumerableSet.UintSet storage keys = _accountUsageKeys[_listed(keyHash)];
        total = keys.length();
        (uint256 start, uint256 end) = Pagination.bounds(total, pageNumber, pageSize);
        items = new UsageKeyListItem[](end - start);
        for (uint256 i = start; i < end; ++i) {
            UsageKeyView memory v = _usageKeyView(keys.at(i));
            UsageKeyPermissions memory p = v.permissions;
            items[i - start] = UsageKeyListItem(
                Metadata(v.usageApiKeyHash, v.name, v.description),
                v.usageApiKeyHash,
                v.expiration,
                v.balance,
                p.executeInGroups,
                p.canCreateGroups,
                p.canDeleteGroups,
                p.canCreatePkps,
                p.manageIpfsIdsInGroups,
                p.addPkpToGroups,
                p.removePkpFromGroups
            );
        }
    }

    // ────────────────────────────────────────── Internals ──────────────────────────────────────────

    /// @dev Whether group `groupId` of the account exists and lists the CID and, when given, the PKP.
    function _executesIn(uint256 apiKeyHash, uint64 groupId, uint256 cidHash, address pkpId) private view returns (bool) {
        return _groupIds[apiKeyHash].contains(groupId) && _groupLists(apiKeyHash, groupId, cidHash, pkpId);
    }

    /// @dev The account a list names: the key's account, or the hash itself when it is unknown.
    function _listed(uint256 keyHash) private view returns (uint256) {
        uint256 apiKeyHash = _resolve(keyHash);
        return apiKeyHash == 0 ? keyHash : apiKeyHash;
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
        return GroupView(groupId, g.name, g.description, g.pkps[g.generation].length, g.cids[g.generation].length);
    }

    function _walletView(uint256 apiKeyHash, address walletAddress) private view returns (WalletView memory) {
        Pkp storage p = _pkps[apiKeyHash][walletAddress];
        return WalletView(p.derivationPath, walletAddress, p.name, p.description);
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
        for (uint256 i = start; i < end; ++i) items[i - start] = _actionView(apiKeyHash, set.at(i));
    }

    function _actionView(uint256 apiKeyHash, uint256 cidHash) private view returns (ActionView memory) {
        ActionMeta storage m = _actions[apiKeyHash][cidHash];
        return ActionView(cidHash, m.name, m.description);
    }
}
