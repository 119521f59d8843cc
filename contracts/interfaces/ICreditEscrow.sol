// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Tier} from "../types/Tier.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";
import {IWorkerRegistry} from "./IWorkerRegistry.sol";

/// @title ICreditEscrow
/// @notice Prepaid credits (1 stablecoin = 100 credits) held per wallet; each inference job locks
/// its worst-case price here before routing and is settled against the worker's EIP-712 receipt,
/// failed, or refunded after the job timeout and the settle grace. Exactly one of those happens to each job.
interface ICreditEscrow {
    /// @notice A wallet's credits.
    struct Account {
        uint96 available;
        uint96 locked;
        uint64 lastTopUpAt;
    }

    /// @notice What the escrow owes. Units are stablecoin units unless named credits.
    struct Ledger {
        uint256 creditsOutstanding;
        uint256 reserve;
        uint256 claimableTotal;
        uint256 owedCredits;
        uint256 owedEntries;
        uint256 surplus;
        // Workers' stablecoin bonds (`postBond`).
        uint256 bonds;
    }

    /// @notice One lock of `openJobBatch`: the arguments of `openJob`, and when the gateway accepted the request.
    /// @param acceptedAt Unix time at which the gateway accepted the request. The job's deadline and the times its
    /// receipt is judged against run from it, not from the block that took the lock; it must lie within
    /// `MAX_LOCK_DELAY` before the block and at most `MAX_CLOCK_SKEW` after it.
    struct OpenRequest {
        bytes32 jobId;
        bytes32 keyHash;
        bytes32 modelKey;
        uint32 maxTokens;
        uint64 acceptedAt;
    }

    /// @notice Why `openJobBatch` skipped a lock (`None` is never emitted). `AcceptedAtInvalid`: the request was
    /// accepted more than `MAX_LOCK_DELAY` before the block (its lock came too late) or more than `MAX_CLOCK_SKEW`
    /// after it (post-dated).
    enum OpenSkipReason {
        None,
        JobExists,
        KeyNotActive,
        ModelNotListed,
        MaxTokensInvalid,
        InsufficientCredits,
        SpendingCapExceeded,
        RequestMalformed,
        AcceptedAtInvalid
    }

    /// @notice Why `settleBatch` skipped a receipt (`None` is never emitted).
    enum SettleSkipReason {
        None,
        JobNotOpen,
        SignatureInvalid,
        WorkerNotEligible,
        ReceiptTimeInvalid,
        SettlementWindowClosed,
        BondInsufficient,
        ReceiptMalformed
    }

