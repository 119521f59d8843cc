// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {EscrowStorage} from "./EscrowStorage.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Settlement} from "../types/Receipt.sol";
import {JobRecord} from "../libraries/JobRecord.sol";
import {ProtocolTime} from "../libraries/ProtocolTime.sol";
import {SpendWindow} from "../libraries/SpendWindow.sol";
import {WorkerBond} from "../libraries/WorkerBond.sol";

/// @title EscrowModule
/// @notice The escrow's cold paths: deposits and withdrawals, failures and refunds, claims, disputes and the
/// reserve, fee and treasury schedules, pauses. `CreditEscrow` deploys one in its constructor and runs these
/// functions by DELEGATECALL on its own storage (`EscrowStorage`), after its own role checks; called directly,
/// every function reverts. Splitting them out keeps the escrow's deployed code far under the EIP-170 limit
/// (docs/DESIGN.md, "Contract size"), as Uniswap v4-core keeps its pool logic in libraries.
/// @dev Selectors are the escrow's own (the escrow forwards its calldata unchanged), except `refund`, which
/// also receives whether the caller holds the gateway role (roles live in the escrow's access-control storage).
contract EscrowModule is EscrowStorage {
    using SafeERC20 for IERC20;
    using JobRecord for uint256;
    using SpendWindow for uint256;
    using WorkerBond for uint256;

    /// @notice Called directly instead of through the escrow.
    error OnlyThroughEscrow();

    /// @dev Owed restitution entries paid by one `fundReserve` (`CreditEscrow.RESTITUTIONS_PER_FUNDING`).
    uint256 private constant RESTITUTIONS_PER_FUNDING = 16;
    /// @dev Owed restitution entries `sweepSurplus` pays at most (the rest with `payOwedRestitution`).
    uint256 private constant RESTITUTIONS_PER_SWEEP = 64;
    uint256 private constant MIN_DEPOSIT = 1_000_000;
    uint16 private constant MAX_FEE_BPS = 2_000;

    /// @dev The escrow that deployed this module (the only context its functions run in).
    address private immutable _escrow;
    IERC20 private immutable _stablecoin;
    uint64 private immutable _jobTimeout;
    uint64 private immutable _disputeWindow;
    address private immutable _firstTreasury;
    uint64 private immutable _exposure;

    /// @param stablecoin_ The escrow's stablecoin.
    /// @param jobTimeout_ The escrow's job timeout.
    /// @param disputeWindow_ The escrow's dispute window.
    /// @param firstTreasury_ The escrow's treasury at deployment.
    /// @param exposure_ How long a settled charge stays at risk (`WorkerRegistry.slashExposure`).
    constructor(
        IERC20 stablecoin_,
        uint64 jobTimeout_,
        uint64 disputeWindow_,
        address firstTreasury_,
        uint64 exposure_
    ) {
        _exposure = exposure_;
        _escrow = msg.sender;
        _stablecoin = stablecoin_;
        _jobTimeout = jobTimeout_;
        _disputeWindow = disputeWindow_;
        _firstTreasury = firstTreasury_;
    }

    /// @dev Runs only as the escrow (by its DELEGATECALL), never on this contract's own storage.
    modifier throughEscrow() {
        if (address(this) != _escrow) revert OnlyThroughEscrow();
        _;
    }

    /// @dev Reverts unless the escrow is running (OpenZeppelin's Pausable semantics, with the flag in `_config`).
    modifier whenNotPaused() {
        if (_config.paused) revert ICreditEscrow.EnforcedPause();
        _;
    }

    /// @dev Balance-delta crediting must not be re-entered from a token hook (the outer delta would count the
    /// inner transfer twice): a transient lock, cleared on exit.
    modifier nonReentrant() {
        assembly ("memory-safe") {
            if tload(0) {
                mstore(0, 0x3ee5aeb5) // ReentrancyGuardReentrantCall()
                revert(0x1c, 0x04)
            }
            tstore(0, 1)
        }
        _;
        assembly ("memory-safe") {
            tstore(0, 0)
        }
    }

    // ---------------------------------------------------------------- credits

    function deposit(uint256 amount) external throughEscrow whenNotPaused nonReentrant {
        _deposit(msg.sender, amount);
    }

    /// @dev A failed permit is ignored (it may have been front-run); the transfer then needs the allowance.
    function depositWithPermit(
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external throughEscrow whenNotPaused nonReentrant {
        try IERC20Permit(address(_stablecoin)).permit(msg.sender, address(this), amount, deadline, v, r, s) {} catch {}
        _deposit(msg.sender, amount);
    }

    function withdraw(uint256 credits) external throughEscrow {
        ICreditEscrow.Account storage account = _accounts[msg.sender];
        uint256 available = account.available;
        if (available < credits) revert ICreditEscrow.InsufficientCredits(msg.sender, available, credits);
        uint256 balanceAfter;
        // Checked just above; the outstanding total includes this wallet's available credits.
        unchecked {
            balanceAfter = available - credits;
            _config.creditsOutstanding -= uint56(credits);
        }
        account.available = uint96(balanceAfter);
        uint256 amount = credits * UNITS_PER_CREDIT;
        emit ICreditEscrow.Withdrawn(msg.sender, credits, amount, balanceAfter);

        _stablecoin.safeTransfer(msg.sender, amount);
    }

    function fundReserve(uint256 amount) external throughEscrow nonReentrant {
        uint256 received = _pull(amount);
        uint256 reserveAfter = _reserve + received;
        _reserve = reserveAfter;
        emit ICreditEscrow.ReserveFunded(msg.sender, received, reserveAfter);
        _payOwed(RESTITUTIONS_PER_FUNDING);
    }

    function payOwedRestitution(uint256 maxCount) external throughEscrow {
        _payOwed(maxCount);
    }

    function setSpendingCap(uint256 creditsPerHour) external throughEscrow {
        if (creditsPerHour > SpendWindow.MAX_CAP)
            revert ICreditEscrow.SpendingCapTooLarge(creditsPerHour, SpendWindow.MAX_CAP);
        _spend[msg.sender] = _spend[msg.sender].withCap(creditsPerHour);
        ICreditEscrow.Account storage account = _accounts[msg.sender];
        uint64 topUp = account.lastTopUpAt;
        account.lastTopUpAt = creditsPerHour == 0 ? topUp & ~SPEND_CAPPED : topUp | SPEND_CAPPED;
        emit ICreditEscrow.SpendingCapSet(msg.sender, creditsPerHour);
    }

    function postBond(address worker, uint256 amount) external throughEscrow nonReentrant {
        if (worker == address(0)) revert ICreditEscrow.ZeroAddress();
        uint256 received = _pull(amount);
        uint256 word = _bonds[worker];
        uint256 bondAfter = word.bondOf() + received;
        if (bondAfter > WorkerBond.MAX_BOND) revert ICreditEscrow.BondTooLarge(bondAfter);
        _bonds[worker] = word.withBond(bondAfter);
        _bondTotal += received;
        emit ICreditEscrow.BondPosted(worker, msg.sender, received, bondAfter);
    }

    /// @dev Never below the charges at risk, so every settlement still disputable stays covered.
    function withdrawBond(uint256 amount) external throughEscrow {
        uint256 word = _bonds[msg.sender];
        uint256 bond = word.bondOf();
        uint256 risk = word.atRisk(block.timestamp, _exposure);
        uint256 withdrawable = _disputesPending[msg.sender] != 0 || risk >= bond ? 0 : bond - risk;
        if (amount > withdrawable) revert ICreditEscrow.BondLocked(msg.sender, withdrawable);
        uint256 bondAfter = bond - amount;
        _bonds[msg.sender] = word.withBond(bondAfter);
        _bondTotal -= amount;
        emit ICreditEscrow.BondWithdrawn(msg.sender, amount, bondAfter);

        _stablecoin.safeTransfer(msg.sender, amount);
    }

    // ---------------------------------------------------------------- jobs

    /// @dev The escrow checked the gateway role.
    function failJob(bytes32 jobId) external throughEscrow {
        (address wallet, uint256 credits, uint256 balanceAfter) = _release(jobId, JobStatus.Failed);
        emit ICreditEscrow.JobFailed(jobId, wallet, credits, balanceAfter);
    }

    /// @param byGateway Whether the caller holds the escrow's gateway role.
    function refund(bytes32 jobId, bool byGateway) external throughEscrow {
        Config memory config = _config;
        // A pause stops settlement; refunding meanwhile would turn delivered work into refunds.
        if (config.paused) revert ICreditEscrow.EnforcedPause();
        uint256 record = _jobs[jobId];
        (, , uint32 deadline, , JobStatus status) = record.unpack();
        if (status != JobStatus.Open) revert ICreditEscrow.JobNotInStatus(jobId, status, JobStatus.Open);
        uint64 refundableAfter = _settleBy(deadline, config);
        // The gateway knows whether it holds a receipt, so it may refund its own job at the deadline; anyone
        // else waits for the settle grace, during which an in-time receipt can still be settled.
        if (block.timestamp <= refundableAfter && (block.timestamp <= deadline || !byGateway))
            revert ICreditEscrow.JobNotExpired(jobId, refundableAfter);
        (address wallet, uint256 credits, uint256 balanceAfter) = _release(jobId, JobStatus.Refunded);
        emit ICreditEscrow.JobRefunded(jobId, wallet, credits, balanceAfter, msg.sender);
    }

    function claim(address to) external throughEscrow {
        if (to == address(0)) revert ICreditEscrow.ZeroAddress();
        if (_disputesPending[msg.sender] != 0) revert ICreditEscrow.ClaimFrozen(msg.sender);
        uint256 amount = _claimable[msg.sender];
        if (amount == 0) revert ICreditEscrow.NothingToClaim(msg.sender);
        _claimable[msg.sender] = 0;
        _claimableTotal -= amount;
        emit ICreditEscrow.PayoutClaimed(msg.sender, to, amount);

        _stablecoin.safeTransfer(to, amount);
    }

    /// @dev The escrow checked the admin role. Pays at most `RESTITUTIONS_PER_SWEEP` owed entries (a bounded
    /// loop); what tops the reserve up stays there for `payOwedRestitution` to pay the rest.
    function sweepSurplus(address to) external throughEscrow {
        if (to == address(0)) revert ICreditEscrow.ZeroAddress();
        uint256 available = _surplus(_stablecoin);
        uint256 owedUnits = _owedCredits * UNITS_PER_CREDIT;
        uint256 shortfall = owedUnits > _reserve ? owedUnits - _reserve : 0;
        uint256 toReserve = available < shortfall ? available : shortfall;
        uint256 amount = available - toReserve;
        if (toReserve != 0) {
            _reserve += toReserve;
            _payOwed(RESTITUTIONS_PER_SWEEP);
        }
        emit ICreditEscrow.SurplusSwept(to, toReserve, amount);

        if (amount != 0) _stablecoin.safeTransfer(to, amount);
    }

    // ---------------------------------------------------------------- disputes

    /// @dev The escrow checked the dispute role.
    function markDisputed(bytes32 jobId, Settlement calldata settlement) external throughEscrow {
        uint256 record = _requireCommitted(jobId, settlement, JobStatus.Settled);
        uint64 windowEnd = _windowEnd(record, settlement.finalTokenAt);
        if (block.timestamp > windowEnd)
            revert ICreditEscrow.DisputeWindowExpired(jobId, settlement.finalTokenAt, windowEnd);
        _jobs[jobId] = record.withStatus(JobStatus.Disputed);
        ++_disputesPending[settlement.worker];
        emit ICreditEscrow.JobDisputed(jobId, settlement.wallet, settlement.worker);
    }

    /// @dev The escrow checked the dispute role.
    function closeDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bool upheld
    ) external throughEscrow returns (uint256 creditsRestored) {
        uint256 record = _requireCommitted(jobId, settlement, JobStatus.Disputed);
        --_disputesPending[settlement.worker];
        if (!upheld) {
            _jobs[jobId] = record.withStatus(JobStatus.Settled);
            emit ICreditEscrow.JobDisputeClosed(
                jobId,
                settlement.wallet,
                false,
                0,
                _accounts[settlement.wallet].available
            );
            return 0;
        }
        _jobs[jobId] = record.withStatus(JobStatus.DisputeUpheld);
        uint256 credits = settlement.creditsCharged;
        // Fraud never pays: the worker's bond and the job's deferred pay fund restitution first, in the reserve.
        _seize(jobId, settlement.worker, credits * UNITS_PER_CREDIT);
        // Owed restitution is paid in order: a newer claim never overtakes an older one.
        if (_owedHead == _owedQueue.length && _reserve >= credits * UNITS_PER_CREDIT) {
            _restore(jobId, settlement.wallet, credits);
            creditsRestored = credits;
        } else {
            _owedQueue.push(OwedRestitution({jobId: jobId, wallet: settlement.wallet, credits: uint64(credits)}));
            uint256 owedAfter = _owedCredits + credits;
            _owedCredits = owedAfter;
            emit ICreditEscrow.RestitutionOwed(jobId, settlement.wallet, credits, owedAfter);
        }
        emit ICreditEscrow.JobDisputeClosed(
            jobId,
            settlement.wallet,
            true,
            creditsRestored,
            _accounts[settlement.wallet].available
        );
        // What the seizure brought in pays older owed restitution too (bounded, like `fundReserve`).
        _payOwed(RESTITUTIONS_PER_FUNDING);
    }

    // ---------------------------------------------------------------- admin

    /// @dev The escrow checked the admin role.
    function scheduleTreasury(address treasury_) external throughEscrow {
        if (treasury_ == address(0)) revert ICreditEscrow.ZeroAddress();
        _treasuryInEffect(_firstTreasury);
        uint64 switchAt = uint64(block.timestamp) + ProtocolTime.CONFIG_CHANGE_DELAY;
        _nextTreasury = treasury_;
        _config.treasurySwitchAt = uint32(switchAt);
        emit ICreditEscrow.TreasuryScheduled(treasury_, switchAt);
    }

    /// @dev The escrow checked the admin role.
    function scheduleProtocolFee(uint16 feeBps_) external throughEscrow {
        if (feeBps_ > MAX_FEE_BPS) revert ICreditEscrow.FeeTooHigh(feeBps_, MAX_FEE_BPS);
        Config memory config = _config;
        if (block.timestamp >= config.feeSwitchAt && config.feeBps != config.nextFeeBps) {
            // The last change took effect: retire the older fee once no job opened under it can settle.
            uint64 lastSettlement = _settleBy(uint64(config.feeSwitchAt) + _jobTimeout, config);
            if (config.paused || block.timestamp <= lastSettlement)
                revert ICreditEscrow.FeeChangeTooSoon(lastSettlement + 1);
            config.feeBps = config.nextFeeBps;
        }
        // Otherwise the pending change has not taken effect, so no job pays it yet and it may be replaced.
        uint64 switchAt = uint64(block.timestamp) + ProtocolTime.CONFIG_CHANGE_DELAY;
        Config storage stored = _config;
        stored.feeBps = config.feeBps;
        stored.nextFeeBps = feeBps_;
        stored.feeSwitchAt = uint32(switchAt);
        emit ICreditEscrow.ProtocolFeeScheduled(feeBps_, switchAt);
    }

    /// @dev The escrow checked the pauser role.
    function pause() external throughEscrow {
        Config storage config = _config;
        if (config.paused) revert ICreditEscrow.EnforcedPause();
        // A pause within the settle grace after the last one continues its run: the jobs that run protects keep it.
        if (config.pausedAt == 0 || block.timestamp > uint256(config.unpausedAt) + ProtocolTime.SETTLE_GRACE) {
            config.pausedAt = uint32(block.timestamp);
        }
        config.paused = true;
        emit ICreditEscrow.Paused(msg.sender);
    }

    /// @dev The escrow checked the pauser role. The end of a run of pauses restarts the settle grace of the jobs
    /// it froze.
    function unpause() external throughEscrow {
        if (!_config.paused) revert ICreditEscrow.ExpectedPause();
        _config.paused = false;
        _config.unpausedAt = uint32(block.timestamp);
        emit ICreditEscrow.Unpaused(msg.sender);
    }

    // ---------------------------------------------------------------- internals

    /// @dev Pulls `amount` from the caller and returns what actually arrived (the balance delta), so a token that
    /// keeps a transfer fee can never credit more than the escrow holds.
    function _pull(uint256 amount) private returns (uint256 received) {
        uint256 before = _stablecoin.balanceOf(address(this));
        _stablecoin.safeTransferFrom(msg.sender, address(this), amount);
        received = _stablecoin.balanceOf(address(this)) - before;
    }

    function _deposit(address wallet, uint256 amount) private {
        if (amount < MIN_DEPOSIT) revert ICreditEscrow.DepositTooSmall(amount, MIN_DEPOSIT);
        if (amount % UNITS_PER_CREDIT != 0) revert ICreditEscrow.AmountNotWholeCredits(amount, UNITS_PER_CREDIT);
        uint256 received = _pull(amount);
        // A remainder below one credit stays as surplus (sweepSurplus).
        uint256 credits = received / UNITS_PER_CREDIT;
        if (credits == 0) revert ICreditEscrow.DepositTooSmall(received, MIN_DEPOSIT);
        ICreditEscrow.Account storage account = _accounts[wallet];
        uint256 balanceAfter = account.available + credits;
        account.available = SafeCast.toUint96(balanceAfter);
        account.lastTopUpAt = uint64(block.timestamp) | (account.lastTopUpAt & SPEND_CAPPED);
        _config.creditsOutstanding = SafeCast.toUint56(uint256(_config.creditsOutstanding) + credits);
        emit ICreditEscrow.Deposited(wallet, msg.sender, received, credits, balanceAfter);
    }

    /// @dev Returns an open job's lock to its wallet and records `status` (failed or refunded).
    function _release(
        bytes32 jobId,
        JobStatus status
    ) private returns (address wallet, uint256 credits, uint256 balanceAfter) {
        uint256 record = _jobs[jobId];
        JobStatus current;
        (wallet, credits, , , current) = record.unpack();
        if (current != JobStatus.Open) revert ICreditEscrow.JobNotInStatus(jobId, current, JobStatus.Open);
        ICreditEscrow.Account storage account = _accounts[wallet];
        // The job's lock is part of account.locked; available + credits stays below total deposits.
        unchecked {
            balanceAfter = account.available + credits;
            account.available = uint96(balanceAfter);
            account.locked -= uint96(credits);
        }
        _jobs[jobId] = record.withStatus(status);
    }

    /// @dev Moves the worker's whole bond, and its deferred pay up to the job's charge, into the reserve.
    function _seize(bytes32 jobId, address worker, uint256 charge) private {
        uint256 word = _bonds[worker];
        uint256 bond = word.bondOf();
        uint256 reserveAfter = _reserve;
        if (bond != 0) {
            _bonds[worker] = word.withBond(0);
            _bondTotal -= bond;
            reserveAfter += bond;
            emit ICreditEscrow.BondSlashed(worker, jobId, bond, reserveAfter);
        }
        uint256 deferred = _claimable[worker];
        uint256 forfeited = deferred < charge ? deferred : charge;
        if (forfeited != 0) {
            _claimable[worker] = deferred - forfeited;
            _claimableTotal -= forfeited;
            reserveAfter += forfeited;
            emit ICreditEscrow.PayoutForfeited(worker, jobId, forfeited, reserveAfter);
        }
        _reserve = reserveAfter;
    }

    /// @dev Pays an upheld dispute's restitution from the reserve (the caller checked it suffices).
    function _restore(bytes32 jobId, address wallet, uint256 credits) private {
        _reserve -= credits * UNITS_PER_CREDIT;
        ICreditEscrow.Account storage account = _accounts[wallet];
        uint256 balanceAfter = account.available + credits;
        account.available = SafeCast.toUint96(balanceAfter);
        _config.creditsOutstanding = SafeCast.toUint56(uint256(_config.creditsOutstanding) + credits);
        emit ICreditEscrow.RestitutionPaid(jobId, wallet, credits, balanceAfter);
    }

    /// @dev Pays owed restitution, oldest first, while the reserve covers the next entry.
    function _payOwed(uint256 maxCount) private {
        uint256 head = _owedHead;
        uint256 end = _owedQueue.length;
        uint256 paid;
        while (head < end && paid < maxCount) {
            OwedRestitution memory owed = _owedQueue[head];
            if (_reserve < uint256(owed.credits) * UNITS_PER_CREDIT) break;
            delete _owedQueue[head];
            ++head;
            ++paid;
            _owedCredits -= owed.credits;
            _restore(owed.jobId, owed.wallet, owed.credits);
        }
        _owedHead = head;
    }

    /// @dev The dispute window runs from when the proof was on chain, and never ends less than the window after
    /// the final token (which may lie up to the clock skew after the settlement block).
    function _windowEnd(uint256 record, uint64 finalTokenAt) private view returns (uint64) {
        uint64 settledAt = record.settledAtOf();
        return (settledAt > finalTokenAt ? settledAt : finalTokenAt) + _disputeWindow;
    }

    /// @dev Loads a committed job, requiring `expected` status and that `settlement` matches its commitment.
    function _requireCommitted(
        bytes32 jobId,
        Settlement calldata settlement,
        JobStatus expected
    ) private view returns (uint256 record) {
        record = _jobs[jobId];
        JobStatus status = record.statusOf();
        if (status != expected) revert ICreditEscrow.JobNotInStatus(jobId, status, expected);
        if (!record.matches(settlement)) revert ICreditEscrow.SettlementMismatch(jobId);
    }
}
