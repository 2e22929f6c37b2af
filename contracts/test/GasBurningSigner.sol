// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title GasBurningSigner (tests only)
/// @notice A hostile ERC-1271 "wallet": `isValidSignature` burns all the gas it is given, and calls
/// any signature valid when it was given more than 5M gas. A verifier that caps the call's gas
/// refuses it cheaply; one that does not burns a block's worth of gas per request, and accepts it.
contract GasBurningSigner {
    bytes4 private constant _MAGIC = 0x1626ba7e;

    function isValidSignature(bytes32, bytes calldata) external view returns (bytes4) {
        uint256 start = gasleft();
        uint256 x = start;
        while (gasleft() > 3_000) x = uint256(keccak256(abi.encode(x)));
        return start > 5_000_000 && x != 0 ? _MAGIC : bytes4(0);
    }
}
