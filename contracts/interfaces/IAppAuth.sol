// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @title IAppAuth
/// @notice The app governance interface a dstack KMS calls before it releases keys to a TEE app.
/// @dev Reproduces dstack's `IAppAuth` (Dstack-TEE/dstack, `kms/auth-eth/contracts/IAppAuth.sol`)
/// field for field, so the ERC-165 id of this interface is dstack's `0x1e079198`. Do not add
/// functions here: the id would change and a dstack KMS or its tooling would no longer detect us.
interface IAppAuth is IERC165 {
    /// @notice What the KMS measured about a booting app instance.
    /// @param appId The app id; for dstack, the address of the app's governance contract.
    /// @param composeHash SHA-256 of the app's compose file (the image set and its configuration).
    /// @param instanceId The id of this instance of the app.
    /// @param deviceId The id of the physical TEE device.
    /// @param mrAggregated Aggregated measurement register value.
    /// @param mrSystem System measurement register value.
    /// @param osImageHash Hash of the guest OS image.
    /// @param tcbStatus Platform TCB status from quote verification, e.g. "UpToDate" or "OutOfDate".
    /// @param advisoryIds Security advisories that apply to the platform.
    struct AppBootInfo {
        address appId;
        bytes32 composeHash;
        address instanceId;
        bytes32 deviceId;
        bytes32 mrAggregated;
        bytes32 mrSystem;
        bytes32 osImageHash;
        string tcbStatus;
        string[] advisoryIds;
    }

    /// @notice Whether an app instance with these measurements may boot and receive its keys.
    /// @param bootInfo The measurements of the booting instance.
    /// @return isAllowed True when the instance may boot.
    /// @return reason Why it may not boot; empty when it may.
    function isAppAllowed(AppBootInfo calldata bootInfo) external view returns (bool isAllowed, string memory reason);
}

/// @title IAppAuthBasicManagement
/// @notice The allow-list management dstack's tooling expects of an app governance contract.
/// @dev Reproduces dstack's `IAppAuthBasicManagement`; its ERC-165 id is `0x8fd37527`. The events
/// keep dstack's exact (non-indexed) signatures so dstack's tooling decodes them.
interface IAppAuthBasicManagement is IERC165 {
    /// @notice A compose hash was added to the allow-list.
    event ComposeHashAdded(bytes32 composeHash);

    /// @notice A compose hash was removed from the allow-list.
    event ComposeHashRemoved(bytes32 composeHash);

    /// @notice A device id was added to the allow-list.
    event DeviceAdded(bytes32 deviceId);

    /// @notice A device id was removed from the allow-list.
    event DeviceRemoved(bytes32 deviceId);

    /// @notice Allows app instances whose compose file hashes to `composeHash`. Only the owner.
    /// @dev Reverts with `ZeroComposeHash` or `ComposeHashAlreadyAllowed`.
    function addComposeHash(bytes32 composeHash) external;

    /// @notice Stops allowing `composeHash`; instances running it get no keys at their next boot.
    /// Only the owner.
    /// @dev Reverts with `ComposeHashNotAllowed` when the hash is not on the allow-list.
    function removeComposeHash(bytes32 composeHash) external;

    /// @notice Allows app instances on the TEE device `deviceId`. Only the owner.
    /// @dev Reverts with `ZeroDeviceId` or `DeviceAlreadyAllowed`.
    function addDevice(bytes32 deviceId) external;

    /// @notice Stops allowing the TEE device `deviceId`. Only the owner.
    /// @dev Reverts with `DeviceNotAllowed` when the device is not on the allow-list.
    function removeDevice(bytes32 deviceId) external;
}

/// @title IAppAuthPolicy
/// @notice Vesta's additions to the dstack interfaces: the allow-list views, the device and TCB
/// switches, the app id, and the custom errors of the `AppAuth` contract.
interface IAppAuthPolicy is IAppAuth, IAppAuthBasicManagement {
    // ---------------------------------------------------------------- events

    /// @notice The allow-any-device switch was set.
    event AllowAnyDeviceSet(bool allowAny);

    /// @notice The TCB-must-be-UpToDate switch was set.
    event RequireTcbUpToDateSet(bool requireUpToDate);

    // ---------------------------------------------------------------- errors

    /// @notice The zero hash cannot be allowed: it is what an unset field reads as.
    error ZeroComposeHash();

    /// @notice `composeHash` is already on the allow-list.
    error ComposeHashAlreadyAllowed(bytes32 composeHash);

    /// @notice `composeHash` is not on the allow-list.
    error ComposeHashNotAllowed(bytes32 composeHash);

    /// @notice The zero device id cannot be allowed: it is what an unset field reads as.
    error ZeroDeviceId();

    /// @notice `deviceId` is already on the allow-list.
    error DeviceAlreadyAllowed(bytes32 deviceId);

    /// @notice `deviceId` is not on the allow-list.
    error DeviceNotAllowed(bytes32 deviceId);

    /// @notice The allow-any-device switch is already `allowAny`.
    error AllowAnyDeviceUnchanged(bool allowAny);

    /// @notice The TCB-must-be-UpToDate switch is already `requireUpToDate`.
    error RequireTcbUpToDateUnchanged(bool requireUpToDate);

    /// @notice Ownership cannot be renounced: an ownerless contract could never revoke a
    /// compromised compose hash.
    error RenounceOwnershipDisabled();

    // ---------------------------------------------------------------- views

    /// @notice The app id this contract governs; `isAppAllowed` rejects any other.
    function appId() external view returns (address);

    /// @notice Whether `composeHash` is on the allow-list.
    function allowedComposeHashes(bytes32 composeHash) external view returns (bool);

    /// @notice Whether `deviceId` is on the allow-list.
    function allowedDeviceIds(bytes32 deviceId) external view returns (bool);

    /// @notice Whether instances may boot on any TEE device, not only on allowed ones.
    function allowAnyDevice() external view returns (bool);

    /// @notice Whether instances must report the TCB status "UpToDate" to boot.
    function requireTcbUpToDate() external view returns (bool);

    // ---------------------------------------------------------------- owner writes

    /// @notice Sets whether instances may boot on any TEE device. Only the owner.
    /// @dev Reverts with `AllowAnyDeviceUnchanged` when the switch already has that value.
    function setAllowAnyDevice(bool allowAny) external;

    /// @notice Sets whether instances must report the TCB status "UpToDate". Only the owner.
    /// @dev Reverts with `RequireTcbUpToDateUnchanged` when the switch already has that value.
    function setRequireTcbUpToDate(bool requireUpToDate) external;
}
