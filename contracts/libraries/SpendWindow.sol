// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title SpendWindow
/// @notice A wallet's own cap on the credits locked for it per rolling hour, in one storage word:
/// `cap (40) | slot (32) | b3 (40) | b2 (40) | b1 (40) | b0 (40)`, where time is cut into 20-minute slots,
/// `slot` is the slot of the last lock and `b0..b3` the credits locked in that slot and the three before it.
/// @dev Any 60-minute interval touches at most four consecutive slots, and a lock is only taken when the four
/// slots ending with the current one stay within the cap, so the credits locked in *any* rolling hour never exceed
/// it. The price of that exactness is that a lock may count for up to 80 minutes; room comes back at slot
/// boundaries, which `roomAt` reports. A cap of zero means no cap (the default).
library SpendWindow {
    /// @notice Length of one slot, seconds.
    uint256 internal constant SLOT_SECONDS = 1200;
    /// @notice Slots summed against the cap (the current one and the three before it).
    uint256 internal constant SLOTS = 4;
    /// @notice Largest cap (and largest amount one slot can hold).
    uint256 internal constant MAX_CAP = type(uint40).max;

    uint256 private constant BUCKET_BITS = 40;
    uint256 private constant BUCKET_MASK = (1 << BUCKET_BITS) - 1;
    uint256 private constant BUCKETS_BITS = BUCKET_BITS * SLOTS;
    uint256 private constant BUCKETS_MASK = (1 << BUCKETS_BITS) - 1;
    uint256 private constant SLOT_SHIFT = BUCKETS_BITS;
    uint256 private constant CAP_SHIFT = BUCKETS_BITS + 32;

    /// @notice The cap stored in `word` (zero: none).
    function capOf(uint256 word) internal pure returns (uint256) {
        return word >> CAP_SHIFT;
    }

    /// @notice The same word with another cap; the record of past locks is kept.
    function withCap(uint256 word, uint256 cap) internal pure returns (uint256) {
        return (word & ((1 << CAP_SHIFT) - 1)) | (cap << CAP_SHIFT);
    }

    /// @notice The four slot totals as of `timestamp` (older slots dropped) and the slot number.
    function bucketsAt(uint256 word, uint256 timestamp) internal pure returns (uint256 buckets, uint256 slot) {
        slot = timestamp / SLOT_SECONDS;
        uint256 elapsed = slot - uint32(word >> SLOT_SHIFT);
        buckets = elapsed >= SLOTS ? 0 : ((word & BUCKETS_MASK) << (BUCKET_BITS * elapsed)) & BUCKETS_MASK;
    }

    /// @notice Credits locked in the window (the four slots ending with the current one) at `timestamp`.
    function lockedAt(uint256 word, uint256 timestamp) internal pure returns (uint256 total) {
        (uint256 buckets, ) = bucketsAt(word, timestamp);
        total = _sum(buckets);
    }

    /// @notice Tries to record a lock of `credits` at `timestamp`.
    /// @return ok Whether it fits under the cap (always true without a cap).
    /// @return updated The word to store when it fits (unchanged without a cap).
    /// @return locked Credits already locked in the window before this lock.
    function tryLock(
        uint256 word,
        uint256 credits,
        uint256 timestamp
    ) internal pure returns (bool ok, uint256 updated, uint256 locked) {
        uint256 cap = word >> CAP_SHIFT;
        if (cap == 0) return (true, word, 0);
        (uint256 buckets, uint256 slot) = bucketsAt(word, timestamp);
        locked = _sum(buckets);
        if (locked + credits > cap) return (false, word, locked);
        // b0 + credits <= cap <= MAX_CAP, so the current slot's bucket cannot overflow into b1.
        updated = (cap << CAP_SHIFT) | (slot << SLOT_SHIFT) | (buckets + credits);
        ok = true;
    }

    /// @notice The earliest time at which a lock of `credits` fits, given `word` at `timestamp` (that time itself
    /// when it fits now; zero when it never can because it exceeds the cap).
    function roomAt(uint256 word, uint256 credits, uint256 timestamp) internal pure returns (uint64) {
        uint256 cap = word >> CAP_SHIFT;
        if (cap == 0) return uint64(timestamp);
        if (credits > cap) return 0;
        (uint256 buckets, uint256 slot) = bucketsAt(word, timestamp);
        for (uint256 ahead; ahead < SLOTS; ++ahead) {
            uint256 kept = ahead == 0 ? buckets : (buckets << (BUCKET_BITS * ahead)) & BUCKETS_MASK;
            if (_sum(kept) + credits <= cap)
                return ahead == 0 ? uint64(timestamp) : uint64((slot + ahead) * SLOT_SECONDS);
        }
        return uint64((slot + SLOTS) * SLOT_SECONDS);
    }

    /// @notice When the oldest slot still counted at `timestamp` stops counting, i.e. when room first frees up
    /// (zero when nothing is counted).
    function nextRoomAt(uint256 word, uint256 timestamp) internal pure returns (uint64) {
        (uint256 buckets, uint256 slot) = bucketsAt(word, timestamp);
        for (uint256 age = SLOTS; age > 0; --age) {
            // A slot `age - 1` slots old stops counting when the window has moved past it.
            if ((buckets >> (BUCKET_BITS * (age - 1))) & BUCKET_MASK != 0)
                return uint64((slot + SLOTS - (age - 1)) * SLOT_SECONDS);
        }
        return 0;
    }

    function _sum(uint256 buckets) private pure returns (uint256) {
        return
            (buckets & BUCKET_MASK) +
            ((buckets >> BUCKET_BITS) & BUCKET_MASK) +
            ((buckets >> (2 * BUCKET_BITS)) & BUCKET_MASK) +
            (buckets >> (3 * BUCKET_BITS));
    }
}
