// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// @notice A stand-in ERC-1155 collection for local dev chains. Anyone may mint any id (dev chains only).
contract TestNFT1155 is ERC1155 {
    string public name;
    string public symbol;

    constructor(string memory name_, string memory symbol_) ERC1155("") {
        name = name_;
        symbol = symbol_;
    }

    function mint(address to, uint256 id, uint256 amount) external {
        _mint(to, id, amount, "");
    }

    function mintBatch(address to, uint256[] calldata ids, uint256[] calldata amounts) external {
        _mintBatch(to, ids, amounts, "");
    }
}
