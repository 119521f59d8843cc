// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {JobStatus} from "../types/JobStatus.sol";
import {Settlement} from "../types/Receipt.sol";

/// @title JobRecord
/// @notice The escrow keeps one storage word per job (one SSTORE to open, one to settle).
/// While open the word packs, from the high bits down:
/// `wallet (160) | creditsLocked (40) | deadline (32) | modelIndex (16) | status (8)`.
/// At settlement it becomes a commitment to the settlement facts: `keccak256(abi.encode(settlement))` with its
/// low 40 bits replaced by `settledAt (32) | status (8)`, so a dispute can pass the facts back and have them
/// checked, and the dispute window can run from the moment the proof was on chain.
/// @dev The status always lives in the low byte, whichever form the word has. The commitment keeps 216 bits of
/// the hash: finding other facts with the same 216 bits is a second-preimage search, far out of reach.
library JobRecord {
    uint256 private constant WALLET_SHIFT = 96;
    uint256 private constant CREDITS_SHIFT = 56;
    uint256 private constant DEADLINE_SHIFT = 24;
    uint256 private constant MODEL_INDEX_SHIFT = 8;
    uint256 private constant STATUS_MASK = 0xff;
    uint256 private constant SETTLED_AT_SHIFT = 8;
    /// @dev The low 40 bits of a commitment: settlement time and status.
    uint256 private constant TAG_MASK = (1 << 40) - 1;

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

    /// @notice The same open record with another deadline (packed with a zero one).
    function withDeadline(uint256 record, uint64 deadline) internal pure returns (uint256) {
        return record | (uint256(uint32(deadline)) << DEADLINE_SHIFT);
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

    /// @notice `keccak256(abi.encode(settlement))` of the settlement facts, hashed in memory past the free-memory
    /// pointer (nothing allocated: settlement hashes it once per receipt).
    function hashSettlement(
        address wallet,
        address worker,
        bytes32 outputHash,
        uint64 creditsCharged,
        uint64 finalTokenAt
    ) internal pure returns (bytes32 digest) {
        assembly ("memory-safe") {
            let data := mload(0x40)
            mstore(data, wallet)
            mstore(add(data, 0x20), worker)
            mstore(add(data, 0x40), outputHash)
            mstore(add(data, 0x60), creditsCharged)
            mstore(add(data, 0x80), finalTokenAt)
            digest := keccak256(data, 0xa0)
        }
    }

    /// @notice The settlement commitment stored for a settled job (`settlementHash` from `hashSettlement`),
    /// carrying its settlement time and `status`.
    function commitment(bytes32 settlementHash, uint32 settledAt, JobStatus status) internal pure returns (uint256) {
        return (uint256(settlementHash) & ~TAG_MASK) | (uint256(settledAt) << SETTLED_AT_SHIFT) | uint256(status);
    }

    /// @notice Whether `settlement` is what `record` committed to, whatever its tag says.
    function matches(uint256 record, Settlement calldata settlement) internal pure returns (bool) {
        bytes32 settlementHash = hashSettlement(
            settlement.wallet,
            settlement.worker,
            settlement.outputHash,
            settlement.creditsCharged,
            settlement.finalTokenAt
        );
        return (record & ~TAG_MASK) == (uint256(settlementHash) & ~TAG_MASK);
    }

    /// @notice The block time at which a committed job was settled.
    function settledAtOf(uint256 record) internal pure returns (uint32) {
        return uint32(record >> SETTLED_AT_SHIFT);
    }
}
