// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ICreditEscrow} from "./interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "./interfaces/IApiKeyRegistry.sol";
import {IModelCatalog} from "./interfaces/IModelCatalog.sol";
import {IWorkerRegistry} from "./interfaces/IWorkerRegistry.sol";
import {Tier} from "./types/Tier.sol";
import {JobStatus} from "./types/JobStatus.sol";
import {Receipt, Settlement} from "./types/Receipt.sol";
import {Pricing} from "./libraries/Pricing.sol";
import {JobRecord} from "./libraries/JobRecord.sol";
import {ReceiptHash} from "./libraries/ReceiptHash.sol";

/// @title CreditEscrow
/// @notice Prepaid credits per wallet, locked per job and settled against workers' EIP-712 receipts.
/// @dev Gas shape: one storage word per job (`JobRecord`), one per wallet (`Account`), treasury and fee in
/// one word; a batch pays each worker once and the treasury once.
contract CreditEscrow is ICreditEscrow, AccessControl, Pausable, EIP712 {
    using SafeERC20 for IERC20;
    using JobRecord for uint256;

    /// @notice Opens, settles and fails jobs (the API gateway).
    bytes32 public constant GATEWAY_ROLE = keccak256("GATEWAY_ROLE");
    /// @notice Marks and closes disputes (the dispute contract).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @notice Pauses and unpauses.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    /// @notice Stablecoin units per credit (1 stablecoin of 6 decimals = 100 credits).
    uint256 public constant UNIT_PER_CREDIT = 10_000;
    /// @notice Smallest deposit: 1 stablecoin.
    uint256 public constant MIN_DEPOSIT = 1_000_000;
    /// @notice Basis points in 100%.
    uint16 public constant BPS = 10_000;
    /// @notice Highest protocol fee: 20%.
    uint16 public constant MAX_FEE_BPS = 2_000;
    /// @notice How far in the future a receipt's final-token time may lie (clock differences).
    uint64 public constant MAX_CLOCK_SKEW = 30;

    /// @notice The stablecoin credits are bought with.
    IERC20 public immutable stablecoin;
    /// @notice Resolves API key hashes to wallets.
    IApiKeyRegistry public immutable apiKeyRegistry;
    /// @notice Model prices.
    IModelCatalog public immutable modelCatalog;
    /// @notice Worker eligibility.
    IWorkerRegistry public immutable workerRegistry;
    /// @inheritdoc ICreditEscrow
    uint64 public immutable jobTimeout;
    /// @inheritdoc ICreditEscrow
    uint64 public immutable disputeWindow;

    /// @dev Treasury, fee and the pause flag share one word: settlement reads all three with one SLOAD.
    struct Config {
        address treasury;
        uint16 feeBps;
        bool paused;
    }

    mapping(address wallet => Account) private _accounts;
    mapping(bytes32 jobId => uint256 record) private _jobs;
    Config private _config;
    uint256 private _reserve;

    /// @dev The facts of one settlement while it is booked.
    struct SettledJob {
        address wallet;
        address worker;
        uint256 creditsLocked;
        uint256 charged;
        uint256 refunded;
        uint256 balanceAfter;
    }

    /// @dev The last catalog and registry answers of a settlement transaction (index 0 = none yet).
    struct Lookups {
        uint16 modelIndex;
        bytes32 modelKey;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        address eligibleWorker;
        bytes32 eligibleModelKey;
    }

    /// @dev What one settlement moves, for the caller to pay out.
    struct Payout {
        address worker;
        uint256 workerAmount;
        uint256 feeAmount;
    }

    /// @param admin Holder of `DEFAULT_ADMIN_ROLE`; grants `GATEWAY_ROLE`, `DISPUTE_ROLE` and `PAUSER_ROLE`.
    /// @param stablecoin_ The stablecoin (6 decimals).
    /// @param apiKeyRegistry_ The API key registry.
    /// @param modelCatalog_ The model catalog.
    /// @param workerRegistry_ The worker registry.
    /// @param treasury_ Receives the protocol fee.
    /// @param feeBps_ Protocol fee, basis points of each charge (at most `MAX_FEE_BPS`).
    /// @param jobTimeout_ Seconds after opening before anyone may refund a job.
    /// @param disputeWindow_ Seconds after the final token during which a dispute may be opened.
    constructor(
        address admin,
        IERC20 stablecoin_,
        IApiKeyRegistry apiKeyRegistry_,
        IModelCatalog modelCatalog_,
        IWorkerRegistry workerRegistry_,
        address treasury_,
        uint16 feeBps_,
        uint64 jobTimeout_,
        uint64 disputeWindow_
    ) EIP712("CreditEscrow", "1") {
        if (
            admin == address(0) ||
            address(stablecoin_) == address(0) ||
            address(apiKeyRegistry_) == address(0) ||
            address(modelCatalog_) == address(0) ||
            address(workerRegistry_) == address(0) ||
            treasury_ == address(0)
        ) revert ZeroAddress();
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        stablecoin = stablecoin_;
        apiKeyRegistry = apiKeyRegistry_;
        modelCatalog = modelCatalog_;
        workerRegistry = workerRegistry_;
        jobTimeout = jobTimeout_;
        disputeWindow = disputeWindow_;
        _config = Config({treasury: treasury_, feeBps: feeBps_, paused: false});
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ---------------------------------------------------------------- credits

    /// @inheritdoc ICreditEscrow
    function deposit(uint256 amount) external whenNotPaused {
        _deposit(msg.sender, amount);
    }

    /// @inheritdoc ICreditEscrow
    /// @dev A failed permit is ignored (it may have been front-run); the transfer then needs the allowance.
    function depositWithPermit(uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external whenNotPaused {
        try IERC20Permit(address(stablecoin)).permit(msg.sender, address(this), amount, deadline, v, r, s) {} catch {}
        _deposit(msg.sender, amount);
    }

    /// @inheritdoc ICreditEscrow
    function withdraw(uint256 credits) external {
        Account storage account = _accounts[msg.sender];
        uint256 available = account.available;
        if (available < credits) revert InsufficientCredits(msg.sender, available, credits);
        uint256 balanceAfter;
        // Checked just above.
        unchecked {
            balanceAfter = available - credits;
        }
        account.available = uint96(balanceAfter);
        uint256 amount = credits * UNIT_PER_CREDIT;
        emit Withdrawn(msg.sender, credits, amount, balanceAfter);

        stablecoin.safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc ICreditEscrow
    function fundReserve(uint256 amount) external {
        uint256 reserveAfter = _reserve + amount;
        _reserve = reserveAfter;
        emit ReserveFunded(msg.sender, amount, reserveAfter);

        stablecoin.safeTransferFrom(msg.sender, address(this), amount);
    }

    // ---------------------------------------------------------------- jobs

    /// @inheritdoc ICreditEscrow
    function openJob(
        bytes32 jobId,
        bytes32 keyHash,
        bytes32 modelKey,
        uint32 maxTokens
    ) external onlyRole(GATEWAY_ROLE) whenNotPaused {
        if (_jobs[jobId] != 0) revert JobAlreadyExists(jobId);
        address wallet = apiKeyRegistry.activeWallet(keyHash);
        (uint16 modelIndex, Tier tier, uint256 credits) = _escrowFor(modelKey, maxTokens);
        uint256 balanceAfter = _lock(wallet, credits);
        // The deadline fits a uint32 until 2106.
        uint64 deadline = uint64(block.timestamp) + jobTimeout;
        _jobs[jobId] = JobRecord.pack(wallet, credits, uint32(deadline), modelIndex, JobStatus.Open);
        emit JobOpened(jobId, wallet, keyHash, modelKey, tier, credits, balanceAfter, deadline);
    }

    /// @inheritdoc ICreditEscrow
    function settle(Receipt calldata receipt, bytes calldata signature) external onlyRole(GATEWAY_ROLE) {
        Config memory config = _config;
        if (config.paused) revert EnforcedPause();
        Lookups memory lookups;
        Payout memory payout = _settle(receipt, signature, config.feeBps, lookups);
        if (payout.workerAmount != 0) stablecoin.safeTransfer(payout.worker, payout.workerAmount);
        if (payout.feeAmount != 0) stablecoin.safeTransfer(config.treasury, payout.feeAmount);
    }

    /// @inheritdoc ICreditEscrow
    function settleBatch(Receipt[] calldata receipts, bytes[] calldata signatures) external onlyRole(GATEWAY_ROLE) {
        Config memory config = _config;
        if (config.paused) revert EnforcedPause();
        uint256 count = receipts.length;
        if (count == 0 || count != signatures.length) revert BatchInvalid();

        // Catalog and registry answers cannot change within this transaction, so repeats are served from memory.
        Lookups memory lookups;
        // Per-worker totals; batches are small, so a linear scan beats a storage-backed map.
        address[] memory workers = new address[](count);
        uint256[] memory amounts = new uint256[](count);
        uint256 workerCount;
        uint256 feeTotal;
        for (uint256 i; i < count; ++i) {
            Payout memory payout = _settle(receipts[i], signatures[i], config.feeBps, lookups);
            feeTotal += payout.feeAmount;
            uint256 slot;
            while (slot < workerCount && workers[slot] != payout.worker) ++slot;
            if (slot == workerCount) {
                workers[slot] = payout.worker;
                ++workerCount;
            }
            amounts[slot] += payout.workerAmount;
        }

        for (uint256 i; i < workerCount; ++i) {
            if (amounts[i] != 0) stablecoin.safeTransfer(workers[i], amounts[i]);
        }
        if (feeTotal != 0) stablecoin.safeTransfer(config.treasury, feeTotal);
    }

    /// @inheritdoc ICreditEscrow
    function failJob(bytes32 jobId) external onlyRole(GATEWAY_ROLE) {
        (address wallet, uint256 credits, uint256 balanceAfter) = _release(jobId, JobStatus.Failed);
        emit JobFailed(jobId, wallet, credits, balanceAfter);
    }

    /// @inheritdoc ICreditEscrow
    function refund(bytes32 jobId) external {
        uint256 record = _jobs[jobId];
        (, , uint32 deadline, , JobStatus status) = record.unpack();
        if (status != JobStatus.Open) revert JobNotInStatus(jobId, status, JobStatus.Open);
        if (block.timestamp <= deadline) revert JobNotExpired(jobId, deadline);
        (address wallet, uint256 credits, uint256 balanceAfter) = _release(jobId, JobStatus.Refunded);
        emit JobRefunded(jobId, wallet, credits, balanceAfter, msg.sender);
    }

    // ---------------------------------------------------------------- disputes

    /// @inheritdoc ICreditEscrow
    function markDisputed(bytes32 jobId, Settlement calldata settlement) external onlyRole(DISPUTE_ROLE) {
        uint256 record = _requireCommitted(jobId, settlement, JobStatus.Settled);
        uint256 windowEnd = uint256(settlement.finalTokenAt) + disputeWindow;
        if (block.timestamp > windowEnd) {
            revert DisputeWindowExpired(jobId, settlement.finalTokenAt, uint64(windowEnd));
        }
        _jobs[jobId] = record.withStatus(JobStatus.Disputed);
        emit JobDisputed(jobId, settlement.wallet, settlement.worker);
    }

    /// @inheritdoc ICreditEscrow
    function closeDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bool upheld
    ) external onlyRole(DISPUTE_ROLE) returns (uint256 creditsRestored) {
        uint256 record = _requireCommitted(jobId, settlement, JobStatus.Disputed);
        Account storage account = _accounts[settlement.wallet];
        if (upheld) {
            creditsRestored = settlement.creditsCharged;
            uint256 units = creditsRestored * UNIT_PER_CREDIT;
            uint256 reserveBefore = _reserve;
            if (reserveBefore < units) revert ReserveInsufficient(reserveBefore, units);
            // Checked just above.
            unchecked {
                _reserve = reserveBefore - units;
            }
            account.available += uint96(creditsRestored);
            _jobs[jobId] = record.withStatus(JobStatus.DisputeUpheld);
        } else {
            _jobs[jobId] = record.withStatus(JobStatus.Settled);
        }
        emit JobDisputeClosed(jobId, settlement.wallet, upheld, creditsRestored, account.available);
    }

    // ---------------------------------------------------------------- admin

    /// @inheritdoc ICreditEscrow
    function setTreasury(address treasury_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (treasury_ == address(0)) revert ZeroAddress();
        _config.treasury = treasury_;
        emit TreasuryUpdated(treasury_);
    }

    /// @inheritdoc ICreditEscrow
    function setProtocolFee(uint16 feeBps_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        _config.feeBps = feeBps_;
        emit ProtocolFeeUpdated(feeBps_);
    }

    /// @inheritdoc ICreditEscrow
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc ICreditEscrow
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    // ---------------------------------------------------------------- views

    /// @inheritdoc Pausable
    /// @dev The flag lives in `_config` (next to treasury and fee), not in Pausable's own slot.
    function paused() public view override returns (bool) {
        return _config.paused;
    }

    /// @inheritdoc ICreditEscrow
    function accountOf(address wallet) external view returns (Account memory) {
        return _accounts[wallet];
    }

    /// @inheritdoc ICreditEscrow
    /// @dev Settled and disputed jobs hold a commitment, so only their status is reported. Failed and
    /// refunded jobs keep their wallet and deadline, with zero locked credits.
    function jobOf(
        bytes32 jobId
    ) external view returns (JobStatus status, address wallet, uint256 creditsLocked, uint64 deadline) {
        uint256 record = _jobs[jobId];
        status = record.statusOf();
        if (status == JobStatus.Open || status == JobStatus.Failed || status == JobStatus.Refunded) {
            uint32 packedDeadline;
            (wallet, creditsLocked, packedDeadline, , ) = record.unpack();
            deadline = packedDeadline;
            if (status != JobStatus.Open) creditsLocked = 0;
        }
    }

    /// @inheritdoc ICreditEscrow
    function receiptDigest(Receipt calldata receipt) external view returns (bytes32) {
        return _hashTypedDataV4(ReceiptHash.hash(receipt));
    }

    /// @inheritdoc ICreditEscrow
    function priceOf(
        uint32 creditsPerRequest,
        uint32 creditsPer1kTokens,
        uint32 completionTokens
    ) external pure returns (uint256) {
        return Pricing.price(creditsPerRequest, creditsPer1kTokens, completionTokens);
    }

    /// @inheritdoc ICreditEscrow
    function reserve() external view returns (uint256) {
        return _reserve;
    }

    /// @notice Where the protocol fee goes.
    function treasury() external view returns (address) {
        return _config.treasury;
    }

    /// @notice The protocol fee, basis points of each charge.
    function feeBps() external view returns (uint16) {
        return _config.feeBps;
    }

    /// @notice The EIP-712 domain separator receipts are signed under.
    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // ---------------------------------------------------------------- internals

    /// @dev Pausable's hook, storing the flag in the packed config word.
    function _pause() internal override whenNotPaused {
        _config.paused = true;
        emit Paused(_msgSender());
    }

    /// @dev Pausable's hook, storing the flag in the packed config word.
    function _unpause() internal override whenPaused {
        _config.paused = false;
        emit Unpaused(_msgSender());
    }

    function _deposit(address wallet, uint256 amount) private {
        if (amount < MIN_DEPOSIT) revert DepositTooSmall(amount, MIN_DEPOSIT);
        if (amount % UNIT_PER_CREDIT != 0) revert AmountNotWholeCredits(amount, UNIT_PER_CREDIT);
        uint256 credits = amount / UNIT_PER_CREDIT;
        Account storage account = _accounts[wallet];
        uint256 balanceAfter = account.available + credits;
        account.available = SafeCast.toUint96(balanceAfter);
        account.lastTopUpAt = uint64(block.timestamp);
        emit Deposited(wallet, msg.sender, amount, credits, balanceAfter);

        stablecoin.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @dev The worst-case price of a job of a listed model, and the model's compact index and tier.
    function _escrowFor(
        bytes32 modelKey,
        uint32 maxTokens
    ) private view returns (uint16 modelIndex, Tier tier, uint256 credits) {
        if (maxTokens == 0) revert MaxTokensInvalid(maxTokens);
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        (modelIndex, tier, creditsPerRequest, creditsPer1kTokens) = modelCatalog.listedPricing(modelKey);
        credits = Pricing.price(creditsPerRequest, creditsPer1kTokens, maxTokens);
        if (credits > JobRecord.MAX_CREDITS_LOCKED) revert MaxTokensInvalid(maxTokens);
    }

    /// @dev Moves `credits` of `wallet` from available to locked; returns the available balance after.
    function _lock(address wallet, uint256 credits) private returns (uint256 balanceAfter) {
        Account storage account = _accounts[wallet];
        Account memory current = account;
        if (current.available < credits) revert InsufficientCredits(wallet, current.available, credits);
        // Checked just above; locked + credits <= total credits ever deposited, far below 2^96.
        unchecked {
            balanceAfter = current.available - credits;
            account.available = uint96(balanceAfter);
            account.locked = current.locked + uint96(credits);
        }
    }

    /// @dev Verifies one receipt, books it and returns what to pay; the caller transfers.
    function _settle(
        Receipt calldata receipt,
        bytes calldata signature,
        uint16 feeBps_,
        Lookups memory lookups
    ) private returns (Payout memory payout) {
        SettledJob memory job = _verifyReceipt(receipt, signature, lookups);
        Account storage account = _accounts[job.wallet];
        // charged <= creditsLocked (capped in _verifyReceipt) and the job's lock is part of account.locked;
        // available + refunded stays below the wallet's deposits, far below 2^96.
        unchecked {
            job.refunded = job.creditsLocked - job.charged;
            job.balanceAfter = account.available + job.refunded;
            account.available = uint96(job.balanceAfter);
            account.locked -= uint96(job.creditsLocked);
        }

        // charged < 2^40 (it is capped by the lock), so the commitment's uint64 holds it.
        _jobs[receipt.jobId] = JobRecord.commitment(
            Settlement({
                wallet: job.wallet,
                worker: job.worker,
                outputHash: receipt.outputHash,
                creditsCharged: uint64(job.charged),
                finalTokenAt: receipt.finalTokenAt
            }),
            JobStatus.Settled
        );

        uint256 units = job.charged * UNIT_PER_CREDIT;
        payout.worker = job.worker;
        payout.feeAmount = (units * feeBps_) / BPS;
        // feeBps_ <= MAX_FEE_BPS < BPS, so feeAmount <= units.
        unchecked {
            payout.workerAmount = units - payout.feeAmount;
        }
        _emitSettled(receipt, job, payout);
    }

    /// @dev Checks that the job is open, the signer may serve its model and the receipt's time is plausible;
    /// prices the receipt, capped at the lock.
    function _verifyReceipt(
        Receipt calldata receipt,
        bytes calldata signature,
        Lookups memory lookups
    ) private view returns (SettledJob memory job) {
        bytes32 jobId = receipt.jobId;
        uint32 deadline;
        uint16 modelIndex;
        JobStatus status;
        (job.wallet, job.creditsLocked, deadline, modelIndex, status) = _jobs[jobId].unpack();
        if (status != JobStatus.Open) revert JobNotInStatus(jobId, status, JobStatus.Open);

        job.worker = ECDSA.recoverCalldata(_hashTypedDataV4(ReceiptHash.hash(receipt)), signature);
        if (lookups.modelIndex != modelIndex) {
            (lookups.modelKey, , lookups.creditsPerRequest, lookups.creditsPer1kTokens) = modelCatalog.pricingAt(
                modelIndex
            );
            lookups.modelIndex = modelIndex;
        }
        bytes32 modelKey = lookups.modelKey;
        if (lookups.eligibleWorker != job.worker || lookups.eligibleModelKey != modelKey) {
            if (!workerRegistry.canServe(job.worker, modelKey)) revert WorkerNotEligible(jobId, job.worker, modelKey);
            lookups.eligibleWorker = job.worker;
            lookups.eligibleModelKey = modelKey;
        }
        uint64 finalTokenAt = receipt.finalTokenAt;
        // A final token before the job was opened would put the dispute window in the past and make a
        // fraudulent proof undisputable, so the receipt's time is bounded on both sides (the deadline was set
        // to open time + jobTimeout, so the subtraction cannot underflow; `||` stops before any overflow).
        if (
            finalTokenAt > deadline ||
            finalTokenAt > block.timestamp + MAX_CLOCK_SKEW ||
            finalTokenAt + MAX_CLOCK_SKEW < deadline - jobTimeout
        ) {
            revert ReceiptTimeInvalid(jobId, finalTokenAt, deadline);
        }

        uint256 charged = Pricing.price(
            lookups.creditsPerRequest,
            lookups.creditsPer1kTokens,
            receipt.completionTokens
        );
        job.charged = charged < job.creditsLocked ? charged : job.creditsLocked;
    }

    function _emitSettled(Receipt calldata receipt, SettledJob memory job, Payout memory payout) private {
        emit JobSettled(
            receipt.jobId,
            job.wallet,
            job.worker,
            receipt.outputHash,
            receipt.promptTokens,
            receipt.completionTokens,
            receipt.finalTokenAt,
            job.charged,
            job.refunded,
            payout.workerAmount,
            payout.feeAmount,
            job.balanceAfter
        );
    }

    /// @dev Returns an open job's lock to its wallet and records `status` (failed or refunded).
    function _release(
        bytes32 jobId,
        JobStatus status
    ) private returns (address wallet, uint256 credits, uint256 balanceAfter) {
        uint256 record = _jobs[jobId];
        JobStatus current;
        (wallet, credits, , , current) = record.unpack();
        if (current != JobStatus.Open) revert JobNotInStatus(jobId, current, JobStatus.Open);
        Account storage account = _accounts[wallet];
        // The job's lock is part of account.locked; available + credits stays below total deposits.
        unchecked {
            balanceAfter = account.available + credits;
            account.available = uint96(balanceAfter);
            account.locked -= uint96(credits);
        }
        _jobs[jobId] = record.withStatus(status);
    }

    /// @dev Loads a committed job, requiring `expected` status and that `settlement` matches its commitment.
    function _requireCommitted(
        bytes32 jobId,
        Settlement calldata settlement,
        JobStatus expected
    ) private view returns (uint256 record) {
        record = _jobs[jobId];
        JobStatus status = record.statusOf();
        if (status != expected) revert JobNotInStatus(jobId, status, expected);
        if (!record.matches(settlement)) revert SettlementMismatch(jobId);
    }
}
