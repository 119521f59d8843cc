// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Tier} from "../types/Tier.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";

/// @title ICreditEscrow
/// @notice Prepaid credits (1 stablecoin = 100 credits) held per wallet; each inference job locks
/// its worst-case price here before routing and is settled against the worker's EIP-712 receipt,
/// failed, or refunded after the job timeout. Exactly one of those happens to each job.
interface ICreditEscrow {
    /// @notice A wallet's credits.
    struct Account {
        uint96 available;
        uint96 locked;
        uint64 lastTopUpAt;
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
    /// @notice `maxTokens` of zero, or above what a job record can price.
    error MaxTokensInvalid(uint32 maxTokens);
    /// @notice The job timeout has not passed yet.
    error JobNotExpired(bytes32 jobId, uint64 deadline);
    /// @notice The receipt's signer is not a registered worker hosting the job's model.
    error WorkerNotEligible(bytes32 jobId, address signer, bytes32 modelKey);
    /// @notice The receipt says the final token came after the job deadline, in the future, or before the job
    /// was opened (beyond the clock skew).
    error ReceiptTimeInvalid(bytes32 jobId, uint64 finalTokenAt, uint64 deadline);
    /// @notice The settlement facts passed in do not match the commitment stored at settlement.
    error SettlementMismatch(bytes32 jobId);
    /// @notice The dispute window after the final token has closed.
    error DisputeWindowExpired(bytes32 jobId, uint64 finalTokenAt, uint64 windowEnd);
    /// @notice The reserve cannot cover the credits to restore.
    error ReserveInsufficient(uint256 reserve, uint256 required);
    /// @notice Arrays of different lengths, or an empty batch.
    error BatchInvalid();
    /// @notice The protocol fee exceeds its cap.
    error FeeTooHigh(uint16 feeBps, uint16 maxFeeBps);
    /// @notice The zero address where an address is needed.
    error ZeroAddress();

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
    /// @param deadline After this time anyone may refund the job.
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
    /// @param workerAmount Stablecoin units transferred to the worker.
    /// @param feeAmount Stablecoin units transferred to the treasury.
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
    /// @notice A dispute was closed; when upheld the charge came back from the reserve.
    event JobDisputeClosed(
        bytes32 indexed jobId,
        address indexed wallet,
        bool upheld,
        uint256 creditsRestored,
        uint256 balanceAfter
    );
    /// @notice Stablecoin was added to the dispute reserve.
    event ReserveFunded(address indexed funder, uint256 amount, uint256 reserveAfter);
    /// @notice The treasury address changed.
    event TreasuryUpdated(address treasury);
    /// @notice The protocol fee changed.
    event ProtocolFeeUpdated(uint16 feeBps);

    /// @notice Deposits stablecoin (approve first); at least 1 stablecoin, whole credits only.
    /// @param amount Stablecoin units.
    function deposit(uint256 amount) external;

    /// @notice Deposits with an EIP-2612 permit: one signature and one transaction.
    function depositWithPermit(uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external;

    /// @notice Withdraws available credits as stablecoin to the caller.
    function withdraw(uint256 credits) external;

    /// @notice Adds stablecoin to the dispute reserve, from which upheld disputes are repaid.
    function fundReserve(uint256 amount) external;

    /// @notice Locks the worst-case price of a request. Gateway only.
    /// @param jobId Time-ordered job id (the API's ULID as 16 bytes, right-aligned).
    /// @param keyHash Hash of the API key used; it must be active.
    /// @param modelKey keccak256 of the model id; the model must be listed.
    /// @param maxTokens The request's effective `max_tokens`.
    function openJob(bytes32 jobId, bytes32 keyHash, bytes32 modelKey, uint32 maxTokens) external;

    /// @notice Settles one job against its worker's signed receipt, paying worker and treasury. Gateway only.
    function settle(Receipt calldata receipt, bytes calldata signature) external;

    /// @notice Settles many jobs in one transaction; payments are summed per worker. Gateway only.
    /// @dev All or nothing: one invalid receipt reverts the batch.
    function settleBatch(Receipt[] calldata receipts, bytes[] calldata signatures) external;

    /// @notice Fails an open job and returns its escrow. Gateway only.
    function failJob(bytes32 jobId) external;

    /// @notice Refunds an open job after its deadline. Anyone.
    function refund(bytes32 jobId) external;

    /// @notice Marks a settled job disputed after checking the settlement facts and the dispute window.
    /// Dispute contract only.
    function markDisputed(bytes32 jobId, Settlement calldata settlement) external;

    /// @notice Closes a dispute; when upheld restores the charge to the wallet from the reserve.
    /// Dispute contract only.
    /// @return creditsRestored Credits restored (zero unless upheld).
    function closeDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bool upheld
    ) external returns (uint256 creditsRestored);

    /// @notice Sets the treasury. Admin only.
    function setTreasury(address treasury) external;

    /// @notice Sets the protocol fee in basis points (capped). Admin only.
    function setProtocolFee(uint16 feeBps) external;

    /// @notice Pauses deposits, new jobs and settlement; refunds and withdrawals stay open. Pauser only.
    function pause() external;

    /// @notice Lifts the pause. Pauser only.
    function unpause() external;

    /// @notice A wallet's credits.
    function accountOf(address wallet) external view returns (Account memory);

    /// @notice A job's status, wallet, locked credits (open jobs) and deadline.
    function jobOf(
        bytes32 jobId
    ) external view returns (JobStatus status, address wallet, uint256 creditsLocked, uint64 deadline);

    /// @notice The EIP-712 digest a worker signs for `receipt`.
    function receiptDigest(Receipt calldata receipt) external view returns (bytes32);

    /// @notice Credits the pricing rule charges for `completionTokens` of a model with these prices.
    function priceOf(
        uint32 creditsPerRequest,
        uint32 creditsPer1kTokens,
        uint32 completionTokens
    ) external pure returns (uint256);

    /// @notice Stablecoin units held for the dispute reserve.
    function reserve() external view returns (uint256);

    /// @notice Seconds after opening before a job may be refunded.
    function jobTimeout() external view returns (uint64);

    /// @notice Seconds after the final token during which a dispute may be opened.
    function disputeWindow() external view returns (uint64);
}
