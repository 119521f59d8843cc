// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Pricing} from "../libraries/Pricing.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice The pricing rule of docs/DESIGN.md: 0 for no tokens, the flat per-request price up to
/// 500 tokens, then `cpr + ceil((n - 500) * cp1k / 1000)`. Prices are uint32 wherever they are stored.
contract PricingTest {
    uint256 private constant THRESHOLD = 500;

    /// @dev The rule restated independently of the library: floor division plus one if a remainder is left.
    function _expected(uint256 cpr, uint256 cp1k, uint256 n) private pure returns (uint256) {
        if (n == 0) return 0;
        if (n <= THRESHOLD) return cpr;
        uint256 extra = (n - THRESHOLD) * cp1k;
        return cpr + extra / 1000 + (extra % 1000 == 0 ? 0 : 1);
    }

    function test_LONG_COMPLETION_THRESHOLD_equals500() public pure {
        vm.assertEq(Pricing.LONG_COMPLETION_THRESHOLD, 500, "threshold");
    }

    function test_price_matchesLaunchTiers() public pure {
        // max 40/20
        vm.assertEq(Pricing.price(40, 20, 1), 40, "max, 1 token");
        vm.assertEq(Pricing.price(40, 20, 500), 40, "max, 500 tokens");
        vm.assertEq(Pricing.price(40, 20, 501), 41, "max, 501 tokens rounds up");
        vm.assertEq(Pricing.price(40, 20, 1500), 60, "max, 1500 tokens");
        vm.assertEq(Pricing.price(40, 20, 1550), 61, "max, 1550 tokens");
        // pro 18/9
        vm.assertEq(Pricing.price(18, 9, 2500), 36, "pro, 2500 tokens");
        // standard 8/4
        vm.assertEq(Pricing.price(8, 4, 750), 9, "standard, 750 tokens");
        // lite 2/1
        vm.assertEq(Pricing.price(2, 1, 1500), 3, "lite, 1500 tokens");
        vm.assertEq(Pricing.price(2, 1, 1501), 4, "lite, 1501 tokens");
    }

    function testFuzz_price_isZeroIfNoTokens(uint32 cpr, uint32 cp1k) public pure {
        vm.assertEq(Pricing.price(cpr, cp1k, 0), 0, "price of zero tokens");
    }

    function testFuzz_price_equalsCreditsPerRequestIfAtMostThreshold(uint32 cpr, uint32 cp1k, uint32 n) public pure {
        n = uint32(bound(n, 1, THRESHOLD));
        vm.assertEq(Pricing.price(cpr, cp1k, n), cpr, "flat price up to the threshold");
    }

    function testFuzz_price_isCeilFormulaIfAboveThreshold(uint32 cpr, uint32 cp1k, uint32 n) public pure {
        n = uint32(bound(n, THRESHOLD + 1, type(uint32).max));
        uint256 p = Pricing.price(cpr, cp1k, n);
        vm.assertEq(p, _expected(cpr, cp1k, n), "ceil formula");
        // The smallest whole number of credits covering the extra tokens: enough, and one less is not.
        uint256 extraCost = uint256(n - THRESHOLD) * cp1k;
        vm.assertGe((p - cpr) * 1000, extraCost, "covers the extra tokens");
        if (p > cpr) vm.assertLt((p - cpr - 1) * 1000, extraCost, "rounds up by less than one credit");
    }

    function testFuzz_price_isMonotonicIfTokensGrow(uint32 cpr, uint32 cp1k, uint32 a, uint32 b) public pure {
        (uint32 low, uint32 high) = a <= b ? (a, b) : (b, a);
        vm.assertLe(Pricing.price(cpr, cp1k, low), Pricing.price(cpr, cp1k, high), "non-decreasing in tokens");
    }

    function testFuzz_price_isMonotonicIfOneMoreToken(uint32 cpr, uint32 cp1k, uint32 n) public pure {
        n = uint32(bound(n, 0, type(uint32).max - 1));
        vm.assertLe(Pricing.price(cpr, cp1k, n), Pricing.price(cpr, cp1k, n + 1), "one more token never costs less");
    }

    /// @dev The escrow locks `price(maxTokens)` and charges `min(price(completionTokens), locked)`.
    function testFuzz_price_neverExceedsEscrowIfCapped(
        uint32 cpr,
        uint32 cp1k,
        uint32 maxTokens,
        uint32 n
    ) public pure {
        uint256 locked = Pricing.price(cpr, cp1k, maxTokens);
        uint256 full = Pricing.price(cpr, cp1k, n);
        uint256 charged = full < locked ? full : locked;
        vm.assertLe(charged, locked, "charge within the escrow");
        if (n <= maxTokens) vm.assertEq(charged, full, "no cap needed when within maxTokens");
    }
}
