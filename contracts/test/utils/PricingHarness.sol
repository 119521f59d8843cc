// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Pricing} from "../../libraries/Pricing.sol";

/// @notice Exposes the escrow's pricing library to the TypeScript parity tests (contracts/client/pricing.ts).
contract PricingHarness {
    /// @notice `Pricing.price` as the escrow applies it.
    function priceOf(
        uint32 creditsPerRequest,
        uint32 creditsPer1kTokens,
        uint32 completionTokens
    ) external pure returns (uint256) {
        return Pricing.price(creditsPerRequest, creditsPer1kTokens, completionTokens);
    }
}