    /// @notice A deposit below the minimum (1 stablecoin).
    error DepositTooSmall(uint256 amount, uint256 minimum);
    /// @notice A stablecoin amount that is not a whole number of credits.
    error AmountNotWholeCredits(uint256 amount, uint256 unitPerCredit);
    /// @notice The wallet's available credits do not cover the amount.
    error InsufficientCredits(address wallet, uint256 available, uint256 required);
    /// @notice A job with this id exists already.
    error JobAlreadyExists(bytes32 jobId);
    /// @notice The job is not in the state the call needs.
    error JobNotInStatus(bytes32 jobId, JobStatus status, JobStatus expected);
    /// @notice `maxTokens` of zero, above the model's context window, or above what a job record can price.
    error MaxTokensInvalid(uint32 maxTokens);
    /// @notice The job may not be refunded by this caller yet.
    /// @param refundableAfter Anyone may refund it once the block time is past this (deadline + settle grace,
    /// counted from the end of a pause if later).
    error JobNotExpired(bytes32 jobId, uint64 refundableAfter);
    /// @notice The lock would take the credits locked for `wallet` in the last hour above the wallet's own cap.
    /// @param cap The wallet's cap, credits per rolling hour.
    /// @param lockedInWindow Credits already counted against the cap.
    /// @param requested Credits this lock needs.
    /// @param roomAt Earliest block time at which this lock would fit (zero: never, it exceeds the cap itself).
    error SpendingCapExceeded(address wallet, uint256 cap, uint256 lockedInWindow, uint256 requested, uint64 roomAt);
    /// @notice The cap is above what the escrow can record.
    error SpendingCapTooLarge(uint256 cap, uint256 maximum);
    /// @notice The settle grace of the job is over; only a refund may close it now.
    error SettlementWindowClosed(bytes32 jobId, uint64 settleBy);
    /// @notice The receipt's signer is not a registered worker hosting the job's model.
    error WorkerNotEligible(bytes32 jobId, address signer, bytes32 modelKey);
    /// @notice The receipt says the final token came after the job deadline, in the future, or before the request
    /// was accepted (beyond the clock skew). Never because the lock landed late: both bounds run from `acceptedAt`.
    error ReceiptTimeInvalid(bytes32 jobId, uint64 finalTokenAt, uint64 deadline);
    /// @notice The settlement facts passed in do not match the commitment stored at settlement.
    error SettlementMismatch(bytes32 jobId);
    /// @notice The dispute window after the final token has closed.
    error DisputeWindowExpired(bytes32 jobId, uint64 finalTokenAt, uint64 windowEnd);
    /// @notice Arrays of different lengths, or an empty batch.
    error BatchInvalid();
    /// @notice The protocol fee exceeds its cap.
    error FeeTooHigh(uint16 feeBps, uint16 maxFeeBps);
    /// @notice The zero address where an address is needed.
    error ZeroAddress();
    /// @notice The escrow is paused (same selector as OpenZeppelin's Pausable).
    error EnforcedPause();
    /// @notice The escrow is not paused (same selector as OpenZeppelin's Pausable).
    error ExpectedPause();
    /// @notice The stablecoin does not have 6 decimals.
    error StablecoinDecimalsInvalid(uint8 decimals);
    /// @notice A time parameter is out of its accepted range.
    error WindowOutOfRange(uint64 value, uint64 minimum, uint64 maximum);
    /// @notice The worker registry checks models against another catalog than the escrow's.
    error CatalogMismatch(address escrowCatalog, address registryCatalog);
    /// @notice A fee change cannot be scheduled before jobs opened under the previous change can no longer settle.
    error FeeChangeTooSoon(uint64 earliest);
    /// @notice No deferred payout is owed to the caller.
    error NothingToClaim(address account);
    /// @notice The stablecoin refused a transfer the call needs (OpenZeppelin's SafeERC20 error, raised by the
    /// escrow's module and listed here so clients decode it from the escrow's ABI).
    error SafeERC20FailedOperation(address token);
    /// @notice The charges the worker has at risk (settled inside open dispute and arbitration windows), with this
    /// one, would exceed its bond: what a worker may be paid is bounded by what can be seized from it.
    error BondInsufficient(address worker, uint256 bond, uint256 atRisk, uint256 charge);
    /// @notice The bond cannot go below the charges at risk, nor be withdrawn while a dispute against the worker
    /// is pending. `withdrawable` is what may leave now.
    error BondLocked(address worker, uint256 withdrawable);
    /// @notice The bond would exceed what the escrow records (2^64 - 1 units).
    error BondTooLarge(uint256 bond);
    /// @notice Deferred payouts cannot be claimed while a dispute against the claimant (a worker) is pending: an
    /// upheld one forfeits the disputed job's pay to the reserve.
    error ClaimFrozen(address account);

