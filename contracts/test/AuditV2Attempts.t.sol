// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "../interfaces/IApiKeyRegistry.sol";
import {IModelCatalog} from "../interfaces/IModelCatalog.sol";
import {IWorkerRegistry} from "../interfaces/IWorkerRegistry.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Tier} from "../types/Tier.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";
import {Pricing} from "../libraries/Pricing.sol";
import {SpendWindow} from "../libraries/SpendWindow.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm} from "./utils/Vm.sol";

/// @notice Second-round audit: attempts to break each property issue 16 requires of the v2 contracts. Every
/// attempt below failed to break its property, so each is kept as a regression test named after the property.
contract AuditV2AttemptsTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0xA0D17000));
    bytes32 private constant CLIENT_HASH = keccak256("what the client really received");
    uint32 private constant SMALL_CONTEXT = 8_192;
    uint256 private constant ATTACKER_PK = 0xBAD;
    uint256 private constant CAP = 1_000;
    uint256 private constant STEPS = 40;
    uint256 private constant FUZZ_STEPS = 16;

    // ================================================================ (1) stolen gateway key

    /// @dev The thief registers its own worker, opens at the model's whole context and settles a receipt
    /// claiming the maximum token count: the charge never exceeds the price of the context window.
    function test_stolenGateway_ownWorkerChargesAtMostThePriceOfTheContextWindow() public {
        bytes32 model = _addSmallContextModel();
        address thief = _registerAttackerWorker(model);
        uint256 ceiling = Pricing.price(MAX_CPR, MAX_CP1K, SMALL_CONTEXT);

        vm.prank(gateway);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.MaxTokensInvalid.selector, SMALL_CONTEXT + 1));
        escrow.openJob(JOB, walletKeyHash, model, SMALL_CONTEXT + 1);

        _openJob(JOB, model, SMALL_CONTEXT);
        Receipt memory receipt = _receipt(JOB, type(uint32).max);
        _settle(receipt, _sign(ATTACKER_PK, receipt));
        vm.assertEq(WALLET_CREDITS - _available(wallet), ceiling, "charged at most the context window's price");
        vm.assertLe(usd.balanceOf(thief), ceiling * UNIT_PER_CREDIT, "thief paid at most that");
        _assertConservation();
    }

    /// @dev Locks at the last second of a slot, fails them to recover the credits, re-opens in later slots with
    /// single opens and batches: locks in every rolling hour (any 3,600 s interval) stay within the wallet's cap.
    function test_stolenGateway_capHoldsAcrossSlotBoundariesBatchesAndFailedJobs() public {
        bytes32 model = _addSmallContextModel();
        vm.prank(wallet);
        escrow.setSpendingCap(CAP);

        uint256 slotEnd = (block.timestamp / SpendWindow.SLOT_SECONDS + 1) * SpendWindow.SLOT_SECONDS - 1;
        uint256[] memory times = new uint256[](STEPS);
        uint256[] memory locked = new uint256[](STEPS);
        uint256 nonce;
        uint256 total;
        for (uint256 step; step < STEPS; ++step) {
            // Pairs straddling a slot edge (last second, first second), every half slot, over 3+ hours.
            uint256 t = slotEnd + ((step / 2) * SpendWindow.SLOT_SECONDS) / 2 + (step % 2);
            vm.warp(t);
            times[step] = t;
            uint256 first = nonce + 1;
            ICreditEscrow.OpenRequest[] memory batch = new ICreditEscrow.OpenRequest[](12);
            for (uint256 i; i < 12; ++i) {
                batch[i] = ICreditEscrow.OpenRequest(
                    bytes32(uint256(JOB) + ++nonce),
                    walletKeyHash,
                    model,
                    1_000,
                    uint64(block.timestamp)
                );
            }
            vm.prank(gateway);
            escrow.openJobBatch(batch);
            vm.prank(gateway);
            try escrow.openJob(bytes32(uint256(JOB) + ++nonce), walletKeyHash, model, 1_000) {} catch {}
            // Release every lock just taken, so the balance never limits the thief: only the cap does.
            for (uint256 j = first; j <= nonce; ++j) {
                (JobStatus status, , uint256 credits, ) = escrow.jobOf(bytes32(uint256(JOB) + j));
                if (status != JobStatus.Open) continue;
                locked[step] += credits;
                vm.prank(gateway);
                escrow.failJob(bytes32(uint256(JOB) + j));
            }
            total += locked[step];
        }
        for (uint256 i; i < STEPS; ++i) {
            uint256 sum;
            for (uint256 j = i; j < STEPS && times[j] <= times[i] + 1 hours; ++j) sum += locked[j];
            vm.assertLe(sum, CAP, "locks in a rolling hour <= cap");
        }
        vm.assertGt(total, 2 * CAP, "the thief did lock again in later hours");
        vm.assertEq(_available(wallet), WALLET_CREDITS, "failed jobs returned every credit");
    }

    /// @dev Random times (including long gaps and same-second bursts), sizes, batches and failures: the credits
    /// the jobs actually locked (read from the jobs, not the spend window) stay within the cap in any hour.
    function testFuzz_stolenGateway_locksInAnyRollingHourNeverExceedTheCap(uint256 seed) public {
        bytes32 model = _addSmallContextModel();
        vm.prank(wallet);
        escrow.setSpendingCap(CAP);
        uint256[] memory times = new uint256[](FUZZ_STEPS);
        uint256[] memory locked = new uint256[](FUZZ_STEPS);
        for (uint256 step; step < FUZZ_STEPS; ++step) {
            uint256 r = uint256(keccak256(abi.encode(seed, step)));
            vm.warp(block.timestamp + (r % 4 == 0 ? 0 : (r >> 8) % 1_500));
            times[step] = block.timestamp;
            uint256 size = 1 + ((r >> 24) % 6);
            ICreditEscrow.OpenRequest[] memory batch = new ICreditEscrow.OpenRequest[](size);
            for (uint256 i; i < size; ++i) {
                uint32 maxTokens = uint32(1 + (uint256(keccak256(abi.encode(r, i))) % SMALL_CONTEXT));
                batch[i] = ICreditEscrow.OpenRequest(
                    _id(step, i),
                    walletKeyHash,
                    model,
                    maxTokens,
                    uint64(block.timestamp)
                );
            }
            vm.prank(gateway);
            escrow.openJobBatch(batch);
            for (uint256 i; i < size; ++i) {
                (JobStatus status, , uint256 credits, ) = escrow.jobOf(_id(step, i));
                if (status != JobStatus.Open) continue;
                locked[step] += credits;
                if ((r >> (40 + i)) & 1 == 1) {
                    vm.prank(gateway);
                    escrow.failJob(_id(step, i));
                }
            }
        }
        for (uint256 i; i < FUZZ_STEPS; ++i) {
            uint256 sum;
            for (uint256 j = i; j < FUZZ_STEPS && times[j] <= times[i] + 1 hours; ++j) sum += locked[j];
            vm.assertLe(sum, CAP, "locks in a rolling hour <= cap");
        }
    }

    /// @dev Informational (reported): the cap counts only locks taken while a cap is set, so locks taken in the
    /// hour before the wallet first sets it do not count against it. A wallet reacting to a theft still stops it
    /// at the cap from then on.
    function test_stolenGateway_capCountsLocksFromTheMomentItIsSet() public {
        for (uint256 i; i < 20; ++i) _openJob(_id(0, i), maxModel, 1_000); // 50 credits each, no cap yet
        vm.prank(wallet);
        escrow.setSpendingCap(CAP);
        for (uint256 i; i < 20; ++i) _openJob(_id(1, i), maxModel, 1_000);
        vm.prank(gateway);
        vm.expectRevert();
        escrow.openJob(_id(2, 0), walletKeyHash, maxModel, 1_000);
        vm.assertEq(_locked(wallet), 2 * CAP, "the cap's own hour holds; earlier locks were not counted");
    }

    /// @dev Duplicate receipts in one batch, a receipt for a refunded job and a refund of a settled job: each
    /// job pays once and the ledger balances.
    function test_stolenGateway_batchAndRefundOrderingNeverPaysAJobTwice() public {
        bytes32 model = _addSmallContextModel();
        address thief = _registerAttackerWorker(model);
        _openJob(JOB, model, 2_000);
        bytes32 other = bytes32(uint256(JOB) + 1);
        _openJob(other, model, 2_000);
        Receipt memory receipt = _receipt(JOB, 2_000);
        bytes memory signature = _sign(ATTACKER_PK, receipt);
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        for (uint256 i; i < 3; ++i) (receipts[i], signatures[i]) = (receipt, signature);
        vm.prank(gateway);
        uint256 settled = escrow.settleBatch(receipts, signatures);
        vm.assertEq(settled, 1, "a receipt settles once");
        uint256 charge = Pricing.price(MAX_CPR, MAX_CP1K, 2_000);
        vm.assertEq(
            usd.balanceOf(thief),
            charge * UNIT_PER_CREDIT - (charge * UNIT_PER_CREDIT * FEE_BPS) / 10_000,
            "paid once"
        );

        vm.prank(gateway);
        vm.expectRevert();
        escrow.failJob(JOB); // a settled job cannot also be released

        vm.warp(block.timestamp + JOB_TIMEOUT + 1);
        vm.prank(gateway);
        escrow.refund(other);
        Receipt memory late = _receipt(other, 2_000);
        late.finalTokenAt = uint64(block.timestamp - 2);
        bytes memory lateSignature = _sign(ATTACKER_PK, late);
        vm.prank(gateway);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, other, JobStatus.Refunded, JobStatus.Open)
        );
        escrow.settle(late, lateSignature); // a refunded job cannot also be charged
        vm.assertEq(_available(wallet), WALLET_CREDITS - charge, "one charge in all");
        _assertConservation();
    }

    /// @dev A failed job id cannot be opened again (no second lock on the same id, no replay of its receipt).
    function test_stolenGateway_failedJobIdCannotBeReopened() public {
        _openJob(JOB, maxModel, 1_000);
        vm.prank(gateway);
        escrow.failJob(JOB);
        vm.prank(gateway);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.JobAlreadyExists.selector, JOB));
        escrow.openJob(JOB, walletKeyHash, maxModel, 1_000);
    }

    // ================================================================ (2) disputes

    /// @dev Pause longer than the timeout, settle at the very end of the grace after the unpause with a receipt
    /// stamped at the deadline: still disputable for the full window from settlement.
    function test_disputes_jobSettledAtTheEndOfAPauseGraceIsDisputableForTheFullWindow() public {
        _openJob(JOB, maxModel, 4_000);
        uint64 deadline = uint64(block.timestamp + JOB_TIMEOUT);
        Receipt memory receipt = _receipt(JOB, 1_200);
        receipt.finalTokenAt = deadline;
        vm.warp(deadline + _settleGrace());
        escrow.pause();
        vm.warp(block.timestamp + 3 days);
        escrow.unpause();
        vm.warp(block.timestamp + _settleGrace());
        _settle(receipt, _sign(WORKER_PK, receipt));
        Settlement memory facts = _settlementOf(receipt, wallet, worker, _priceOf(maxModel, 1_200));
        vm.warp(block.timestamp + DISPUTE_WINDOW);
        vm.prank(gateway);
        disputes.openDispute(JOB, facts, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        vm.assertEq(uint8(workers.getWorker(worker).status), uint8(IWorkerRegistry.WorkerStatus.Slashed), "slashed");
    }

    /// @dev Disputes stay open while the escrow is paused.
    function test_disputes_aPauseDoesNotCloseTheDisputeWindow() public {
        _openJob(JOB, maxModel, 4_000);
        Receipt memory receipt = _receipt(JOB, 1_200);
        _settle(receipt, _sign(WORKER_PK, receipt));
        escrow.pause();
        vm.warp(block.timestamp + DISPUTE_WINDOW);
        vm.prank(gateway);
        disputes.openDispute(JOB, _settlementOf(receipt, wallet, worker, _priceOf(maxModel, 1_200)), CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
    }

    /// @dev The worker starts unbonding, settles at the last moment it may, stamps its receipt 30 s in the future
    /// and the dispute opens at the last second: the verdict still lands before the stake unlocks.
    function test_disputes_unbondingWorkerCannotWithdrawBeforeTheVerdict() public {
        vm.prank(worker);
        workers.startUnbonding();
        uint64 unlockAt = workers.getWorker(worker).unlockAt;
        vm.warp(unlockAt - workers.slashExposure() - 1);
        _openJob(JOB, maxModel, 4_000);
        Receipt memory receipt = _receipt(JOB, 1_200);
        receipt.finalTokenAt = uint64(block.timestamp + 30);
        _settle(receipt, _sign(WORKER_PK, receipt));
        vm.warp(receipt.finalTokenAt + DISPUTE_WINDOW);
        vm.prank(gateway);
        disputes.openDispute(JOB, _settlementOf(receipt, wallet, worker, _priceOf(maxModel, 1_200)), CLIENT_HASH);
        vm.warp(block.timestamp + ARBITRATION_WINDOW);
        vm.prank(worker);
        vm.expectRevert();
        workers.withdraw();
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        vm.assertEq(workers.getWorker(worker).stake, 0, "whole stake slashed");
        vm.assertEq(svc.balanceOf(worker), 0, "nothing withdrawn");
    }

    /// @dev Past that moment the unbonding worker can no longer be paid at all.
    function test_disputes_unbondingWorkerIsNotPaidOnceASlashCouldMissItsStake() public {
        vm.prank(worker);
        workers.startUnbonding();
        vm.warp(workers.getWorker(worker).unlockAt - workers.slashExposure());
        _openJob(JOB, maxModel, 4_000);
        Receipt memory receipt = _receipt(JOB, 1_200);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.prank(gateway);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, JOB, worker, maxModel));
        escrow.settle(receipt, signature);
    }

    /// @dev A slashed address is banned for good, including after it would have exited.
    function test_disputes_slashedWorkerCannotRegisterAgain() public {
        Settlement memory facts = _settleJob(JOB, 1_200);
        vm.prank(gateway);
        disputes.openDispute(JOB, facts, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        svc.mint(worker, MIN_STAKE);
        vm.startPrank(worker);
        svc.approve(address(workers), MIN_STAKE);
        vm.expectRevert(abi.encodeWithSelector(IWorkerRegistry.WorkerBanned.selector, worker));
        workers.register("http://worker.test", _one(maxModel), MIN_STAKE);
        vm.stopPrank();
    }

    /// @dev A worker already slashed for one fraud cannot make its other, earlier frauds undisputable: each is
    /// still upheld and restituted even though there is no stake left to take.
    function test_disputes_everyFraudOfAnAlreadySlashedWorkerIsStillUpheldAndRestituted() public {
        _fundReserve(1_000 * UNIT_PER_CREDIT);
        Settlement memory first = _settleJob(JOB, 1_200);
        bytes32 second = bytes32(uint256(JOB) + 1);
        Settlement memory other = _settleJob(second, 2_000);
        uint256 availableBefore = _available(wallet);
        vm.startPrank(gateway);
        disputes.openDispute(JOB, first, CLIENT_HASH);
        disputes.openDispute(second, other, CLIENT_HASH);
        vm.stopPrank();
        vm.startPrank(arbiter);
        disputes.resolveDispute(JOB, true);
        disputes.resolveDispute(second, true);
        vm.stopPrank();
        vm.assertEq(
            _available(wallet),
            availableBefore + first.creditsCharged + other.creditsCharged,
            "both charges restored"
        );
        _assertConservation();
    }

    /// @dev Owed restitution is neither skipped (a later, smaller claim never overtakes) nor paid twice.
    function test_disputes_owedRestitutionIsPaidOnceInOrder() public {
        Settlement memory big = _settleJob(JOB, 4_000); // reserve empty
        _dropBond(worker); // the owed queue needs a bond short too (issue 22: the seized bond pays first)
        vm.prank(gateway);
        disputes.openDispute(JOB, big, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        // A second, smaller fraud by another worker.
        bytes32 second = bytes32(uint256(JOB) + 1);
        _openJob(second, liteModel, 1_000);
        Receipt memory receipt = _receipt(second, 1_000);
        _settle(receipt, _sign(LITE_WORKER_PK, receipt));
        _dropBond(liteWorker);
        vm.prank(gateway);
        disputes.openDispute(
            second,
            _settlementOf(receipt, wallet, liteWorker, _priceOf(liteModel, 1_000)),
            CLIENT_HASH
        );
        vm.prank(arbiter);
        disputes.resolveDispute(second, true);
        uint256 availableBefore = _available(wallet);

        uint256 bigCredits = _priceOf(maxModel, 4_000);
        uint256 liteCredits = _priceOf(liteModel, 1_000);
        _fundReserve(liteCredits * UNIT_PER_CREDIT); // enough for the newer claim only
        escrow.payOwedRestitution(10);
        vm.assertEq(_available(wallet), availableBefore, "the newer claim does not overtake the older");
        _fundReserve(bigCredits * UNIT_PER_CREDIT);
        vm.assertEq(_available(wallet), availableBefore + bigCredits + liteCredits, "both paid");
        escrow.payOwedRestitution(10);
        _fundReserve(200 * UNIT_PER_CREDIT);
        vm.assertEq(_available(wallet), availableBefore + bigCredits + liteCredits, "never paid twice");
        vm.assertEq(escrow.ledger().owedCredits, 0, "nothing owed");
        _assertConservation();
    }

    /// @dev A second pause within the grace after the first continues the run: a job delivered in time and
    /// protected by the first pause can still be settled after the second, and no stranger refunds it first.
    function test_disputes_twoPausesInARunNeverTurnDeliveredWorkIntoARefund() public {
        _openJob(JOB, maxModel, 4_000);
        uint64 deadline = uint64(block.timestamp + JOB_TIMEOUT);
        Receipt memory receipt = _receipt(JOB, 1_200);
        receipt.finalTokenAt = deadline;
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.warp(deadline + _settleGrace());
        escrow.pause();
        vm.warp(block.timestamp + 2 days);
        escrow.unpause();
        vm.warp(block.timestamp + _settleGrace());
        escrow.pause(); // the last second of the grace
        vm.warp(block.timestamp + 2 days);
        escrow.unpause();
        vm.warp(block.timestamp + _settleGrace());
        vm.prank(address(0x5742));
        vm.expectRevert();
        escrow.refund(JOB);
        _settle(receipt, signature);
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "delivered work paid");
    }

    /// @dev The fee is the one in force when the job opened, even when it settles after the switch, and the old
    /// fee cannot be retired while such a job can still settle (pause extension included).
    function test_admin_feeStaysTheOneAtOpeningAcrossTheSwitchAndAPause() public {
        escrow.scheduleProtocolFee(2_000);
        uint256 switchAt = block.timestamp + 2 days;
        vm.warp(switchAt - 1);
        _openJob(JOB, maxModel, 4_000);
        Receipt memory receipt = _receipt(JOB, 4_000);
        receipt.finalTokenAt = uint64(block.timestamp + JOB_TIMEOUT);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.warp(block.timestamp + JOB_TIMEOUT + _settleGrace());
        escrow.pause();
        vm.warp(block.timestamp + 1 days);
        escrow.unpause();
        vm.expectRevert();
        escrow.scheduleProtocolFee(0);
        vm.warp(block.timestamp + _settleGrace());
        vm.expectRevert();
        escrow.scheduleProtocolFee(0);
        uint256 treasuryBefore = usd.balanceOf(treasury);
        _settle(receipt, signature);
        uint256 units = _priceOf(maxModel, 4_000) * UNIT_PER_CREDIT;
        vm.assertEq(usd.balanceOf(treasury) - treasuryBefore, (units * FEE_BPS) / 10_000, "fee fixed at opening");
        vm.warp(block.timestamp + 1);
        escrow.scheduleProtocolFee(0); // retiring is allowed once nothing opened under it can settle
    }

    // ================================================================ (3) conservation

    /// @dev Deposits, locks, settlement, failure, refund, upheld dispute owed then paid, a donation, a sweep and
    /// claims: held stablecoin always equals what is owed plus surplus, and the sweep takes only the surplus.
    function test_conservation_heldEqualsOwedPlusSurplusThroughEveryOperation() public {
        _assertConservation();
        Settlement memory facts = _settleJob(JOB, 2_000);
        _assertConservation();
        _openJob(bytes32(uint256(JOB) + 1), maxModel, 1_000);
        vm.prank(gateway);
        escrow.failJob(bytes32(uint256(JOB) + 1));
        _openJob(bytes32(uint256(JOB) + 2), maxModel, 1_000);
        vm.warp(block.timestamp + JOB_TIMEOUT + _settleGrace() + 1);
        escrow.refund(bytes32(uint256(JOB) + 2));
        _assertConservation();
        vm.prank(gateway);
        vm.expectRevert(); // the window closed long ago; the disputed path is covered by the restitution tests
        disputes.openDispute(JOB, facts, CLIENT_HASH);
        usd.mint(address(escrow), 77_777);
        escrow.sweepSurplus(address(0x5EE9));
        vm.assertEq(usd.balanceOf(address(0x5EE9)), 77_777, "only the donation swept");
        _assertConservation();
        vm.prank(wallet);
        escrow.withdraw(1_000);
        _assertConservation();
        vm.assertEq(escrow.ledger().surplus, 0, "no surplus left");
    }

    function test_conservation_sweepSurplusNeverTakesOwedFunds() public {
        Settlement memory facts = _settleJob(JOB, 4_000);
        vm.prank(gateway);
        disputes.openDispute(JOB, facts, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        _fundReserve(50 * UNIT_PER_CREDIT); // less than the credits owed
        uint256 held = usd.balanceOf(address(escrow));
        escrow.sweepSurplus(address(0x5EE9));
        vm.assertEq(usd.balanceOf(address(0x5EE9)), 0, "nothing swept");
        vm.assertEq(usd.balanceOf(address(escrow)), held, "nothing owed left the escrow");
        _assertConservation();
    }

    // ================================================================ (4) roles and admin delays

    function test_admin_reschedulingAFeeRestartsTheDelay() public {
        uint256 start = block.timestamp;
        escrow.scheduleProtocolFee(2_000);
        vm.warp(start + 2 days - 1);
        escrow.scheduleProtocolFee(1_999);
        vm.warp(start + 2 days + 1);
        vm.assertEq(escrow.feeBps(), FEE_BPS, "the replaced change restarted its delay");
        vm.warp(start + 4 days - 1);
        vm.assertEq(escrow.feeBps(), 1_999, "effective only after the full delay");
    }

    function test_admin_treasuryReschedulingRestartsTheDelay() public {
        uint256 start = block.timestamp;
        escrow.scheduleTreasury(address(0xAAA1));
        vm.warp(start + 2 days - 1);
        escrow.scheduleTreasury(address(0xAAA2));
        vm.warp(start + 2 days + 1);
        vm.assertEq(escrow.treasury(), treasury, "still the old treasury");
    }

    function test_admin_rolesCannotEscalate() public {
        bytes32 gatewayRole = escrow.GATEWAY_ROLE();
        bytes32 admin = escrow.DEFAULT_ADMIN_ROLE();
        vm.startPrank(gateway);
        vm.expectRevert();
        escrow.grantRole(gatewayRole, address(0xBEEF));
        vm.expectRevert();
        escrow.beginDefaultAdminTransfer(gateway);
        vm.expectRevert();
        escrow.scheduleProtocolFee(0);
        vm.expectRevert();
        escrow.sweepSurplus(gateway);
        vm.stopPrank();
        vm.expectRevert(); // even the admin cannot grant the admin role directly
        escrow.grantRole(admin, address(0xBEEF));
        escrow.beginDefaultAdminTransfer(address(0xBEEF));
        vm.prank(address(0xBEEF));
        vm.expectRevert();
        escrow.acceptDefaultAdminTransfer();
    }

    // ================================================================ (5) key front-running

    /// @dev A revoked or rotated-away hash cannot be claimed by anyone else later, by register or rotate, even
    /// with a commitment (it is later than the owner's).
    function test_keys_usedHashCanNeverBeRebound() public {
        vm.prank(wallet);
        keys.revokeKey();
        address thief = address(0xF12E);
        _commitKey(thief, walletKeyHash);
        vm.prank(thief);
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyHashAlreadyUsed.selector, walletKeyHash));
        keys.registerKey(walletKeyHash);
        _registerKey(thief, keccak256("thief"));
        vm.prank(thief);
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyHashAlreadyUsed.selector, walletKeyHash));
        keys.rotateKey(walletKeyHash);
    }

    // ================================================================ helpers

    function _settleGrace() private view returns (uint64) {
        return escrow.SETTLE_GRACE();
    }

    function _assertConservation() private view {
        ICreditEscrow.Ledger memory ledger = escrow.ledger();
        uint256 owed = ledger.creditsOutstanding * UNIT_PER_CREDIT +
            ledger.reserve +
            ledger.claimableTotal +
            ledger.bonds;
        vm.assertEq(usd.balanceOf(address(escrow)), owed + ledger.surplus, "held == owed + surplus");
    }

    function _id(uint256 step, uint256 i) private pure returns (bytes32) {
        return keccak256(abi.encode("audit-v2", step, i));
    }

    function _addSmallContextModel() private returns (bytes32) {
        uint256 changeId = catalog.scheduleAddModel(
            "small-context",
            IModelCatalog.ModelParams({
                tier: Tier.Max,
                creditsPerRequest: MAX_CPR,
                creditsPer1kTokens: MAX_CP1K,
                contextWindow: SMALL_CONTEXT,
                parameters: "test",
                ownedBy: "test"
            })
        );
        _applyAfterDelay(changeId);
        return keccak256("small-context");
    }

    function _registerAttackerWorker(bytes32 model) private returns (address) {
        return _registerWorker(ATTACKER_PK, _one(model));
    }

    function _one(bytes32 model) private pure returns (bytes32[] memory list) {
        list = new bytes32[](1);
        list[0] = model;
    }

    function _settleJob(bytes32 jobId, uint32 completionTokens) private returns (Settlement memory) {
        _openJob(jobId, maxModel, 4_000);
        Receipt memory receipt = _receipt(jobId, completionTokens);
        _settle(receipt, _sign(WORKER_PK, receipt));
        return _settlementOf(receipt, wallet, worker, _priceOf(maxModel, completionTokens));
    }

    function _fundReserve(uint256 amount) private {
        usd.mint(address(this), amount);
        usd.approve(address(escrow), amount);
        escrow.fundReserve(amount);
    }
}
