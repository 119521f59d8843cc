// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title Stablecoin
/// @notice The local chains' USD stablecoin: 6 decimals like USDC, EIP-2612 permit for one-transaction deposits.
/// @dev Only for local chains and tests; production uses an existing stablecoin.
contract Stablecoin is ERC20, ERC20Permit, Ownable {
    /// @notice Decimals of the token, as USDC.
    uint8 public constant DECIMALS = 6;

    /// @param initialOwner The account allowed to mint.
    constructor(
        address initialOwner
    ) ERC20("USD Gateway Dollar", "USDG") ERC20Permit("USD Gateway Dollar") Ownable(initialOwner) {}

    /// @notice Mints `amount` units to `to`. Owner only.
    /// @param to Recipient.
    /// @param amount Token units (6 decimals).
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @inheritdoc ERC20
    function decimals() public pure override returns (uint8) {
        return DECIMALS;
    }
}
