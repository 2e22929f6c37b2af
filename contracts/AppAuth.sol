// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ERC165} from "@openzeppelin/contracts/utils/introspection/ERC165.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IAppAuth, IAppAuthBasicManagement, IAppAuthPolicy} from "./interfaces/IAppAuth.sol";

/// @title AppAuth
/// @notice Governs which TEE images (compose hashes) on which devices may run the Vesta app and
/// receive its keys from a dstack KMS. Owned by a Safe multisig in production.
contract AppAuth is IAppAuthPolicy, ERC165, Ownable2Step {
    string private constant _TCB_UP_TO_DATE = "UpToDate";

    address private immutable _appId;

    mapping(bytes32 composeHash => bool allowed) private _allowedComposeHashes;
    mapping(bytes32 deviceId => bool allowed) private _allowedDeviceIds;
    bool private _allowAnyDevice;
    bool private _requireTcbUpToDate;

    /// @param initialOwner The owner (a Safe multisig in production).
    /// @param appId_ The app id to accept; zero means this contract's address, as dstack uses.
    /// @param initialComposeHashes Compose hashes allowed from the start.
    /// @param allowAnyDevice_ Whether instances may boot on any TEE device from the start.
    constructor(
        address initialOwner,
        address appId_,
        bytes32[] memory initialComposeHashes,
        bool allowAnyDevice_
    ) Ownable(initialOwner) {
        _appId = appId_ == address(0) ? address(this) : appId_;
        for (uint256 i; i < initialComposeHashes.length; ++i) {
            _addComposeHash(initialComposeHashes[i]);
        }
        _allowAnyDevice = allowAnyDevice_;
        emit AllowAnyDeviceSet(allowAnyDevice_);
    }

    // ---------------------------------------------------------------- boot check

    /// @inheritdoc IAppAuth
    function isAppAllowed(
        AppBootInfo calldata bootInfo
    ) external view returns (bool isAllowed, string memory reason) {
        if (bootInfo.appId != _appId) return (false, "App id mismatch");
        if (!_allowedComposeHashes[bootInfo.composeHash]) return (false, "Compose hash not allowed");
        if (!_allowAnyDevice && !_allowedDeviceIds[bootInfo.deviceId]) return (false, "Device not allowed");
        if (_requireTcbUpToDate && !Strings.equal(bootInfo.tcbStatus, _TCB_UP_TO_DATE)) {
            return (false, "TCB status is not up to date");
        }
        return (true, "");
    }

    // ---------------------------------------------------------------- compose hashes

    /// @inheritdoc IAppAuthBasicManagement
    function addComposeHash(bytes32 composeHash) external onlyOwner {
        _addComposeHash(composeHash);
    }

    /// @inheritdoc IAppAuthBasicManagement
    function removeComposeHash(bytes32 composeHash) external onlyOwner {
        if (!_allowedComposeHashes[composeHash]) revert ComposeHashNotAllowed(composeHash);
        _allowedComposeHashes[composeHash] = false;
        emit ComposeHashRemoved(composeHash);
    }

    /// @inheritdoc IAppAuthPolicy
    function allowedComposeHashes(bytes32 composeHash) external view returns (bool) {
        return _allowedComposeHashes[composeHash];
    }

    // ---------------------------------------------------------------- devices

    /// @inheritdoc IAppAuthBasicManagement
    function addDevice(bytes32 deviceId) external onlyOwner {
        if (deviceId == bytes32(0)) revert ZeroDeviceId();
        if (_allowedDeviceIds[deviceId]) revert DeviceAlreadyAllowed(deviceId);
        _allowedDeviceIds[deviceId] = true;
        emit DeviceAdded(deviceId);
    }

    /// @inheritdoc IAppAuthBasicManagement
    function removeDevice(bytes32 deviceId) external onlyOwner {
        if (!_allowedDeviceIds[deviceId]) revert DeviceNotAllowed(deviceId);
        _allowedDeviceIds[deviceId] = false;
        emit DeviceRemoved(deviceId);
    }

    /// @inheritdoc IAppAuthPolicy
    function allowedDeviceIds(bytes32 deviceId) external view returns (bool) {
        return _allowedDeviceIds[deviceId];
    }

    // ---------------------------------------------------------------- switches

    /// @inheritdoc IAppAuthPolicy
    function setAllowAnyDevice(bool allowAny) external onlyOwner {
        if (allowAny == _allowAnyDevice) revert AllowAnyDeviceUnchanged(allowAny);
        _allowAnyDevice = allowAny;
        emit AllowAnyDeviceSet(allowAny);
    }

    /// @inheritdoc IAppAuthPolicy
    function allowAnyDevice() external view returns (bool) {
        return _allowAnyDevice;
    }

    /// @inheritdoc IAppAuthPolicy
    function setRequireTcbUpToDate(bool requireUpToDate) external onlyOwner {
        if (requireUpToDate == _requireTcbUpToDate) revert RequireTcbUpToDateUnchanged(requireUpToDate);
        _requireTcbUpToDate = requireUpToDate;
        emit RequireTcbUpToDateSet(requireUpToDate);
    }

    /// @inheritdoc IAppAuthPolicy
    function requireTcbUpToDate() external view returns (bool) {
        return _requireTcbUpToDate;
    }

    // ---------------------------------------------------------------- identity and ownership

    /// @inheritdoc IAppAuthPolicy
    function appId() external view returns (address) {
        return _appId;
    }

    /// @inheritdoc IERC165
    function supportsInterface(bytes4 interfaceId) public view override(ERC165, IERC165) returns (bool) {
        return
            interfaceId == type(IAppAuth).interfaceId ||
            interfaceId == type(IAppAuthBasicManagement).interfaceId ||
            interfaceId == type(IAppAuthPolicy).interfaceId ||
            super.supportsInterface(interfaceId);
    }

    /// @notice Always reverts with `RenounceOwnershipDisabled`: the allow-list must keep an owner.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceOwnershipDisabled();
    }

    // ---------------------------------------------------------------- internal

    function _addComposeHash(bytes32 composeHash) private {
        if (composeHash == bytes32(0)) revert ZeroComposeHash();
        if (_allowedComposeHashes[composeHash]) revert ComposeHashAlreadyAllowed(composeHash);
        _allowedComposeHashes[composeHash] = true;
        emit ComposeHashAdded(composeHash);
    }
}
