// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title TestToken
/// @notice Test only: an ERC-20 that actions read and move in the sandbox's chain tests (the whole
/// supply minted to the deployer), and a view that reverts with a reason and with a custom error.
contract TestToken is ERC20 {
    error NotToday(uint256 day);

    constructor(uint256 supply) ERC20("Test Token", "TST") {
        _mint(msg.sender, supply);
    }

    function failWithReason() external pure returns (uint256) {
        revert("no reason at all");
    }

    function failWithError() external pure returns (uint256) {
        revert NotToday(7);
    }
}
