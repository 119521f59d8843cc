// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title StakeToken
/// @notice The token workers stake (SVC, 18 decimals); slashed stake goes to the treasury.
/// @dev Only for local chains and tests.
contract StakeToken is ERC20, Ownable {
    /// @param initialOwner The account allowed to mint.
    constructor(address initialOwner) ERC20("Service Stake", "SVC") Ownable(initialOwner) {}

    /// @notice Mints `amount` units to `to`. Owner only.
    /// @param to Recipient.
    /// @param amount Token units (18 decimals).
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
