// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {DelayedAccessControl, RoleGrant} from "./access/DelayedAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IWorkerRegistry} from "./interfaces/IWorkerRegistry.sol";
import {IModelCatalog} from "./interfaces/IModelCatalog.sol";
import {ProtocolTime} from "./libraries/ProtocolTime.sol";

/// @title WorkerRegistry
/// @notice Workers stake, announce an endpoint and their hosted models, and are slashed for fraud.
/// @dev `canServe` is on the settlement path: it reads one packed word per worker and one flag per
/// (worker, model), both cheap when warm in a batch.
/// Slash rule ("fraud never pays"): an upheld dispute takes the worker's whole stake and bans the address, so a
/// worker that cheats ends with what an honest twin doing the same jobs would have, minus its entire stake.
/// Its parameters (minimum stake, windows, unbonding delay, treasury) are immutable: no registry parameter can
/// change after deployment, so none needs a delay.
contract WorkerRegistry is IWorkerRegistry, DelayedAccessControl {
    using SafeERC20 for IERC20;

    /// @notice May slash workers (the dispute contract).
    bytes32 public constant SLASHER_ROLE = keccak256("SLASHER_ROLE");
    /// @notice Longest accepted endpoint URL, in bytes.
    uint256 public constant MAX_ENDPOINT_LENGTH = 256;
    /// @notice Most models one worker may host.
    uint256 public constant MAX_MODELS_PER_WORKER = 32;
    /// @notice Slack for a receipt's final token being stamped after the settlement block (the escrow's clock skew).
    uint64 public constant SETTLEMENT_CLOCK_SKEW = ProtocolTime.MAX_CLOCK_SKEW;
    /// @notice Shortest accepted dispute window: the spec's 60 s.
    uint64 public constant MIN_DISPUTE_WINDOW = ProtocolTime.MIN_DISPUTE_WINDOW;

    /// @notice The token staked.
    IERC20 public immutable stakeToken;
    /// @inheritdoc IWorkerRegistry
    IModelCatalog public immutable modelCatalog;
    /// @notice Receives slashed stake.
    address public immutable treasury;
    /// @inheritdoc IWorkerRegistry
    uint256 public immutable minStake;
    /// @inheritdoc IWorkerRegistry
    uint64 public immutable unbondingDelay;
    /// @inheritdoc IWorkerRegistry
    uint64 public immutable disputeWindow;
    /// @inheritdoc IWorkerRegistry
    uint64 public immutable arbitrationWindow;
    /// @notice How long after a settlement the worker's stake may still be slashed for it: the dispute window
    /// (plus clock skew) and the arbitration window.
    uint64 public immutable slashExposure;

    struct WorkerState {
        WorkerStatus status;
        uint64 unlockAt;
        uint128 stake;
    }

    mapping(address worker => WorkerState) private _workers;
    mapping(address worker => string) private _endpoints;
    mapping(address worker => bytes32[]) private _modelKeys;
    mapping(address worker => mapping(bytes32 modelKey => bool)) private _hosts;
    /// @dev Slashed stake the stake token refused to move to the treasury (a verdict never waits on a transfer).
    uint256 private _slashedPending;

    /// @param roles Roles held from deployment on, granted at once: the default admin first (two-step transfer
    /// after `ProtocolTime.ADMIN_TRANSFER_DELAY`), then `SLASHER_ROLE` for the dispute manager; later grants wait
    /// `ROLE_GRANT_DELAY`.
    /// @param stakeToken_ The token staked.
    /// @param modelCatalog_ The model catalog.
    /// @param treasury_ Receives slashed stake.
    /// @param minStake_ Minimum stake, stake-token units (not zero).
    /// @param unbondingDelay_ Seconds from `startUnbonding` to `withdraw`; must exceed the slash exposure (the two
    /// windows below plus the clock skew).
    /// @param disputeWindow_ Seconds after settlement during which disputes may open (at least 60).
    /// @param arbitrationWindow_ Seconds an arbiter has to decide a dispute (not zero).
    constructor(
        RoleGrant[] memory roles,
        IERC20 stakeToken_,
        IModelCatalog modelCatalog_,
        address treasury_,
        uint256 minStake_,
        uint64 unbondingDelay_,
        uint64 disputeWindow_,
        uint64 arbitrationWindow_
    ) DelayedAccessControl(roles) {
        if (address(stakeToken_) == address(0) || address(modelCatalog_) == address(0) || treasury_ == address(0)) {
            revert ZeroAddress();
        }
        if (minStake_ == 0) revert MinStakeZero();
        if (disputeWindow_ < MIN_DISPUTE_WINDOW || disputeWindow_ > ProtocolTime.MAX_JOB_TIMEOUT) {
            revert WindowOutOfRange(disputeWindow_, MIN_DISPUTE_WINDOW, ProtocolTime.MAX_JOB_TIMEOUT);
        }
        if (arbitrationWindow_ == 0 || arbitrationWindow_ > 30 * ProtocolTime.MAX_JOB_TIMEOUT) {
            revert WindowOutOfRange(arbitrationWindow_, 1, 30 * ProtocolTime.MAX_JOB_TIMEOUT);
        }
        uint64 exposure = disputeWindow_ + SETTLEMENT_CLOCK_SKEW + arbitrationWindow_;
        if (unbondingDelay_ <= exposure) revert UnbondingDelayTooShort(unbondingDelay_, exposure + 1);
        stakeToken = stakeToken_;
        modelCatalog = modelCatalog_;
        treasury = treasury_;
        minStake = minStake_;
        unbondingDelay = unbondingDelay_;
        disputeWindow = disputeWindow_;
        arbitrationWindow = arbitrationWindow_;
        slashExposure = exposure;
    }

    /// @inheritdoc IWorkerRegistry
    /// @dev A worker that exited may register again.
    function register(string calldata endpoint, bytes32[] calldata modelKeys, uint256 stake) external {
        WorkerState storage state = _workers[msg.sender];
        WorkerStatus status = state.status;
        if (status == WorkerStatus.Slashed) revert WorkerBanned(msg.sender);
        if (status != WorkerStatus.None && status != WorkerStatus.Exited) revert WorkerAlreadyRegistered(msg.sender);
        if (stake < minStake) revert StakeBelowMinimum(stake, minStake);
        _requireValidEndpoint(endpoint);

        state.status = WorkerStatus.Active;
        state.unlockAt = 0;
        state.stake = SafeCast.toUint128(stake);
        _endpoints[msg.sender] = endpoint;
        _setModels(msg.sender, modelKeys);
        emit WorkerRegistered(msg.sender, endpoint, stake, modelKeys);

        stakeToken.safeTransferFrom(msg.sender, address(this), stake);
    }

    /// @inheritdoc IWorkerRegistry
    function updateModels(bytes32[] calldata modelKeys) external {
        _requireActive(msg.sender);
        _setModels(msg.sender, modelKeys);
        emit WorkerModelsUpdated(msg.sender, modelKeys);
    }

    /// @inheritdoc IWorkerRegistry
    function updateEndpoint(string calldata endpoint) external {
        _requireActive(msg.sender);
        _requireValidEndpoint(endpoint);
        _endpoints[msg.sender] = endpoint;
        emit WorkerEndpointUpdated(msg.sender, endpoint);
    }

    /// @inheritdoc IWorkerRegistry
    function increaseStake(uint256 amount) external {
        WorkerState storage state = _requireActive(msg.sender);
        uint256 stakeAfter = state.stake + amount;
        state.stake = SafeCast.toUint128(stakeAfter);
        emit WorkerStakeIncreased(msg.sender, amount, stakeAfter);

        stakeToken.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc IWorkerRegistry
    function startUnbonding() external {
        WorkerState storage state = _requireActive(msg.sender);
        uint64 unlockAt = uint64(block.timestamp) + unbondingDelay;
        state.status = WorkerStatus.Unbonding;
        state.unlockAt = unlockAt;
        emit WorkerUnbondingStarted(msg.sender, unlockAt);
    }

    /// @inheritdoc IWorkerRegistry
    function withdraw() external {
        WorkerState storage state = _workers[msg.sender];
        if (state.status != WorkerStatus.Unbonding) revert WorkerNotActive(msg.sender, state.status);
        if (block.timestamp < state.unlockAt) revert StakeLocked(msg.sender, state.unlockAt);
        uint256 amount = state.stake;
        state.status = WorkerStatus.Exited;
        state.stake = 0;
        _clearModels(msg.sender);
        emit WorkerWithdrawn(msg.sender, amount);

        stakeToken.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc IWorkerRegistry
    function slash(
        address worker,
        bytes32 jobId,
        bytes32 reason
    ) external onlyRole(SLASHER_ROLE) returns (uint256 amount) {
        WorkerState storage state = _workers[worker];
        amount = state.stake;
        WorkerStatus status = state.status;
        if (status == WorkerStatus.Active || status == WorkerStatus.Unbonding) _clearModels(worker);
        state.status = WorkerStatus.Slashed;
        state.stake = 0;
        state.unlockAt = 0;
        emit WorkerSlashed(worker, jobId, amount, 0, reason);

        // The verdict never depends on the transfer: a refused one leaves the stake here for `sendSlashedStake`.
        if (amount != 0 && !stakeToken.trySafeTransfer(treasury, amount)) {
            uint256 pendingAfter = _slashedPending + amount;
            _slashedPending = pendingAfter;
            emit SlashedStakeDeferred(worker, jobId, amount, pendingAfter);
        }
    }

    /// @inheritdoc IWorkerRegistry
    function sendSlashedStake() external {
        uint256 amount = _slashedPending;
        if (amount == 0) revert NothingToSend();
        _slashedPending = 0;
        emit SlashedStakeSent(treasury, amount);

        stakeToken.safeTransfer(treasury, amount);
    }

    /// @inheritdoc IWorkerRegistry
    function slashedStakePending() external view returns (uint256) {
        return _slashedPending;
    }

    /// @inheritdoc IWorkerRegistry
    function canServe(address worker, bytes32 modelKey) external view returns (bool) {
        WorkerState memory state = _workers[worker];
        if (state.status != WorkerStatus.Active && state.status != WorkerStatus.Unbonding) return false;
        // An unbonding worker may only be paid while a dispute over the job could still be decided before its
        // stake unlocks; otherwise it could settle a fraudulent proof and withdraw before the slash.
        if (state.status == WorkerStatus.Unbonding && block.timestamp + slashExposure >= state.unlockAt) return false;
        if (state.stake < minStake) return false;
        return _hosts[worker][modelKey];
    }

    /// @inheritdoc IWorkerRegistry
    function getWorker(address worker) external view returns (Worker memory) {
        WorkerState memory state = _workers[worker];
        return
            Worker({
                status: state.status,
                unlockAt: state.unlockAt,
                stake: state.stake,
                endpoint: _endpoints[worker],
                modelKeys: _modelKeys[worker]
            });
    }

    function _setModels(address worker, bytes32[] calldata modelKeys) private {
        uint256 count = modelKeys.length;
        if (count == 0 || count > MAX_MODELS_PER_WORKER) revert ModelListInvalid();
        _clearModels(worker);
        for (uint256 i; i < count; ++i) {
            bytes32 modelKey = modelKeys[i];
            if (_hosts[worker][modelKey]) revert ModelListInvalid();
            (uint16 index, , bool retired, , , ) = modelCatalog.listing(modelKey);
            if (index == 0 || retired) revert ModelNotListed(modelKey);
            _hosts[worker][modelKey] = true;
        }
        _modelKeys[worker] = modelKeys;
    }

    function _clearModels(address worker) private {
        bytes32[] storage keys = _modelKeys[worker];
        uint256 count = keys.length;
        for (uint256 i; i < count; ++i) {
            delete _hosts[worker][keys[i]];
        }
        delete _modelKeys[worker];
    }

    function _requireActive(address worker) private view returns (WorkerState storage state) {
        state = _workers[worker];
        if (state.status != WorkerStatus.Active) revert WorkerNotActive(worker, state.status);
    }

    function _requireValidEndpoint(string calldata endpoint) private pure {
        uint256 length = bytes(endpoint).length;
        if (length == 0 || length > MAX_ENDPOINT_LENGTH) revert EndpointInvalid();
    }
}
