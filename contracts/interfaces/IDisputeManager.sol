// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Settlement} from "../types/Receipt.sol";

/// @title IDisputeManager
/// @notice Opens disputes over settled jobs whose received output differs from the worker's proof,
/// and lets an arbiter decide them within the arbitration window.
interface IDisputeManager {
    enum Outcome {
        None,
        Pending,
        Upheld,
        Rejected,
        Expired
    }

    struct Dispute {
        Outcome outcome;
        uint64 openedAt;
        uint64 deadline;
        bytes32 clientHash;
        Settlement settlement;
    }

    /// @notice The client's hash equals the proof hash: there is nothing to dispute.
    error HashesMatch(bytes32 jobId, bytes32 proofHash);
    /// @notice The job was disputed before; a job gets at most one dispute.
    error DisputeAlreadyOpened(bytes32 jobId, Outcome outcome);
    /// @notice No pending dispute for this job.
    error DisputeNotPending(bytes32 jobId, Outcome outcome);
    /// @notice The arbitration window has closed; only `closeExpired` applies.
    error ArbitrationWindowClosed(bytes32 jobId, uint64 deadline);
    /// @notice The arbitration window is still open.
    error ArbitrationWindowOpen(bytes32 jobId, uint64 deadline);

    /// @notice The gateway opened a dispute for a client.
    /// @param clientHash sha256 of what the client says it received.
    /// @param proofHash sha256 the worker signed.
    /// @param deadline End of the arbitration window.
    event DisputeOpened(
        bytes32 indexed jobId,
        address indexed wallet,
        address indexed worker,
        bytes32 clientHash,
        bytes32 proofHash,
        uint64 deadline
    );
    /// @notice A dispute was decided (upheld or rejected by an arbiter) or expired undecided.
    /// @param creditsRestored Credits given back to the wallet from the reserve now (upheld only; zero when the
    /// reserve was short and the restitution was recorded as owed, see the escrow's `RestitutionOwed`).
    /// @param slashAmount Stake taken from the worker: all of it (upheld only).
    event DisputeResolved(
        bytes32 indexed jobId,
        Outcome outcome,
        uint256 creditsRestored,
        uint256 slashAmount,
        address resolver
    );

    /// @notice Opens a dispute over a settled job. Gateway only; within the dispute window.
    /// @param jobId The settled job.
    /// @param settlement The settlement facts as emitted in `JobSettled` (checked against the escrow).
    /// @param clientHash sha256 of the text the client received.
    function openDispute(bytes32 jobId, Settlement calldata settlement, bytes32 clientHash) external;

    /// @notice Decides a pending dispute. Arbiter only, within the arbitration window.
    /// @param fraud True upholds it: the worker loses its whole stake and leaves the pool; the charge is restored
    /// from the reserve, or recorded as owed when the reserve is short.
    function resolveDispute(bytes32 jobId, bool fraud) external;

    /// @notice Closes an undecided dispute after the arbitration window. Anyone.
    function closeExpired(bytes32 jobId) external;

    /// @notice The dispute record of a job.
    function getDispute(bytes32 jobId) external view returns (Dispute memory);

    /// @notice Length of the arbitration window, seconds.
    function arbitrationWindow() external view returns (uint64);
}
