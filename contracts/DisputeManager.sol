// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {DelayedAccessControl, RoleGrant} from "./access/DelayedAccessControl.sol";
import {IDisputeManager} from "./interfaces/IDisputeManager.sol";
import {ICreditEscrow} from "./interfaces/ICreditEscrow.sol";
import {IWorkerRegistry} from "./interfaces/IWorkerRegistry.sol";
import {Settlement} from "./types/Receipt.sol";

/// @title DisputeManager
/// @notice Disputes over settled jobs: the gateway opens them for clients, an arbiter decides them within
/// the arbitration window; fraud slashes the worker's whole stake (removing it from the pool) and restores the
/// client's charge from the escrow's reserve, or records it as owed when the reserve is short.
/// @dev Disputes are never paused, so a client's claim can always be heard. Neither the verdict nor the slash
/// depends on the reserve.
contract DisputeManager is IDisputeManager, DelayedAccessControl {
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

    /// @notice The escrow pays and checks against another worker registry than this contract slashes in.
    error RegistryMismatch(address escrowRegistry, address registry);
    /// @notice The zero address where an address is needed.
    error ZeroAddress();

    /// @param roles Roles held from deployment on, granted at once: the default admin first (two-step transfer
    /// after `ProtocolTime.ADMIN_TRANSFER_DELAY`), then `GATEWAY_ROLE` and `ARBITER_ROLE` holders; later grants wait
    /// `ROLE_GRANT_DELAY`.
    /// @param escrow_ The credit escrow (names this contract `DISPUTE_ROLE` holder at its deployment); it must use `workerRegistry_`.
    /// @param workerRegistry_ The worker registry (names this contract `SLASHER_ROLE` holder at its deployment); the arbitration
    /// window is read from it, where it was checked against the unbonding delay.
    constructor(
        RoleGrant[] memory roles,
        ICreditEscrow escrow_,
        IWorkerRegistry workerRegistry_
    ) DelayedAccessControl(roles) {
        if (address(escrow_) == address(0) || address(workerRegistry_) == address(0)) revert ZeroAddress();
        address escrowRegistry = address(escrow_.workerRegistry());
        if (escrowRegistry != address(workerRegistry_)) {
            revert RegistryMismatch(escrowRegistry, address(workerRegistry_));
        }
        escrow = escrow_;
        workerRegistry = workerRegistry_;
        arbitrationWindow = workerRegistry_.arbitrationWindow();
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
            slashAmount = workerRegistry.slash(settlement.worker, jobId, FRAUDULENT_PROOF);
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

    function _requirePending(bytes32 jobId) private view returns (Dispute storage dispute) {
        dispute = _disputes[jobId];
        if (dispute.outcome != Outcome.Pending) revert DisputeNotPending(jobId, dispute.outcome);
    }
}
