// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {DelayedAccessControl, RoleGrant} from "./access/DelayedAccessControl.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
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
import {ProtocolTime} from "./libraries/ProtocolTime.sol";
import {SpendWindow} from "./libraries/SpendWindow.sol";
import {WorkerBond} from "./libraries/WorkerBond.sol";
import {EscrowStorage} from "./escrow/EscrowStorage.sol";
import {EscrowModule} from "./escrow/EscrowModule.sol";

/// @title CreditEscrow
/// @notice Prepaid credits per wallet, locked per job and settled against workers' EIP-712 receipts.
/// @dev Gas shape: one storage word per job (`JobRecord`), one per wallet (`Account`), one per capped wallet
/// (`SpendWindow`), and one hot configuration word (fee schedule, pause, credits outstanding) that settlement
/// reads and writes once. Settlement pushes the worker's share and the fee to the treasury in its own transaction;
/// a batch pays each worker once and the treasury once.
/// Size: this contract keeps the hot paths (locks and settlement) and the views; the cold paths (credits, refunds,
/// disputes, reserve, admin) live in an `EscrowModule` it deploys in its constructor and runs by DELEGATECALL on
/// the same storage (`EscrowStorage`, the first base), after checking the caller's role here.
contract CreditEscrow is EscrowStorage, ICreditEscrow, DelayedAccessControl {
    using SafeERC20 for IERC20;
    using JobRecord for uint256;
    using SpendWindow for uint256;
    using WorkerBond for uint256;

    /// @notice Opens, settles and fails jobs (the API gateway).
    bytes32 public constant GATEWAY_ROLE = keccak256("GATEWAY_ROLE");
    /// @notice Marks and closes disputes (the dispute contract).
    bytes32 public constant DISPUTE_ROLE = keccak256("DISPUTE_ROLE");
    /// @notice Pauses and unpauses.
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    /// @notice Stablecoin units per credit (1 stablecoin of 6 decimals = 100 credits).
    uint256 public constant UNIT_PER_CREDIT = 10_000;
    /// @notice Decimals the stablecoin must have.
    uint8 public constant STABLECOIN_DECIMALS = 6;
    /// @notice Smallest deposit: 1 stablecoin.
    uint256 public constant MIN_DEPOSIT = 1_000_000;
    /// @notice Basis points in 100%.
    uint16 public constant BPS = 10_000;
    /// @notice Highest protocol fee: 20%.
    uint16 public constant MAX_FEE_BPS = 2_000;
    /// @notice How far a receipt's final-token time may lie after the settlement block or before the request's
    /// acceptance, and a request's acceptance after the block that locks it.
    uint64 public constant MAX_CLOCK_SKEW = ProtocolTime.MAX_CLOCK_SKEW;
    /// @notice How long after its acceptance a request's lock may still be taken.
    uint64 public constant MAX_LOCK_DELAY = ProtocolTime.MAX_LOCK_DELAY;
    /// @notice How long after the deadline (or a pause's end) an in-time receipt may still be settled.
    uint64 public constant SETTLE_GRACE = ProtocolTime.SETTLE_GRACE;
    /// @notice Delay of a scheduled fee or treasury change.
    uint64 public constant CONFIG_CHANGE_DELAY = ProtocolTime.CONFIG_CHANGE_DELAY;
    /// @notice EIP-712 domain name receipts are signed under.
    string public constant RECEIPT_DOMAIN_NAME = "CreditEscrow";
    /// @notice EIP-712 domain version receipts are signed under.
    string public constant RECEIPT_DOMAIN_VERSION = "1";
    /// @notice Owed restitution entries paid by one `fundReserve` (more with `payOwedRestitution`).
    uint256 public constant RESTITUTIONS_PER_FUNDING = 16;

    /// @notice The stablecoin credits are bought with.
    IERC20 public immutable stablecoin;
    /// @notice Resolves API key hashes to wallets.
    IApiKeyRegistry public immutable apiKeyRegistry;
    /// @notice Model prices and context windows.
    IModelCatalog public immutable modelCatalog;
    /// @notice Worker eligibility, and the source of the dispute window.
    IWorkerRegistry public immutable workerRegistry;
    /// @inheritdoc ICreditEscrow
    uint64 public immutable jobTimeout;
    /// @inheritdoc ICreditEscrow
    uint64 public immutable disputeWindow;
    /// @dev The EIP-712 domain separator at deployment, and the chain it was computed for (a fork recomputes it).
    bytes32 private immutable _cachedDomainSeparator;
    uint256 private immutable _cachedChainId;
    /// @dev The treasury at deployment (in effect until `scheduleTreasury` moves it).
    address private immutable _firstTreasury;
    /// @dev The cold-path module this escrow deployed (runs only by this escrow's DELEGATECALL).
    address private immutable _module;
    /// @dev How long a settled charge stays at risk against the worker's bond (`WorkerRegistry.slashExposure`).
    uint64 private immutable _exposure;

    /// @dev The facts of one settlement while it is booked.
    struct SettledJob {
        address wallet;
        address worker;
        uint256 creditsLocked;
        uint256 charged;
        uint256 refunded;
        uint256 balanceAfter;
        uint256 feeBps;
        uint32 deadline;
        uint16 modelIndex;
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

    /// @dev What a batch owes: per-worker totals (batches are small, so a linear scan beats a storage-backed map),
    /// the fees and the charges.
    struct BatchTotals {
        address[] workers;
        uint256[] amounts;
        uint256[] bondWords;
        uint256[] rooms;
        uint256 workerCount;
        uint256 feeTotal;
        uint256 chargedTotal;
    }

    /// @dev The last key and model answers of an opening transaction (index 0 = none yet).
    struct OpenLookups {
        bytes32 keyHash;
        address wallet;
        IApiKeyRegistry.KeyStatus keyStatus;
        bytes32 modelKey;
        uint16 modelIndex;
        Tier tier;
        bool retired;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        uint32 contextWindow;
        // The last request that passed `_check` (size zero: none) and the credits it locks.
        bytes32 checkedKeyHash;
        bytes32 checkedModelKey;
        uint256 checkedMaxTokens;
        uint256 credits;
        uint256 openRecord;
        // JobOpened's data: modelKey, tier, creditsLocked, balanceAfter and deadline (both written per job).
        uint256[5] openedData;
    }

    /// @dev `Account` packs into one slot, from the low bits: available (96), locked (96), lastTopUpAt (64, its top
    /// bit `SPEND_CAPPED`).
    uint256 private constant ACCOUNT_LOCKED_SHIFT = 96;
    uint256 private constant ACCOUNT_TOP_UP_SHIFT = 192;

    /// @dev One wallet's account (and spend word, when opening) as a transaction has changed it so far: a batch
    /// of one wallet's jobs reads it once and stores it once (`_flushAccount`), not once per job.
    struct HeldAccount {
        address wallet;
        uint256 available;
        uint256 locked;
        uint256 lastTopUpAt;
        uint256 spendWord;
        bool spendChanged;
    }

    /// @param roles Roles held from deployment on, granted at once: the default admin first (two-step transfer
    /// after `ProtocolTime.ADMIN_TRANSFER_DELAY`), then the gateways, the pauser and the dispute manager; later grants wait
    /// `ROLE_GRANT_DELAY`.
    /// @param stablecoin_ The stablecoin (6 decimals).
    /// @param apiKeyRegistry_ The API key registry.
    /// @param modelCatalog_ The model catalog (the worker registry must check models against the same one).
    /// @param workerRegistry_ The worker registry; the dispute window is read from it.
    /// @param treasury_ Receives the protocol fees, in each settlement transaction.
    /// @param feeBps_ Protocol fee, basis points of each charge (at most `MAX_FEE_BPS`).
    /// @param jobTimeout_ Seconds after opening before the gateway may refund a job (anyone after the grace).
    constructor(
        RoleGrant[] memory roles,
        IERC20 stablecoin_,
        IApiKeyRegistry apiKeyRegistry_,
        IModelCatalog modelCatalog_,
        IWorkerRegistry workerRegistry_,
        address treasury_,
        uint16 feeBps_,
        uint64 jobTimeout_
    ) DelayedAccessControl(roles) {
        if (
            address(stablecoin_) == address(0) ||
            address(apiKeyRegistry_) == address(0) ||
            address(modelCatalog_) == address(0) ||
            address(workerRegistry_) == address(0) ||
            treasury_ == address(0)
        ) revert ZeroAddress();
        uint8 decimals = IERC20Metadata(address(stablecoin_)).decimals();
        if (decimals != STABLECOIN_DECIMALS) revert StablecoinDecimalsInvalid(decimals);
        if (feeBps_ > MAX_FEE_BPS) revert FeeTooHigh(feeBps_, MAX_FEE_BPS);
        if (jobTimeout_ == 0 || jobTimeout_ > ProtocolTime.MAX_JOB_TIMEOUT) {
            revert WindowOutOfRange(jobTimeout_, 1, ProtocolTime.MAX_JOB_TIMEOUT);
        }
        address registryCatalog = address(workerRegistry_.modelCatalog());
        if (registryCatalog != address(modelCatalog_)) revert CatalogMismatch(address(modelCatalog_), registryCatalog);
        stablecoin = stablecoin_;
        apiKeyRegistry = apiKeyRegistry_;
        modelCatalog = modelCatalog_;
        workerRegistry = workerRegistry_;
        jobTimeout = jobTimeout_;
        // One source for the windows: the registry validated it (at least the spec's 60 s) and sized the
        // unbonding delay from it.
        disputeWindow = workerRegistry_.disputeWindow();
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
        _config = Config({
            feeBps: feeBps_,
            nextFeeBps: feeBps_,
            feeSwitchAt: 0,
            paused: false,
            pausedAt: 0,
            unpausedAt: 0,
            creditsOutstanding: 0,
            treasurySwitchAt: 0,
            treasuryMoved: false
        });
        _firstTreasury = treasury_;
        uint64 exposure = workerRegistry_.slashExposure();
        _exposure = exposure;
        _module = address(new EscrowModule(stablecoin_, jobTimeout_, disputeWindow, treasury_, exposure));
    }

    // ---------------------------------------------------------------- credits

    /// @inheritdoc ICreditEscrow
    function deposit(uint256 amount) external {
        (amount);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    /// @dev A failed permit is ignored (it may have been front-run); the transfer then needs the allowance.
    function depositWithPermit(uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external {
        (amount, deadline, v, r, s);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function withdraw(uint256 credits) external {
        (credits);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function fundReserve(uint256 amount) external {
        (amount);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function payOwedRestitution(uint256 maxCount) external {
        (maxCount);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function setSpendingCap(uint256 creditsPerHour) external {
        (creditsPerHour);
        _forward();
    }

    // ---------------------------------------------------------------- jobs

    /// @inheritdoc ICreditEscrow
    function openJob(
        bytes32 jobId,
        bytes32 keyHash,
        bytes32 modelKey,
        uint32 maxTokens
    ) external onlyRole(GATEWAY_ROLE) {
        if (_config.paused) revert EnforcedPause();
        // Decoded (and so validated) by the dispatcher; read below through `request`.
        (jobId, keyHash, modelKey, maxTokens);
        // The four static arguments are laid out in calldata exactly as the first four words of one `OpenRequest`,
        // right after the selector: view them as one (its `acceptedAt` is never read here: the block's time stands
        // for it), so the single and the batch path share `_open` without a memory copy.
        OpenRequest calldata request;
        assembly ("memory-safe") {
            request := 4
        }
        OpenLookups memory lookups;
        HeldAccount memory held;
        _open(request, block.timestamp, lookups, held, true);
        _flushAccount(held);
    }

    /// @inheritdoc ICreditEscrow
    function openJobBatch(OpenRequest[] calldata requests) external onlyRole(GATEWAY_ROLE) returns (uint256 opened) {
        if (_config.paused) revert EnforcedPause();
        opened = _openBatch(requests);
    }

    /// @inheritdoc ICreditEscrow
    function openAndSettleBatch(
        OpenRequest[] calldata requests,
        Receipt[] calldata receipts,
        bytes[] calldata signatures
    ) external onlyRole(GATEWAY_ROLE) returns (uint256 opened, uint256 settled) {
        if (_config.paused) revert EnforcedPause();
        opened = _openBatch(requests);
        // Read after the locks: the settlements see every state change they made.
        settled = _settleBatch(receipts, signatures, _config);
    }

    /// @dev The body of `openJobBatch` (the caller checked the role and the pause).
    function _openBatch(OpenRequest[] calldata requests) private returns (uint256 opened) {
        uint256 count = requests.length;
        if (count == 0) revert BatchInvalid();
        // Registry and catalog answers cannot change within this transaction, so repeats are served from memory;
        // so is the wallet's account and spend word, written once at the end (or when the batch moves on to
        // another wallet).
        OpenLookups memory lookups;
        HeldAccount memory held;
        // A batch is far shorter than 2^256: the counters cannot overflow.
        for (uint256 i; i < count; ) {
            OpenRequest calldata request = _requestAt(requests, i);
            // Read raw: a dirty word is far in the future, so the bound refuses it without decoding.
            OpenSkipReason reason = _open(request, uint256(_word(request, 4)), lookups, held, false);
            unchecked {
                if (reason == OpenSkipReason.None) ++opened;
                else emit JobOpenSkipped(request.jobId, request.keyHash, reason);
                ++i;
            }
        }
        _flushAccount(held);
    }

    /// @inheritdoc ICreditEscrow
    function settle(Receipt calldata receipt, bytes calldata signature) external onlyRole(GATEWAY_ROLE) {
        Config memory config = _config;
        if (config.paused) revert EnforcedPause();
        Lookups memory lookups;
        SettledJob memory job;
        HeldAccount memory held;
        _verifyReceipt(receipt, signature, config, lookups, job, true);
        (, uint256 bondWord) = _tryRisk(_bonds[job.worker], job, true);
        _bonds[job.worker] = bondWord;
        (uint256 workerAmount, uint256 feeAmount) = _book(receipt, job, held);
        _flushAccount(held);
        _debitOutstanding(config, job.charged);
        // Every state change (a due treasury move included) before the transfers.
        address treasury_ = _treasuryInEffect(_firstTreasury);
        _pay(job.worker, workerAmount);
        _pay(treasury_, feeAmount);
    }

    /// @inheritdoc ICreditEscrow
    function settleBatch(
        Receipt[] calldata receipts,
        bytes[] calldata signatures
    ) external onlyRole(GATEWAY_ROLE) returns (uint256 settled) {
        Config memory config = _config;
        if (config.paused) revert EnforcedPause();
        settled = _settleBatch(receipts, signatures, config);
    }

    /// @dev The body of `settleBatch` (the caller checked the role and the pause; `config` is `_config` as of now).
    function _settleBatch(
        Receipt[] calldata receipts,
        bytes[] calldata signatures,
        Config memory config
    ) private returns (uint256 settled) {
        // The length is read from the stack each time: one more local would not fit on it.
        if (receipts.length == 0 || receipts.length != signatures.length) revert BatchInvalid();

        // Catalog and registry answers cannot change within this transaction, so repeats are served from memory;
        // one memory `job` serves every receipt in turn, and each wallet's account is stored once.
        Lookups memory lookups;
        SettledJob memory job;
        HeldAccount memory held;
        BatchTotals memory totals = BatchTotals({
            workers: new address[](receipts.length),
            amounts: new uint256[](receipts.length),
            bondWords: new uint256[](receipts.length),
            rooms: new uint256[](receipts.length),
            workerCount: 0,
            feeTotal: 0,
            chargedTotal: 0
        });
        // A batch is far shorter than 2^256: the counters cannot overflow.
        for (uint256 i; i < receipts.length; ) {
            // A malformed element is skipped, never decoded (decoding would revert the whole batch).
            Receipt calldata receipt = receipts[i];
            (bytes calldata signature, bool wellFormed) = _signatureAt(signatures, i);
            bool booked;
            if (wellFormed && ReceiptHash.isCanonical(receipt)) {
                booked = _settleBatchItem(receipt, signature, config, lookups, job, held, totals);
            } else {
                emit SettlementSkipped(receipt.jobId, SettleSkipReason.ReceiptMalformed);
            }
            unchecked {
                if (booked) ++settled;
                ++i;
            }
        }
        _flushAccount(held);
        _storeBonds(totals);

        if (settled == 0) return 0;
        _debitOutstanding(config, totals.chargedTotal);
        // Every state change (a due treasury move included) before the transfers.
        address treasury_ = _treasuryInEffect(_firstTreasury);
        for (uint256 i; i < totals.workerCount; ++i) {
            _pay(totals.workers[i], totals.amounts[i]);
        }
        // One transfer for the batch's fees: each job's share is in its JobSettled.feeAmount.
        _pay(treasury_, totals.feeTotal);
    }

    /// @inheritdoc ICreditEscrow
    function failJob(bytes32 jobId) external onlyRole(GATEWAY_ROLE) {
        (jobId);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function refund(bytes32 jobId) external {
        _delegate(abi.encodeCall(EscrowModule.refund, (jobId, hasRole(GATEWAY_ROLE, msg.sender))));
    }

    /// @inheritdoc ICreditEscrow
    function claim(address to) external {
        (to);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function sweepSurplus(address to) external onlyRole(DEFAULT_ADMIN_ROLE) {
        (to);
        _forward();
    }

    // ---------------------------------------------------------------- disputes

    /// @inheritdoc ICreditEscrow
    function markDisputed(bytes32 jobId, Settlement calldata settlement) external onlyRole(DISPUTE_ROLE) {
        (jobId, settlement);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function closeDispute(
        bytes32 jobId,
        Settlement calldata settlement,
        bool upheld
    ) external onlyRole(DISPUTE_ROLE) returns (uint256 creditsRestored) {
        (jobId, settlement, upheld, creditsRestored);
        _forward();
    }

    // ---------------------------------------------------------------- admin

    /// @inheritdoc ICreditEscrow
    function scheduleTreasury(address treasury_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        (treasury_);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function scheduleProtocolFee(uint16 feeBps_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        (feeBps_);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function pause() external onlyRole(PAUSER_ROLE) {
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function unpause() external onlyRole(PAUSER_ROLE) {
        _forward();
    }

    // ---------------------------------------------------------------- views

    /// @inheritdoc ICreditEscrow
    /// @dev The flag lives in `_config`, next to the fee schedule, so the hot paths read both with one SLOAD.
    function paused() external view returns (bool) {
        return _config.paused;
    }

    /// @inheritdoc ICreditEscrow
    function accountOf(address wallet) external view returns (Account memory) {
        Account memory account = _accounts[wallet];
        account.lastTopUpAt &= ~SPEND_CAPPED;
        return account;
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
    function reserve() external view returns (uint256) {
        return _reserve;
    }

    /// @notice Where protocol fees go now.
    function treasury() external view returns (address) {
        Config memory config = _config;
        if (config.treasurySwitchAt != 0 && block.timestamp >= config.treasurySwitchAt) return _nextTreasury;
        return config.treasuryMoved ? _movedTreasury : _firstTreasury;
    }

    /// @notice The protocol fee a job opened now pays, basis points.
    function feeBps() external view returns (uint16) {
        return _feeAt(_config, block.timestamp);
    }

    /// @inheritdoc ICreditEscrow
    function ledger() external view returns (Ledger memory) {
        Config memory config = _config;
        return
            Ledger({
                creditsOutstanding: config.creditsOutstanding,
                reserve: _reserve,
                claimableTotal: _claimableTotal,
                owedCredits: _owedCredits,
                owedEntries: _owedQueue.length - _owedHead,
                surplus: _surplus(stablecoin),
                bonds: _bondTotal
            });
    }

    /// @inheritdoc ICreditEscrow
    function bondOf(address worker) external view returns (uint256 bond, uint256 atRisk, uint256 disputesPending) {
        uint256 word = _bonds[worker];
        return (word.bondOf(), word.atRisk(block.timestamp, _exposure), _disputesPending[worker]);
    }

    /// @inheritdoc ICreditEscrow
    function postBond(address worker, uint256 amount) external {
        (worker, amount);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function withdrawBond(uint256 amount) external {
        (amount);
        _forward();
    }

    /// @inheritdoc ICreditEscrow
    function claimable(address account) external view returns (uint256) {
        return _claimable[account];
    }

    /// @inheritdoc ICreditEscrow
    function spendingOf(address wallet) external view returns (uint256 cap, uint256 lockedInWindow, uint64 nextRoomAt) {
        uint256 word = _spend[wallet];
        cap = word.capOf();
        lockedInWindow = cap == 0 ? 0 : word.lockedAt(block.timestamp);
        if (cap != 0) nextRoomAt = word.nextRoomAt(block.timestamp);
    }

    /// @notice The EIP-712 domain separator receipts are signed under:
    /// `{name: "CreditEscrow", version: "1", chainId, verifyingContract: this}`.
    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // ---------------------------------------------------------------- internals

    /// @dev Runs this call's calldata in the module (same selector) on this contract's storage and returns or
    /// reverts with its result.
    function _forward() private {
        address module = _module;
        // Never returns to Solidity: the scratch memory written here is never read by compiled code.
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), module, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) {
                revert(0, returndatasize())
            }
            return(0, returndatasize())
        }
    }

    /// @dev Runs `data` in the module on this contract's storage and returns or reverts with its result.
    function _delegate(bytes memory data) private {
        address module = _module;
        assembly {
            let ok := delegatecall(gas(), module, add(data, 0x20), mload(data), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) {
                revert(0, returndatasize())
            }
            return(0, returndatasize())
        }
    }

    /// @dev OpenZeppelin's EIP712 without its ERC-5267 strings (contract size); same separator and digest.
    function _domainSeparatorV4() private view returns (bytes32) {
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _buildDomainSeparator();
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                    keccak256(bytes(RECEIPT_DOMAIN_NAME)),
                    keccak256(bytes(RECEIPT_DOMAIN_VERSION)),
                    block.chainid,
                    address(this)
                )
            );
    }

    function _hashTypedDataV4(bytes32 structHash) private view returns (bytes32) {
        return MessageHashUtils.toTypedDataHash(_domainSeparatorV4(), structHash);
    }

    /// @dev A request's job id, the storage slot of its `_jobs` entry (computed once for opening's check and
    /// write) and the record there.
    function _loadJob(OpenRequest calldata request) private view returns (bytes32 jobId, uint256 slot, uint256 record) {
        jobId = request.jobId;
        assembly ("memory-safe") {
            mstore(0, jobId)
            mstore(0x20, _jobs.slot)
            slot := keccak256(0, 0x40)
            record := sload(slot)
        }
    }

    /// @dev Word `index` of a request as it stands in calldata (not decoded).
    function _word(OpenRequest calldata request, uint256 index) private pure returns (bytes32 word) {
        assembly ("memory-safe") {
            word := calldataload(add(request, shl(5, index)))
        }
    }

    /// @dev `requests[i]` without the bounds check: the batch loop keeps `i` below the length.
    function _requestAt(
        OpenRequest[] calldata requests,
        uint256 i
    ) private pure returns (OpenRequest calldata request) {
        assembly ("memory-safe") {
            request := add(requests.offset, mul(i, 0xa0))
        }
    }

    /// @dev `signatures[i]` without the decoder's checks, and whether it lies within the calldata (`i` is below the
    /// length): a malformed one is reported, not reverted on.
    function _signatureAt(
        bytes[] calldata signatures,
        uint256 i
    ) private pure returns (bytes calldata signature, bool wellFormed) {
        uint256 start;
        uint256 length;
        assembly ("memory-safe") {
            let relative := calldataload(add(signatures.offset, shl(5, i)))
            wellFormed := lt(relative, 0x100000000)
            start := add(add(signatures.offset, relative), 0x20)
            if wellFormed {
                length := calldataload(sub(start, 0x20))
                wellFormed := and(lt(length, 0x100000000), iszero(gt(add(start, length), calldatasize())))
            }
            if iszero(wellFormed) {
                start := 0
                length := 0
            }
            signature.offset := start
            signature.length := length
        }
    }

    function _storeWord(uint256 slot, uint256 word) private {
        assembly ("memory-safe") {
            sstore(slot, word)
        }
    }

    /// @dev Opens one job accepted at `acceptedAt` (its deadline runs from there), or says why it cannot (reverting
    /// instead when `strict`). The wallet's account and spend word change in `held` only; `_flushAccount` stores
    /// them.
    function _open(
        OpenRequest calldata request,
        uint256 acceptedAt,
        OpenLookups memory lookups,
        HeldAccount memory held,
        bool strict
    ) private returns (OpenSkipReason) {
        (bytes32 jobId, uint256 slot, uint256 record) = _loadJob(request);
        if (record != 0) {
            if (strict) revert JobAlreadyExists(jobId);
            return OpenSkipReason.JobExists;
        }
        // A lock that lands late still opens its job on the request's own clock, within the bound; a back-dated or
        // post-dated one is refused (never by `openJob`, which passes the block's time). The post-date bound comes
        // first, so a dirty word cannot overflow the sum, and keeps the deadline within a uint32 until 2106.
        uint256 deadline;
        // acceptedAt is at most the block's time plus the skew once the first bound held: neither sum overflows.
        unchecked {
            if (acceptedAt > block.timestamp + MAX_CLOCK_SKEW || acceptedAt + MAX_LOCK_DELAY < block.timestamp) {
                return OpenSkipReason.AcceptedAtInvalid;
            }
            deadline = acceptedAt + jobTimeout;
        }
        // A batch's requests mostly repeat the key, model and size of the last one that passed `_check`: registry
        // and catalog answers cannot change within a transaction, so only the wallet's balance and cap remain.
        // The request's words are compared raw: a dirty `maxTokens` word never equals the clean one checked, so it
        // goes to `_check`, whose decoding rejects it. A checked size is never zero: zero means nothing checked.
        if (
            lookups.checkedKeyHash != _word(request, 1) ||
            lookups.checkedModelKey != _word(request, 2) ||
            lookups.checkedMaxTokens != uint256(_word(request, 3)) ||
            lookups.checkedMaxTokens == 0
        ) {
            OpenSkipReason reason = _check(request, lookups, strict);
            if (reason != OpenSkipReason.None) return reason;
            _prepareOpening(lookups);
        }
        // Moves the credits from available to locked in `held`, within the wallet's spending cap.
        address wallet = lookups.wallet;
        if (held.wallet != wallet) {
            _hold(held, wallet);
            // Only a capped wallet's spend word is read (SPEND_CAPPED): an uncapped one's is never changed here.
            held.spendWord = (held.lastTopUpAt & SPEND_CAPPED) != 0 ? _spend[wallet] : 0;
        }
        uint256 credits = lookups.credits;
        uint256 available = held.available;
        if (available < credits) {
            if (strict) revert InsufficientCredits(wallet, available, credits);
            return OpenSkipReason.InsufficientCredits;
        }
        if (held.spendWord != 0 && !_withinCap(held, wallet, credits, strict)) {
            return OpenSkipReason.SpendingCapExceeded;
        }
        // Checked just above; locked + credits <= total credits ever deposited, far below 2^96.
        unchecked {
            available -= credits;
            held.available = available;
            held.locked += credits;
        }
        // The record of every job of the checked request (same wallet, lock and price version), with its deadline.
        _storeWord(slot, lookups.openRecord.withDeadline(uint64(deadline)));
        _emitOpened(jobId, lookups, available, deadline);
        return OpenSkipReason.None;
    }

    /// @dev Checks a request's key, model and size, loading the registry's and catalog's answers into `lookups`
    /// (unless they are there already); prices the lock. Only a request that passes is remembered as checked.
    function _check(
        OpenRequest calldata request,
        OpenLookups memory lookups,
        bool strict
    ) private view returns (OpenSkipReason) {
        lookups.checkedMaxTokens = 0;
        // A size word that is not a zero-padded uint32 is skipped, not decoded (decoding would revert the batch).
        if (uint256(_word(request, 3)) > type(uint32).max) {
            if (strict) revert MaxTokensInvalid(0);
            return OpenSkipReason.RequestMalformed;
        }
        bytes32 keyHash = request.keyHash;
        if (lookups.keyHash != keyHash || lookups.wallet == address(0)) {
            (lookups.wallet, lookups.keyStatus) = apiKeyRegistry.statusOfKey(keyHash);
            lookups.keyHash = keyHash;
        }
        if (lookups.keyStatus != IApiKeyRegistry.KeyStatus.Active) {
            if (strict) revert IApiKeyRegistry.KeyNotActive(keyHash, lookups.keyStatus);
            return OpenSkipReason.KeyNotActive;
        }
        OpenSkipReason reason = _requireListed(request.modelKey, lookups, strict);
        if (reason != OpenSkipReason.None) return reason;
        uint32 maxTokens = request.maxTokens;
        // No job locks more than the price of the model's whole context window.
        uint256 credits = Pricing.price(lookups.creditsPerRequest, lookups.creditsPer1kTokens, maxTokens);
        if (maxTokens == 0 || maxTokens > lookups.contextWindow || credits > JobRecord.MAX_CREDITS_LOCKED) {
            if (strict) revert MaxTokensInvalid(maxTokens);
            return OpenSkipReason.MaxTokensInvalid;
        }
        lookups.credits = credits;
        lookups.checkedKeyHash = keyHash;
        lookups.checkedModelKey = request.modelKey;
        lookups.checkedMaxTokens = maxTokens;
        return OpenSkipReason.None;
    }

    /// @dev Loads the model's listing into `lookups` (unless it is there already) and checks it is listed.
    function _requireListed(
        bytes32 modelKey,
        OpenLookups memory lookups,
        bool strict
    ) private view returns (OpenSkipReason) {
        if (lookups.modelKey != modelKey || lookups.modelIndex == 0) {
            (
                lookups.modelIndex,
                lookups.tier,
                lookups.retired,
                lookups.creditsPerRequest,
                lookups.creditsPer1kTokens,
                lookups.contextWindow
            ) = modelCatalog.listing(modelKey);
            lookups.modelKey = modelKey;
        }
        if (lookups.modelIndex == 0) {
            if (strict) revert IModelCatalog.ModelUnknown(modelKey);
            return OpenSkipReason.ModelNotListed;
        }
        if (lookups.retired) {
            if (strict) revert IModelCatalog.ModelIsRetired(modelKey);
            return OpenSkipReason.ModelNotListed;
        }
        return OpenSkipReason.None;
    }

    /// @dev Records a lock of `credits` in the capped wallet's spend word in `held`, if it fits under the cap.
    function _withinCap(
        HeldAccount memory held,
        address wallet,
        uint256 credits,
        bool strict
    ) private view returns (bool) {
        uint256 word = held.spendWord;
        (bool fits, uint256 updated, uint256 lockedInWindow) = word.tryLock(credits, block.timestamp);
        if (!fits) {
            if (strict) {
                revert SpendingCapExceeded(
                    wallet,
                    word.capOf(),
                    lockedInWindow,
                    credits,
                    word.roomAt(credits, block.timestamp)
                );
            }
            return false;
        }
        if (updated != word) {
            held.spendWord = updated;
            held.spendChanged = true;
        }
        return true;
    }

    /// @dev Makes `held` hold `wallet`'s account, storing the one it held before.
    function _hold(HeldAccount memory held, address wallet) private {
        _flushAccount(held);
        Account storage account = _accounts[wallet];
        uint256 word;
        assembly ("memory-safe") {
            word := sload(account.slot)
        }
        held.wallet = wallet;
        held.available = uint96(word);
        held.locked = uint96(word >> ACCOUNT_LOCKED_SHIFT);
        held.lastTopUpAt = word >> ACCOUNT_TOP_UP_SHIFT;
        held.spendChanged = false;
    }

    /// @dev Stores the account (and the spend word, if it changed) `held` holds, if any.
    function _flushAccount(HeldAccount memory held) private {
        address wallet = held.wallet;
        if (wallet == address(0)) return;
        Account storage account = _accounts[wallet];
        // Both stay below the wallet's deposits, far below 2^96. One write of the whole slot.
        uint256 word = (held.lastTopUpAt << ACCOUNT_TOP_UP_SHIFT) |
            (uint256(uint96(held.locked)) << ACCOUNT_LOCKED_SHIFT) |
            uint256(uint96(held.available));
        assembly ("memory-safe") {
            sstore(account.slot, word)
        }
        if (held.spendChanged) _spend[wallet] = held.spendWord;
    }

    /// @dev What every job of the request just checked shares: its record but the deadline (same wallet, lock and
    /// price version) and `JobOpened`'s data words but the balance and the deadline.
    function _prepareOpening(OpenLookups memory lookups) private pure {
        uint256 credits = lookups.credits;
        lookups.openRecord = JobRecord.pack(lookups.wallet, credits, 0, lookups.modelIndex, JobStatus.Open);
        uint256[5] memory data = lookups.openedData;
        data[0] = uint256(lookups.modelKey);
        data[1] = uint256(lookups.tier);
        data[2] = credits;
    }

    /// @dev `JobOpened`, encoded by hand: the batch emits one per job, from the data words `_prepareOpening` filled,
    /// the wallet's balance after this job and its deadline.
    function _emitOpened(bytes32 jobId, OpenLookups memory lookups, uint256 balanceAfter, uint256 deadline) private {
        bytes32 topic = JobOpened.selector;
        address wallet = lookups.wallet;
        bytes32 keyHash = lookups.keyHash;
        uint256[5] memory data = lookups.openedData;
        assembly ("memory-safe") {
            mstore(add(data, 0x60), balanceAfter)
            mstore(add(data, 0x80), deadline)
            log4(data, 0xa0, topic, jobId, wallet, keyHash)
        }
    }

    /// @dev Books a verified receipt: refunds the unused lock (in `held`), commits the settlement; returns what to
    /// pay.
    function _book(
        Receipt calldata receipt,
        SettledJob memory job,
        HeldAccount memory held
    ) private returns (uint256 workerAmount, uint256 feeAmount) {
        if (held.wallet != job.wallet) _hold(held, job.wallet);
        // charged <= creditsLocked (capped in _verifyReceipt) and the job's lock is part of the wallet's locked
        // credits; available + refunded stays below the wallet's deposits, far below 2^96.
        unchecked {
            job.refunded = job.creditsLocked - job.charged;
            job.balanceAfter = held.available + job.refunded;
            held.available = job.balanceAfter;
            held.locked -= job.creditsLocked;
        }

        // charged < 2^40 (it is capped by the lock), so the commitment's uint64 holds it.
        _jobs[receipt.jobId] = JobRecord.commitment(
            JobRecord.hashSettlement(
                job.wallet,
                job.worker,
                receipt.outputHash,
                uint64(job.charged),
                receipt.finalTokenAt
            ),
            uint32(block.timestamp),
            JobStatus.Settled
        );

        uint256 units = job.charged * UNIT_PER_CREDIT;
        feeAmount = (units * job.feeBps) / BPS;
        // feeBps <= MAX_FEE_BPS < BPS, so feeAmount <= units.
        unchecked {
            workerAmount = units - feeAmount;
        }
        _emitSettled(receipt, job, workerAmount, feeAmount);
    }

    /// @dev Settles one receipt of a batch into `totals`, or skips it with `SettlementSkipped`.
    function _settleBatchItem(
        Receipt calldata receipt,
        bytes calldata signature,
        Config memory config,
        Lookups memory lookups,
        SettledJob memory job,
        HeldAccount memory held,
        BatchTotals memory totals
    ) private returns (bool) {
        SettleSkipReason reason = _verifyReceipt(receipt, signature, config, lookups, job, false);
        if (reason != SettleSkipReason.None) {
            emit SettlementSkipped(receipt.jobId, reason);
            return false;
        }
        uint256 slot = _workerSlot(totals, job);
        if (slot == type(uint256).max) {
            emit SettlementSkipped(receipt.jobId, SettleSkipReason.BondInsufficient);
            return false;
        }
        (uint256 workerAmount, uint256 feeAmount) = _book(receipt, job, held);
        totals.feeTotal += feeAmount;
        totals.chargedTotal += job.charged;
        totals.amounts[slot] += workerAmount;
        return true;
    }

    /// @dev The job's worker's place in `totals` (added, with its bond word rolled to the current slot and the room
    /// left in it, on its first job in the batch), with the job's charge counted at risk in that word;
    /// `type(uint256).max` when the bond cannot cover it.
    function _workerSlot(BatchTotals memory totals, SettledJob memory job) private view returns (uint256 slot) {
        uint256 workerCount = totals.workerCount;
        address worker = job.worker;
        slot = _indexOf(totals.workers, workerCount, worker);
        if (slot == workerCount) {
            (uint256 word, uint256 bondRoom) = _bonds[worker].rolled(block.timestamp, _exposure);
            totals.workers[slot] = worker;
            totals.bondWords[slot] = word;
            totals.rooms[slot] = bondRoom;
            // At most `count` distinct workers: the arrays hold them.
            unchecked {
                totals.workerCount = workerCount + 1;
            }
        }
        uint256 charge = job.charged * UNIT_PER_CREDIT;
        uint256 room = totals.rooms[slot];
        if (charge > room) return type(uint256).max;
        // Checked just above; the current bucket stays within the bond (WorkerBond.rolled), so the word's add
        // cannot carry out of it.
        unchecked {
            totals.rooms[slot] = room - charge;
            totals.bondWords[slot] += charge;
        }
    }

    /// @dev The first of `list`'s `count` entries equal to `item`, or `count` if none is (a batch's workers are
    /// few and mostly repeat, so a scan beats a storage-backed map).
    function _indexOf(address[] memory list, uint256 count, address item) private pure returns (uint256 i) {
        assembly ("memory-safe") {
            for {
                let at := add(list, 0x20)
            } and(lt(i, count), iszero(eq(mload(add(at, shl(5, i))), item))) {} {
                i := add(i, 1)
            }
        }
    }

    /// @dev Stores the bond word of each batch worker that was paid, with what the batch put at risk in it (a
    /// worker paid nothing was charged nothing: its word stays as it was).
    function _storeBonds(BatchTotals memory totals) private {
        for (uint256 i; i < totals.workerCount; ++i) {
            if (totals.amounts[i] != 0) _bonds[totals.workers[i]] = totals.bondWords[i];
        }
    }

    /// @dev Counts the job's charge at risk against its worker's bond word, if it fits (reverting when `strict` and
    /// it does not): what a worker was paid for jobs that can still be found fraudulent never exceeds its bond.
    function _tryRisk(uint256 word, SettledJob memory job, bool strict) private view returns (bool fits, uint256) {
        uint256 charge = job.charged * UNIT_PER_CREDIT;
        (bool ok, uint256 updated, uint256 risk) = word.tryAdd(charge, block.timestamp, _exposure);
        if (!ok && strict) revert BondInsufficient(job.worker, word.bondOf(), risk, charge);
        return (ok, updated);
    }

    /// @dev Takes settled charges out of the credits held (they leave as the worker's and treasury's shares).
    function _debitOutstanding(Config memory config, uint256 charged) private {
        // The charges were locked credits, part of the outstanding total.
        unchecked {
            _config.creditsOutstanding = config.creditsOutstanding - uint56(charged);
        }
    }

    /// @dev Pushes a payout; if the stablecoin refuses it (a blocked recipient), it stays claimable instead, so a
    /// recipient can never block settlement.
    function _pay(address recipient, uint256 amount) private {
        if (amount == 0 || stablecoin.trySafeTransfer(recipient, amount)) return;
        _claimable[recipient] += amount;
        _claimableTotal += amount;
        emit PayoutDeferred(recipient, amount);
    }

    /// @dev Checks a receipt against its open job: signer eligible, final token plausible against the opening,
    /// the deadline and now, and the settle grace not over. Prices it, capped at the lock. Says why it cannot
    /// settle (reverting instead when `strict`). Fills `job` (every field it sets is set for each receipt).
    function _verifyReceipt(
        Receipt calldata receipt,
        bytes calldata signature,
        Config memory config,
        Lookups memory lookups,
        SettledJob memory job,
        bool strict
    ) private returns (SettleSkipReason) {
        JobStatus status;
        (job.wallet, job.creditsLocked, job.deadline, job.modelIndex, status) = _jobs[receipt.jobId].unpack();
        if (status != JobStatus.Open) {
            if (strict) revert JobNotInStatus(receipt.jobId, status, JobStatus.Open);
            return SettleSkipReason.JobNotOpen;
        }
        bool recovered;
        (job.worker, recovered) = _signerOf(receipt, signature, strict);
        if (!recovered) return SettleSkipReason.SignatureInvalid;
        if (!_eligible(receipt.jobId, job, lookups, strict)) return SettleSkipReason.WorkerNotEligible;
        SettleSkipReason timing = _checkTiming(receipt.jobId, receipt.finalTokenAt, job.deadline, config, strict);
        if (timing != SettleSkipReason.None) return timing;

        uint256 charged = Pricing.price(
            lookups.creditsPerRequest,
            lookups.creditsPer1kTokens,
            receipt.completionTokens
        );
        job.charged = charged < job.creditsLocked ? charged : job.creditsLocked;
        job.feeBps = _feeAt(config, job.deadline - jobTimeout);
        return SettleSkipReason.None;
    }

    /// @dev Loads the job's price version into `lookups` and checks the signer may serve its model (both served
    /// from memory when the batch asked already); reverts when `strict` and not eligible.
    function _eligible(
        bytes32 jobId,
        SettledJob memory job,
        Lookups memory lookups,
        bool strict
    ) private returns (bool) {
        if (lookups.modelIndex != job.modelIndex) _loadVersion(job.modelIndex, lookups);
        bytes32 modelKey = lookups.modelKey;
        if (lookups.eligibleWorker == job.worker && lookups.eligibleModelKey == modelKey) return true;
        if (!workerRegistry.canServe(job.worker, modelKey)) {
            if (strict) revert WorkerNotEligible(jobId, job.worker, modelKey);
            return false;
        }
        lookups.eligibleWorker = job.worker;
        lookups.eligibleModelKey = modelKey;
        return true;
    }

    /// @dev Loads a price version into `lookups`: from the escrow's cache, else from the catalog (then cached; a
    /// version never changes once handed out).
    function _loadVersion(uint16 index, Lookups memory lookups) private {
        bytes32 modelKey = _versionKey[index];
        uint256 prices;
        if (modelKey != 0) {
            prices = _versionPrices[index];
        } else {
            uint32 perRequest;
            uint32 per1k;
            (modelKey, , perRequest, per1k) = modelCatalog.pricingAt(index);
            prices = uint256(perRequest) | (uint256(per1k) << 32);
            _versionKey[index] = modelKey;
            _versionPrices[index] = prices;
        }
        lookups.modelIndex = index;
        lookups.modelKey = modelKey;
        lookups.creditsPerRequest = uint32(prices);
        lookups.creditsPer1kTokens = uint32(prices >> 32);
    }

    /// @dev The receipt's signer; a malformed signature reverts when `strict`, else reports `false`.
    function _signerOf(
        Receipt calldata receipt,
        bytes calldata signature,
        bool strict
    ) private view returns (address signer, bool recovered) {
        bytes32 digest = _hashTypedDataV4(ReceiptHash.hash(receipt));
        ECDSA.RecoverError error;
        bytes32 errorArg;
        (signer, error, errorArg) = ECDSA.tryRecoverCalldata(digest, signature);
        recovered = error == ECDSA.RecoverError.NoError;
        // One recovery path for both modes (code size); the strict one reverts as ECDSA.recoverCalldata would.
        if (strict && !recovered) {
            if (error == ECDSA.RecoverError.InvalidSignatureLength) {
                revert ECDSA.ECDSAInvalidSignatureLength(uint256(errorArg));
            }
            if (error == ECDSA.RecoverError.InvalidSignatureS) revert ECDSA.ECDSAInvalidSignatureS(errorArg);
            revert ECDSA.ECDSAInvalidSignature();
        }
    }

    /// @dev A final token must lie between the opening (less the clock skew) and the deadline, and not in the
    /// future; and the job's settle grace must not be over.
    function _checkTiming(
        bytes32 jobId,
        uint64 finalTokenAt,
        uint32 deadline,
        Config memory config,
        bool strict
    ) private view returns (SettleSkipReason) {
        if (
            finalTokenAt > deadline ||
            finalTokenAt > block.timestamp + MAX_CLOCK_SKEW ||
            finalTokenAt + MAX_CLOCK_SKEW < deadline - jobTimeout
        ) {
            if (strict) revert ReceiptTimeInvalid(jobId, finalTokenAt, deadline);
            return SettleSkipReason.ReceiptTimeInvalid;
        }
        uint64 settleBy = _settleBy(deadline, config);
        if (block.timestamp > settleBy) {
            if (strict) revert SettlementWindowClosed(jobId, settleBy);
            return SettleSkipReason.SettlementWindowClosed;
        }
        return SettleSkipReason.None;
    }

    /// @dev `JobSettled`, encoded by hand: the batch emits one per receipt.
    function _emitSettled(
        Receipt calldata receipt,
        SettledJob memory job,
        uint256 workerAmount,
        uint256 feeAmount
    ) private {
        bytes32 topic = JobSettled.selector;
        bytes32 jobId = receipt.jobId;
        address wallet = job.wallet;
        address worker = job.worker;
        uint256 charged = job.charged;
        uint256 refunded = job.refunded;
        uint256 balanceAfter = job.balanceAfter;
        // Data words past the free-memory pointer, not allocated: nothing else uses memory before the log.
        assembly ("memory-safe") {
            let data := mload(0x40)
            // outputHash, promptTokens, completionTokens, finalTokenAt: the receipt's last four words, as they
            // stand in calldata (ReceiptHash.hash rejected dirty bits when the receipt was verified).
            calldatacopy(data, add(receipt, 0x20), 0x80)
            mstore(add(data, 0x80), charged)
            mstore(add(data, 0xa0), refunded)
            mstore(add(data, 0xc0), workerAmount)
            mstore(add(data, 0xe0), feeAmount)
            mstore(add(data, 0x100), balanceAfter)
            log4(data, 0x120, topic, jobId, wallet, worker)
        }
    }
}
