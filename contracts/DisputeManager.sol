// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IDisputeManager} from "./interfaces/IDisputeManager.sol";
import {ICreditEscrow} from "./interfaces/ICreditEscrow.sol";
import {IWorkerRegistry} from "./interfaces/IWorkerRegistry.sol";
import {Settlement} from "./types/Receipt.sol";

/// @title DisputeManager
/// @notice Disputes over settled jobs: the gateway opens them for clients, an arbiter decides them within
/// the arbitration window; fraud slashes the worker and restores the client's charge from the escrow's reserve.
/// @dev Disputes are never paused, so a client's claim can always be heard.
contract DisputeManager is IDisputeManager, AccessControl {
    /// @notice Opens disputes (the API gateway).
    bytes32 public constant GATEWAY_ROLE = keccak256("GATEWAY_ROLE");
    /// @notice Decides disputes.
    bytes32 public constant ARBITER_ROLE = keccak256("ARBITER_ROLE");
    /// @notice The reason code recorded with a slash for an upheld dispute.
    bytes32 public constant FRAUDULENT_PROOF = "fraudulent_proof";

    /// @notice The escrow whose settlements are disputed.
    ICreditEscrow public immutable escrow;
    /// @notice The registry that slashes workers.
    IWorkerRegistry public immutable workerRegistry;
    /// @inheritdoc IDisputeManager
    uint64 public immutable arbitrationWindow;

    mapping(bytes32 jobId => Dispute) private _disputes;

    /// @param admin Holder of `DEFAULT_ADMIN_ROLE`; grants `GATEWAY_ROLE` and `ARBITER_ROLE`.
    /// @param escrow_ The credit escrow (grants this contract its `DISPUTE_ROLE`).
    /// @param workerRegistry_ The worker registry (grants this contract its `SLASHER_ROLE`).
    /// @param arbitrationWindow_ Seconds an arbiter has to decide; with the escrow's dispute window it must
    /// stay below the registry's unbonding delay, so a worker cannot leave before its disputes are decided.
    constructor(address admin, ICreditEscrow escrow_, IWorkerRegistry workerRegistry_, uint64 arbitrationWindow_) {
        uint64 unbondingDelay = workerRegistry_.unbondingDelay();
        uint64 windows = escrow_.disputeWindow() + arbitrationWindow_;
        if (unbondingDelay <= windows) revert IWorkerRegistry.UnbondingDelayTooShort(unbondingDelay, windows + 1);
        escrow = escrow_;
        workerRegistry = workerRegistry_;
        arbitrationWindow = arbitrationWindow_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @inheritdoc IDisputeManager
    function openDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bytes32 clientHash
    ) external onlyRole(GATEWAY_ROLE) {
        Dispute storage dispute = _disputes[jobId];
        if (dispute.outcome != Outcome.None) revert DisputeAlreadyOpened(jobId, dispute.outcome);
        if (clientHash == settlement.outputHash) revert HashesMatch(jobId, settlement.outputHash);

        uint64 openedAt = uint64(block.timestamp);
        uint64 deadline = openedAt + arbitrationWindow;
        dispute.outcome = Outcome.Pending;
        dispute.openedAt = openedAt;
        dispute.deadline = deadline;
        dispute.clientHash = clientHash;
        dispute.settlement = settlement;
        emit DisputeOpened(jobId, settlement.wallet, settlement.worker, clientHash, settlement.outputHash, deadline);

        // The escrow checks the settlement facts against its commitment and the dispute window.
        escrow.markDisputed(jobId, settlement);
    }

    /// @inheritdoc IDisputeManager
    function resolveDispute(bytes32 jobId, bool fraud) external onlyRole(ARBITER_ROLE) {
        Dispute storage dispute = _requirePending(jobId);
        if (block.timestamp > dispute.deadline) revert ArbitrationWindowClosed(jobId, dispute.deadline);
        Settlement memory settlement = dispute.settlement;

        uint256 creditsRestored;
        uint256 slashAmount;
        if (fraud) {
            dispute.outcome = Outcome.Upheld;
            slashAmount = _slash(settlement.worker, jobId);
            creditsRestored = escrow.closeDispute(jobId, settlement, true);
        } else {
            dispute.outcome = Outcome.Rejected;
            escrow.closeDispute(jobId, settlement, false);
        }
        // Emitted after the calls because it reports their results; both callees are this system's contracts.
        emit DisputeResolved(jobId, dispute.outcome, creditsRestored, slashAmount, msg.sender);
    }

    /// @inheritdoc IDisputeManager
    function closeExpired(bytes32 jobId) external {
        Dispute storage dispute = _requirePending(jobId);
        if (block.timestamp <= dispute.deadline) revert ArbitrationWindowOpen(jobId, dispute.deadline);
        dispute.outcome = Outcome.Expired;
        emit DisputeResolved(jobId, Outcome.Expired, 0, 0, msg.sender);

        escrow.closeDispute(jobId, dispute.settlement, false);
    }

    /// @inheritdoc IDisputeManager
    function getDispute(bytes32 jobId) external view returns (Dispute memory) {
        return _disputes[jobId];
    }

    /// @dev A worker with no stake left (it finished unbonding and withdrew) must not block the client's
    /// restoration from the reserve: the dispute is upheld with nothing slashed. Any other failure reverts.
    function _slash(address worker, bytes32 jobId) private returns (uint256 amount) {
        try workerRegistry.slash(worker, jobId, FRAUDULENT_PROOF) returns (uint256 slashed) {
            amount = slashed;
        } catch (bytes memory reason) {
            if (bytes4(reason) != IWorkerRegistry.NothingToSlash.selector) {
                assembly ("memory-safe") {
                    revert(add(reason, 0x20), mload(reason))
                }
            }
        }
    }

    function _requirePending(bytes32 jobId) private view returns (Dispute storage dispute) {
        dispute = _disputes[jobId];
        if (dispute.outcome != Outcome.Pending) revert DisputeNotPending(jobId, dispute.outcome);
    }
}
