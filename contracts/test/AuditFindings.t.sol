// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IAccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/IAccessControlDefaultAdminRules.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {CreditEscrow} from "../CreditEscrow.sol";
import {DisputeManager} from "../DisputeManager.sol";
import {WorkerRegistry} from "../WorkerRegistry.sol";
import {ModelCatalog} from "../ModelCatalog.sol";
import {ApiKeyRegistry} from "../ApiKeyRegistry.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "../interfaces/IApiKeyRegistry.sol";
import {IDisputeManager} from "../interfaces/IDisputeManager.sol";
import {IModelCatalog} from "../interfaces/IModelCatalog.sol";
import {IWorkerRegistry} from "../interfaces/IWorkerRegistry.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Tier} from "../types/Tier.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";
import {Pricing} from "../libraries/Pricing.sol";
import {SpendWindow} from "../libraries/SpendWindow.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {FeeOnTransferStablecoin, BlocklistStablecoin, EighteenDecimalDollar} from "./utils/QuirkyStablecoins.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice One named test per finding of the external audit (docs/DESIGN.md, "Audit findings"), each showing
/// the property it asked for holds. Test names carry the finding: H1a/H1b/H1c (stolen gateway key), M1
/// (undisputable jobs), M2 (empty reserve), M3 (fraud pays), L1 (refund race), L2 (batch reverts), L3 (token
/// quirks), L4 (inconsistent parameters), L5 (key front-running), I (informational).
contract AuditFindingsTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x0193a1d2c3b4a5968778695a4b3c2d1e));
    bytes32 private constant CLIENT_HASH = keccak256("what the client really received");
    uint32 private constant SMALL_CONTEXT = 32_768;
    uint256 private constant RESERVE = 1_000_000_000;

    // ================================================================ H1a: no job locks more than its context

    function test_H1a_openJob_revertsIfMaxTokensExceedTheContextWindow() public {
        bytes32 model = _addSmallContextModel();
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.MaxTokensInvalid.selector, SMALL_CONTEXT + 1));
        _openJob(JOB, model, SMALL_CONTEXT + 1);

        _openJob(JOB, model, SMALL_CONTEXT);
        vm.assertEq(_locked(wallet), Pricing.price(MAX_CPR, MAX_CP1K, SMALL_CONTEXT), "the whole window, no more");
    }

    function testFuzz_H1a_lockNeverExceedsThePriceOfTheContextWindow(uint32 maxTokens) public {
        bytes32 model = _addSmallContextModel();
        uint256 ceiling = Pricing.price(MAX_CPR, MAX_CP1K, SMALL_CONTEXT);
        vm.prank(gateway);
        try escrow.openJob(JOB, walletKeyHash, model, maxTokens) {
            vm.assertLe(_locked(wallet), ceiling, "lock <= price of the context window");
        } catch {
            vm.assertTrue(maxTokens == 0 || maxTokens > SMALL_CONTEXT, "only out-of-window requests are refused");
        }
    }

    // ================================================================ H1b: the wallet's own hourly cap

    function test_H1b_openJob_revertsWithSpendingCapExceededAndRoomAtIfHourlyCapReached() public {
        vm.prank(wallet);
        escrow.setSpendingCap(1_000);
        for (uint256 i; i < 20; ++i) _openJob(bytes32(uint256(JOB) + i), maxModel, 1_000); // 50 credits each
        uint256 slot = block.timestamp / SpendWindow.SLOT_SECONDS;
        uint64 roomAt = uint64((slot + SpendWindow.SLOTS) * SpendWindow.SLOT_SECONDS);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.SpendingCapExceeded.selector, wallet, 1_000, 1_000, 50, roomAt)
        );
        _openJob(bytes32(uint256(JOB) + 20), maxModel, 1_000);

        vm.warp(roomAt - 1);
        vm.expectRevert();
        _openJob(bytes32(uint256(JOB) + 20), maxModel, 1_000);
        vm.warp(roomAt);
        _openJob(bytes32(uint256(JOB) + 20), maxModel, 1_000);
    }

    /// @dev The audit's scenario: the gateway key is stolen and a self-registered worker signs whatever the thief
    /// wants. With a cap of 1,000 credits an hour the thief gets at most that much charged in any hour.
    function test_H1b_stolenGatewayKeyTakesAtMostTheCapPerHour() public {
        vm.prank(wallet);
        escrow.setSpendingCap(1_000);
        uint256 thiefPk = 0xBAD;
        bytes32[] memory models = new bytes32[](1);
        models[0] = maxModel;
        address thiefWorker = _registerWorker(thiefPk, models);
        uint256 charged;
        uint256 startedAt = block.timestamp;
        for (uint256 i; i < 200; ++i) {
            bytes32 jobId = bytes32(uint256(JOB) + i);
            vm.prank(gateway);
            try escrow.openJob(jobId, walletKeyHash, maxModel, 1_000) {
                Receipt memory receipt = _receipt(jobId, 1_000);
                _settle(receipt, _sign(thiefPk, receipt));
                charged += 50;
            } catch {}
            vm.warp(block.timestamp + 17); // 200 attempts spread over 56 minutes
        }
        vm.assertLt(block.timestamp - startedAt, 1 hours, "within one hour");
        vm.assertLe(charged, 1_000, "charged within the cap");
        vm.assertLe(usd.balanceOf(thiefWorker), (1_000 * UNIT_PER_CREDIT * 9) / 10, "thief's worker paid within it");
        vm.assertEq(_available(wallet), WALLET_CREDITS - charged, "the rest of the balance is safe");
    }

    function test_H1b_spendingOf_reportsWhenTheOldestCountedSlotStopsCounting() public {
        vm.prank(wallet);
        escrow.setSpendingCap(1_000);
        (, , uint64 nothingCounted) = escrow.spendingOf(wallet);
        vm.assertEq(nothingCounted, 0, "nothing counted: no time");
        _openJob(JOB, maxModel, 1_000);
        uint256 slot = block.timestamp / SpendWindow.SLOT_SECONDS;
        uint64 firstSlotDrops = uint64((slot + SpendWindow.SLOTS) * SpendWindow.SLOT_SECONDS);
        (, uint256 locked, uint64 nextRoomAt) = escrow.spendingOf(wallet);
        vm.assertEq(locked, 50, "one lock counted");
        vm.assertEq(nextRoomAt, firstSlotDrops, "room when the lock's slot leaves the window, not the next slot");

        vm.warp((slot + 2) * SpendWindow.SLOT_SECONDS);
        _openJob(bytes32(uint256(JOB) + 1), maxModel, 1_000);
        (, , nextRoomAt) = escrow.spendingOf(wallet);
        vm.assertEq(nextRoomAt, firstSlotDrops, "the oldest counted slot decides");

        vm.warp(firstSlotDrops);
        (, locked, nextRoomAt) = escrow.spendingOf(wallet);
        vm.assertEq(locked, 50, "the first lock no longer counts");
        vm.assertEq(nextRoomAt, firstSlotDrops + 2 * SpendWindow.SLOT_SECONDS, "then the second lock's slot");
    }

    function test_H1b_gatewayCannotLiftTheWalletsCap() public {
        vm.prank(wallet);
        escrow.setSpendingCap(100);
        vm.prank(gateway);
        escrow.setSpendingCap(0); // sets the gateway's own (nonexistent) wallet cap, nothing else
        (uint256 cap, , ) = escrow.spendingOf(wallet);
        vm.assertEq(cap, 100, "the wallet's cap stands");
    }

    function testFuzz_H1b_locksInAnyRollingHourNeverExceedTheCap(uint256 seed) public {
        uint256 cap = bound(seed, 50, 5_000);
        vm.prank(wallet);
        escrow.setSpendingCap(cap);
        uint256[] memory times = new uint256[](60);
        uint256[] memory amounts = new uint256[](60);
        uint256 n;
        for (uint256 i; i < 60; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            vm.warp(block.timestamp + (r % 600));
            uint32 maxTokens = uint32(500 + ((r >> 16) % 20_000));
            vm.prank(gateway);
            try escrow.openJob(bytes32(uint256(JOB) + i), walletKeyHash, maxModel, maxTokens) {
                times[n] = block.timestamp;
                amounts[n] = Pricing.price(MAX_CPR, MAX_CP1K, maxTokens);
                ++n;
            } catch {}
        }
        for (uint256 i; i < n; ++i) {
            uint256 inHour;
            for (uint256 j; j <= i; ++j) if (times[j] + 1 hours > times[i]) inHour += amounts[j];
            vm.assertLe(inHour, cap, "locks in the hour ending at each lock <= cap");
        }
    }

    // ================================================================ H1c: admin, roles, delayed changes

    function test_H1c_everyContractHasTwoStepDelayedAdmin() public {
        address[5] memory contracts_ = [
            address(escrow),
            address(disputes),
            address(workers),
            address(catalog),
            address(keys)
        ];
        for (uint256 i; i < contracts_.length; ++i) {
            IAccessControlDefaultAdminRules admin = IAccessControlDefaultAdminRules(contracts_[i]);
            vm.assertEq(admin.defaultAdminDelay(), 2 days, "delay");
            vm.expectRevert(IAccessControlDefaultAdminRules.AccessControlEnforcedDefaultAdminRules.selector);
            IAccessControl(contracts_[i]).grantRole(bytes32(0), address(0xA11));
        }
        escrow.beginDefaultAdminTransfer(address(0xA11));
        (, uint48 schedule) = escrow.pendingDefaultAdmin();
        vm.prank(address(0xA11));
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControlDefaultAdminRules.AccessControlEnforcedDefaultAdminDelay.selector,
                schedule
            )
        );
        escrow.acceptDefaultAdminTransfer();
        vm.warp(uint256(schedule) + 1);
        vm.prank(address(0xA11));
        escrow.acceptDefaultAdminTransfer();
        vm.assertEq(escrow.defaultAdmin(), address(0xA11), "new admin after the delay and acceptance");
    }

    function test_H1c_gatewayArbiterAndDisputeRolesCannotAdminister() public {
        address[2] memory holders = [gateway, arbiter];
        for (uint256 i; i < holders.length; ++i) {
            vm.prank(holders[i]);
            vm.expectRevert(
                abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, holders[i], bytes32(0))
            );
            escrow.scheduleProtocolFee(2_000);
        }
        bytes32 gatewayRole = escrow.GATEWAY_ROLE();
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                address(disputes),
                gatewayRole
            )
        );
        vm.prank(address(disputes));
        escrow.openJob(JOB, walletKeyHash, maxModel, 100);
    }

    function test_H1c_feeIsFixedWhenTheJobOpensAndChangesOnlyAfterTheDelay() public {
        escrow.scheduleProtocolFee(2_000);
        _openJob(JOB, maxModel, 1_000); // opened under 10%
        vm.warp(block.timestamp + escrow.CONFIG_CHANGE_DELAY() - 1);
        bytes32 beforeSwitch = bytes32(uint256(JOB) + 1);
        _openJob(beforeSwitch, maxModel, 1_000); // still 10%
        vm.warp(block.timestamp + 1);
        bytes32 afterSwitch = bytes32(uint256(JOB) + 2);
        _openJob(afterSwitch, maxModel, 1_000); // 20%

        uint256 feesBefore = usd.balanceOf(treasury);
        Receipt memory r1 = _receipt(beforeSwitch, 100);
        _settle(r1, _sign(WORKER_PK, r1));
        vm.assertEq(usd.balanceOf(treasury) - feesBefore, 40_000, "10% of 40 credits: fixed at opening");
        Receipt memory r2 = _receipt(afterSwitch, 100);
        _settle(r2, _sign(WORKER_PK, r2));
        vm.assertEq(usd.balanceOf(treasury) - feesBefore, 120_000, "then 20% for the job opened after");

        // The 10% jobs may still settle, so the old fee cannot be retired yet.
        vm.expectRevert();
        escrow.scheduleProtocolFee(500);
    }

    function test_H1c_treasuryChangesOnlyAfterTheDelay() public {
        address newTreasury = address(0x7EA6);
        escrow.scheduleTreasury(newTreasury);
        vm.assertEq(escrow.treasury(), treasury, "old treasury until the delay");
        _openJob(JOB, maxModel, 1_000);
        Receipt memory before = _receipt(JOB, 100);
        _settle(before, _sign(WORKER_PK, before));
        vm.assertEq(usd.balanceOf(treasury), 40_000, "the fee of a settlement before the switch: old treasury");

        vm.warp(block.timestamp + escrow.CONFIG_CHANGE_DELAY());
        vm.assertEq(escrow.treasury(), newTreasury, "new treasury after it");
        bytes32 laterJob = bytes32(uint256(JOB) + 1);
        _openJob(laterJob, maxModel, 1_000);
        Receipt memory later = _receipt(laterJob, 100);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.TreasuryUpdated(newTreasury);
        _settle(later, _sign(WORKER_PK, later));
        vm.assertEq(usd.balanceOf(newTreasury), 40_000, "the fee of a settlement after it: the treasury in effect");
        vm.assertEq(usd.balanceOf(treasury), 40_000, "nothing more to the old one");

        bytes32 laterStill = bytes32(uint256(JOB) + 2);
        _openJob(laterStill, maxModel, 1_000);
        Receipt memory third = _receipt(laterStill, 100);
        _settle(third, _sign(WORKER_PK, third));
        vm.assertEq(usd.balanceOf(newTreasury), 80_000, "and every later fee: the move is kept");
        vm.assertEq(usd.balanceOf(treasury), 40_000, "never the old one again");
    }

    // ================================================================ M1: every settlement disputable

    /// @dev The audit's case: a job settled late (here 10 s before the grace ends, 410 s after its final token)
    /// could never be disputed. Now the window runs from the settlement.
    function test_M1_jobSettledLateCanBeDisputedForTheFullWindowFromSettlement() public {
        _fundReserve(RESERVE);
        _openJob(JOB, maxModel, 1_000);
        Receipt memory receipt = _receipt(JOB, 100);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.warp(block.timestamp + JOB_TIMEOUT + escrow.SETTLE_GRACE() - 10);
        _settle(receipt, signature);
        uint256 settledAt = block.timestamp;
        Settlement memory facts = _settlementOf(receipt, wallet, worker, 40);

        uint256 snapshot = vm.snapshotState();
        vm.warp(settledAt + DISPUTE_WINDOW + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                ICreditEscrow.DisputeWindowExpired.selector,
                JOB,
                receipt.finalTokenAt,
                uint64(settledAt + DISPUTE_WINDOW)
            )
        );
        _openDispute(JOB, facts);
        vm.revertToState(snapshot);

        vm.warp(settledAt + DISPUTE_WINDOW);
        _openDispute(JOB, facts);
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Disputed), "disputed at the last second of the window");
    }

    function test_M1_receiptBackdatedBeforeTheOpeningIsRefused() public {
        vm.warp(block.timestamp + 1_000);
        _openJob(JOB, maxModel, 1_000);
        Receipt memory receipt = _receipt(JOB, 100);
        receipt.finalTokenAt = uint64(block.timestamp - 31);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(
                ICreditEscrow.ReceiptTimeInvalid.selector,
                JOB,
                receipt.finalTokenAt,
                uint64(block.timestamp + JOB_TIMEOUT)
            )
        );
        _settle(receipt, signature);
    }

    function testFuzz_M1_everySettlementIsDisputableForItsWindow(uint256 finalTokenSeed, uint256 settleDelay) public {
        _openJob(JOB, maxModel, 1_000);
        uint256 openedAt = block.timestamp;
        settleDelay = bound(settleDelay, 0, JOB_TIMEOUT + escrow.SETTLE_GRACE());
        vm.warp(openedAt + settleDelay);
        uint256 latest = block.timestamp + 30 < openedAt + JOB_TIMEOUT ? block.timestamp + 30 : openedAt + JOB_TIMEOUT;
        Receipt memory receipt = _receipt(JOB, 100);
        receipt.finalTokenAt = uint64(bound(finalTokenSeed, openedAt - 30, latest));
        _settle(receipt, _sign(WORKER_PK, receipt));
        uint256 windowEnd = (block.timestamp > receipt.finalTokenAt ? block.timestamp : receipt.finalTokenAt) +
            DISPUTE_WINDOW;
        vm.assertGe(windowEnd, block.timestamp + DISPUTE_WINDOW, "the full window from the settlement");
        vm.assertGe(windowEnd, receipt.finalTokenAt + 60, "never less than 60 s from the final token");
        vm.warp(windowEnd);
        _openDispute(JOB, _settlementOf(receipt, wallet, worker, 40));
    }

    // ================================================================ M2: the reserve never decides a verdict

    function test_M2_fraudVerdictAndSlashDoNotDependOnTheReserve() public {
        Settlement memory facts = _settleJob(JOB, 1_200); // 54 credits; the reserve is empty
        uint256 availableBefore = _available(wallet);
        _openDispute(JOB, facts);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        vm.assertEq(uint8(disputes.getDispute(JOB).outcome), uint8(IDisputeManager.Outcome.Upheld), "upheld");
        vm.assertEq(workers.getWorker(worker).stake, 0, "slashed");
        // Issue 22 item 1: the seized bond pays the restitution (it used to be owed until the reserve was funded).
        vm.assertEq(escrow.ledger().owedCredits, 0, "nothing owed");
        vm.assertEq(_available(wallet), availableBefore + 54, "restituted from the seized bond");
    }

    /// @dev Since issue 22 the seized bond pays restitution first; the owed queue is reached only when reserve and
    /// bond fall short together, which `_dropBond` stands in for.
    function test_M2_owedRestitutionIsPaidFirstAndInOrderWhenTheReserveIsToppedUp() public {
        Settlement memory first = _settleJob(JOB, 1_200); // 54 credits
        bytes32 second = bytes32(uint256(JOB) + 1);
        Settlement memory secondFacts = _settleJob(second, 600); // 42 credits, by the same worker
        _dropBond(worker);
        _openDispute(JOB, first);
        _openDispute(second, secondFacts);
        vm.startPrank(arbiter);
        disputes.resolveDispute(JOB, true);
        disputes.resolveDispute(second, true);
        vm.stopPrank();
        uint256 availableBefore = _available(wallet);

        // Enough for the first only: it is paid, the second stays owed, the reserve keeps the rest.
        uint256 funding = 60 * UNIT_PER_CREDIT;
        usd.mint(address(this), funding);
        usd.approve(address(escrow), funding);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.RestitutionPaid(JOB, wallet, 54, availableBefore + 54);
        escrow.fundReserve(funding);
        vm.assertEq(_available(wallet), availableBefore + 54, "first paid");
        vm.assertEq(escrow.ledger().owedCredits, 42, "second still owed");
        vm.assertEq(escrow.reserve(), 6 * UNIT_PER_CREDIT, "rest kept");

        _fundReserve(36 * UNIT_PER_CREDIT);
        vm.assertEq(_available(wallet), availableBefore + 96, "second paid");
        vm.assertEq(escrow.ledger().owedCredits, 0, "nothing owed");
        vm.assertEq(escrow.reserve(), 0, "reserve used exactly");
    }

    function test_M2_aNewerRestitutionNeverOvertakesAnOlderOwedOne() public {
        Settlement memory older = _settleJob(JOB, 1_200); // 54 credits; the reserve is empty
        bytes32 newer = bytes32(uint256(JOB) + 1);
        Settlement memory newerFacts = _settleJob(newer, 600); // 42 credits
        _dropBond(worker);
        _openDispute(JOB, older);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true); // owed: 54
        _fundReserve(42 * UNIT_PER_CREDIT); // not enough for the older one, enough for the newer one
        _openDispute(newer, newerFacts);
        uint256 availableBefore = _available(wallet);
        vm.prank(arbiter);
        disputes.resolveDispute(newer, true);

        vm.assertEq(_available(wallet), availableBefore, "the newer one waits behind the older one");
        vm.assertEq(escrow.ledger().owedCredits, 96, "both owed, in order");
        vm.assertEq(escrow.reserve(), 42 * UNIT_PER_CREDIT, "the reserve is kept for the older claim");
    }

    // ================================================================ M3: fraud never pays

    function test_M3_upheldDisputeTakesTheWholeStakeAndBansTheWorker() public {
        _fundReserve(RESERVE);
        Settlement memory facts = _settleJob(JOB, 1_200);
        _openDispute(JOB, facts);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);

        IWorkerRegistry.Worker memory record = workers.getWorker(worker);
        vm.assertEq(record.stake, 0, "whole stake");
        vm.assertEq(uint8(record.status), uint8(IWorkerRegistry.WorkerStatus.Slashed), "out of the pool");
        vm.assertEq(record.modelKeys.length, 0, "hosts nothing");
        vm.assertEq(svc.balanceOf(treasury), MIN_STAKE, "to the treasury");

        svc.mint(worker, MIN_STAKE);
        vm.startPrank(worker);
        svc.approve(address(workers), MIN_STAKE);
        bytes32[] memory models = new bytes32[](1);
        models[0] = maxModel;
        vm.expectRevert(abi.encodeWithSelector(IWorkerRegistry.WorkerBanned.selector, worker));
        workers.register("http://again.test", models, MIN_STAKE);
        vm.stopPrank();
    }

    /// @dev Any sequence of jobs, some faked and disputed: the cheating worker never ends ahead of an honest twin
    /// doing the same jobs. It is paid at most what the twin is (nothing after its first upheld dispute) and loses
    /// its whole stake and its whole stablecoin bond, while the twin keeps its own.
    function testFuzz_M3_noSequenceOfJobsAndDisputesLetsACheatingWorkerEndAhead(uint256 seed) public {
        _fundReserve(RESERVE);
        uint256 snapshot = vm.snapshotState();
        (uint256 cheaterPay, uint256 cheaterStake, bool caught) = _runWorkerHistory(seed, true);
        (uint256 cheaterBond, , ) = escrow.bondOf(worker);
        vm.revertToState(snapshot);
        (uint256 honestPay, uint256 honestStake, ) = _runWorkerHistory(seed, false);
        (uint256 honestBond, , ) = escrow.bondOf(worker);

        vm.assertLe(cheaterPay, honestPay, "never paid more than the honest twin");
        vm.assertLe(cheaterStake, honestStake, "never keeps more stake");
        if (caught) {
            vm.assertEq(cheaterStake, 0, "a cheater caught loses its whole stake");
            vm.assertLt(cheaterPay + cheaterStake, honestPay + honestStake, "and ends strictly behind");
            // Issue 22: it also loses its whole stablecoin bond, which is at least everything it was paid for
            // jobs still disputable, so its stablecoin ends below the twin's as well.
            vm.assertEq(cheaterBond, 0, "a cheater caught loses its whole bond");
            vm.assertLt(cheaterPay + cheaterBond, honestPay + honestBond, "less stablecoin than the twin");
        }
    }

    // ================================================================ L1: no refund race

    function test_L1_inTimeReceiptSettlesDuringTheGraceAfterTheDeadline() public {
        _openJob(JOB, maxModel, 1_000);
        uint64 deadline = uint64(block.timestamp) + JOB_TIMEOUT;
        Receipt memory receipt = _receipt(JOB, 100);
        receipt.finalTokenAt = deadline;
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotExpired.selector, JOB, deadline + escrow.SETTLE_GRACE())
        );
        vm.prank(address(0xBEEF));
        escrow.refund(JOB); // nobody can race the settlement during the grace
        vm.warp(deadline + escrow.SETTLE_GRACE());
        _settle(receipt, signature);
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "paid");
    }

    function test_L1_anyoneRefundsOnlyAfterTheGraceAndSettlementStopsThen() public {
        _openJob(JOB, maxModel, 1_000);
        uint64 deadline = uint64(block.timestamp) + JOB_TIMEOUT;
        Receipt memory receipt = _receipt(JOB, 100);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.warp(deadline + escrow.SETTLE_GRACE() + 1);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.SettlementWindowClosed.selector, JOB, deadline + escrow.SETTLE_GRACE())
        );
        _settle(receipt, signature);
        vm.prank(address(0xBEEF));
        escrow.refund(JOB);
        vm.assertEq(_available(wallet), WALLET_CREDITS, "refunded");
    }

    function test_L1_gatewayMayRefundItsOwnJobAtTheDeadline() public {
        _openJob(JOB, maxModel, 1_000);
        vm.warp(block.timestamp + JOB_TIMEOUT + 1);
        vm.prank(gateway);
        escrow.refund(JOB);
        vm.assertEq(_available(wallet), WALLET_CREDITS, "refunded by the gateway, which holds no receipt");
    }

    function test_L1_aPauseNeverTurnsDeliveredWorkIntoARefund() public {
        _openJob(JOB, maxModel, 1_000);
        Receipt memory receipt = _receipt(JOB, 100);
        bytes memory signature = _sign(WORKER_PK, receipt);
        escrow.pause();
        vm.warp(block.timestamp + 7 days);
        vm.expectRevert(ICreditEscrow.EnforcedPause.selector);
        escrow.refund(JOB);
        escrow.unpause();
        vm.expectRevert(
            abi.encodeWithSelector(
                ICreditEscrow.JobNotExpired.selector,
                JOB,
                uint64(block.timestamp) + escrow.SETTLE_GRACE()
            )
        );
        vm.prank(address(0xBEEF));
        escrow.refund(JOB);
        vm.warp(block.timestamp + escrow.SETTLE_GRACE());
        _settle(receipt, signature);
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "delivered work paid after the pause");
    }

    // ================================================================ L2: batches skip, never revert

    /// @dev The audit's case: a worker drops its model just before the batch lands.
    function test_L2_settleBatchSettlesEveryValidReceiptAndSkipsTheWorkerThatDroppedItsModel() public {
        bytes32[3] memory ids = [JOB, bytes32(uint256(JOB) + 1), bytes32(uint256(JOB) + 2)];
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        for (uint256 i; i < 3; ++i) {
            _openJob(ids[i], liteModel, 1_000);
            receipts[i] = _receipt(ids[i], 100);
            signatures[i] = _sign(i == 1 ? LITE_WORKER_PK : WORKER_PK, receipts[i]);
        }
        bytes32[] memory onlyMax = new bytes32[](1);
        onlyMax[0] = maxModel;
        vm.prank(liteWorker);
        workers.updateModels(onlyMax);

        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(ids[1], ICreditEscrow.SettleSkipReason.WorkerNotEligible);
        vm.prank(gateway);
        uint256 settled = escrow.settleBatch(receipts, signatures);
        vm.assertEq(settled, 2, "the two valid receipts");
        (JobStatus skipped, , , ) = escrow.jobOf(ids[1]);
        vm.assertEq(uint8(skipped), uint8(JobStatus.Open), "skipped job stays open for the gateway to fail");
    }

    function test_L2_openJobBatchOpensEveryValidLockAndSkipsEachInvalidOneWithItsReason() public {
        address poor = address(0x9002);
        bytes32 poorKey = keccak256("sk-poor");
        _registerKey(poor, poorKey);
        _deposit(poor, 100);
        address capped = address(0x9003);
        bytes32 cappedKey = keccak256("sk-capped");
        _registerKey(capped, cappedKey);
        _deposit(capped, 10_000);
        vm.prank(capped);
        escrow.setSpendingCap(40);
        _openJob(JOB, maxModel, 100); // so the next batch repeats its id

        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](7);
        requests[0] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            maxModel,
            1_000,
            uint64(block.timestamp)
        );
        requests[1] = ICreditEscrow.OpenRequest(JOB, walletKeyHash, maxModel, 1_000, uint64(block.timestamp));
        requests[2] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 2),
            keccak256("sk-nobody"),
            maxModel,
            1_000,
            uint64(block.timestamp)
        );
        requests[3] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 3),
            walletKeyHash,
            keccak256("nope"),
            1_000,
            uint64(block.timestamp)
        );
        requests[4] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 4),
            walletKeyHash,
            maxModel,
            0,
            uint64(block.timestamp)
        );
        requests[5] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 5),
            poorKey,
            maxModel,
            100_000,
            uint64(block.timestamp)
        );
        requests[6] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 6),
            cappedKey,
            maxModel,
            1_000,
            uint64(block.timestamp)
        );
        ICreditEscrow.OpenSkipReason[7] memory reasons = [
            ICreditEscrow.OpenSkipReason.None,
            ICreditEscrow.OpenSkipReason.JobExists,
            ICreditEscrow.OpenSkipReason.KeyNotActive,
            ICreditEscrow.OpenSkipReason.ModelNotListed,
            ICreditEscrow.OpenSkipReason.MaxTokensInvalid,
            ICreditEscrow.OpenSkipReason.InsufficientCredits,
            ICreditEscrow.OpenSkipReason.SpendingCapExceeded
        ];
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpened(
            requests[0].jobId,
            wallet,
            walletKeyHash,
            maxModel,
            Tier.Max,
            50,
            _available(wallet) - 50,
            uint64(block.timestamp) + JOB_TIMEOUT
        );
        for (uint256 i = 1; i < 7; ++i) {
            vm.expectEmit(address(escrow));
            emit ICreditEscrow.JobOpenSkipped(requests[i].jobId, requests[i].keyHash, reasons[i]);
        }
        vm.prank(gateway);
        uint256 opened = escrow.openJobBatch(requests);
        vm.assertEq(opened, 1, "one valid lock");
    }

    // ================================================================ L3: token quirks

    function test_L3_depositCreditsTheAmountReceivedNotTheAmountSent() public {
        FeeOnTransferStablecoin token = new FeeOnTransferStablecoin();
        CreditEscrow quirky = _escrowWith(IERC20(address(token)));
        token.mint(wallet, 100_000_000);
        vm.startPrank(wallet);
        token.approve(address(quirky), 100_000_000);
        quirky.deposit(100_000_000); // 1% stays with the token: 99 stablecoin arrive
        vm.stopPrank();
        vm.assertEq(quirky.accountOf(wallet).available, 9_900, "credits for what arrived");
        vm.assertEq(token.balanceOf(address(quirky)), 99_000_000, "held");
    }

    function test_L3_aBlockedWorkerNeverBlocksSettlementAndClaimsElsewhere() public {
        (BlocklistStablecoin token, CreditEscrow quirky) = _blocklistEscrowWithOpenJob();
        token.setBlocked(worker, true);
        Receipt memory receipt = _receipt(JOB, 100);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(WORKER_PK, quirky.receiptDigest(receipt));
        vm.expectEmit(address(quirky));
        emit ICreditEscrow.PayoutDeferred(worker, 360_000);
        vm.prank(gateway);
        quirky.settle(receipt, abi.encodePacked(r, s, v));
        vm.assertEq(quirky.claimable(worker), 360_000, "kept claimable");

        vm.prank(worker);
        quirky.claim(address(0xCAFE));
        vm.assertEq(token.balanceOf(address(0xCAFE)), 360_000, "claimed to another address");
        vm.assertEq(quirky.claimable(worker), 0, "nothing left");
    }

    function test_L3_aBlockedTreasuryNeverBlocksSettlementAndClaimsItsFeeElsewhere() public {
        (BlocklistStablecoin token, CreditEscrow quirky) = _blocklistEscrowWithOpenJob();
        token.setBlocked(treasury, true);
        Receipt memory receipt = _receipt(JOB, 100);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(WORKER_PK, quirky.receiptDigest(receipt));
        vm.expectEmit(address(quirky));
        emit ICreditEscrow.PayoutDeferred(treasury, 40_000);
        vm.prank(gateway);
        quirky.settle(receipt, abi.encodePacked(r, s, v));
        vm.assertEq(token.balanceOf(worker), 360_000, "the worker is paid in the settlement all the same");
        vm.assertEq(quirky.claimable(treasury), 40_000, "the fee stays claimable by the treasury");
        vm.assertEq(quirky.ledger().claimableTotal, 40_000, "and counts as owed");

        vm.prank(treasury);
        quirky.claim(address(0xFEE));
        vm.assertEq(token.balanceOf(address(0xFEE)), 40_000, "claimed to another address");
        vm.assertEq(quirky.claimable(treasury), 0, "nothing left");
    }

    function test_L3_aBlockedTreasuryNeverBlocksABatch() public {
        (BlocklistStablecoin token, CreditEscrow quirky) = _blocklistEscrowWithOpenJob();
        token.setBlocked(treasury, true);
        Receipt[] memory receipts = new Receipt[](1);
        receipts[0] = _receipt(JOB, 100);
        bytes[] memory signatures = new bytes[](1);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(WORKER_PK, quirky.receiptDigest(receipts[0]));
        signatures[0] = abi.encodePacked(r, s, v);
        vm.prank(gateway);
        vm.assertEq(quirky.settleBatch(receipts, signatures), 1, "settled");
        vm.assertEq(token.balanceOf(worker), 360_000, "worker paid");
        vm.assertEq(quirky.claimable(treasury), 40_000, "the batch's fee stays claimable by the treasury");
    }

    // ================================================================ L4: parameters checked at deployment

    function test_L4_windowsAreReadFromTheRegistryAlone() public view {
        vm.assertEq(escrow.disputeWindow(), workers.disputeWindow(), "escrow's dispute window");
        vm.assertEq(disputes.arbitrationWindow(), workers.arbitrationWindow(), "arbitration window");
        vm.assertGt(
            workers.unbondingDelay(),
            workers.disputeWindow() + workers.SETTLEMENT_CLOCK_SKEW() + workers.arbitrationWindow(),
            "unbonding outlasts every dispute"
        );
    }

    function test_L4_constructorsRejectInvalidOrInconsistentParameters() public {
        vm.expectRevert(abi.encodeWithSelector(IWorkerRegistry.WindowOutOfRange.selector, 59, 60, 1 days));
        new WorkerRegistry(_noRoles(), svc, catalog, treasury, MIN_STAKE, UNBONDING_DELAY, 59, ARBITRATION_WINDOW);
        vm.expectRevert(IWorkerRegistry.ZeroAddress.selector);
        new WorkerRegistry(_noRoles(), svc, catalog, address(0), MIN_STAKE, UNBONDING_DELAY, 60, 1 days);
        vm.expectRevert(IWorkerRegistry.MinStakeZero.selector);
        new WorkerRegistry(_noRoles(), svc, catalog, treasury, 0, UNBONDING_DELAY, 60, 1 days);
        vm.expectRevert(
            abi.encodeWithSelector(IWorkerRegistry.UnbondingDelayTooShort.selector, 1 days, 1 days + 60 + 30 + 1)
        );
        new WorkerRegistry(_noRoles(), svc, catalog, treasury, MIN_STAKE, 1 days, 60, 1 days);

        EighteenDecimalDollar eighteen = new EighteenDecimalDollar();
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.StablecoinDecimalsInvalid.selector, 18));
        new CreditEscrow(_noRoles(), IERC20(address(eighteen)), keys, catalog, workers, treasury, 1_000, 120);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.WindowOutOfRange.selector, 0, 1, 1 days));
        new CreditEscrow(_noRoles(), usd, keys, catalog, workers, treasury, 1_000, 0);
        ModelCatalog otherCatalog = new ModelCatalog(address(this), address(this), new IModelCatalog.LaunchModel[](0));
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.CatalogMismatch.selector, address(otherCatalog), address(catalog))
        );
        new CreditEscrow(_noRoles(), usd, keys, otherCatalog, workers, treasury, 1_000, 120);
        vm.expectRevert(ICreditEscrow.ZeroAddress.selector);
        new CreditEscrow(_noRoles(), usd, keys, catalog, workers, address(0), 1_000, 120);

        WorkerRegistry otherRegistry = new WorkerRegistry(
            _noRoles(),
            svc,
            catalog,
            treasury,
            MIN_STAKE,
            UNBONDING_DELAY,
            DISPUTE_WINDOW,
            ARBITRATION_WINDOW
        );
        vm.expectRevert(
            abi.encodeWithSelector(DisputeManager.RegistryMismatch.selector, address(workers), address(otherRegistry))
        );
        new DisputeManager(_noRoles(), escrow, otherRegistry);
        vm.expectRevert(ApiKeyRegistry.ZeroAddress.selector);
        new ApiKeyRegistry(address(this), address(0));
        vm.expectRevert(ModelCatalog.ZeroAddress.selector);
        new ModelCatalog(address(this), address(0), new IModelCatalog.LaunchModel[](0));
    }

    // ================================================================ L5: key registration front-running

    /// @dev Issue 22 item 5: a front-runner that copies the victim's hash from its pending registration commits
    /// after the victim did, so even when its own registration lands first the victim's takes the hash back.
    /// Before commit–reveal this blocked 10 of 10 attempts; now it blocks none.
    function test_L5_frontRunningAKeyRegistrationNeverBlocksIt() public {
        address frontRunner = address(0xF12E);
        for (uint256 i; i < 10; ++i) {
            address victim = address(uint160(0xF1C70 + i));
            bytes32 victimHash = keccak256(abi.encode("svc_live_victimsRandomKey", i));
            _commitKey(victim, victimHash); // the commitment hides the hash
            // The victim's registration is pending: the front-runner sees the hash, commits and registers first.
            _registerKey(frontRunner, victimHash);
            vm.prank(victim);
            keys.registerKey(victimHash);
            (address owner, IApiKeyRegistry.KeyStatus status) = keys.statusOfKey(victimHash);
            vm.assertEq(owner, victim, "the hash is the victim's");
            vm.assertEq(uint8(status), uint8(IApiKeyRegistry.KeyStatus.Active), "active");
            vm.assertEq(keys.activeWallet(victimHash), victim, "the key spends the victim's credits");
            (bytes32 frontRunnerKey, , ) = keys.keyOf(frontRunner);
            vm.assertEq(frontRunnerKey, bytes32(0), "the front-runner holds nothing");
        }
    }
    // ================================================================ I: surplus sweep, reserve

    function test_I_sweepSurplusReturnsOnlyStablecoinAboveWhatIsOwed() public {
        _fundReserve(RESERVE);
        _openJob(JOB, maxModel, 1_000);
        usd.mint(address(escrow), 123_456); // sent straight to the escrow
        vm.assertEq(escrow.ledger().surplus, 123_456, "surplus");
        escrow.sweepSurplus(address(0x5EE9));
        vm.assertEq(usd.balanceOf(address(0x5EE9)), 123_456, "exactly the surplus");
        vm.assertEq(escrow.ledger().surplus, 0, "none left");
        vm.assertEq(escrow.reserve(), RESERVE, "reserve untouched");
    }

    function test_I_sweepSurplusFirstPaysOwedRestitution() public {
        Settlement memory facts = _settleJob(JOB, 1_200); // 54 credits, reserve empty
        _dropBond(worker);
        _openDispute(JOB, facts);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        uint256 availableBefore = _available(wallet);
        usd.mint(address(escrow), 600_000);
        escrow.sweepSurplus(address(0x5EE9));
        vm.assertEq(_available(wallet), availableBefore + 54, "restitution paid from the surplus");
        vm.assertEq(usd.balanceOf(address(0x5EE9)), 60_000, "only the rest swept");
    }

    // ================================================================ helpers

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

    function _settleJob(bytes32 jobId, uint32 completionTokens) private returns (Settlement memory) {
        _openJob(jobId, maxModel, 4_000);
        Receipt memory receipt = _receipt(jobId, completionTokens);
        _settle(receipt, _sign(WORKER_PK, receipt));
        return _settlementOf(receipt, wallet, worker, _priceOf(maxModel, completionTokens));
    }

    function _openDispute(bytes32 jobId, Settlement memory facts) private {
        vm.prank(gateway);
        disputes.openDispute(jobId, facts, CLIENT_HASH);
    }

    function _fundReserve(uint256 amount) private {
        usd.mint(address(this), amount);
        usd.approve(address(escrow), amount);
        escrow.fundReserve(amount);
    }

    function _escrowWith(IERC20 token) private returns (CreditEscrow quirky) {
        quirky = new CreditEscrow(
            _roles(keccak256("GATEWAY_ROLE"), gateway),
            token,
            keys,
            catalog,
            workers,
            treasury,
            FEE_BPS,
            JOB_TIMEOUT
        );
    }

    function _blocklistEscrowWithOpenJob() private returns (BlocklistStablecoin token, CreditEscrow quirky) {
        token = new BlocklistStablecoin();
        quirky = _escrowWith(IERC20(address(token)));
        token.mint(wallet, 10_000_000);
        vm.startPrank(wallet);
        token.approve(address(quirky), 10_000_000);
        quirky.deposit(10_000_000);
        vm.stopPrank();
        // The worker's bond in this escrow (posted by the fixture): settlement needs it.
        token.mint(address(this), WORKER_BOND);
        token.approve(address(quirky), WORKER_BOND);
        quirky.postBond(worker, WORKER_BOND);
        vm.prank(gateway);
        quirky.openJob(JOB, walletKeyHash, maxModel, 1_000);
    }

    /// @dev A worker's history of up to 12 jobs; when `cheat`, some outputs are faked, and the client disputes
    /// some of the faked ones (upheld). Returns what the worker was paid and the stake it keeps.
    function _runWorkerHistory(uint256 seed, bool cheat) private returns (uint256 pay, uint256 stake, bool caught) {
        uint256 payBefore = usd.balanceOf(worker);
        for (uint256 i; i < 12; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            bytes32 jobId = bytes32(uint256(JOB) + 100 + i);
            uint32 tokens = uint32(1 + (r % 4_000));
            _openJob(jobId, maxModel, 4_000);
            Receipt memory receipt = _receipt(jobId, tokens);
            vm.prank(gateway);
            try escrow.settle(receipt, _sign(WORKER_PK, receipt)) {
                bool faked = cheat && (r >> 32) % 3 == 0;
                bool disputed = faked && (r >> 40) % 2 == 0;
                if (disputed) {
                    _openDispute(jobId, _settlementOf(receipt, wallet, worker, _priceOf(maxModel, tokens)));
                    vm.prank(arbiter);
                    disputes.resolveDispute(jobId, true);
                    caught = true;
                }
            } catch {
                vm.prank(gateway);
                escrow.failJob(jobId); // a banned worker is paid nothing; the wallet gets its lock back
            }
            vm.warp(block.timestamp + 30);
        }
        pay = usd.balanceOf(worker) - payBefore;
        stake = workers.getWorker(worker).stake;
    }
}
