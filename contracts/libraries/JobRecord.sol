// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {JobStatus} from "../types/JobStatus.sol";
import {Settlement} from "../types/Receipt.sol";

/// @title JobRecord
/// @notice The escrow keeps one storage word per job (one SSTORE to open, one to settle).
/// While open the word packs, from the high bits down:
/// `wallet (160) | creditsLocked (40) | deadline (32) | modelIndex (16) | status (8)`.
/// At settlement it becomes a commitment to the settlement facts: `keccak256(abi.encode(settlement))`
/// with its low byte replaced by the status, so a dispute can pass the facts back and have them checked.
/// @dev The status always lives in the low byte, whichever form the word has.
library JobRecord {
    uint256 private constant WALLET_SHIFT = 96;
    uint256 private constant CREDITS_SHIFT = 56;
    uint256 private constant DEADLINE_SHIFT = 24;
    uint256 private constant MODEL_INDEX_SHIFT = 8;
    uint256 private constant STATUS_MASK = 0xff;

    /// @notice The largest lock a record can hold (uint40).
    uint256 internal constant MAX_CREDITS_LOCKED = type(uint40).max;

    /// @notice Packs an open job.
    /// @dev `creditsLocked` must not exceed `MAX_CREDITS_LOCKED` (the escrow checks it first).
    function pack(
        address wallet,
        uint256 creditsLocked,
        uint32 deadline,
        uint16 modelIndex,
        JobStatus status
    ) internal pure returns (uint256 record) {
        record =
            (uint256(uint160(wallet)) << WALLET_SHIFT) |
            (uint256(uint40(creditsLocked)) << CREDITS_SHIFT) |
            (uint256(deadline) << DEADLINE_SHIFT) |
            (uint256(modelIndex) << MODEL_INDEX_SHIFT) |
            uint256(status);
    }

    /// @notice Unpacks an open (or failed/refunded) job's word.
    function unpack(
        uint256 record
    )
        internal
        pure
        returns (address wallet, uint256 creditsLocked, uint32 deadline, uint16 modelIndex, JobStatus status)
    {
        wallet = address(uint160(record >> WALLET_SHIFT));
        creditsLocked = uint40(record >> CREDITS_SHIFT);
        deadline = uint32(record >> DEADLINE_SHIFT);
        modelIndex = uint16(record >> MODEL_INDEX_SHIFT);
        status = JobStatus(uint8(record));
    }

    /// @notice The status byte of a record, open or committed (zero word = `None`).
    function statusOf(uint256 record) internal pure returns (JobStatus) {
        return JobStatus(uint8(record));
    }

    /// @notice The same record with another status.
    function withStatus(uint256 record, JobStatus status) internal pure returns (uint256) {
        return (record & ~STATUS_MASK) | uint256(status);
    }

    /// @notice The settlement commitment stored for a settled job, carrying `status` in its low byte.
    function commitment(Settlement memory settlement, JobStatus status) internal pure returns (uint256) {
        return withStatus(uint256(keccak256(abi.encode(settlement))), status);
    }

    /// @notice Whether `settlement` is what `record` committed to, whatever the status byte says.
    function matches(uint256 record, Settlement memory settlement) internal pure returns (bool) {
        return (record & ~STATUS_MASK) == (uint256(keccak256(abi.encode(settlement))) & ~STATUS_MASK);
    }
}