    /// @notice The escrow was paused (same signature as OpenZeppelin's Pausable).
    event Paused(address account);
    /// @notice The escrow was unpaused; open jobs frozen by the pause get a fresh settle grace.
    event Unpaused(address account);
    /// @notice Stablecoin came in and credits were added to `wallet`.
    /// @param payer Who paid (the wallet itself, or a sponsor).
    /// @param amount Stablecoin units received.
    /// @param credits Credits added.
    /// @param balanceAfter Available credits after the deposit.
    event Deposited(
        address indexed wallet,
        address indexed payer,
        uint256 amount,
        uint256 credits,
        uint256 balanceAfter
    );
    /// @notice A wallet took available credits back out as stablecoin.
    event Withdrawn(address indexed wallet, uint256 credits, uint256 amount, uint256 balanceAfter);
    /// @notice Credits were locked for a job (the escrow transaction).
    /// @param modelKey keccak256 of the model id.
    /// @param creditsLocked Worst-case price for the request's `maxTokens`.
    /// @param balanceAfter Available credits after the lock (the balance debit).
    /// @param deadline The request's acceptance time (`OpenRequest.acceptedAt`; the block time for `openJob`) plus
    /// the job timeout. The gateway may refund the job after this time; anyone once the settle grace after it
    /// (`SETTLE_GRACE`, 300 s, restarted by the end of a pause) is over. A receipt's final token may not be later.
    event JobOpened(
        bytes32 indexed jobId,
        address indexed wallet,
        bytes32 indexed keyHash,
        bytes32 modelKey,
        Tier tier,
        uint256 creditsLocked,
        uint256 balanceAfter,
        uint64 deadline
    );
    /// @notice A job was settled against its worker's receipt (the settlement transaction).
    /// @param outputHash The verified proof hash (sha256 of the output).
    /// @param creditsCharged Credits paid for the job, per the pricing rule.
    /// @param creditsRefunded Unused escrow returned to the wallet.
    /// @param workerAmount Stablecoin units paid to the worker (pushed, or kept claimable when refused).
    /// @param feeAmount Stablecoin units paid to the treasury in the same transaction (at the fee in effect when
    /// the job opened; kept claimable by the treasury when the stablecoin refuses the transfer). `settleBatch`
    /// sends the batch's summed fee in one transfer.
    /// @param balanceAfter Available credits of the wallet afterwards.
    event JobSettled(
        bytes32 indexed jobId,
        address indexed wallet,
        address indexed worker,
        bytes32 outputHash,
        uint32 promptTokens,
        uint32 completionTokens,
        uint64 finalTokenAt,
        uint256 creditsCharged,
        uint256 creditsRefunded,
        uint256 workerAmount,
        uint256 feeAmount,
        uint256 balanceAfter
    );
    /// @notice The gateway failed a job before completion; its escrow went back.
    event JobFailed(bytes32 indexed jobId, address indexed wallet, uint256 creditsReturned, uint256 balanceAfter);
    /// @notice A job passed its deadline unsettled and was refunded.
    /// @param caller Who triggered it (anyone may).
    event JobRefunded(
        bytes32 indexed jobId,
        address indexed wallet,
        uint256 creditsRefunded,
        uint256 balanceAfter,
        address caller
    );
    /// @notice A settled job entered a dispute.
    event JobDisputed(bytes32 indexed jobId, address indexed wallet, address indexed worker);
    /// @notice A dispute was closed; when upheld the charge came back from the reserve (`creditsRestored`), or
    /// was recorded as owed (`RestitutionOwed`, `creditsRestored` zero).
    event JobDisputeClosed(
        bytes32 indexed jobId,
        address indexed wallet,
        bool upheld,
        uint256 creditsRestored,
        uint256 balanceAfter
    );
    /// @notice Stablecoin was added to the dispute reserve.
    /// @param amount Stablecoin units received (balance delta).
    event ReserveFunded(address indexed funder, uint256 amount, uint256 reserveAfter);
    /// @notice The charge of an upheld dispute went back to the wallet from the reserve (at once, or later from
    /// the owed queue when the reserve was topped up).
    event RestitutionPaid(bytes32 indexed jobId, address indexed wallet, uint256 credits, uint256 balanceAfter);
    /// @notice The reserve could not repay an upheld dispute: the restitution is recorded as owed and is paid
    /// first, in order, when the reserve is topped up.
    /// @param owedCredits Credits owed to all wallets afterwards.
    event RestitutionOwed(bytes32 indexed jobId, address indexed wallet, uint256 credits, uint256 owedCredits);
    /// @notice `openJobBatch` skipped a lock it could not take.
    event JobOpenSkipped(bytes32 indexed jobId, bytes32 indexed keyHash, OpenSkipReason reason);
    /// @notice `settleBatch` skipped a receipt it could not settle; the job stays open.
    event SettlementSkipped(bytes32 indexed jobId, SettleSkipReason reason);
    /// @notice A wallet set its own cap on credits locked per rolling hour (zero: no cap).
    event SpendingCapSet(address indexed wallet, uint256 creditsPerHour);
    /// @notice A payout could not be pushed (the stablecoin refused the transfer); it stays claimable.
    event PayoutDeferred(address indexed recipient, uint256 amount);
    /// @notice A recipient claimed its deferred payouts.
    event PayoutClaimed(address indexed recipient, address to, uint256 amount);
    /// @notice Stablecoin beyond everything the escrow owes was swept (first into the reserve while restitution
    /// is owed).
    event SurplusSwept(address indexed to, uint256 toReserve, uint256 amount);
    /// @notice A treasury change was scheduled; it takes effect at `effectiveAt`.
    event TreasuryScheduled(address treasury, uint64 effectiveAt);
    /// @notice The treasury in effect changed.
    event TreasuryUpdated(address treasury);
    /// @notice A protocol-fee change was scheduled: jobs accepted (`OpenRequest.acceptedAt`) at or after
    /// `effectiveAt` pay `feeBps`.
    event ProtocolFeeScheduled(uint16 feeBps, uint64 effectiveAt);
    /// @notice Stablecoin was added to a worker's bond.
    /// @param amount Stablecoin units received (balance delta).
    event BondPosted(address indexed worker, address indexed payer, uint256 amount, uint256 bondAfter);
    /// @notice A worker took bond back out.
    event BondWithdrawn(address indexed worker, uint256 amount, uint256 bondAfter);
    /// @notice An upheld dispute seized the worker's whole bond into the reserve, which pays restitution first.
    event BondSlashed(address indexed worker, bytes32 indexed jobId, uint256 amount, uint256 reserveAfter);
    /// @notice An upheld dispute moved the worker's deferred pay (up to the job's charge) into the reserve.
    event PayoutForfeited(address indexed worker, bytes32 indexed jobId, uint256 amount, uint256 reserveAfter);

