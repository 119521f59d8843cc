// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IModelCatalog} from "./IModelCatalog.sol";

/// @title IWorkerRegistry
/// @notice Workers stake the stake token, announce an endpoint and the models they host, and get
/// slashed (only by the dispute contract) for fraudulent proofs: an upheld dispute takes the whole stake and
/// removes the worker from the pool for good.
/// @dev The unbonding delay is longer than the dispute plus arbitration windows, so a worker cannot
/// withdraw before every dispute over its last job has been decided. The registry is the one place the
/// dispute and arbitration windows are set; the escrow and the dispute manager read them from here.
interface IWorkerRegistry {
    enum WorkerStatus {
        None,
        Active,
        Unbonding,
        Exited,
        Slashed
    }

    struct Worker {
        WorkerStatus status;
        uint64 unlockAt;
        uint256 stake;
        string endpoint;
        bytes32[] modelKeys;
    }

    /// @notice The caller is registered already.
    error WorkerAlreadyRegistered(address worker);
    /// @notice The address is not an active worker.
    error WorkerNotActive(address worker, WorkerStatus status);
    /// @notice The stake is below the minimum.
    error StakeBelowMinimum(uint256 stake, uint256 minimum);
    /// @notice The endpoint is empty or too long.
    error EndpointInvalid();
    /// @notice A model key is not in the catalog, or is retired.
    error ModelNotListed(bytes32 modelKey);
    /// @notice A model key appears twice, or the list is empty or too long.
    error ModelListInvalid();
    /// @notice Withdrawal before the unbonding delay has passed.
    error StakeLocked(address worker, uint64 unlockAt);
    /// @notice The worker was slashed for fraud and may not register again.
    error WorkerBanned(address worker);
    /// @notice The unbonding delay does not exceed the dispute and arbitration windows.
    error UnbondingDelayTooShort(uint64 unbondingDelay, uint64 minimum);
    /// @notice A window is out of its accepted range.
    error WindowOutOfRange(uint64 value, uint64 minimum, uint64 maximum);
    /// @notice The zero address where an address is needed.
    error ZeroAddress();
    /// @notice A minimum stake of zero.
    error MinStakeZero();
    /// @notice No slashed stake is waiting to reach the treasury.
    error NothingToSend();

    /// @notice A worker registered with its stake, endpoint and hosted models.
    event WorkerRegistered(address indexed worker, string endpoint, uint256 stake, bytes32[] modelKeys);
    /// @notice A worker replaced its list of hosted models.
    event WorkerModelsUpdated(address indexed worker, bytes32[] modelKeys);
    /// @notice A worker changed its endpoint URL.
    event WorkerEndpointUpdated(address indexed worker, string endpoint);
    /// @notice A worker added stake.
    event WorkerStakeIncreased(address indexed worker, uint256 amount, uint256 stakeAfter);
    /// @notice A worker stopped taking jobs and started unbonding.
    event WorkerUnbondingStarted(address indexed worker, uint64 unlockAt);
    /// @notice A worker withdrew its remaining stake and left.
    event WorkerWithdrawn(address indexed worker, uint256 amount);
    /// @notice A worker's whole stake was slashed and sent to the treasury; the worker left the pool for good
    /// (status `Slashed`, no models).
    /// @param reason A short code, `fraudulent_proof` for an upheld dispute.
    /// @param jobId The job whose proof was found fraudulent.
    event WorkerSlashed(
        address indexed worker,
        bytes32 indexed jobId,
        uint256 amount,
        uint256 stakeAfter,
        bytes32 reason
    );

    /// @notice The stake token refused to move slashed stake to the treasury; the slash stands and the stake waits
    /// in the registry for `sendSlashedStake`.
    /// @param pendingAfter Slashed stake waiting, stake-token units.
    event SlashedStakeDeferred(address indexed worker, bytes32 indexed jobId, uint256 amount, uint256 pendingAfter);
    /// @notice Slashed stake that had waited reached the treasury.
    event SlashedStakeSent(address treasury, uint256 amount);

    /// @notice Registers the caller, pulling `stake` of the stake token (approve first).
    function register(string calldata endpoint, bytes32[] calldata modelKeys, uint256 stake) external;

    /// @notice Replaces the caller's hosted models.
    function updateModels(bytes32[] calldata modelKeys) external;

    /// @notice Changes the caller's endpoint.
    function updateEndpoint(string calldata endpoint) external;

    /// @notice Adds stake (approve first).
    function increaseStake(uint256 amount) external;

    /// @notice Stops taking jobs and starts the unbonding delay.
    function startUnbonding() external;

    /// @notice Withdraws the remaining stake once unbonded.
    function withdraw() external;

    /// @notice Slashes a worker for a fraudulent proof: takes its whole stake (to the treasury) and removes it
    /// from the pool for good. Never reverts for a worker with no stake left, nor because the stake token refuses
    /// the transfer (the stake then waits for `sendSlashedStake`). Slasher (dispute contract) only.
    /// @param worker The worker.
    /// @param jobId The job whose proof was found fraudulent.
    /// @param reason A short code.
    /// @return amount The stake taken (zero when it had withdrawn already).
    function slash(address worker, bytes32 jobId, bytes32 reason) external returns (uint256 amount);

    /// @notice Sends slashed stake whose transfer the stake token once refused on to the treasury. Anyone.
    function sendSlashedStake() external;

    /// @notice Slashed stake waiting to reach the treasury, stake-token units.
    function slashedStakePending() external view returns (uint256);

    /// @notice Whether `worker` may be paid for a job of `modelKey`: registered, not exited,
    /// stake at least the minimum, hosting the model. Unbonding workers may still settle jobs until the stake's
    /// unlock is closer than the dispute and arbitration windows (so every payment stays slashable).
    function canServe(address worker, bytes32 modelKey) external view returns (bool);

    /// @notice How long after a settlement the worker may still be found fraudulent for it: the dispute window,
    /// the clock skew and the arbitration window, seconds.
    function slashExposure() external view returns (uint64);

    /// @notice The worker's record.
    function getWorker(address worker) external view returns (Worker memory);

    /// @notice Minimum stake, in stake-token units.
    function minStake() external view returns (uint256);

    /// @notice Seconds between `startUnbonding` and the earliest `withdraw`.
    function unbondingDelay() external view returns (uint64);

    /// @notice Seconds after settlement during which a dispute may be opened (at least 60).
    function disputeWindow() external view returns (uint64);

    /// @notice Seconds an arbiter has to decide a dispute.
    function arbitrationWindow() external view returns (uint64);

    /// @notice The catalog hosted models are checked against.
    function modelCatalog() external view returns (IModelCatalog);
}
