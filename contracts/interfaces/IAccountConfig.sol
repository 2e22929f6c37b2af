// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccountConfigWrites} from "./IAccountConfigWrites.sol";
import {IAccountConfigViews} from "./IAccountConfigViews.sol";

/// @title IAccountConfig
/// @notice The one ABI clients use at AccountConfig's address: its writes (`IAccountConfigWrites`),
/// its reads (`IAccountConfigViews`, served through AccountConfig's fallback by
/// `AccountConfigViews`) and the governance ownership it inherits from OpenZeppelin `Ownable2Step`.
/// Nothing implements it directly; a test checks that its functions are exactly those of the two
/// contracts. Chipotle's sovereign-mode ABI is a subset of it (see the README).
interface IAccountConfig is IAccountConfigWrites, IAccountConfigViews {
    /// @notice OpenZeppelin Ownable: the caller is not the owner.
    error OwnableUnauthorizedAccount(address account);
    /// @notice OpenZeppelin Ownable: the proposed owner is not valid.
    error OwnableInvalidOwner(address owner);

    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice The governance owner (a Safe multisig in production).
    function owner() external view returns (address);

    /// @notice The owner proposed by `transferOwnership`, until it accepts.
    function pendingOwner() external view returns (address);

    /// @notice Proposes a new governance owner (owner only); it takes over when it calls `acceptOwnership`.
    function transferOwnership(address newOwner) external;

    /// @notice Completes a governance ownership transfer (the pending owner only).
    function acceptOwnership() external;

    /// @notice Always reverts with `RenounceOwnershipDisabled`.
    function renounceOwnership() external view;

    /// @notice The contract that serves the reads, run in this contract's storage (fixed at deployment).
    function VIEWS() external view returns (address);
}
