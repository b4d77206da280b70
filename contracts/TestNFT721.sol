// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// @notice A stand-in ERC-721 collection for local dev chains. Anyone may mint (dev chains only):
/// each mint takes the next token id, from 1.
contract TestNFT721 is ERC721 {
    uint256 public lastTokenId;

    constructor(string memory name_, string memory symbol_) ERC721(name_, symbol_) {}

    function mint(address to) external returns (uint256 tokenId) {
        tokenId = ++lastTokenId;
        _mint(to, tokenId);
    }
}
