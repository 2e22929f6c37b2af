// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @title AllowAllStub
/// @notice Test only: what a dishonest operator could deploy at 0x<app_id> in place of AppAuth. It
/// allows every compose hash and claims any owner it was given; the verifier must not believe it.
contract AllowAllStub {
    address private immutable _owner;

    constructor(address owner_) {
        _owner = owner_;
    }

    function allowedComposeHashes(bytes32) external pure returns (bool) {
        return true;
    }

    function owner() external view returns (address) {
        return _owner;
    }
}
