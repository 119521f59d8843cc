// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ICreditEscrow} from "../../interfaces/ICreditEscrow.sol";
import {IModelCatalog} from "../../interfaces/IModelCatalog.sol";
import {JobStatus} from "../../types/JobStatus.sol";
import {Tier} from "../../types/Tier.sol";
import {Receipt, Settlement} from "../../types/Receipt.sol";
import {EscrowFixture} from "../utils/EscrowFixture.sol";
import {vm} from "../utils/Vm.sol";
import {EscrowHandler} from "./EscrowHandler.sol";

/// @notice Properties of the system that hold after any sequence of the handler's actions: value and stake
/// conservation, exact per-recipient payouts, caps never exceeded, no job closed twice, every settlement
/// disputable for its window, every valid in-time receipt payable, and locked credits always recoverable.
contract EscrowInvariants is EscrowFixture {
    EscrowHandler internal handler;
    uint32 internal constant INVARIANT_CONTEXT = 128_000;

    function setUp() public override {
        vm.warp(START_TIME);
        string[3] memory ids = [MAX_MODEL_ID, LITE_MODEL_ID, "spare-model"];
        uint32[3] memory cpr = [MAX_CPR, LITE_CPR, uint32(8)];
        uint32[3] memory cp1k = [MAX_CP1K, LITE_CP1K, uint32(4)];
        bytes32[] memory all = new bytes32[](3);
        IModelCatalog.LaunchModel[] memory launch = new IModelCatalog.LaunchModel[](3);
        for (uint256 m; m < 3; ++m) {
            launch[m] = _launchModel(ids[m], Tier.Max, cpr[m], cp1k[m], INVARIANT_CONTEXT);
            all[m] = keccak256(bytes(ids[m]));
        }
        _deploySystem(launch);
        uint256[3] memory workerKeys = [uint256(0x5EC12E7), 0x5EC12E8, 0x5EC12E9];
        for (uint256 i; i < workerKeys.length; ++i) _registerWorker(workerKeys[i], all);

        uint256[3] memory walletKeys = [uint256(0xC11E47001), 0xC11E47002, 0xC11E47003];
        bytes32[3] memory keyHashes = [keccak256("sk-wallet-1"), keccak256("sk-wallet-2"), keccak256("sk-wallet-3")];
        for (uint256 i; i < walletKeys.length; ++i) {
            _registerKey(vm.addr(walletKeys[i]), keyHashes[i]);
            _deposit(vm.addr(walletKeys[i]), 20_000);
        }

        handler = new EscrowHandler(
            EscrowHandler.System({
                usd: usd,
                svc: svc,
                keys: keys,
                catalog: catalog,
                workers: workers,
                escrow: escrow,
                disputes: disputes,
                admin: address(this),
                gateway: gateway,
                arbiter: arbiter,
                operator: operator,
                treasury: treasury,
                modelIds: ids,
                creditsPerRequest: cpr,
                creditsPer1kTokens: cp1k,
                workerKeys: workerKeys,
                walletKeys: walletKeys,
                keyHashes: keyHashes
            })
        );
        // The handler mints stablecoin and stake, and governs the catalog (repricing, retiring).
        usd.transferOwnership(address(handler));
        svc.transferOwnership(address(handler));
        // A role grant waits its delay, like any other (DelayedAccessControl); nothing is open yet.
        catalog.grantRole(catalog.GOVERNANCE_ROLE(), address(handler)); // schedules
        vm.warp(block.timestamp + 2 days);
        catalog.grantRole(catalog.GOVERNANCE_ROLE(), address(handler)); // applies
    }

    /// @notice Only the handler is called by the invariant fuzzer.
    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// @notice Every action the rules fix behaved as they say (exact amounts, expected reverts only, caps kept).
    function invariant_handlerActionsFollowTheRules() public view {
        vm.assertEq(handler.ghostViolations(), 0, handler.lastViolation());
    }

    /// @notice Fraud never pays: no worker ever has more charges at risk (settled inside open dispute and
    /// arbitration windows) than its bond, and a worker found fraudulent keeps no bond.
    function invariant_paidAtRiskNeverExceedsTheBond() public view {
        address[] memory everWorkers = handler.everWorkers();
        for (uint256 i; i < everWorkers.length; ++i) {
            (uint256 bond, uint256 atRisk, ) = escrow.bondOf(everWorkers[i]);
            vm.assertEq(bond, handler.ghostBond(everWorkers[i]), "bond == ghost bond");
            if (bond != 0) vm.assertLe(atRisk, bond, "charges at risk <= bond");
        }
    }

    /// @notice The charges at risk against each worker's bond are exactly those it was paid for in the current
    /// and the previous slot of one slash exposure, however they were settled (alone or in batches of workers in
    /// any order): a batch neither drops a charge nor counts one twice.
    function invariant_chargesAtRiskAreExactlyTheChargesSettledInTheCountedSlots() public view {
        address[] memory everWorkers = handler.everWorkers();
        for (uint256 i; i < everWorkers.length; ++i) {
            (, uint256 atRisk, ) = escrow.bondOf(everWorkers[i]);
            vm.assertEq(atRisk, handler.expectedAtRisk(everWorkers[i]), "at risk == charges of the counted slots");
        }
    }

    /// @notice Stablecoin held == credits × 10,000 + reserve + claimable payouts + surplus, every
    /// unit accounted for by the independent ledger.
    function invariant_valueIsConserved() public view {
        address[3] memory accounts = handler.wallets();
        uint256 credits;
        for (uint256 i; i < accounts.length; ++i) {
            ICreditEscrow.Account memory account = escrow.accountOf(accounts[i]);
            credits += uint256(account.available) + account.locked;
        }
        ICreditEscrow.Ledger memory ledger = escrow.ledger();
        uint256 held = usd.balanceOf(address(escrow));
        vm.assertEq(ledger.creditsOutstanding, credits, "credits outstanding");
        vm.assertEq(
            held,
            credits * UNIT_PER_CREDIT + ledger.reserve + ledger.claimableTotal + ledger.bonds + ledger.surplus,
            "held == credits + reserve + claimable + bonds + surplus"
        );
        vm.assertEq(
            held,
            handler.ghostDepositedUnits() +
                handler.ghostReserveFundedUnits() +
                handler.ghostBondPostedUnits() +
                handler.ghostStraightUnits() -
                handler.ghostWithdrawnUnits() -
                handler.ghostWorkerPaidUnits() -
                handler.ghostTreasuryReceivedUnits(),
            "held == money in - money out"
        );
        vm.assertEq(ledger.reserve, handler.ghostReserveUnits(), "reserve == funded + seized bonds - restored");
        vm.assertEq(ledger.bonds, handler.ghostBondUnits(), "bonds == posted - seized");
        vm.assertEq(ledger.surplus, handler.ghostStraightUnits(), "surplus == stablecoin sent straight");
        vm.assertEq(ledger.owedCredits, handler.owedCredits(), "owed restitution");
    }

    /// @notice Workers got exactly charge − fee, the treasuries exactly the fees (each in its settlement
    /// transaction: nothing accrues), and charge = worker + fee.
    function invariant_perRecipientPayoutsAreExact() public view {
        vm.assertEq(handler.ghostTreasuryReceivedUnits(), handler.ghostFeeUnits(), "every fee reached the treasury");
        vm.assertEq(
            handler.ghostWorkerPaidUnits() + handler.ghostFeeUnits(),
            handler.ghostChargedCredits() * UNIT_PER_CREDIT,
            "worker + fee == charged units"
        );
        vm.assertEq(
            handler.paidOutBalances(),
            handler.ghostWorkerPaidUnits() + handler.ghostTreasuryReceivedUnits(),
            "balances of workers and treasuries"
        );
    }

    /// @notice The registry holds exactly the stakes; the treasury received exactly the slashes.
    function invariant_stakeTokenIsConserved() public view {
        vm.assertEq(svc.balanceOf(address(workers)), handler.ghostStakeHeld(), "registry == sum of stakes");
        vm.assertEq(svc.balanceOf(treasury), handler.ghostSlashed(), "treasury == sum of slashes");
    }

    /// @notice Each wallet's credits are what the independent ledger says.
    function invariant_accountsMatchLedger() public view {
        address[3] memory accounts = handler.wallets();
        for (uint256 i; i < accounts.length; ++i) {
            ICreditEscrow.Account memory account = escrow.accountOf(accounts[i]);
            vm.assertEq(account.available, handler.ghostAvailable(accounts[i]), "available");
            vm.assertEq(account.locked, handler.ghostLocked(accounts[i]), "locked");
            vm.assertEq(account.lastTopUpAt, handler.ghostLastTopUp(accounts[i]), "last top-up (cap mark hidden)");
        }
    }

    /// @notice No job is closed (settled, failed or refunded) more than once, and its status is the ledger's.
    function invariant_noJobClosedTwice() public view {
        uint256 count = handler.jobCount();
        for (uint256 i; i < count; ++i) {
            (bytes32 jobId, JobStatus expected, uint32 closes, ) = handler.jobAt(i);
            vm.assertLe(closes, 1, "closed at most once");
            vm.assertEq(closes == 0, expected == JobStatus.Open, "open exactly while never closed");
            (JobStatus status, , , ) = escrow.jobOf(jobId);
            vm.assertEq(uint8(status), uint8(expected), "status");
        }
    }

    /// @notice Every open job whose settle grace is not over can be settled now by an eligible worker's valid
    /// receipt (checked on a snapshot).
    function invariant_everyValidInTimeReceiptIsPayable() public {
        if (escrow.paused()) return;
        uint256 count = handler.jobCount();
        uint256[3] memory keys_ = handler.workerKeys();
        for (uint256 i; i < count; ++i) {
            (bytes32 jobId, EscrowHandler.GhostJob memory job, uint64 settleBy, , bytes32 modelKey) = handler.jobFacts(
                i
            );
            if (job.status != JobStatus.Open || block.timestamp > settleBy) continue;
            uint256 signerKey;
            for (uint256 k; k < keys_.length; ++k) {
                if (workers.canServe(vm.addr(keys_[k]), modelKey)) signerKey = keys_[k];
            }
            if (signerKey == 0) continue;
            Receipt memory receipt = Receipt({
                jobId: jobId,
                outputHash: keccak256(abi.encode(jobId)),
                promptTokens: 1,
                completionTokens: job.maxTokens,
                finalTokenAt: block.timestamp < job.deadline ? uint64(block.timestamp) : job.deadline
            });
            (uint8 v, bytes32 r, bytes32 s) = vm.sign(signerKey, escrow.receiptDigest(receipt));
            uint256 snapshot = vm.snapshotState();
            vm.prank(gateway);
            escrow.settle(receipt, abi.encodePacked(r, s, v));
            vm.revertToState(snapshot);
        }
    }

    /// @notice Every settled, undisputed job can be disputed up to the end of its window: the dispute window
    /// after its settlement (or its final token, if later). Checked on a snapshot.
    function invariant_everySettlementIsDisputableForItsWindow() public {
        uint256 count = handler.jobCount();
        for (uint256 i; i < count; ++i) {
            (bytes32 jobId, EscrowHandler.GhostJob memory job, , uint64 windowEnd, ) = handler.jobFacts(i);
            if (job.status != JobStatus.Settled || job.disputeOpened || block.timestamp > windowEnd) continue;
            vm.assertGe(windowEnd, job.settledAt + escrow.disputeWindow(), "window from the settlement");
            uint256 snapshot = vm.snapshotState();
            vm.warp(windowEnd);
            Settlement memory settlement = job.settlement;
            vm.prank(gateway);
            disputes.openDispute(jobId, settlement, ~settlement.outputHash);
            vm.revertToState(snapshot);
        }
    }

    /// @notice Whatever happened, once every open job's settle grace has passed anyone can refund it, and then
    /// no credits stay locked. Checked on a snapshot, so the run continues from the real state.
    function invariant_lockedCreditsRecoverableAfterTimeout() public {
        uint256 snapshot = vm.snapshotState();
        uint256 count = handler.jobCount();
        uint256 latest = block.timestamp;
        for (uint256 i; i < count; ++i) {
            (, EscrowHandler.GhostJob memory job, uint64 settleBy, , ) = handler.jobFacts(i);
            if (job.status == JobStatus.Open && settleBy > latest) latest = settleBy;
        }
        vm.warp(latest + 1);
        for (uint256 i; i < count; ++i) {
            (bytes32 jobId, JobStatus status, , ) = handler.jobAt(i);
            if (status != JobStatus.Open) continue;
            vm.prank(address(0xAB0DE));
            escrow.refund(jobId);
        }
        address[3] memory accounts = handler.wallets();
        for (uint256 i; i < accounts.length; ++i) {
            vm.assertEq(escrow.accountOf(accounts[i]).locked, 0, "nothing locked after refunds");
        }
        vm.revertToState(snapshot);
    }
}
