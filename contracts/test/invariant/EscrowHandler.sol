// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {Stablecoin} from "../../tokens/Stablecoin.sol";
import {StakeToken} from "../../tokens/StakeToken.sol";
import {ApiKeyRegistry} from "../../ApiKeyRegistry.sol";
import {WorkerRegistry} from "../../WorkerRegistry.sol";
import {CreditEscrow} from "../../CreditEscrow.sol";
import {DisputeManager} from "../../DisputeManager.sol";
import {ICreditEscrow} from "../../interfaces/ICreditEscrow.sol";
import {IDisputeManager} from "../../interfaces/IDisputeManager.sol";
import {JobStatus} from "../../types/JobStatus.sol";
import {Receipt, Settlement} from "../../types/Receipt.sol";
import {vm, bound} from "../utils/Vm.sol";

/// @notice Drives the escrow the way the product does, with random inputs: deposits, withdrawals, jobs opened,
/// settled with receipts that registered workers sign (`vm.sign`), failed, refunded after warping past their
/// deadline, the reserve funded, disputes opened, decided and expired, the contract paused, and attempts to close
/// a job a second time. It keeps its own ("ghost") ledger, computed independently of the contracts, for the
/// invariants to compare against.
/// @dev Invariant runs ignore reverting handler calls, so a handler never asserts: every call whose outcome
/// the rules fix is made with try/catch and any deviation is counted in `ghostViolations` (with the last
/// one described in `lastViolation`), which an invariant requires to stay zero.
contract EscrowHandler {
    uint256 private constant UNIT_PER_CREDIT = 10_000;
    uint256 private constant BPS = 10_000;
    uint256 private constant THRESHOLD = 500;
    uint256 private constant WALLETS = 3;
    uint256 private constant WORKERS = 3;

    struct System {
        Stablecoin usd;
        StakeToken svc;
        ApiKeyRegistry keys;
        WorkerRegistry workers;
        CreditEscrow escrow;
        DisputeManager disputes;
        address gateway;
        address arbiter;
        address pauser;
        address treasury;
        bytes32[2] modelKeys;
        uint32[2] creditsPerRequest;
        uint32[2] creditsPer1kTokens;
        /// @dev Private keys of registered, staked workers hosting both models.
        uint256[3] workerKeys;
        /// @dev Wallets with an active API key each.
        address[3] wallets;
        bytes32[3] keyHashes;
    }

    /// @dev What the handler knows about a job, independently of the escrow's storage.
    struct GhostJob {
        JobStatus status;
        uint8 wallet;
        uint8 model;
        uint64 openedAt;
        uint64 deadline;
        uint32 maxTokens;
        uint256 locked;
        uint256 charged;
        uint32 closes;
        bool disputeOpened;
        uint64 arbitrationDeadline;
        Settlement settlement;
    }

    Stablecoin public immutable usd;
    StakeToken public immutable svc;
    WorkerRegistry public immutable workers;
    CreditEscrow public immutable escrow;
    DisputeManager public immutable disputes;
    address public immutable gateway;
    address public immutable arbiter;
    address public immutable pauser;
    address public immutable treasury;
    address public immutable reserveFunder = address(0xF00D);
    uint256 public immutable feeBps;
    uint64 public immutable disputeWindow;
    uint256 public immutable minStake;

    bytes32[2] private _modelKeys;
    uint32[2] private _cpr;
    uint32[2] private _cp1k;
    address[WALLETS] private _wallets;
    bytes32[WALLETS] private _keyHashes;
    uint256[WORKERS] private _workerKeys;
    address[WORKERS] private _workerAddresses;

    bytes32[] private _jobIds;
    mapping(bytes32 jobId => GhostJob) private _ghost;
    uint256 private _jobNonce;

    // Ghost ledger: credits per wallet and stablecoin flows, all from the handler's own arithmetic.
    mapping(address wallet => uint256) public ghostAvailable;
    mapping(address wallet => uint256) public ghostLocked;
    uint256 public ghostDepositedUnits;
    uint256 public ghostWithdrawnUnits;
    uint256 public ghostReserveFundedUnits;
    uint256 public ghostChargedCredits;
    uint256 public ghostRestoredCredits;
    /// @notice Stablecoin the escrow sent to workers and the treasury, measured by balance deltas.
    uint256 public ghostPaidOutUnits;

    uint256 public ghostViolations;
    string public lastViolation;

    /// @notice How often each action reached its interesting branch, for tuning the handler.
    mapping(string action => uint256) public calls;

    constructor(System memory system) {
        usd = system.usd;
        svc = system.svc;
        workers = system.workers;
        escrow = system.escrow;
        disputes = system.disputes;
        gateway = system.gateway;
        arbiter = system.arbiter;
        pauser = system.pauser;
        treasury = system.treasury;
        _modelKeys = system.modelKeys;
        _cpr = system.creditsPerRequest;
        _cp1k = system.creditsPer1kTokens;
        feeBps = system.escrow.feeBps();
        disputeWindow = system.escrow.disputeWindow();
        minStake = system.workers.minStake();

        // The ledger starts from the escrow's state: whatever the wallets deposited before the run.
        _wallets = system.wallets;
        _keyHashes = system.keyHashes;
        for (uint256 i; i < WALLETS; ++i) {
            ICreditEscrow.Account memory account = system.escrow.accountOf(system.wallets[i]);
            ghostAvailable[system.wallets[i]] = account.available;
            ghostLocked[system.wallets[i]] = account.locked;
        }
        ghostDepositedUnits = system.usd.balanceOf(address(system.escrow)) - system.escrow.reserve();
        ghostReserveFundedUnits = system.escrow.reserve();
        for (uint256 i; i < WORKERS; ++i) {
            _workerKeys[i] = system.workerKeys[i];
            _workerAddresses[i] = vm.addr(system.workerKeys[i]);
            vm.prank(_workerAddresses[i]);
            system.svc.approve(address(system.workers), type(uint256).max);
        }
    }

    // ================================================================ actions

    function deposit(uint256 walletSeed, uint256 credits) external {
        _deposit(walletSeed, credits);
    }

    function _deposit(uint256 walletSeed, uint256 credits) private {
        address account = _wallets[walletSeed % WALLETS];
        credits = bound(credits, 100, 50_000);
        uint256 amount = credits * UNIT_PER_CREDIT;
        usd.mint(account, amount);
        vm.prank(account);
        usd.approve(address(escrow), amount);

        bool paused = escrow.paused();
        vm.prank(account);
        try escrow.deposit(amount) {
            if (paused) return _violation("deposit succeeded while paused");
            ++calls["deposit"];
            ghostAvailable[account] += credits;
            ghostDepositedUnits += amount;
        } catch (bytes memory reason) {
            _requireReason(paused, reason, abi.encodeWithSelector(Pausable.EnforcedPause.selector), "deposit");
        }
    }

    function withdraw(uint256 walletSeed, uint256 credits) external {
        _withdraw(walletSeed, credits);
    }

    function _withdraw(uint256 walletSeed, uint256 credits) private {
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

    function fundReserve(uint256 amount) external {
        amount = bound(amount, 1, 5_000_000_000);
        usd.mint(reserveFunder, amount);
        vm.startPrank(reserveFunder);
        usd.approve(address(escrow), amount);
        try escrow.fundReserve(amount) {
            ++calls["fundReserve"];
            ghostReserveFundedUnits += amount;
        } catch (bytes memory reason) {
            _violation("fundReserve reverted", reason);
        }
        vm.stopPrank();
    }

    function openJob(uint256 walletSeed, uint256 modelSeed, uint256 maxTokens) external {
        _openJob(walletSeed, modelSeed, maxTokens);
    }

    function _openJob(
        uint256 walletSeed,
        uint256 modelSeed,
        uint256 maxTokens
    ) private returns (bool opened, bytes32 jobId) {
        uint8 walletIndex = uint8(walletSeed % WALLETS);
        uint8 model = uint8(modelSeed % 2);
        address account = _wallets[walletIndex];
        maxTokens = bound(maxTokens, 1, 32_768);
        uint256 lock = _price(model, maxTokens);
        jobId = bytes32(uint256(0x019a_0000_0000_0000_0000_0000_0000_0000) + ++_jobNonce);
        bool paused = escrow.paused();
        uint256 available = ghostAvailable[account];

        vm.prank(gateway);
        try escrow.openJob(jobId, _keyHashes[walletIndex], _modelKeys[model], uint32(maxTokens)) {
            if (paused) {
                _violation("openJob succeeded while paused");
                return (false, jobId);
            }
            if (lock > available) {
                _violation("openJob locked more than available");
                return (false, jobId);
            }
            ++calls["openJob"];
            opened = true;
            ghostAvailable[account] = available - lock;
            ghostLocked[account] += lock;
            _jobIds.push(jobId);
            GhostJob storage job = _ghost[jobId];
            job.status = JobStatus.Open;
            job.wallet = walletIndex;
            job.model = model;
            job.openedAt = uint64(block.timestamp);
            job.deadline = uint64(block.timestamp) + escrow.jobTimeout();
            job.maxTokens = uint32(maxTokens);
            job.locked = lock;
        } catch (bytes memory reason) {
            bytes memory expected = paused
                ? abi.encodeWithSelector(Pausable.EnforcedPause.selector)
                : abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, account, available, lock);
            _requireReason(paused || lock > available, reason, expected, "openJob");
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
        _settle(jobId, workerSeed, completionTokens, promptTokens, outputHash, finalTokenSeed);
    }

    function _settle(
        bytes32 jobId,
        uint256 workerSeed,
        uint256 completionTokens,
        uint32 promptTokens,
        bytes32 outputHash,
        uint256 finalTokenSeed
    ) private returns (bool settled) {
        GhostJob storage job = _ghost[jobId];
        uint256 workerIndex = workerSeed % WORKERS;
        Receipt[] memory receipts = new Receipt[](1);
        bytes[] memory signatures = new bytes[](1);
        (receipts[0], signatures[0]) = _signedReceipt(
            jobId,
            workerIndex,
            completionTokens,
            promptTokens,
            outputHash,
            finalTokenSeed
        );

        Balances memory before = _balances(job.wallet);
        bool paused = escrow.paused();
        vm.prank(gateway);
        try escrow.settle(receipts[0], signatures[0]) {
            if (paused) {
                _violation("settle succeeded while paused");
                return false;
            }
            ++calls["settle"];
            settled = true;
            _bookSettlement(jobId, receipts[0], _workerAddresses[workerIndex]);
            _checkPayout(before, job.wallet, job.locked - job.charged, job.charged);
        } catch (bytes memory reason) {
            _requireReason(paused, reason, abi.encodeWithSelector(Pausable.EnforcedPause.selector), "settle");
        }
    }

    /// @dev Up to three open jobs in one transaction, each signed by a random worker.
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
        uint256[] memory signerIndex = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            signerIndex[i] = uint256(keccak256(abi.encode(workerSeed, i))) % WORKERS;
            uint256 tokens = uint256(keccak256(abi.encode(tokenSeed, i)));
            (receipts[i], signatures[i]) = _signedReceipt(
                picked[i],
                signerIndex[i],
                tokens,
                20,
                keccak256(abi.encode(tokens)),
                tokens
            );
        }

        uint256 paidBefore = _paidOut();
        bool paused = escrow.paused();
        vm.prank(gateway);
        try escrow.settleBatch(receipts, signatures) {
            if (paused) return _violation("settleBatch succeeded while paused");
            ++calls["settleBatch"];
            uint256 charged;
            for (uint256 i; i < n; ++i) {
                _bookSettlement(picked[i], receipts[i], _workerAddresses[signerIndex[i]]);
                charged += _ghost[picked[i]].charged;
            }
            uint256 paid = _paidOut() - paidBefore;
            ghostPaidOutUnits += paid;
            if (paid != charged * UNIT_PER_CREDIT) _violation("settleBatch payout != charged units");
        } catch (bytes memory reason) {
            _requireReason(paused, reason, abi.encodeWithSelector(Pausable.EnforcedPause.selector), "settleBatch");
        }
    }

    function failJob(uint256 jobSeed) external {
        (bool found, bytes32 jobId) = _pickOpen(jobSeed);
        if (found) _failJob(jobId);
    }

    function _failJob(bytes32 jobId) private {
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
        bool expired = block.timestamp > job.deadline;
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        vm.prank(caller);
        try escrow.refund(jobId) {
            if (!expired) return _violation("refund before the deadline succeeded");
            ++calls["refund"];
            _bookRelease(jobId, JobStatus.Refunded);
            if (usd.balanceOf(address(escrow)) != escrowBefore) _violation("refund moved stablecoin");
        } catch (bytes memory reason) {
            _requireReason(
                !expired,
                reason,
                abi.encodeWithSelector(ICreditEscrow.JobNotExpired.selector, jobId, job.deadline),
                "refund after the deadline (never paused)"
            );
        }
    }

    function warp(uint256 seconds_) external {
        // Mostly steps around the job timeout; one in eight jumps past the arbitration window.
        seconds_ = seconds_ % 8 == 0 ? bound(seconds_, 1 hours, 2 days) : bound(seconds_, 1, 300);
        vm.warp(block.timestamp + seconds_);
        ++calls["warp"];
    }

    /// @dev Pauses, checks that deposits, new jobs and settlement are refused while withdrawals, failures and
    /// refunds still go through, and unpauses (a lasting pause would only starve the other actions).
    function pauseBriefly(uint256 seed) external {
        vm.prank(pauser);
        escrow.pause();
        ++calls["pause"];
        _deposit(seed, seed >> 8);
        _openJob(seed, seed >> 16, seed >> 24);
        _withdraw(seed >> 32, seed >> 40);
        (bool found, bytes32 jobId) = _pick(seed, JobStatus.Open);
        if (found) {
            _settle(jobId, seed, seed >> 48, 3, bytes32(seed), seed >> 56);
            if (seed % 2 == 0) _failJob(jobId);
            else _refund(jobId, address(uint160(seed)));
        }
        vm.prank(pauser);
        escrow.unpause();
    }

    function openDispute(uint256 jobSeed, bytes32 clientHash) external {
        // Half the time the latest settlement (likely inside its dispute window), else any; settle one if none.
        (bool found, bytes32 jobId) = jobSeed % 2 == 0
            ? _pickLatest(JobStatus.Settled)
            : _pick(jobSeed, JobStatus.Settled);
        if (!found) {
            (found, jobId) = _pickOpen(jobSeed);
            if (!found) return;
            if (!_settle(jobId, jobSeed, jobSeed >> 32, 7, clientHash ^ bytes32(jobSeed), jobSeed >> 64)) return;
        }
        GhostJob storage job = _ghost[jobId];
        Settlement memory settlement = job.settlement;
        if (clientHash == settlement.outputHash) clientHash = ~clientHash;
        uint256 windowEnd = uint256(settlement.finalTokenAt) + disputeWindow;

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
                    uint64(windowEnd)
                );
            _requireReason(job.disputeOpened || block.timestamp > windowEnd, reason, expected, "openDispute");
        }
    }

    function resolveDispute(uint256 jobSeed, bool fraud) external {
        (bool found, bytes32 jobId) = _pick(jobSeed, JobStatus.Disputed);
        if (!found) return;
        GhostJob storage job = _ghost[jobId];
        bool open = block.timestamp <= job.arbitrationDeadline;
        uint256 units = job.charged * UNIT_PER_CREDIT;
        uint256 reserveBefore = escrow.reserve();
        address worker = job.settlement.worker;
        uint256 stakeBefore = workers.getWorker(worker).stake;
        address account = _wallets[job.wallet];

        vm.prank(arbiter);
        try disputes.resolveDispute(jobId, fraud) {
            if (!open) return _violation("dispute resolved after the arbitration window");
            if (fraud) {
                ++calls["resolveDispute(upheld)"];
                job.status = JobStatus.DisputeUpheld;
                if (reserveBefore >= units) {
                    ghostAvailable[account] += job.charged;
                    ghostRestoredCredits += job.charged;
                }
                if (workers.getWorker(worker).stake != 0 || stakeBefore == 0) _violation("slash amount");
            } else {
                ++calls["resolveDispute(rejected)"];
                job.status = JobStatus.Settled;
            }
        } catch (bytes memory reason) {
            bytes memory expected = !open
                ? abi.encodeWithSelector(
                    IDisputeManager.ArbitrationWindowClosed.selector,
                    jobId,
                    job.arbitrationDeadline
                )
                : bytes("");
            _requireReason(!open, reason, expected, "resolveDispute");
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

    /// @dev Tries to settle, fail or refund a job that is already closed; any success is a double close.
    function closeAgain(uint256 jobSeed, uint256 how, uint256 workerSeed) external {
        uint256 length = _jobIds.length;
        if (length == 0) return;
        bytes32 jobId = _jobIds[jobSeed % length];
        GhostJob storage job = _ghost[jobId];
        if (job.status == JobStatus.Open) return;
        ++calls["closeAgain"];
        bool succeeded;
        how %= 3;
        if (how == 0) {
            (Receipt memory receipt, bytes memory signature) = _signedReceipt(
                jobId,
                workerSeed % WORKERS,
                workerSeed,
                1,
                bytes32(workerSeed),
                workerSeed
            );
            vm.prank(gateway);
            try escrow.settle(receipt, signature) {
                succeeded = true;
            } catch {}
        } else if (how == 1) {
            vm.prank(gateway);
            try escrow.failJob(jobId) {
                succeeded = true;
            } catch {}
        } else {
            try escrow.refund(jobId) {
                succeeded = true;
            } catch {}
        }
        if (succeeded) {
            ++job.closes;
            _violation("a closed job was closed again");
        }
    }

    // ================================================================ views for the invariants

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

    function wallets() external view returns (address[WALLETS] memory) {
        return _wallets;
    }

    function workerAddresses() external view returns (address[WORKERS] memory) {
        return _workerAddresses;
    }

    /// @notice Stablecoin held by everyone the escrow pays: the workers and the treasury.
    function paidOutBalances() external view returns (uint256) {
        return _paidOut();
    }

    // ================================================================ internals

    struct Balances {
        uint256 paidOut;
        uint256 walletAvailable;
        uint256 escrow;
    }

    function _balances(uint8 walletIndex) private view returns (Balances memory) {
        return
            Balances({
                paidOut: _paidOut(),
                walletAvailable: escrow.accountOf(_wallets[walletIndex]).available,
                escrow: usd.balanceOf(address(escrow))
            });
    }

    function _paidOut() private view returns (uint256 total) {
        total = usd.balanceOf(treasury);
        for (uint256 i; i < WORKERS; ++i) {
            total += usd.balanceOf(_workerAddresses[i]);
        }
    }

    /// @dev Checks one settlement moved exactly: the refund to the wallet, the charge out of the escrow
    /// to worker and treasury.
    function _checkPayout(Balances memory before, uint8 walletIndex, uint256 refunded, uint256 charged) private {
        Balances memory afterwards = _balances(walletIndex);
        uint256 paid = afterwards.paidOut - before.paidOut;
        ghostPaidOutUnits += paid;
        if (paid != charged * UNIT_PER_CREDIT) _violation("worker + fee != charged units");
        if (before.escrow - afterwards.escrow != charged * UNIT_PER_CREDIT) _violation("escrow outflow != charge");
        if (afterwards.walletAvailable - before.walletAvailable != refunded) _violation("refund to the wallet");
    }

    /// @dev A worker's receipt for `jobId`, valid by the rules: final token between the opening and both the
    /// deadline and now + 30 s. Tops the worker's stake up first if a slash took it below the minimum.
    function _signedReceipt(
        bytes32 jobId,
        uint256 workerIndex,
        uint256 completionTokens,
        uint32 promptTokens,
        bytes32 outputHash,
        uint256 finalTokenSeed
    ) private returns (Receipt memory receipt, bytes memory signature) {
        _keepEligible(workerIndex);
        GhostJob storage job = _ghost[jobId];
        uint256 latest = block.timestamp + 30 < job.deadline ? block.timestamp + 30 : job.deadline;
        receipt = Receipt({
            jobId: jobId,
            outputHash: outputHash,
            promptTokens: promptTokens,
            // Now and then more tokens than the lock covers: the charge must be capped.
            completionTokens: uint32(bound(completionTokens, 0, uint256(job.maxTokens) + job.maxTokens / 4)),
            finalTokenAt: uint64(bound(finalTokenSeed, job.openedAt, latest))
        });
        signature = _sign(workerIndex, receipt);
    }

    /// @dev A slash takes a worker below the minimum stake; top it up so it can keep serving.
    function _keepEligible(uint256 workerIndex) private {
        address worker = _workerAddresses[workerIndex];
        uint256 stake = workers.getWorker(worker).stake;
        if (stake >= minStake) return;
        svc.mint(worker, minStake - stake);
        vm.prank(worker);
        workers.increaseStake(minStake - stake);
    }

    function _sign(uint256 workerIndex, Receipt memory receipt) private view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_workerKeys[workerIndex], escrow.receiptDigest(receipt));
        return abi.encodePacked(r, s, v);
    }

    function _bookSettlement(bytes32 jobId, Receipt memory receipt, address worker) private {
        GhostJob storage job = _ghost[jobId];
        uint256 full = _price(job.model, receipt.completionTokens);
        uint256 charged = full < job.locked ? full : job.locked;
        address account = _wallets[job.wallet];
        ghostLocked[account] -= job.locked;
        ghostAvailable[account] += job.locked - charged;
        ghostChargedCredits += charged;
        job.charged = charged;
        job.status = JobStatus.Settled;
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

    /// @dev The pricing rule of docs/DESIGN.md, restated here so the ledger does not trust the library.
    function _price(uint8 model, uint256 tokens) private view returns (uint256) {
        if (tokens == 0) return 0;
        uint256 cpr = _cpr[model];
        if (tokens <= THRESHOLD) return cpr;
        uint256 extra = (tokens - THRESHOLD) * _cp1k[model];
        return cpr + extra / 1000 + (extra % 1000 == 0 ? 0 : 1);
    }

    /// @dev An open job, or a new one when none is open, so settling, failing and refunding stay busy.
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

    /// @dev A revert is fine only when the rules demand one, and then only with the expected error.
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
