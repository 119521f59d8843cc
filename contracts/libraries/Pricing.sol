// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Pricing
/// @notice The product's pricing rule, in credits: a flat price per request up to the long-completion
/// threshold, then a per-1,000-token price for the tokens beyond it, prorated and rounded up, so the price
/// never falls as the output grows. Mirrored off chain in `contracts/client/pricing.ts`.
library Pricing {
    /// @notice Completions up to this many tokens cost the flat per-request price.
    uint256 internal constant LONG_COMPLETION_THRESHOLD = 500;
    /// @notice The per-token price is quoted per this many tokens.
    uint256 internal constant TOKENS_PER_PRICE_UNIT = 1000;

    /// @notice Credits charged for `completionTokens` tokens.
    /// @param creditsPerRequest Flat price of completions up to the threshold.
    /// @param creditsPer1kTokens Price per 1,000 tokens beyond the threshold.
    /// @param completionTokens Tokens generated; zero costs nothing.
    /// @return credits The price.
    function price(
        uint256 creditsPerRequest,
        uint256 creditsPer1kTokens,
        uint256 completionTokens
    ) internal pure returns (uint256 credits) {
        if (completionTokens == 0) return 0;
        if (completionTokens <= LONG_COMPLETION_THRESHOLD) return creditsPerRequest;
        // Callers pass uint32 values, so the product below is < 2^64 and the sum cannot overflow;
        // the subtraction is guarded by the threshold check above.
        unchecked {
            uint256 extra = (completionTokens - LONG_COMPLETION_THRESHOLD) * creditsPer1kTokens;
            return creditsPerRequest + (extra + TOKENS_PER_PRICE_UNIT - 1) / TOKENS_PER_PRICE_UNIT;
        }
    }
}
