// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice Test double of a 6-decimal stablecoin that keeps a fee on every transfer (the recipient gets less
/// than was sent), for the balance-delta deposit tests.
contract FeeOnTransferStablecoin is ERC20 {
    /// @notice Fee kept on each transfer, basis points.
    uint256 public constant FEE_BPS = 100;

    constructor() ERC20("Fee Dollar", "FEED") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) return super._update(from, to, value);
        uint256 fee = (value * FEE_BPS) / 10_000;
        super._update(from, address(0xFEE), fee);
        super._update(from, to, value - fee);
    }
}

/// @notice Test double of a 6-decimal stablecoin with a blocklist (as USDC has): transfers to or from a
/// blocked address revert.
contract BlocklistStablecoin is ERC20 {
    mapping(address account => bool) public blocked;

    error Blocked(address account);

    constructor() ERC20("Blocklist Dollar", "BLKD") {}

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setBlocked(address account, bool value) external {
        blocked[account] = value;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (blocked[from]) revert Blocked(from);
        if (blocked[to]) revert Blocked(to);
        super._update(from, to, value);
    }
}

/// @notice A token with the wrong number of decimals, for the constructor checks.
contract EighteenDecimalDollar is ERC20 {
    constructor() ERC20("Eighteen", "EIGHTEEN") {}
}