    /// @notice Deposits stablecoin (approve first); at least 1 stablecoin, whole credits only.
    /// @param amount Stablecoin units.
    function deposit(uint256 amount) external;

    /// @notice Deposits with an EIP-2612 permit: one signature and one transaction.
    function depositWithPermit(uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;

    /// @notice Withdraws available credits as stablecoin to the caller.
    function withdraw(uint256 credits) external;

    /// @notice Adds stablecoin to the dispute reserve, from which upheld disputes are repaid; owed restitution is
    /// paid from it first. The reserve is never withdrawn (docs/DESIGN.md, "Disputes").
    /// @param amount Stablecoin units to pull (approve first); the reserve grows by what arrives.
    function fundReserve(uint256 amount) external;

    /// @notice Pays owed restitution, oldest first, while the reserve covers it. Anyone.
    /// @param maxCount Most entries to pay in this call.
    function payOwedRestitution(uint256 maxCount) external;

    /// @notice Sets the caller's cap on credits locked per rolling hour; zero removes it. Only the wallet itself
    /// can set it, so a stolen gateway key cannot lift it.
    /// @param creditsPerHour The cap, credits.
    function setSpendingCap(uint256 creditsPerHour) external;

    /// @notice Locks the worst-case price of a request accepted now (the block's time stands for `acceptedAt`: a
    /// caller whose lock may land late uses `openJobBatch`, which carries the acceptance time). Gateway only.
    /// @param jobId Time-ordered job id (the API's ULID as 16 bytes, right-aligned).
    /// @param keyHash Hash of the API key used; it must be active.
    /// @param modelKey keccak256 of the model id; the model must be listed.
    /// @param maxTokens The request's effective `max_tokens`; at most the model's context window.
    function openJob(bytes32 jobId, bytes32 keyHash, bytes32 modelKey, uint32 maxTokens) external;

    /// @notice Opens many jobs in one transaction, each with its own `JobOpened`; a lock that cannot be taken is
    /// skipped with `JobOpenSkipped`, never reverting the batch (one accepted longer than `MAX_LOCK_DELAY` ago with
    /// `AcceptedAtInvalid`). Each job's deadline runs from its `acceptedAt`, so however late its lock lands within
    /// the bound, the receipt of a job answered in time settles. Gateway only.
    /// @param requests The locks, each with the arguments of `openJob` and its acceptance time.
    /// @return opened How many jobs were opened.
    function openJobBatch(OpenRequest[] calldata requests) external returns (uint256 opened);

    /// @notice Settles one job against its worker's signed receipt. The worker's share and the protocol fee are
    /// pushed to the worker and the treasury in this transaction; a share the stablecoin refuses stays claimable
    /// by its recipient (`PayoutDeferred`, `claim`), so neither can block settlement. Gateway only.
    /// @param receipt The worker's receipt.
    /// @param signature The worker's EIP-712 signature of it.
    function settle(Receipt calldata receipt, bytes calldata signature) external;

    /// @notice Settles many jobs in one transaction; payments are summed per worker, and the batch's fees go to
    /// the treasury in one transfer (each job's share is in its `JobSettled.feeAmount`). A receipt that cannot be
    /// settled is skipped with `SettlementSkipped` (its job stays open), never reverting the batch. Gateway only.
    /// @param receipts The receipts.
    /// @param signatures Their signatures, same order.
    /// @return settled How many jobs were settled.
    function settleBatch(Receipt[] calldata receipts, bytes[] calldata signatures) external returns (uint256 settled);

    /// @notice `openJobBatch(requests)` then `settleBatch(receipts, signatures)` in one transaction, with the same
    /// events and the same rules for each part: the gateway sends the settlements it has ready with its next locks
    /// instead of in a transaction of their own. A receipt may settle a job opened by `requests` (the locks go
    /// first). Either part skips what it cannot take or settle, never reverting the call. Gateway only.
    /// @param requests The locks, as for `openJobBatch` (at least one).
    /// @param receipts The receipts, as for `settleBatch` (at least one).
    /// @param signatures Their signatures, same order.
    /// @return opened How many jobs were opened.
    /// @return settled How many jobs were settled.
    function openAndSettleBatch(
        OpenRequest[] calldata requests,
        Receipt[] calldata receipts,
        bytes[] calldata signatures
    ) external returns (uint256 opened, uint256 settled);

    /// @notice Fails an open job and returns its escrow. Gateway only; also while paused.
    /// @param jobId The job.
    function failJob(bytes32 jobId) external;

    /// @notice Refunds an open job: by the gateway after its deadline, by anyone once the settle grace after the
    /// deadline (or after the end of a pause) is over. Not while paused.
    /// @param jobId The job.
    function refund(bytes32 jobId) external;

    /// @notice Adds to `worker`'s stablecoin bond (approve first): a worker is paid only while the charges of its
    /// jobs still disputable stay within its bond (docs/DESIGN.md, "Fraud never pays"). Anyone may post for a
    /// worker.
    /// @param worker The worker.
    /// @param amount Stablecoin units to pull; the bond grows by what arrives.
    function postBond(address worker, uint256 amount) external;

    /// @notice Takes bond back out to the caller (a worker), down to the charges it still has at risk; never while
    /// a dispute against it is pending.
    /// @param amount Stablecoin units.
    function withdrawBond(uint256 amount) external;

    /// @notice A worker's bond and what it has at risk now.
    /// @return bond Stablecoin units posted.
    /// @return atRisk Charges of its jobs settled inside open dispute and arbitration windows, stablecoin units.
    /// @return disputesPending Disputes against it not yet closed.
    function bondOf(address worker) external view returns (uint256 bond, uint256 atRisk, uint256 disputesPending);

    /// @notice Sends the caller's deferred payouts to `to`.
    /// @param to Recipient (another address when the stablecoin blocks the caller's own).
    function claim(address to) external;

    /// @notice Sends stablecoin held beyond everything owed (credits, reserve, deferred payouts) to `to`,
    /// first topping the reserve up by any owed restitution. Admin only.
    /// @param to Recipient of the surplus.
    function sweepSurplus(address to) external;

    /// @notice Marks a settled job disputed after checking the settlement facts and the dispute window.
    /// Dispute contract only.
    function markDisputed(bytes32 jobId, Settlement calldata settlement) external;

    /// @notice Closes a dispute; when upheld restores the charge to the wallet from the reserve, or records it as
    /// owed when the reserve cannot pay (never reverts for lack of reserve). Dispute contract only.
    /// @return creditsRestored Credits restored now (zero unless upheld and the reserve paid).
    function closeDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bool upheld
    ) external returns (uint256 creditsRestored);

