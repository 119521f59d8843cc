// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IDisputeManager} from "../interfaces/IDisputeManager.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice Disputes (docs/DESIGN.md): opened by the gateway within the dispute window when the client's hash
/// differs from the proof; fraud slashes the worker and restores the charge from the reserve; otherwise, or when
/// the arbiter lets the window pass, the settlement stands.
contract DisputeManagerTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x0192f1d2c3b4a5968778695a4b3c2d1e));
    bytes32 private constant CLIENT_HASH = keccak256("what the client received");
    uint256 private constant RESERVE = 1_000_000_000; // 1,000 stablecoin, when a test needs one

    Settlement private settlement;

    function setUp() public override {
        super.setUp();
        settlement = _settleJob(JOB, 1_200); // charge 54 credits on the max tier
    }

    // ------------------------------------------------------------ openDispute

    function test_openDispute_marksJobDisputedIfWithinWindow() public {
        vm.warp(settlement.finalTokenAt + DISPUTE_WINDOW);
        _openDispute(JOB, settlement, CLIENT_HASH);

        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Disputed), "disputed");
        IDisputeManager.Dispute memory dispute = disputes.getDispute(JOB);
        vm.assertEq(uint8(dispute.outcome), uint8(IDisputeManager.Outcome.Pending), "pending");
        vm.assertEq(dispute.deadline, block.timestamp + ARBITRATION_WINDOW, "arbitration deadline");
        vm.assertEq(dispute.clientHash, CLIENT_HASH, "client hash");
    }

    function testFuzz_openDispute_revertsIfWindowExpired(uint256 lateBy) public {
        lateBy = bound(lateBy, 1, 365 days);
        uint64 windowEnd = settlement.finalTokenAt + DISPUTE_WINDOW;
        vm.warp(windowEnd + lateBy);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.DisputeWindowExpired.selector, JOB, settlement.finalTokenAt, windowEnd)
        );
        _openDispute(JOB, settlement, CLIENT_HASH);
    }

    function test_openDispute_revertsIfHashesMatch() public {
        vm.expectRevert(abi.encodeWithSelector(IDisputeManager.HashesMatch.selector, JOB, settlement.outputHash));
        _openDispute(JOB, settlement, settlement.outputHash);
    }

    /// @dev Field 0..4 = wallet, worker, outputHash, creditsCharged, finalTokenAt.
    function testFuzz_openDispute_revertsIfSettlementFactsAltered(uint8 field, uint64 delta) public {
        field = uint8(bound(field, 0, 4));
        delta = uint64(bound(delta, 1, type(uint32).max));
        Settlement memory altered = settlement;
        if (field == 0) altered.wallet = address(uint160(altered.wallet) ^ delta);
        else if (field == 1) altered.worker = address(uint160(altered.worker) ^ delta);
        else if (field == 2) altered.outputHash = bytes32(uint256(altered.outputHash) ^ delta);
        else if (field == 3) altered.creditsCharged += delta;
        else altered.finalTokenAt -= delta % altered.finalTokenAt == 0 ? 1 : delta % altered.finalTokenAt;

        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.SettlementMismatch.selector, JOB));
        vm.prank(gateway);
        disputes.openDispute(JOB, altered, CLIENT_HASH);
    }

    function test_openDispute_revertsIfAlreadyDecided() public {
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, false);

        vm.expectRevert(
            abi.encodeWithSelector(IDisputeManager.DisputeAlreadyOpened.selector, JOB, IDisputeManager.Outcome.Rejected)
        );
        _openDispute(JOB, settlement, CLIENT_HASH);
    }

    function test_openDispute_revertsIfCallerNotGateway() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                wallet,
                disputes.GATEWAY_ROLE()
            )
        );
        vm.prank(wallet);
        disputes.openDispute(JOB, settlement, CLIENT_HASH);
    }

    function test_markDisputed_revertsIfCallerNotDisputeManager() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                gateway,
                escrow.DISPUTE_ROLE()
            )
        );
        vm.prank(gateway);
        escrow.markDisputed(JOB, settlement);
    }

    // ------------------------------------------------------------ resolveDispute

    /// @dev Any charge: the worker's whole bond goes to the reserve and the wallet gets exactly its charge back
    /// from it; worker and treasury keep the pay already pushed.
    function testFuzz_resolveDispute_restoresChargeFromReserveIfFraud(uint32 completionTokens) public {
        _fundReserve(RESERVE);
        bytes32 jobId = bytes32(uint256(JOB) + 1);
        Settlement memory facts = _settleJob(jobId, uint32(bound(completionTokens, 1, 4_000)));
        uint256 availableBefore = _available(wallet);
        uint256 reserveBefore = escrow.reserve();
        uint256 heldBefore = usd.balanceOf(address(escrow));
        uint256 paidBefore = usd.balanceOf(worker) + usd.balanceOf(treasury);
        uint256 stakeBefore = workers.getWorker(worker).stake;

        _openDispute(jobId, facts, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(jobId, true);

        vm.assertEq(_available(wallet) - availableBefore, facts.creditsCharged, "charge restored");
        vm.assertEq(
            escrow.reserve(),
            reserveBefore + WORKER_BOND - facts.creditsCharged * UNIT_PER_CREDIT,
            "the bond into the reserve, the charge out of it"
        );
        (uint256 bondAfter, , ) = escrow.bondOf(worker);
        vm.assertEq(bondAfter, 0, "the whole bond seized");
        vm.assertEq(usd.balanceOf(address(escrow)), heldBefore, "no stablecoin leaves the escrow");
        vm.assertEq(usd.balanceOf(worker) + usd.balanceOf(treasury), paidBefore, "payouts untouched");
        vm.assertEq(workers.getWorker(worker).stake, 0, "the whole stake slashed");
        vm.assertEq(svc.balanceOf(treasury), stakeBefore, "slashed stake to the treasury");
        (JobStatus status, , , ) = escrow.jobOf(jobId);
        vm.assertEq(uint8(status), uint8(JobStatus.DisputeUpheld), "upheld");
        vm.assertEq(uint8(disputes.getDispute(jobId).outcome), uint8(IDisputeManager.Outcome.Upheld), "outcome upheld");
    }

    /// @dev Issue 22 item 1: the seized bond funds restitution first, so a short reserve no longer leaves the
    /// wallet waiting (it used to be recorded as owed).
    function test_resolveDispute_paysRestitutionFromTheSeizedBondIfReserveOneUnitShort() public {
        // The 54-credit charge needs 540,000 units; the reserve is one unit short.
        uint256 units = 54 * UNIT_PER_CREDIT;
        _fundReserve(units - 1);
        _openDispute(JOB, settlement, CLIENT_HASH);
        uint256 availableBefore = _available(wallet);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.BondSlashed(worker, JOB, WORKER_BOND, units - 1 + WORKER_BOND);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);

        vm.assertEq(uint8(disputes.getDispute(JOB).outcome), uint8(IDisputeManager.Outcome.Upheld), "verdict stands");
        vm.assertEq(workers.getWorker(worker).stake, 0, "slashed all the same");
        vm.assertEq(_available(wallet), availableBefore + 54, "paid at once");
        vm.assertEq(escrow.ledger().owedCredits, 0, "nothing owed");
        vm.assertEq(escrow.reserve(), WORKER_BOND - 1, "the bond's remainder stays in the reserve");
    }

    function test_resolveDispute_restoresChargeIfReserveExactlySuffices() public {
        _fundReserve(54 * UNIT_PER_CREDIT);
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
        vm.assertEq(escrow.reserve(), WORKER_BOND, "the charge paid, the seized bond kept");
    }

    function test_resolveDispute_keepsSettlementIfNotFraud() public {
        _fundReserve(RESERVE);
        uint256 availableBefore = _available(wallet);
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, false);

        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled again");
        vm.assertEq(_available(wallet), availableBefore, "nothing restored");
        vm.assertEq(escrow.reserve(), RESERVE, "reserve untouched");
        vm.assertEq(workers.getWorker(worker).stake, MIN_STAKE, "no slash");
    }

    function testFuzz_resolveDispute_revertsIfArbitrationWindowClosed(uint256 lateBy) public {
        _openDispute(JOB, settlement, CLIENT_HASH);
        uint64 deadline = uint64(block.timestamp) + ARBITRATION_WINDOW;
        vm.warp(deadline + bound(lateBy, 1, 365 days));
        vm.expectRevert(abi.encodeWithSelector(IDisputeManager.ArbitrationWindowClosed.selector, JOB, deadline));
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
    }

    function test_resolveDispute_revertsIfNotPending() public {
        vm.expectRevert(
            abi.encodeWithSelector(IDisputeManager.DisputeNotPending.selector, JOB, IDisputeManager.Outcome.None)
        );
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);
    }

    function test_resolveDispute_revertsIfCallerNotArbiter() public {
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                gateway,
                disputes.ARBITER_ROLE()
            )
        );
        vm.prank(gateway);
        disputes.resolveDispute(JOB, true);
    }

    function test_resolveDispute_makesSlashedWorkerIneligibleIfStakeBelowMinimum() public {
        _fundReserve(RESERVE);
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(JOB, true);

        bytes32 next = bytes32(uint256(JOB) + 1);
        _openJob(next, maxModel, 1_000);
        Receipt memory receipt = _receipt(next, 10);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, next, worker, maxModel));
        _settle(receipt, signature);
    }

    /// @dev An unbonding worker may still settle jobs until it withdraws, so a fraud verdict can come after its
    /// stake is gone; the client must be restored from the reserve all the same.
    function test_settle_revertsIfUnbondingWorkerUnlocksBeforeArbitrationEnds() public {
        vm.prank(worker);
        workers.startUnbonding();
        vm.warp(block.timestamp + UNBONDING_DELAY - 10);
        bytes32 late = bytes32(uint256(JOB) + 1);
        _openJob(late, maxModel, 4_000);
        Receipt memory receipt = _receipt(late, 1_000);
        bytes memory signature = _sign(WORKER_PK, receipt);

        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, late, worker, maxModel));
        _settle(receipt, signature);
    }

    // ------------------------------------------------------------ closeExpired

    function testFuzz_closeExpired_keepsSettlementIfArbiterSilent(uint256 lateBy, address caller) public {
        _fundReserve(RESERVE);
        _openDispute(JOB, settlement, CLIENT_HASH);
        vm.warp(block.timestamp + ARBITRATION_WINDOW + bound(lateBy, 1, 365 days));
        vm.prank(caller);
        disputes.closeExpired(JOB);

        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled");
        vm.assertEq(uint8(disputes.getDispute(JOB).outcome), uint8(IDisputeManager.Outcome.Expired), "outcome expired");
        vm.assertEq(escrow.reserve(), RESERVE, "reserve untouched");
    }

    function testFuzz_closeExpired_revertsIfWindowOpen(uint256 after_) public {
        _openDispute(JOB, settlement, CLIENT_HASH);
        uint64 deadline = uint64(block.timestamp) + ARBITRATION_WINDOW;
        vm.warp(block.timestamp + bound(after_, 0, ARBITRATION_WINDOW));
        vm.expectRevert(abi.encodeWithSelector(IDisputeManager.ArbitrationWindowOpen.selector, JOB, deadline));
        disputes.closeExpired(JOB);
    }

    // ------------------------------------------------------------ helpers

    function _settleJob(bytes32 jobId, uint32 completionTokens) private returns (Settlement memory) {
        _openJob(jobId, maxModel, 4_000);
        Receipt memory receipt = _receipt(jobId, completionTokens);
        _settle(receipt, _sign(WORKER_PK, receipt));
        return _settlementOf(receipt, wallet, worker, _priceOf(maxModel, completionTokens));
    }

    function _openDispute(bytes32 jobId, Settlement memory facts, bytes32 clientHash) private {
        vm.prank(gateway);
        disputes.openDispute(jobId, facts, clientHash);
    }

    function _fundReserve(uint256 amount) private {
        usd.mint(address(this), amount);
        usd.approve(address(escrow), amount);
        escrow.fundReserve(amount);
    }
}
