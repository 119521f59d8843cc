// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title WorkerBond
/// @notice A worker's stablecoin bond in the escrow and the pay it has at risk, in one storage word:
/// `bond (96) | slot (32) | previous (64) | current (64)`. Time is cut into slots one slash exposure long (the
/// dispute window, the clock skew and the arbitration window: `WorkerRegistry.slashExposure`); `current` is what
/// settlements charged for the worker's jobs in slot `slot`, `previous` in the slot before.
/// @dev "Fraud never pays": a job settled at `t` can be disputed and decided until `t + exposure` at the latest, and
/// its charge counts at risk while the current slot is `t`'s or the next one, so at least until `t + exposure`.
/// A settlement is taken only while the charges at risk, this one included, stay within the bond, so whatever a
/// worker was paid for jobs that can still be found fraudulent never exceeds what the escrow can seize from it.
/// Counting up to two slots is conservative (a charge may count for up to twice the exposure), never short.
library WorkerBond {
    uint256 private constant AMOUNT_BITS = 64;
    uint256 private constant AMOUNT_MASK = (1 << AMOUNT_BITS) - 1;
    uint256 private constant SLOT_SHIFT = 128;
    uint256 private constant BOND_SHIFT = 160;

    /// @notice Largest bond accepted: a bucket's 64 bits (1.8e13 stablecoin), so no bucket can overflow (a bucket
    /// never exceeds the bond).
    uint256 internal constant MAX_BOND = type(uint64).max;

    /// @notice The bond, stablecoin units.
    function bondOf(uint256 word) internal pure returns (uint256) {
        return word >> BOND_SHIFT;
    }

    /// @notice The same word with another bond (`bond` at most `MAX_BOND`).
    function withBond(uint256 word, uint256 bond) internal pure returns (uint256) {
        return (word & ((1 << BOND_SHIFT) - 1)) | (bond << BOND_SHIFT);
    }

    /// @notice Charges still at risk at time `now`, stablecoin units.
    function atRisk(uint256 word, uint256 now_, uint256 exposure) internal pure returns (uint256) {
        uint256 slot = now_ / exposure;
        uint256 stored = uint32(word >> SLOT_SHIFT);
        if (stored == slot) return (word & AMOUNT_MASK) + ((word >> AMOUNT_BITS) & AMOUNT_MASK);
        if (stored + 1 == slot) return word & AMOUNT_MASK;
        return 0;
    }

    /// @notice The word rolled to `now`'s slot (charges of slots no longer counted dropped, what is counted kept)
    /// and the room left in the bond, so a batch can add charges to its current bucket with plain additions while
    /// the sum stays within `room` (the bucket then stays within the bond, so within its 64 bits).
    function rolled(
        uint256 word,
        uint256 now_,
        uint256 exposure
    ) internal pure returns (uint256 updated, uint256 room) {
        uint256 slot = now_ / exposure;
        uint256 stored = uint32(word >> SLOT_SHIFT);
        uint256 current;
        uint256 previous;
        if (stored == slot) {
            current = word & AMOUNT_MASK;
            previous = (word >> AMOUNT_BITS) & AMOUNT_MASK;
        } else if (stored + 1 == slot) {
            previous = word & AMOUNT_MASK;
        }
        uint256 bond = word >> BOND_SHIFT;
        uint256 risk = current + previous;
        room = risk >= bond ? 0 : bond - risk;
        updated = (bond << BOND_SHIFT) | (uint256(uint32(slot)) << SLOT_SHIFT) | (previous << AMOUNT_BITS) | current;
    }

    /// @notice Adds a charge of `amount` at risk at `now`, if the charges at risk then stay within the bond.
    /// @return fits Whether it fits.
    /// @return updated The word with the charge counted (the word unchanged when it does not fit).
    /// @return risk The charges at risk before this one.
    function tryAdd(
        uint256 word,
        uint256 amount,
        uint256 now_,
        uint256 exposure
    ) internal pure returns (bool fits, uint256 updated, uint256 risk) {
        uint256 slot = now_ / exposure;
        uint256 stored = uint32(word >> SLOT_SHIFT);
        uint256 current;
        uint256 previous;
        if (stored == slot) {
            current = word & AMOUNT_MASK;
            previous = (word >> AMOUNT_BITS) & AMOUNT_MASK;
        } else if (stored + 1 == slot) {
            previous = word & AMOUNT_MASK;
        }
        risk = current + previous;
        uint256 bond = word >> BOND_SHIFT;
        if (risk + amount > bond) return (false, word, risk);
        // current + amount <= risk + amount <= bond <= MAX_BOND: the bucket holds it.
        current += amount;
        fits = true;
        updated = (bond << BOND_SHIFT) | (uint256(uint32(slot)) << SLOT_SHIFT) | (previous << AMOUNT_BITS) | current;
    }
}