    /// @notice Schedules a new treasury, effective `CONFIG_CHANGE_DELAY` later. Admin only.
    /// @param treasury The new treasury.
    function scheduleTreasury(address treasury) external;

    /// @notice Schedules a new protocol fee in basis points (capped), for jobs opened `CONFIG_CHANGE_DELAY` later
    /// or after. Admin only.
    /// @param feeBps The new fee.
    function scheduleProtocolFee(uint16 feeBps) external;

    /// @notice Pauses deposits, new jobs, settlement and refunds (delivered work is never refunded because of a
    /// pause); withdrawals, failJob and disputes stay open. Pauser only.
    function pause() external;

    /// @notice Lifts the pause. Pauser only.
    function unpause() external;

    /// @notice Whether the escrow is paused.
    function paused() external view returns (bool);

    /// @notice A wallet's credits.
    function accountOf(address wallet) external view returns (Account memory);

    /// @notice A job's status, wallet, locked credits (open jobs) and deadline.
    function jobOf(
        bytes32 jobId
    ) external view returns (JobStatus status, address wallet, uint256 creditsLocked, uint64 deadline);

    /// @notice The EIP-712 digest a worker signs for `receipt`.
    function receiptDigest(Receipt calldata receipt) external view returns (bytes32);

    /// @notice Stablecoin units held for the dispute reserve.
    function reserve() external view returns (uint256);

    /// @notice The worker registry the escrow checks receipts' signers against.
    function workerRegistry() external view returns (IWorkerRegistry);

    /// @notice Seconds after opening before a job may be refunded.
    function jobTimeout() external view returns (uint64);

    /// @notice Seconds after settlement (and at least after the final token) during which a dispute may be opened.
    function disputeWindow() external view returns (uint64);

    /// @notice A wallet's spending cap and what counts against it now.
    /// @return cap Credits per rolling hour (zero: none).
    /// @return lockedInWindow Credits counted against it now.
    /// @return nextRoomAt When the oldest counted slot drops out (room frees up); zero when nothing is counted.
    function spendingOf(address wallet) external view returns (uint256 cap, uint256 lockedInWindow, uint64 nextRoomAt);

    /// @notice Deferred payouts `account` may claim, stablecoin units.
    function claimable(address account) external view returns (uint256);

    /// @notice What the escrow owes, for reconciliation: stablecoin held = credits outstanding × 10,000 + reserve
    /// + claimable payouts (deferred worker and treasury shares) + surplus.
    function ledger() external view returns (Ledger memory);
}
