// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice Page bounds for the list views: page numbers start at 0; a page past the end or a page
/// size of 0 is empty; no multiplication can overflow, whatever the inputs.
library Pagination {
    function bounds(uint256 total, uint256 pageNumber, uint256 pageSize) internal pure returns (uint256 start, uint256 end) {
        if (pageSize == 0 || pageNumber > total / pageSize) return (0, 0);
        start = pageNumber * pageSize; // <= total, cannot overflow
        end = total - start < pageSize ? total : start + pageSize;
    }
}
