// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @title FakeSafe
/// @notice Test only: a contract that answers the Safe getters with any owners and threshold while
/// one key (the deployer) alone makes it act. The verifier must not take it for a Safe.
contract FakeSafe {
    address private immutable _controller;
    address[] private _owners;
    uint256 private immutable _threshold;

    constructor(address[] memory owners_, uint256 threshold_) {
        _controller = msg.sender;
        _owners = owners_;
        _threshold = threshold_;
    }

    function getOwners() external view returns (address[] memory) {
        return _owners;
    }

    function getThreshold() external view returns (uint256) {
        return _threshold;
    }

    function getModulesPaginated(address, uint256) external pure returns (address[] memory array, address next) {
        return (new address[](0), address(1));
    }

    /// @notice Acts as "the Safe" on the deployer's word alone.
    function exec(address target, bytes calldata data) external returns (bytes memory) {
        require(msg.sender == _controller, "not the controller");
        (bool ok, bytes memory result) = target.call(data);
        require(ok, "call failed");
        return result;
    }
}
