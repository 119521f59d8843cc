// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {Stablecoin} from "../../tokens/Stablecoin.sol";
import {StakeToken} from "../../tokens/StakeToken.sol";
import {ApiKeyRegistry} from "../../ApiKeyRegistry.sol";
import {ModelCatalog} from "../../ModelCatalog.sol";
import {WorkerRegistry} from "../../WorkerRegistry.sol";
import {CreditEscrow} from "../../CreditEscrow.sol";
import {DisputeManager} from "../../DisputeManager.sol";
import {ICreditEscrow} from "../../interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "../../interfaces/IApiKeyRegistry.sol";
import {IDisputeManager} from "../../interfaces/IDisputeManager.sol";
import {IModelCatalog} from "../../interfaces/IModelCatalog.sol";
import {IWorkerRegistry} from "../../interfaces/IWorkerRegistry.sol";
import {JobStatus} from "../../types/JobStatus.sol";
import {Tier} from "../../types/Tier.sol";
import {Receipt, Settlement} from "../../types/Receipt.sol";
import {vm, bound} from "../utils/Vm.sol";

/// @notice Drives the whole system the way the product and its adversaries do, with random inputs: deposits (also
/// by permit), withdrawals, wallet spending caps, key revocation, rotation and suspension, jobs opened, settled
/// (singly and in batches), failed and refunded, hostile receipts, calls without roles, workers unbonding,
/// withdrawing, re-registering and changing models, models repriced and retired, fee and treasury changes after
/// their delay, pauses, the reserve funded, disputes opened, decided and expired. It keeps its own ("ghost")
/// ledger, computed from the rules in docs/DESIGN.md rather than from the contracts, for the invariants.
/// @dev Invariant runs ignore reverting handler calls, so a handler never asserts: every call whose outcome the
/// rules fix is made with try/catch and any deviation is counted in `ghostViolations` (the last one described
/// in `lastViolation`), which an invariant requires to stay zero.
contract EscrowHandler {
    uint256 private constant UNIT_PER_CREDIT = 10_000;
    uint256 private constant BPS = 10_000;
    uint256 private constant THRESHOLD = 500;
    uint256 private constant WALLETS = 3;
    uint256 private constant WORKERS = 3;
    /// @dev A replacement worker's bond (the fixture's `WORKER_BOND`).
    uint256 private constant WORKER_BOND = 1e13;
    uint256 private constant MODELS = 3;
    uint256 private constant SLOT = 1200;
    uint64 private constant GRACE = 300;
    uint64 private constant DELAY = 2 days;
    uint32 private constant CONTEXT = 128_000;

    struct System {
        Stablecoin usd;
        StakeToken svc;
        ApiKeyRegistry keys;
        ModelCatalog catalog;
        WorkerRegistry workers;
        CreditEscrow escrow;
        DisputeManager disputes;
        address admin;
        address gateway;
        address arbiter;
        address operator;
        address treasury;
        string[3] modelIds;
        uint32[3] creditsPerRequest;
        uint32[3] creditsPer1kTokens;
        uint256[3] workerKeys;
        uint256[3] walletKeys;
        bytes32[3] keyHashes;
    }

    struct GhostJob {
        JobStatus status;
        uint8 wallet;
        uint8 model;
        uint64 openedAt;
        uint64 deadline;
        uint32 maxTokens;
        uint32 cpr;
        uint32 cp1k;
        uint16 feeBps;
        uint256 locked;
        uint256 charged;
        uint64 settledAt;
        uint32 closes;
        bool disputeOpened;
        uint64 arbitrationDeadline;
        Settlement settlement;
    }

    struct GhostKey {
        bytes32 keyHash;
        IApiKeyRegistry.KeyStatus status;
        bool suspended;
        uint256 nonce;
    }

    struct RiskEntry {
        uint64 at;
        uint256 units;
    }

    struct CapLock {
        uint64 at;
        uint256 credits;
    }

    struct Owed {
        uint8 wallet;
        uint256 credits;
    }

    Stablecoin public immutable usd;
    StakeToken public immutable svc;
    ApiKeyRegistry public immutable keys;
    ModelCatalog public immutable catalog;
    WorkerRegistry public immutable workers;
    CreditEscrow public immutable escrow;
    DisputeManager public immutable disputes;
    address public immutable admin;
    address public immutable gateway;
    address public immutable arbiter;
    address public immutable operator;
    address public immutable reserveFunder = address(0xF00D);
    uint64 public immutable jobTimeout;
    uint64 public immutable disputeWindow;
    uint256 public immutable minStake;

    string[3] private _modelIds;
    bytes32[3] private _modelKeys;
    uint32[3] private _cpr;
    uint32[3] private _cp1k;
    bool[3] private _retired;
    /// @dev At most one scheduled catalog change per model: its id, and the prices it sets (retirement: zero).
    uint256[3] private _pendingChange;
    uint32[3] private _pendingCpr;
    uint32[3] private _pendingCp1k;
    uint256[WALLETS] private _walletKeys;
    address[WALLETS] private _wallets;
    GhostKey[WALLETS] private _keys;
    uint256[WORKERS] private _workerKeys;
    uint256 private _workerNonce;

    bytes32[] private _jobIds;
    mapping(bytes32 jobId => GhostJob) private _ghost;
    uint256 private _jobNonce;

    // Ghost ledger.
    mapping(address wallet => uint256) public ghostAvailable;
    mapping(address wallet => uint256) public ghostLocked;
    mapping(address wallet => uint256) public ghostCap;
    /// @dev Time of each wallet's last deposit (zero: none yet).
    mapping(address wallet => uint256) public ghostLastTopUp;
    /// @dev Every charge settled per worker (units) and when, to rebuild what is at risk against its bond.
    mapping(address worker => RiskEntry[]) private _risk;
    mapping(address wallet => CapLock[]) private _capLocks;
    uint256 public ghostDepositedUnits;
    uint256 public ghostWithdrawnUnits;
    uint256 public ghostReserveFundedUnits;
    uint256 public ghostReserveUnits;
    uint256 public ghostStraightUnits;
    uint256 public ghostChargedCredits;
    uint256 public ghostFeeUnits;
    uint256 public ghostWorkerPaidUnits;
    uint256 public ghostTreasuryReceivedUnits;
    /// @dev Workers' bonds: posted in total, held now, and each worker's.
    uint256 public ghostBondPostedUnits;
    uint256 public ghostBondUnits;
    mapping(address worker => uint256) public ghostBond;
    uint256 public ghostRestoredCredits;
    uint256 public ghostStakeHeld;
    uint256 public ghostSlashed;
    Owed[] private _owed;
    uint256 private _owedHead;
    address[] private _everWorkers;
    address[] private _everTreasuries;

    // Ghost schedules.
    uint16 private _fee;
    uint16 private _nextFee;
    uint64 private _feeSwitchAt;
    address private _treasury;
    uint256 private _treasuryBalanceBefore;
    address private _nextTreasury;
    uint64 private _treasurySwitchAt;
    uint64 private _pausedAt;
    uint64 private _unpausedAt;

    uint256 public ghostViolations;
    string public lastViolation;
    mapping(string action => uint256) public calls;

    constructor(System memory system) {
        usd = system.usd;
        svc = system.svc;
        keys = system.keys;
        catalog = system.catalog;
        workers = system.workers;
        escrow = system.escrow;
        disputes = system.disputes;
        admin = system.admin;
        gateway = system.gateway;
        arbiter = system.arbiter;
        operator = system.operator;
        jobTimeout = system.escrow.jobTimeout();
        disputeWindow = system.escrow.disputeWindow();
        minStake = system.workers.minStake();
        _modelIds = system.modelIds;
        _cpr = system.creditsPerRequest;
        _cp1k = system.creditsPer1kTokens;
        for (uint256 m; m < MODELS; ++m) _modelKeys[m] = keccak256(bytes(system.modelIds[m]));
        _fee = system.escrow.feeBps();
        _nextFee = _fee;
        _treasury = system.treasury;
        _everTreasuries.push(system.treasury);

        _walletKeys = system.walletKeys;
        for (uint256 i; i < WALLETS; ++i) {
            address account = vm.addr(system.walletKeys[i]);
            _wallets[i] = account;
            _keys[i] = GhostKey({
                keyHash: system.keyHashes[i],
                status: IApiKeyRegistry.KeyStatus.Active,
                suspended: false,
                nonce: 0
            });
            ICreditEscrow.Account memory acct = system.escrow.accountOf(account);
            ghostAvailable[account] = acct.available;
            ghostLocked[account] = acct.locked;
            // The fixture's deposits, before any cap was set.
            ghostLastTopUp[account] = acct.lastTopUpAt;
        }
        ghostBondPostedUnits = system.escrow.ledger().bonds;
        ghostBondUnits = ghostBondPostedUnits;
        ghostDepositedUnits =
            system.usd.balanceOf(address(system.escrow)) -
            system.escrow.reserve() -
            ghostBondPostedUnits;
        ghostReserveFundedUnits = system.escrow.reserve();
        ghostReserveUnits = ghostReserveFundedUnits;
        for (uint256 i; i < WORKERS; ++i) {
            _workerKeys[i] = system.workerKeys[i];
            address account = vm.addr(system.workerKeys[i]);
            _everWorkers.push(account);
            ghostStakeHeld += system.workers.getWorker(account).stake;
            (ghostBond[account], , ) = system.escrow.bondOf(account);
            vm.prank(account);
            system.svc.approve(address(system.workers), type(uint256).max);
        }
    }

    // ================================================================ credits

    function deposit(uint256 walletSeed, uint256 credits) external {
        _deposit(walletSeed, credits, false);
    }

    function depositWithPermit(uint256 walletSeed, uint256 credits) external {
        _deposit(walletSeed, credits, true);
    }

    function _deposit(uint256 walletSeed, uint256 credits, bool permit) private {
        uint256 index = walletSeed % WALLETS;
        address account = _wallets[index];
        credits = bound(credits, 100, 50_000);
        uint256 amount = credits * UNIT_PER_CREDIT;
        usd.mint(account, amount);
        bool paused = escrow.paused();
        bool ok;
        bytes memory reason;
        if (permit) {
            (uint8 v, bytes32 r, bytes32 s) = _permit(index, amount);
            vm.prank(account);
            try escrow.depositWithPermit(amount, block.timestamp, v, r, s) {
                ok = true;
            } catch (bytes memory why) {
                reason = why;
            }
        } else {
            vm.prank(account);
            usd.approve(address(escrow), amount);
            vm.prank(account);
            try escrow.deposit(amount) {
                ok = true;
            } catch (bytes memory why) {
                reason = why;
            }
        }
        if (ok) {
            if (paused) return _violation("deposit succeeded while paused");
            ++calls[permit ? "depositWithPermit" : "deposit"];
            ghostAvailable[account] += credits;
            ghostDepositedUnits += amount;
            ghostLastTopUp[account] = block.timestamp;
        } else {
            _requireReason(paused, reason, abi.encodeWithSelector(ICreditEscrow.EnforcedPause.selector), "deposit");
            vm.prank(account);
            usd.transfer(address(0xdead), amount);
        }
    }

    function withdraw(uint256 walletSeed, uint256 credits) external {
        address account = _wallets[walletSeed % WALLETS];
        uint256 available = ghostAvailable[account];
        credits = bound(credits, 0, available + available / 8);
        uint256 before = usd.balanceOf(account);
        vm.prank(account);
        try escrow.withdraw(credits) {
            if (credits > available) return _violation("withdraw beyond available credits succeeded");
            ++calls["withdraw"];
            ghostAvailable[account] = available - credits;
            ghostWithdrawnUnits += credits * UNIT_PER_CREDIT;
            if (usd.balanceOf(account) - before != credits * UNIT_PER_CREDIT) _violation("withdraw amount");
        } catch (bytes memory reason) {
            _requireReason(
                credits > available,
                reason,
                abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, account, available, credits),
                "withdraw (never paused)"
            );
        }
    }

    function setSpendingCap(uint256 walletSeed, uint256 cap) external {
        address account = _wallets[walletSeed % WALLETS];
        // One in four removes the cap; otherwise a cap around a few jobs an hour.
        cap = cap % 4 == 0 ? 0 : bound(cap, 40, 20_000);
        vm.prank(account);
        escrow.setSpendingCap(cap);
        ghostCap[account] = cap;
        ++calls["setSpendingCap"];
    }

    function sendStraightToEscrow(uint256 amount) external {
        amount = bound(amount, 1, 10_000_000);
        usd.mint(address(escrow), amount);
        ghostStraightUnits += amount;
    }

    function fundReserve(uint256 amount) external {
        amount = bound(amount, 1, 5_000_000_000);
        usd.mint(reserveFunder, amount);
        vm.startPrank(reserveFunder);
        usd.approve(address(escrow), amount);
        try escrow.fundReserve(amount) {
            ++calls["fundReserve"];
            ghostReserveFundedUnits += amount;
            ghostReserveUnits += amount;
            _payOwed(16);
        } catch (bytes memory reason) {
            _violation("fundReserve reverted", reason);
        }
        vm.stopPrank();
    }

    // ================================================================ keys

    /// @dev Revoke, rotate, register anew, or an operator (un)suspending the wallet.
    function changeKey(uint256 walletSeed, uint256 op) external {
        uint256 index = walletSeed % WALLETS;
        address account = _wallets[index];
        GhostKey storage key = _keys[index];
        op %= 4;
        if (
            op == 0 &&
            (key.status == IApiKeyRegistry.KeyStatus.Active || key.status == IApiKeyRegistry.KeyStatus.Suspended)
        ) {
            vm.prank(account);
            try keys.revokeKey() {
                key.status = IApiKeyRegistry.KeyStatus.Revoked;
                ++calls["revokeKey"];
            } catch (bytes memory reason) {
                _violation("revokeKey", reason);
            }
        } else if (op == 1 && !key.suspended && key.status == IApiKeyRegistry.KeyStatus.Active) {
            bytes32 fresh = keccak256(abi.encode(account, ++key.nonce));
            _commitKey(account, fresh);
            vm.prank(account);
            try keys.rotateKey(fresh) {
                key.keyHash = fresh;
                ++calls["rotateKey"];
            } catch (bytes memory reason) {
                _violation("rotateKey", reason);
            }
        } else if (op == 2 && !key.suspended && key.status == IApiKeyRegistry.KeyStatus.Revoked) {
            bytes32 fresh = keccak256(abi.encode(account, ++key.nonce));
            _commitKey(account, fresh);
            vm.prank(account);
            try keys.registerKey(fresh) {
                key.keyHash = fresh;
                key.status = IApiKeyRegistry.KeyStatus.Active;
                ++calls["registerKey"];
            } catch (bytes memory reason) {
                _violation("registerKey", reason);
            }
        } else if (op == 3) {
            vm.prank(operator);
            if (key.suspended) {
                keys.unsuspend(account);
                key.suspended = false;
                if (key.status == IApiKeyRegistry.KeyStatus.Suspended) key.status = IApiKeyRegistry.KeyStatus.Active;
            } else {
                keys.suspend(account);
                key.suspended = true;
                if (key.status == IApiKeyRegistry.KeyStatus.Active) key.status = IApiKeyRegistry.KeyStatus.Suspended;
            }
            ++calls["suspendToggle"];
        }
    }

    // ================================================================ catalog, fee, treasury

    /// @dev Schedules a repricing; it applies only through `applyCatalogChange` once its delay has passed.
    function repriceModel(uint256 modelSeed, uint32 cpr, uint32 cp1k) external {
        uint256 m = modelSeed % MODELS;
        if (_retired[m] || _pendingChange[m] != 0) return;
        cpr = uint32(bound(cpr, 1, 60));
        cp1k = uint32(bound(cp1k, 1, 30));
        _pendingChange[m] = catalog.scheduleUpdateModel(
            _modelIds[m],
            IModelCatalog.ModelParams({
                tier: Tier.Max,
                creditsPerRequest: cpr,
                creditsPer1kTokens: cp1k,
                contextWindow: CONTEXT,
                parameters: "test",
                ownedBy: "test"
            })
        );
        _pendingCpr[m] = cpr;
        _pendingCp1k[m] = cp1k;
        ++calls["scheduleRepricing"];
    }

    /// @dev Only the third model is ever retired, so jobs keep flowing through the other two.
    function retireSpareModel() external {
        if (_retired[2] || _pendingChange[2] != 0) return;
        _pendingChange[2] = catalog.scheduleRetireModel(_modelIds[2]);
        _pendingCpr[2] = 0;
        ++calls["scheduleRetirement"];
    }

    /// @dev Applies a model's scheduled change: refused (and the listing unchanged) before its delay, applied after.
    function applyCatalogChange(uint256 modelSeed) external {
        uint256 m = modelSeed % MODELS;
        uint256 changeId = _pendingChange[m];
        if (changeId == 0) return;
        uint64 readyAt = catalog.changeReadyAt(changeId);
        try catalog.applyModelChange(changeId) {
            if (block.timestamp < readyAt) return _violation("a catalog change applied before its delay");
            _pendingChange[m] = 0;
            if (_pendingCpr[m] == 0) {
                _retired[m] = true;
                ++calls["retireModel"];
            } else {
                _cpr[m] = _pendingCpr[m];
                _cp1k[m] = _pendingCp1k[m];
                ++calls["repriceModel"];
            }
        } catch (bytes memory reason) {
            _requireReason(
                block.timestamp < readyAt,
                reason,
                abi.encodeWithSelector(IModelCatalog.ModelChangeNotReady.selector, changeId, readyAt),
                "applyCatalogChange"
            );
            _requireListedPrices(m);
        }
    }

    function scheduleProtocolFee(uint16 feeBps) external {
        feeBps = uint16(bound(feeBps, 0, 2_000));
        bool allowed = true;
        uint64 earliest;
        bool fold = block.timestamp >= _feeSwitchAt && _fee != _nextFee;
        if (fold) {
            uint64 lastSettlement = _settleBy(_feeSwitchAt + jobTimeout);
            earliest = lastSettlement + 1;
            allowed = !escrow.paused() && block.timestamp > lastSettlement;
        }
        vm.prank(admin);
        try escrow.scheduleProtocolFee(feeBps) {
            if (!allowed) return _violation("fee change before the old fee's jobs closed");
            if (fold) _fee = _nextFee;
            _nextFee = feeBps;
            _feeSwitchAt = uint64(block.timestamp) + DELAY;
            ++calls["scheduleProtocolFee"];
        } catch (bytes memory reason) {
            _requireReason(
                !allowed,
                reason,
                abi.encodeWithSelector(ICreditEscrow.FeeChangeTooSoon.selector, earliest),
                "scheduleProtocolFee"
            );
        }
    }

    function scheduleTreasury(uint256 seed) external {
        address next = address(uint160(0x7EA50000 + (seed % 1000)));
        _treasuryInEffect();
        vm.prank(admin);
        escrow.scheduleTreasury(next);
        _nextTreasury = next;
        _treasurySwitchAt = uint64(block.timestamp) + DELAY;
        // Counted once however often it is scheduled: paidOutBalances sums each treasury's balance.
        bool known;
        for (uint256 i; i < _everTreasuries.length; ++i) if (_everTreasuries[i] == next) known = true;
        if (!known) _everTreasuries.push(next);
        ++calls["scheduleTreasury"];
    }

    // ================================================================ workers

    /// @dev Unbond, withdraw after the delay (then re-register), or change hosted models.
    function workerLifecycle(uint256 slotSeed, uint256 op) external {
        uint256 slot = slotSeed % WORKERS;
        address account = vm.addr(_workerKeys[slot]);
        IWorkerRegistry.Worker memory record = workers.getWorker(account);
        op %= 3;
        if (op == 0 && record.status == IWorkerRegistry.WorkerStatus.Active) {
            vm.prank(account);
            workers.startUnbonding();
            ++calls["startUnbonding"];
        } else if (op == 1 && record.status == IWorkerRegistry.WorkerStatus.Unbonding) {
            if (block.timestamp < record.unlockAt) vm.warp(record.unlockAt);
            vm.prank(account);
            try workers.withdraw() {
                ghostStakeHeld -= record.stake;
                ++calls["workerWithdraw"];
                _registerWorker(slot, _workerKeys[slot]);
            } catch (bytes memory reason) {
                _violation("worker withdraw after unlock", reason);
            }
        } else if (op == 2 && record.status == IWorkerRegistry.WorkerStatus.Active) {
            vm.prank(account);
            workers.updateModels(_listedModels(slotSeed % 2 == 0));
            ++calls["updateModels"];
        }
    }

    // ================================================================ jobs

    function openJob(uint256 walletSeed, uint256 modelSeed, uint256 maxTokens) external {
        _openJob(walletSeed, modelSeed, maxTokens);
    }

    function _openJob(
        uint256 walletSeed,
        uint256 modelSeed,
        uint256 maxTokens
    ) private returns (bool opened, bytes32 jobId) {
        uint8 w = uint8(walletSeed % WALLETS);
        uint8 m = uint8(modelSeed % MODELS);
        address account = _wallets[w];
        // Now and then beyond the context window: the lock must be refused.
        maxTokens = bound(maxTokens, 1, CONTEXT + CONTEXT / 16);
        uint256 lock = _price(_cpr[m], _cp1k[m], maxTokens);
        jobId = bytes32(uint256(0x019a_0000_0000_0000_0000_0000_0000_0000) + ++_jobNonce);
        bytes memory expected = _expectedOpenError(w, m, maxTokens, lock);

        vm.prank(gateway);
        try escrow.openJob(jobId, _keys[w].keyHash, _modelKeys[m], uint32(maxTokens)) {
            if (expected.length != 0) {
                _violation("openJob succeeded against the rules", expected);
                return (false, jobId);
            }
            ++calls["openJob"];
            opened = true;
            ghostAvailable[account] -= lock;
            ghostLocked[account] += lock;
            if (ghostCap[account] != 0) {
                _capLocks[account].push(CapLock(uint64(block.timestamp), lock));
                if (_lockedInRollingHour(account) > ghostCap[account]) _violation("spending cap exceeded");
            }
            _jobIds.push(jobId);
            GhostJob storage job = _ghost[jobId];
            job.status = JobStatus.Open;
            job.wallet = w;
            job.model = m;
            job.openedAt = uint64(block.timestamp);
            job.deadline = uint64(block.timestamp) + jobTimeout;
            job.maxTokens = uint32(maxTokens);
            job.cpr = _cpr[m];
            job.cp1k = _cp1k[m];
            job.feeBps = block.timestamp >= _feeSwitchAt ? _nextFee : _fee;
            job.locked = lock;
        } catch (bytes memory reason) {
            _requireReason(expected.length != 0, reason, expected, "openJob");
        }
    }

    function settle(
        uint256 jobSeed,
        uint256 workerSeed,
        uint256 completionTokens,
        uint32 promptTokens,
        bytes32 outputHash,
        uint256 finalTokenSeed
    ) external {
        (bool found, bytes32 jobId) = _pickOpen(jobSeed);
        if (!found) return;
        _settle(jobId, workerSeed % WORKERS, completionTokens, promptTokens, outputHash, finalTokenSeed);
    }

    function _settle(
        bytes32 jobId,
        uint256 slot,
        uint256 completionTokens,
        uint32 promptTokens,
        bytes32 outputHash,
        uint256 finalTokenSeed
    ) private returns (bool settled) {
        GhostJob storage job = _ghost[jobId];
        (Receipt memory receipt, bytes memory signature) = _signedReceipt(
            jobId,
            slot,
            completionTokens,
            promptTokens,
            outputHash,
            finalTokenSeed
        );
        address signer = vm.addr(_workerKeys[slot]);
        bytes memory expected = _expectedSettleError(jobId, signer);
        uint256 workerBefore = usd.balanceOf(signer);
        // Kept in storage (stack depth); the ghost's `_treasury` is the treasury in effect from here on.
        _treasuryBalanceBefore = usd.balanceOf(_treasuryInEffect());
        uint256 walletBefore = escrow.accountOf(_wallets[job.wallet]).available;
        vm.prank(gateway);
        try escrow.settle(receipt, signature) {
            if (expected.length != 0) {
                _violation("settle succeeded against the rules", expected);
                return false;
            }
            ++calls["settle"];
            settled = true;
            (uint256 workerUnits, ) = _bookSettlement(jobId, receipt, signer);
            if (usd.balanceOf(signer) - workerBefore != workerUnits) _violation("worker paid != charge - fee");
            _expectTreasuryPaid(job.charged * UNIT_PER_CREDIT - workerUnits);
            if (escrow.accountOf(_wallets[job.wallet]).available - walletBefore != job.locked - job.charged) {
                _violation("refund to the wallet");
            }
        } catch (bytes memory reason) {
            _requireReason(expected.length != 0, reason, expected, "settle");
        }
    }

    /// @dev Up to three open jobs in one transaction, each signed by a random worker; invalid ones are skipped.
    function settleBatch(uint256 jobSeed, uint256 count, uint256 workerSeed, uint256 tokenSeed) external {
        count = bound(count, 1, 3);
        bytes32[] memory picked = new bytes32[](count);
        uint256 n;
        uint256 length = _jobIds.length;
        for (uint256 i; i < length && n < count; ++i) {
            bytes32 jobId = _jobIds[((jobSeed % length) + i) % length];
            if (_ghost[jobId].status == JobStatus.Open) picked[n++] = jobId;
        }
        if (n == 0) return;
        Receipt[] memory receipts = new Receipt[](n);
        bytes[] memory signatures = new bytes[](n);
        address[] memory signers = new address[](n);
        bool[] memory valid = new bool[](n);
        for (uint256 i; i < n; ++i) {
            uint256 slot = uint256(keccak256(abi.encode(workerSeed, i))) % WORKERS;
            signers[i] = vm.addr(_workerKeys[slot]);
            uint256 tokens = uint256(keccak256(abi.encode(tokenSeed, i)));
            (receipts[i], signatures[i]) = _signedReceipt(
                picked[i],
                slot,
                tokens,
                20,
                keccak256(abi.encode(tokens)),
                tokens
            );
            valid[i] = _expectedSettleError(picked[i], signers[i]).length == 0;
        }
        bool paused = escrow.paused();
        // The last entry is the treasury in effect (the ghost's `_treasury` from here on).
        uint256[] memory before = new uint256[](n + 1);
        for (uint256 i; i < n; ++i) before[i] = usd.balanceOf(signers[i]);
        before[n] = usd.balanceOf(_treasuryInEffect());
        vm.prank(gateway);
        try escrow.settleBatch(receipts, signatures) returns (uint256 settled) {
            if (paused) return _violation("settleBatch succeeded while paused");
            ++calls["settleBatch"];
            uint256 expectedCount;
            uint256 workerUnitsTotal;
            uint256 feesBefore = ghostFeeUnits;
            for (uint256 i; i < n; ++i) {
                if (!valid[i]) continue;
                ++expectedCount;
                (uint256 workerUnits, ) = _bookSettlement(picked[i], receipts[i], signers[i]);
                workerUnitsTotal += workerUnits;
            }
            // One transfer for the batch's fees, in the same transaction.
            if (usd.balanceOf(_treasury) - before[n] != ghostFeeUnits - feesBefore) {
                _violation("batch paid treasury != fees");
            }
            ghostTreasuryReceivedUnits += ghostFeeUnits - feesBefore;
            if (settled != expectedCount) _violation("settleBatch settled the wrong receipts");
            uint256 received;
            for (uint256 i; i < n; ++i) {
                bool seen;
                for (uint256 j; j < i; ++j) if (signers[j] == signers[i]) seen = true;
                if (!seen) received += usd.balanceOf(signers[i]) - before[i];
            }
            if (received != workerUnitsTotal) _violation("batch paid workers != charges - fees");
        } catch (bytes memory reason) {
            _requireReason(paused, reason, abi.encodeWithSelector(ICreditEscrow.EnforcedPause.selector), "settleBatch");
        }
    }

    /// @dev A receipt no rule allows: signed by a stranger, or with a final token after the deadline. It must be
    /// refused with the rule's error and leave the job open.
    function hostileReceipt(uint256 jobSeed, uint256 strangerKey, bool lateToken) external {
        (bool found, bytes32 jobId) = _pick(jobSeed, JobStatus.Open);
        if (!found || escrow.paused()) return;
        GhostJob storage job = _ghost[jobId];
        Receipt memory receipt = Receipt({
            jobId: jobId,
            outputHash: keccak256(abi.encode(strangerKey)),
            promptTokens: 1,
            completionTokens: job.maxTokens,
            finalTokenAt: lateToken ? job.deadline + 1 : job.openedAt
        });
        bytes memory expected;
        uint256 key;
        if (lateToken) {
            key = _workerKeys[0];
            if (!workers.canServe(vm.addr(key), _modelKeys[job.model])) return;
            expected = abi.encodeWithSelector(
                ICreditEscrow.ReceiptTimeInvalid.selector,
                jobId,
                job.deadline + 1,
                job.deadline
            );
        } else {
            key = bound(strangerKey, 1, 1e60);
            for (uint256 i; i < WORKERS; ++i) if (key == _workerKeys[i]) return;
            expected = abi.encodeWithSelector(
                ICreditEscrow.WorkerNotEligible.selector,
                jobId,
                vm.addr(key),
                _modelKeys[job.model]
            );
        }
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(key, escrow.receiptDigest(receipt));
        vm.prank(gateway);
        try escrow.settle(receipt, abi.encodePacked(r, s, v)) {
            _violation("hostile receipt settled");
        } catch (bytes memory reason) {
            _requireReason(true, reason, expected, "hostileReceipt");
            ++calls["hostileReceipt"];
        }
    }

    /// @dev Someone without the role calls a role-gated function: always refused with the role named.
    function callWithoutRole(address caller, uint256 which) external {
        if (caller == gateway || caller == arbiter || caller == admin || caller == address(disputes)) return;
        if (caller == operator) return;
        which %= 7;
        bytes32 role;
        bool ok;
        bytes memory reason;
        if (which == 0) {
            role = escrow.GATEWAY_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(
                address(escrow),
                abi.encodeCall(escrow.openJob, (bytes32(uint256(1)), _keys[0].keyHash, _modelKeys[0], 10))
            );
        } else if (which == 1) {
            role = escrow.GATEWAY_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(address(escrow), abi.encodeCall(escrow.failJob, (bytes32(uint256(1)))));
        } else if (which == 2) {
            role = escrow.PAUSER_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(address(escrow), abi.encodeCall(escrow.pause, ()));
        } else if (which == 3) {
            role = bytes32(0);
            vm.prank(caller);
            (ok, reason) = _try(address(escrow), abi.encodeCall(escrow.scheduleProtocolFee, (1)));
        } else if (which == 5) {
            role = escrow.GATEWAY_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(
                address(escrow),
                abi.encodeCall(
                    escrow.openAndSettleBatch,
                    (new ICreditEscrow.OpenRequest[](1), new Receipt[](1), new bytes[](1))
                )
            );
        } else if (which == 4) {
            role = workers.SLASHER_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(
                address(workers),
                abi.encodeCall(workers.slash, (vm.addr(_workerKeys[0]), bytes32(0), bytes32(0)))
            );
        } else {
            role = disputes.ARBITER_ROLE();
            vm.prank(caller);
            (ok, reason) = _try(
                address(disputes),
                abi.encodeCall(disputes.resolveDispute, (bytes32(uint256(1)), true))
            );
        }
        if (ok) return _violation("role-gated call succeeded without the role");
        _requireReason(
            true,
            reason,
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, caller, role),
            "callWithoutRole"
        );
        ++calls["callWithoutRole"];
    }

    function failJob(uint256 jobSeed) external {
        (bool found, bytes32 jobId) = _pickOpen(jobSeed);
        if (!found) return;
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        vm.prank(gateway);
        try escrow.failJob(jobId) {
            ++calls["failJob"];
            _bookRelease(jobId, JobStatus.Failed);
            if (usd.balanceOf(address(escrow)) != escrowBefore) _violation("failJob moved stablecoin");
        } catch (bytes memory reason) {
            _violation("failJob of an open job reverted (never paused)", reason);
        }
    }

    function refund(uint256 jobSeed, address caller) external {
        (bool found, bytes32 jobId) = _pickOpen(jobSeed);
        if (found) _refund(jobId, caller);
    }

    function _refund(bytes32 jobId, address caller) private {
        GhostJob storage job = _ghost[jobId];
        bool paused = escrow.paused();
        uint64 settleBy = _settleBy(job.deadline);
        bool allowed = !paused && (block.timestamp > settleBy || (caller == gateway && block.timestamp > job.deadline));
        bytes memory expected = paused
            ? abi.encodeWithSelector(ICreditEscrow.EnforcedPause.selector)
            : abi.encodeWithSelector(ICreditEscrow.JobNotExpired.selector, jobId, settleBy);
        vm.prank(caller);
        try escrow.refund(jobId) {
            if (!allowed) return _violation("refund against the rules succeeded");
            ++calls["refund"];
            _bookRelease(jobId, JobStatus.Refunded);
        } catch (bytes memory reason) {
            _requireReason(!allowed, reason, expected, "refund");
        }
    }

    function warp(uint256 seconds_) external {
        seconds_ = seconds_ % 8 == 0 ? bound(seconds_, 1 hours, 3 days) : bound(seconds_, 1, 400);
        vm.warp(block.timestamp + seconds_);
        ++calls["warp"];
    }

    /// @dev Pauses, checks that deposits, new jobs, settlement and refunds are refused while withdrawals and
    /// failures still go through, lets up to two days pass, and unpauses.
    function pauseFor(uint256 seed) external {
        vm.prank(admin);
        escrow.pause();
        if (_pausedAt == 0 || block.timestamp > _unpausedAt + GRACE) _pausedAt = uint64(block.timestamp);
        ++calls["pause"];
        _deposit(seed, seed >> 8, false);
        _openJob(seed, seed >> 16, seed >> 24);
        (bool found, bytes32 jobId) = _pick(seed, JobStatus.Open);
        if (found) {
            _settle(jobId, seed % WORKERS, seed >> 48, 3, bytes32(seed), seed >> 56);
            _refund(jobId, address(uint160(seed)));
        }
        vm.warp(block.timestamp + (seed % 3 == 0 ? bound(seed, 1, 2 days) : 0));
        vm.prank(admin);
        escrow.unpause();
        _unpausedAt = uint64(block.timestamp);
    }

    // ================================================================ disputes

    function openDispute(uint256 jobSeed, bytes32 clientHash) external {
        (bool found, bytes32 jobId) = jobSeed % 2 == 0
            ? _pickLatest(JobStatus.Settled)
            : _pick(jobSeed, JobStatus.Settled);
        if (!found) return;
        GhostJob storage job = _ghost[jobId];
        Settlement memory settlement = job.settlement;
        if (clientHash == settlement.outputHash) clientHash = ~clientHash;
        uint64 windowEnd = _windowEnd(job);
        vm.prank(gateway);
        try disputes.openDispute(jobId, settlement, clientHash) {
            if (job.disputeOpened) return _violation("second dispute over one job opened");
            if (block.timestamp > windowEnd) return _violation("dispute opened after the window");
            ++calls["openDispute"];
            job.disputeOpened = true;
            job.status = JobStatus.Disputed;
            job.arbitrationDeadline = uint64(block.timestamp) + disputes.arbitrationWindow();
        } catch (bytes memory reason) {
            bytes memory expected = job.disputeOpened
                ? abi.encodeWithSelector(
                    IDisputeManager.DisputeAlreadyOpened.selector,
                    jobId,
                    disputes.getDispute(jobId).outcome
                )
                : abi.encodeWithSelector(
                    ICreditEscrow.DisputeWindowExpired.selector,
                    jobId,
                    settlement.finalTokenAt,
                    windowEnd
                );
            _requireReason(job.disputeOpened || block.timestamp > windowEnd, reason, expected, "openDispute");
        }
    }

    function resolveDispute(uint256 jobSeed, bool fraud) external {
        (bool found, bytes32 jobId) = _pick(jobSeed, JobStatus.Disputed);
        if (!found) return;
        GhostJob storage job = _ghost[jobId];
        bool open = block.timestamp <= job.arbitrationDeadline;
        address worker = job.settlement.worker;
        uint256 stakeBefore = workers.getWorker(worker).stake;
        uint256 treasuryStakeBefore = svc.balanceOf(workers.treasury());

        vm.prank(arbiter);
        try disputes.resolveDispute(jobId, fraud) {
            if (!open) return _violation("dispute resolved after the arbitration window");
            if (fraud) {
                ++calls["resolveDispute(upheld)"];
                job.status = JobStatus.DisputeUpheld;
                // Fraud never pays: the whole bond goes to the reserve before restitution (docs/DESIGN.md).
                uint256 seized = ghostBond[worker];
                ghostBond[worker] = 0;
                ghostBondUnits -= seized;
                ghostReserveUnits += seized;
                _restoreOrOwe(job.wallet, job.charged);
                _payOwed(16);
                if (workers.getWorker(worker).stake != 0) _violation("fraud left stake");
                if (svc.balanceOf(workers.treasury()) - treasuryStakeBefore != stakeBefore) _violation("slash amount");
                ghostStakeHeld -= stakeBefore;
                ghostSlashed += stakeBefore;
                _replaceIfSlashed(worker);
            } else {
                ++calls["resolveDispute(rejected)"];
                job.status = JobStatus.Settled;
            }
        } catch (bytes memory reason) {
            _requireReason(
                !open,
                reason,
                abi.encodeWithSelector(
                    IDisputeManager.ArbitrationWindowClosed.selector,
                    jobId,
                    job.arbitrationDeadline
                ),
                "resolveDispute"
            );
        }
    }

    function closeExpiredDispute(uint256 jobSeed, address caller) external {
        (bool found, bytes32 jobId) = _pick(jobSeed, JobStatus.Disputed);
        if (!found) return;
        GhostJob storage job = _ghost[jobId];
        bool expired = block.timestamp > job.arbitrationDeadline;
        vm.prank(caller);
        try disputes.closeExpired(jobId) {
            if (!expired) return _violation("dispute expired inside the arbitration window");
            ++calls["closeExpired"];
            job.status = JobStatus.Settled;
        } catch (bytes memory reason) {
            _requireReason(
                !expired,
                reason,
                abi.encodeWithSelector(IDisputeManager.ArbitrationWindowOpen.selector, jobId, job.arbitrationDeadline),
                "closeExpired"
            );
        }
    }

    // ================================================================ views for the invariants

    /// @notice What the rules say is at risk against `worker`'s bond now: the charges settled in the current slot
    /// of one slash exposure and the slot before it (WorkerBond), rebuilt from every settlement.
    function expectedAtRisk(address worker) external view returns (uint256 total) {
        uint256 exposure = workers.slashExposure();
        uint256 slot = block.timestamp / exposure;
        RiskEntry[] storage entries = _risk[worker];
        for (uint256 i; i < entries.length; ++i) {
            uint256 at = entries[i].at / exposure;
            if (at == slot || at + 1 == slot) total += entries[i].units;
        }
    }

    function jobCount() external view returns (uint256) {
        return _jobIds.length;
    }

    function jobAt(
        uint256 index
    ) external view returns (bytes32 jobId, JobStatus status, uint32 closes, uint64 deadline) {
        jobId = _jobIds[index];
        GhostJob storage job = _ghost[jobId];
        return (jobId, job.status, job.closes, job.deadline);
    }

    /// @notice The facts of job `index` the snapshot invariants need.
    function jobFacts(
        uint256 index
    ) external view returns (bytes32 jobId, GhostJob memory job, uint64 settleBy, uint64 windowEnd, bytes32 modelKey) {
        jobId = _jobIds[index];
        GhostJob storage stored = _ghost[jobId];
        job = stored;
        settleBy = _settleBy(job.deadline);
        windowEnd = job.settledAt == 0 ? 0 : _windowEnd(stored);
        modelKey = _modelKeys[job.model];
    }

    function wallets() external view returns (address[WALLETS] memory) {
        return _wallets;
    }

    function workerKeys() external view returns (uint256[WORKERS] memory) {
        return _workerKeys;
    }

    function everWorkers() external view returns (address[] memory) {
        return _everWorkers;
    }

    /// @notice Stablecoin held by every worker and treasury there ever was.
    function paidOutBalances() external view returns (uint256 total) {
        for (uint256 i; i < _everWorkers.length; ++i) total += usd.balanceOf(_everWorkers[i]);
        for (uint256 i; i < _everTreasuries.length; ++i) total += usd.balanceOf(_everTreasuries[i]);
    }

    function owedCredits() external view returns (uint256 total) {
        for (uint256 i = _owedHead; i < _owed.length; ++i) total += _owed[i].credits;
    }

    // ================================================================ internals

    /// @dev The catalog's current prices for model `m` are the ghost's (no scheduled change applied early).
    function _requireListedPrices(uint256 m) private {
        (, , , uint32 listedCpr, uint32 listedCp1k, ) = catalog.listing(_modelKeys[m]);
        if (listedCpr != _cpr[m] || listedCp1k != _cp1k[m]) _violation("catalog prices moved before the delay");
    }

    /// @dev Commit–reveal: the commitment must be mined in an earlier block than the registration.
    function _commitKey(address account, bytes32 keyHash) private {
        vm.prank(account);
        keys.commitKey(keccak256(abi.encode(account, keyHash)));
        vm.roll(block.number + 1);
    }

    function _expectedOpenError(uint8 w, uint8 m, uint256 maxTokens, uint256 lock) private view returns (bytes memory) {
        address account = _wallets[w];
        GhostKey storage key = _keys[w];
        if (escrow.paused()) return abi.encodeWithSelector(ICreditEscrow.EnforcedPause.selector);
        if (key.status != IApiKeyRegistry.KeyStatus.Active) {
            return abi.encodeWithSelector(IApiKeyRegistry.KeyNotActive.selector, key.keyHash, key.status);
        }
        if (_retired[m]) return abi.encodeWithSelector(IModelCatalog.ModelIsRetired.selector, _modelKeys[m]);
        if (maxTokens > CONTEXT)
            return abi.encodeWithSelector(ICreditEscrow.MaxTokensInvalid.selector, uint32(maxTokens));
        uint256 available = ghostAvailable[account];
        if (lock > available) {
            return abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, account, available, lock);
        }
        uint256 cap = ghostCap[account];
        if (cap != 0) {
            uint256 counted = _lockedInSlots(account);
            if (counted + lock > cap) {
                return
                    abi.encodeWithSelector(
                        ICreditEscrow.SpendingCapExceeded.selector,
                        account,
                        cap,
                        counted,
                        lock,
                        _roomAt(account, cap, lock)
                    );
            }
        }
        return "";
    }

    function _expectedSettleError(bytes32 jobId, address signer) private view returns (bytes memory) {
        GhostJob storage job = _ghost[jobId];
        if (escrow.paused()) return abi.encodeWithSelector(ICreditEscrow.EnforcedPause.selector);
        if (job.status != JobStatus.Open) {
            return abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, jobId, job.status, JobStatus.Open);
        }
        if (!workers.canServe(signer, _modelKeys[job.model])) {
            return
                abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, jobId, signer, _modelKeys[job.model]);
        }
        if (_settleWindowClosed(job)) {
            return
                abi.encodeWithSelector(ICreditEscrow.SettlementWindowClosed.selector, jobId, _settleBy(job.deadline));
        }
        return "";
    }

    function _settleWindowClosed(GhostJob storage job) private view returns (bool) {
        return block.timestamp > _settleBy(job.deadline);
    }

    /// @dev The settle-by rule of docs/DESIGN.md: the grace after the deadline, restarted by the end of a run of
    /// pauses that began while it was running.
    function _settleBy(uint64 deadline) private view returns (uint64 settleBy) {
        settleBy = deadline + GRACE;
        if (_pausedAt != 0 && settleBy >= _pausedAt && _unpausedAt + GRACE > settleBy) settleBy = _unpausedAt + GRACE;
    }

    function _windowEnd(GhostJob storage job) private view returns (uint64) {
        uint64 fta = job.settlement.finalTokenAt;
        return (job.settledAt > fta ? job.settledAt : fta) + disputeWindow;
    }

    function _lockedInSlots(address account) private view returns (uint256 total) {
        CapLock[] storage locks = _capLocks[account];
        uint256 slot = block.timestamp / SLOT;
        for (uint256 i = locks.length; i > 0; --i) {
            CapLock storage entry = locks[i - 1];
            if (entry.at / SLOT + 3 < slot) break;
            total += entry.credits;
        }
    }

    /// @dev When a lock of `lock` credits fits: at the first slot boundary at which the older slots dropping out
    /// leave room (zero: never, it exceeds the cap).
    function _roomAt(address account, uint256 cap, uint256 lock) private view returns (uint64) {
        if (lock > cap) return 0;
        uint256 slot = block.timestamp / SLOT;
        CapLock[] storage locks = _capLocks[account];
        for (uint256 ahead; ahead < 4; ++ahead) {
            uint256 kept;
            for (uint256 i = locks.length; i > 0; --i) {
                CapLock storage entry = locks[i - 1];
                if (entry.at / SLOT + 3 < slot + ahead) break;
                kept += entry.credits;
            }
            if (kept + lock <= cap) return ahead == 0 ? uint64(block.timestamp) : uint64((slot + ahead) * SLOT);
        }
        return uint64((slot + 4) * SLOT);
    }

    function _lockedInRollingHour(address account) private view returns (uint256 total) {
        CapLock[] storage locks = _capLocks[account];
        for (uint256 i = locks.length; i > 0; --i) {
            CapLock storage entry = locks[i - 1];
            if (entry.at + 1 hours <= block.timestamp) break;
            total += entry.credits;
        }
    }

    function _restoreOrOwe(uint8 w, uint256 credits) private {
        if (_owedHead == _owed.length && ghostReserveUnits >= credits * UNIT_PER_CREDIT) {
            _restore(w, credits);
        } else {
            _owed.push(Owed(w, credits));
        }
    }

    function _payOwed(uint256 maxCount) private {
        uint256 paid;
        while (_owedHead < _owed.length && paid < maxCount) {
            Owed storage entry = _owed[_owedHead];
            if (ghostReserveUnits < entry.credits * UNIT_PER_CREDIT) break;
            _restore(entry.wallet, entry.credits);
            ++_owedHead;
            ++paid;
        }
    }

    function _restore(uint8 w, uint256 credits) private {
        ghostReserveUnits -= credits * UNIT_PER_CREDIT;
        ghostAvailable[_wallets[w]] += credits;
        ghostRestoredCredits += credits;
    }

    function _treasuryInEffect() private returns (address) {
        if (_nextTreasury != address(0) && block.timestamp >= _treasurySwitchAt) {
            _treasury = _nextTreasury;
            _nextTreasury = address(0);
        }
        return _treasury;
    }

    /// @dev Spec, settlement rule 6: the fee reaches the treasury in the settlement transaction itself.
    function _expectTreasuryPaid(uint256 feeUnits) private {
        if (usd.balanceOf(_treasury) - _treasuryBalanceBefore != feeUnits) _violation("treasury paid != fee");
        ghostTreasuryReceivedUnits += feeUnits;
    }

    /// @dev A worker's receipt for `jobId`, valid by the rules: final token between the opening and both the
    /// deadline and now + 30 s.
    function _signedReceipt(
        bytes32 jobId,
        uint256 slot,
        uint256 completionTokens,
        uint32 promptTokens,
        bytes32 outputHash,
        uint256 finalTokenSeed
    ) private view returns (Receipt memory receipt, bytes memory signature) {
        GhostJob storage job = _ghost[jobId];
        uint256 latest = block.timestamp + 30 < job.deadline ? block.timestamp + 30 : job.deadline;
        receipt = Receipt({
            jobId: jobId,
            outputHash: outputHash,
            promptTokens: promptTokens,
            completionTokens: uint32(bound(completionTokens, 0, uint256(job.maxTokens) + job.maxTokens / 4)),
            finalTokenAt: uint64(bound(finalTokenSeed, job.openedAt, latest))
        });
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_workerKeys[slot], escrow.receiptDigest(receipt));
        signature = abi.encodePacked(r, s, v);
    }

    function _bookSettlement(
        bytes32 jobId,
        Receipt memory receipt,
        address worker
    ) private returns (uint256 workerUnits, uint256 feeUnits) {
        GhostJob storage job = _ghost[jobId];
        uint256 full = _price(job.cpr, job.cp1k, receipt.completionTokens);
        uint256 charged = full < job.locked ? full : job.locked;
        address account = _wallets[job.wallet];
        ghostLocked[account] -= job.locked;
        ghostAvailable[account] += job.locked - charged;
        ghostChargedCredits += charged;
        feeUnits = (charged * UNIT_PER_CREDIT * job.feeBps) / BPS;
        workerUnits = charged * UNIT_PER_CREDIT - feeUnits;
        ghostFeeUnits += feeUnits;
        ghostWorkerPaidUnits += workerUnits;
        _risk[worker].push(RiskEntry(uint64(block.timestamp), charged * UNIT_PER_CREDIT));
        job.charged = charged;
        job.status = JobStatus.Settled;
        job.settledAt = uint64(block.timestamp);
        ++job.closes;
        job.settlement = Settlement({
            wallet: account,
            worker: worker,
            outputHash: receipt.outputHash,
            creditsCharged: uint64(charged),
            finalTokenAt: receipt.finalTokenAt
        });
    }

    function _bookRelease(bytes32 jobId, JobStatus status) private {
        GhostJob storage job = _ghost[jobId];
        address account = _wallets[job.wallet];
        ghostLocked[account] -= job.locked;
        ghostAvailable[account] += job.locked;
        job.status = status;
        ++job.closes;
    }

    function _registerWorker(uint256 slot, uint256 key) private {
        address account = vm.addr(key);
        svc.mint(account, minStake);
        vm.startPrank(account);
        svc.approve(address(workers), type(uint256).max);
        workers.register("http://worker.test", _listedModels(true), minStake);
        vm.stopPrank();
        ghostStakeHeld += minStake;
        uint256 bond = WORKER_BOND;
        usd.mint(address(this), bond);
        usd.approve(address(escrow), bond);
        escrow.postBond(account, bond);
        ghostBond[account] += bond;
        ghostBondUnits += bond;
        ghostBondPostedUnits += bond;
        _workerKeys[slot] = key;
        bool known;
        for (uint256 i; i < _everWorkers.length; ++i) if (_everWorkers[i] == account) known = true;
        if (!known) _everWorkers.push(account);
    }

    /// @dev A slashed worker is banned for good; a fresh one takes its slot so settlement keeps going.
    function _replaceIfSlashed(address worker) private {
        for (uint256 i; i < WORKERS; ++i) {
            if (vm.addr(_workerKeys[i]) == worker) {
                _registerWorker(i, uint256(keccak256(abi.encode("worker", ++_workerNonce))) % 1e70);
            }
        }
    }

    function _listedModels(bool all) private view returns (bytes32[] memory models) {
        uint256 count = all && !_retired[2] ? 3 : 2;
        models = new bytes32[](count);
        for (uint256 m; m < count; ++m) models[m] = _modelKeys[m];
    }

    function _permit(uint256 walletIndex, uint256 amount) private view returns (uint8, bytes32, bytes32) {
        address owner = _wallets[walletIndex];
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"),
                owner,
                address(escrow),
                amount,
                usd.nonces(owner),
                block.timestamp
            )
        );
        return
            vm.sign(
                _walletKeys[walletIndex],
                keccak256(abi.encodePacked("\x19\x01", usd.DOMAIN_SEPARATOR(), structHash))
            );
    }

    /// @dev The pricing rule of docs/DESIGN.md, restated here so the ledger does not trust the library.
    function _price(uint256 cpr, uint256 cp1k, uint256 tokens) private pure returns (uint256) {
        if (tokens == 0) return 0;
        if (tokens <= THRESHOLD) return cpr;
        uint256 extra = (tokens - THRESHOLD) * cp1k;
        return cpr + extra / 1000 + (extra % 1000 == 0 ? 0 : 1);
    }

    function _pickOpen(uint256 seed) private returns (bool found, bytes32 jobId) {
        (found, jobId) = _pick(seed, JobStatus.Open);
        if (!found) (found, jobId) = _openJob(seed, seed >> 8, seed >> 16);
    }

    function _pickLatest(JobStatus status) private view returns (bool found, bytes32 jobId) {
        for (uint256 i = _jobIds.length; i > 0; --i) {
            jobId = _jobIds[i - 1];
            if (_ghost[jobId].status == status) return (true, jobId);
        }
        return (false, bytes32(0));
    }

    function _pick(uint256 seed, JobStatus status) private view returns (bool found, bytes32 jobId) {
        uint256 length = _jobIds.length;
        for (uint256 i; i < length; ++i) {
            jobId = _jobIds[((seed % length) + i) % length];
            if (_ghost[jobId].status == status) return (true, jobId);
        }
        return (false, bytes32(0));
    }

    function _try(address target, bytes memory data) private returns (bool ok, bytes memory reason) {
        (ok, reason) = target.call(data);
    }

    function _requireReason(bool mustRevert, bytes memory reason, bytes memory expected, string memory action) private {
        if (!mustRevert) return _violation(string.concat(action, " reverted unexpectedly"), reason);
        if (keccak256(reason) != keccak256(expected)) _violation(string.concat(action, " reverted wrongly"), reason);
    }

    function _violation(string memory what) private {
        ++ghostViolations;
        lastViolation = what;
    }

    function _violation(string memory what, bytes memory reason) private {
        ++ghostViolations;
        lastViolation = string.concat(what, ": ", vm.toString(reason));
    }
}
