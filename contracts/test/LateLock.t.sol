// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {CreditEscrow} from "../CreditEscrow.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Tier} from "../types/Tier.sol";
import {Receipt} from "../types/Receipt.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice Issue 25 ("No delivered answer goes unpaid") and issue 26 ("Settlement pipelined behind its lock"): a
/// job's money path does not depend on when its lock is mined. Its deadline and its receipt's times run from the
/// gateway's acceptance (`OpenRequest.acceptedAt`), bounded against the block by `MAX_LOCK_DELAY` and the clock
/// skew; a lock outside the bound is skipped alone, and so is a settlement whose lock the chain skipped.
contract LateLockTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x1A7E0000));
    uint32 private constant MAX_TOKENS = 1_000;
    uint32 private constant TOKENS = 600;

    // ------------------------------------------------------------ helpers

    function _request(bytes32 jobId, uint256 acceptedAt) private view returns (ICreditEscrow.OpenRequest memory) {
        return ICreditEscrow.OpenRequest(jobId, walletKeyHash, maxModel, MAX_TOKENS, uint64(acceptedAt));
    }

    function _openBatch(ICreditEscrow.OpenRequest[] memory requests) private returns (uint256 opened) {
        vm.prank(gateway);
        opened = escrow.openJobBatch(requests);
    }

    function _openOne(bytes32 jobId, uint256 acceptedAt) private returns (uint256 opened) {
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](1);
        requests[0] = _request(jobId, acceptedAt);
        return _openBatch(requests);
    }

    function _receiptAt(bytes32 jobId, uint256 finalTokenAt) private view returns (Receipt memory receipt) {
        receipt = _receipt(jobId, TOKENS);
        receipt.finalTokenAt = uint64(finalTokenAt);
    }

    function _settleBatchOf(Receipt[] memory receipts) private returns (uint256 settled) {
        bytes[] memory signatures = new bytes[](receipts.length);
        for (uint256 i; i < receipts.length; ++i) signatures[i] = _sign(WORKER_PK, receipts[i]);
        vm.prank(gateway);
        settled = escrow.settleBatch(receipts, signatures);
    }

    function _settleOne(Receipt memory receipt) private returns (uint256 settled) {
        Receipt[] memory receipts = new Receipt[](1);
        receipts[0] = receipt;
        return _settleBatchOf(receipts);
    }

    function _status(bytes32 jobId) private view returns (JobStatus status) {
        (status, , , ) = escrow.jobOf(jobId);
    }

    // ------------------------------------------------------------ the deadline runs from the acceptance

    function test_lateLock_theDeadlineRunsFromAcceptedAtNotFromTheLockBlock() public {
        uint256 acceptedAt = block.timestamp;
        (, Tier tier, , , , ) = catalog.listing(maxModel);
        vm.warp(acceptedAt + 100);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpened(
            JOB,
            wallet,
            walletKeyHash,
            maxModel,
            tier,
            _priceOf(maxModel, MAX_TOKENS),
            WALLET_CREDITS - _priceOf(maxModel, MAX_TOKENS),
            uint64(acceptedAt + JOB_TIMEOUT)
        );
        vm.assertEq(_openOne(JOB, acceptedAt), 1, "opened 100 s after its acceptance");
        (, , , uint64 deadline) = escrow.jobOf(JOB);
        vm.assertEq(deadline, acceptedAt + JOB_TIMEOUT, "deadline = acceptedAt + job timeout");
    }

    function test_lateLock_openJobStillAcceptsAtTheBlockTime() public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        (, , , uint64 deadline) = escrow.jobOf(JOB);
        vm.assertEq(deadline, block.timestamp + JOB_TIMEOUT, "openJob's acceptance is its block");
    }

    /// @notice The property of issue 25: a job answered in time (its final token between its acceptance and its
    /// deadline) settles however late its lock lands within `MAX_LOCK_DELAY`, and the settlement may land at once.
    function testFuzz_lateLock_aReceiptInTimeSettlesHoweverLateItsLockLandsWithinTheBound(
        uint256 delay,
        uint256 tokenAfter
    ) public {
        delay = bound(delay, 0, escrow.MAX_LOCK_DELAY());
        tokenAfter = bound(tokenAfter, 0, JOB_TIMEOUT);
        uint256 acceptedAt = block.timestamp;
        uint256 finalTokenAt = acceptedAt + tokenAfter;
        vm.warp(acceptedAt + delay);
        vm.assertEq(_openOne(JOB, acceptedAt), 1, "the late lock opens");
        // The settlement goes out behind the lock: it lands with it, or once the final token exists.
        if (finalTokenAt > block.timestamp) vm.warp(finalTokenAt);
        vm.assertEq(_settleOne(_receiptAt(JOB, finalTokenAt)), 1, "the answered job settles");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.Settled), "settled");
        vm.assertEq(_locked(wallet), 0, "nothing stays locked");
    }

    function test_lateLock_aFinalTokenBeforeTheAcceptanceBeyondTheSkewIsRefused() public {
        uint256 acceptedAt = block.timestamp;
        vm.warp(acceptedAt + 60);
        _openOne(JOB, acceptedAt);
        Receipt memory receipt = _receiptAt(JOB, acceptedAt - escrow.MAX_CLOCK_SKEW() - 1);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(
                ICreditEscrow.ReceiptTimeInvalid.selector,
                JOB,
                receipt.finalTokenAt,
                acceptedAt + JOB_TIMEOUT
            )
        );
        _settle(receipt, signature);
    }

    // ------------------------------------------------------------ the bound

    function test_lateLock_aLockOlderThanMaxLockDelayIsSkippedWithAcceptedAtInvalid() public {
        uint256 acceptedAt = block.timestamp;
        vm.warp(acceptedAt + escrow.MAX_LOCK_DELAY() + 1);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(JOB, walletKeyHash, ICreditEscrow.OpenSkipReason.AcceptedAtInvalid);
        vm.assertEq(_openOne(JOB, acceptedAt), 0, "not opened");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.None), "no job recorded");
        vm.assertEq(_available(wallet), WALLET_CREDITS, "nothing locked");
    }

    function test_lateLock_aPostDatedAcceptedAtBeyondTheSkewIsSkippedWithAcceptedAtInvalid() public {
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(JOB, walletKeyHash, ICreditEscrow.OpenSkipReason.AcceptedAtInvalid);
        vm.assertEq(_openOne(JOB, block.timestamp + escrow.MAX_CLOCK_SKEW() + 1), 0, "not opened");
        vm.assertEq(_available(wallet), WALLET_CREDITS, "nothing locked");
    }

    /// @notice Exactly the acceptances within [block − MAX_LOCK_DELAY, block + MAX_CLOCK_SKEW] open.
    function testFuzz_lateLock_aLockOpensExactlyWhenItsAcceptanceIsWithinTheBound(uint256 acceptedAt) public {
        uint256 now_ = block.timestamp;
        acceptedAt = bound(acceptedAt, now_ - 2 * escrow.MAX_LOCK_DELAY(), now_ + 2 * escrow.MAX_CLOCK_SKEW());
        bool within = acceptedAt + escrow.MAX_LOCK_DELAY() >= now_ && acceptedAt <= now_ + escrow.MAX_CLOCK_SKEW();
        vm.assertEq(_openOne(JOB, acceptedAt), within ? 1 : 0, "opened iff within the bound");
    }

    function test_lateLock_aDirtyAcceptedAtWordIsSkippedWithoutRevertingTheBatch() public {
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](2);
        requests[0] = _request(JOB, block.timestamp);
        requests[1] = _request(bytes32(uint256(JOB) + 1), block.timestamp);
        bytes memory data = abi.encodeCall(CreditEscrow.openJobBatch, (requests));
        // Selector, offset, length, then 5 words per request: set the top byte of the second acceptedAt word.
        data[4 + 32 * 2 + 160 + 128] = 0xff;
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            ICreditEscrow.OpenSkipReason.AcceptedAtInvalid
        );
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertEq(abi.decode(result, (uint256)), 1, "the well-formed lock opens");
    }

    function test_lateLock_aBatchWithOneTooOldLockSkipsOnlyIt() public {
        uint256 now_ = block.timestamp;
        vm.warp(now_ + escrow.MAX_LOCK_DELAY() + 1);
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](3);
        requests[0] = _request(JOB, block.timestamp - 1);
        requests[1] = _request(bytes32(uint256(JOB) + 1), now_);
        requests[2] = _request(bytes32(uint256(JOB) + 2), block.timestamp - escrow.MAX_LOCK_DELAY());
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            ICreditEscrow.OpenSkipReason.AcceptedAtInvalid
        );
        vm.assertEq(_openBatch(requests), 2, "the other two open");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.Open), "first open");
        vm.assertEq(uint8(_status(bytes32(uint256(JOB) + 1))), uint8(JobStatus.None), "too old one skipped");
        vm.assertEq(uint8(_status(bytes32(uint256(JOB) + 2))), uint8(JobStatus.Open), "one at the bound opens");
        (, , , uint64 deadline) = escrow.jobOf(bytes32(uint256(JOB) + 2));
        vm.assertEq(deadline, block.timestamp - escrow.MAX_LOCK_DELAY() + JOB_TIMEOUT, "each job its own deadline");
        vm.assertEq(_locked(wallet), 2 * _priceOf(maxModel, MAX_TOKENS), "two locks");
    }

    // ------------------------------------------------------------ settlement pipelined behind its lock

    function test_pipelined_aSettlementWhoseLockTheChainSkippedIsSkippedAloneInItsBatch() public {
        uint256 acceptedAt = block.timestamp;
        vm.warp(acceptedAt + escrow.MAX_LOCK_DELAY() + 1);
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](2);
        requests[0] = _request(JOB, block.timestamp);
        requests[1] = _request(bytes32(uint256(JOB) + 1), acceptedAt);
        vm.assertEq(_openBatch(requests), 1, "the second lock is skipped");
        // Both settlements were sent behind their locks, before either was mined.
        Receipt[] memory receipts = new Receipt[](2);
        receipts[0] = _receiptAt(JOB, block.timestamp);
        receipts[1] = _receiptAt(bytes32(uint256(JOB) + 1), block.timestamp);
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(bytes32(uint256(JOB) + 1), ICreditEscrow.SettleSkipReason.JobNotOpen);
        vm.assertEq(_settleBatchOf(receipts), 1, "the batch settles the job that was locked");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.Settled), "settled");
        vm.assertEq(uint8(_status(bytes32(uint256(JOB) + 1))), uint8(JobStatus.None), "nothing to settle");
        vm.assertEq(_locked(wallet), 0, "nothing locked");
    }

    // ------------------------------------------------------------ settlements ride with locks

    function _signed(Receipt[] memory receipts) private view returns (bytes[] memory signatures) {
        signatures = new bytes[](receipts.length);
        for (uint256 i; i < receipts.length; ++i) signatures[i] = _sign(WORKER_PK, receipts[i]);
    }

    function _openAndSettle(
        ICreditEscrow.OpenRequest[] memory requests,
        Receipt[] memory receipts
    ) private returns (uint256 opened, uint256 settled) {
        bytes[] memory signatures = _signed(receipts);
        vm.prank(gateway);
        (opened, settled) = escrow.openAndSettleBatch(requests, receipts, signatures);
    }

    /// @dev One lock of JOB, and the signed receipt that settles it.
    function _lockAndItsReceipt()
        private
        view
        returns (ICreditEscrow.OpenRequest[] memory requests, Receipt[] memory receipts, bytes[] memory signatures)
    {
        requests = new ICreditEscrow.OpenRequest[](1);
        requests[0] = _request(JOB, block.timestamp);
        receipts = new Receipt[](1);
        receipts[0] = _receiptAt(JOB, block.timestamp);
        signatures = _signed(receipts);
    }

    function _jobs(uint256 first, uint256 count) private pure returns (bytes32[] memory ids) {
        ids = new bytes32[](count);
        for (uint256 i; i < count; ++i) ids[i] = bytes32(uint256(JOB) + first + i);
    }

    function test_riding_aReceiptSettlesTheJobItsCallLocksFirst() public {
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](1);
        requests[0] = _request(JOB, block.timestamp);
        Receipt[] memory receipts = new Receipt[](1);
        receipts[0] = _receiptAt(JOB, block.timestamp);
        uint256 workerBefore = usd.balanceOf(worker);
        (uint256 opened, uint256 settled) = _openAndSettle(requests, receipts);
        vm.assertEq(opened, 1, "locked");
        vm.assertEq(settled, 1, "and settled in the same call");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.Settled), "settled");
        vm.assertEq(_locked(wallet), 0, "nothing left locked");
        vm.assertGt(usd.balanceOf(worker), workerBefore, "the worker is paid in the call");
    }

    function test_riding_eachPartSkipsAloneWhatItCannotTake() public {
        uint256 acceptedAt = block.timestamp;
        bytes32[] memory earlier = _jobs(10, 1);
        vm.assertEq(_openOne(earlier[0], acceptedAt), 1, "an earlier job");
        vm.warp(acceptedAt + escrow.MAX_LOCK_DELAY() + 1);
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](2);
        requests[0] = _request(JOB, block.timestamp);
        requests[1] = _request(bytes32(uint256(JOB) + 1), acceptedAt); // too late: skipped
        Receipt[] memory receipts = new Receipt[](3);
        receipts[0] = _receiptAt(earlier[0], acceptedAt + 1);
        receipts[1] = _receiptAt(JOB, block.timestamp);
        receipts[2] = _receiptAt(bytes32(uint256(JOB) + 1), block.timestamp); // its lock was skipped
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            ICreditEscrow.OpenSkipReason.AcceptedAtInvalid
        );
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(bytes32(uint256(JOB) + 1), ICreditEscrow.SettleSkipReason.JobNotOpen);
        (uint256 opened, uint256 settled) = _openAndSettle(requests, receipts);
        vm.assertEq(opened, 1, "the late lock is skipped");
        vm.assertEq(settled, 2, "the earlier job and the one just locked are settled");
        vm.assertEq(uint8(_status(earlier[0])), uint8(JobStatus.Settled), "earlier job settled");
        vm.assertEq(uint8(_status(JOB)), uint8(JobStatus.Settled), "new job settled");
        vm.assertEq(_locked(wallet), 0, "nothing left locked");
    }

    /// Property: one `openAndSettleBatch` leaves the chain exactly as `openJobBatch` then `settleBatch` would.
    function testFuzz_riding_oneCallEqualsTheTwoItJoins(uint8 lockCount, uint8 settleCount, uint32 seed) public {
        uint256 locks = bound(lockCount, 1, 6);
        uint256 settles = bound(settleCount, 1, 6);
        bytes32[] memory earlier = _jobs(100, settles);
        for (uint256 i; i < settles; ++i) _openOne(earlier[i], block.timestamp);
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](locks);
        for (uint256 i; i < locks; ++i) requests[i] = _request(bytes32(uint256(JOB) + i), block.timestamp);
        Receipt[] memory receipts = new Receipt[](settles);
        for (uint256 i; i < settles; ++i) {
            // Settlements of earlier jobs and, when the seed says so, of jobs this call locks.
            bytes32 id = (seed >> i) & 1 == 1 && i < locks ? bytes32(uint256(JOB) + i) : earlier[i];
            receipts[i] = _receipt(id, uint32(bound(uint256(keccak256(abi.encode(seed, i))), 1, MAX_TOKENS)));
            receipts[i].finalTokenAt = uint64(block.timestamp);
        }
        bytes[] memory signatures = _signed(receipts);

        uint256 snapshot = vm.snapshotState();
        vm.startPrank(gateway);
        uint256 openedApart = escrow.openJobBatch(requests);
        uint256 settledApart = escrow.settleBatch(receipts, signatures);
        vm.stopPrank();
        uint256[5] memory apart = _moneyState();
        vm.revertToState(snapshot);

        vm.prank(gateway);
        (uint256 opened, uint256 settled) = escrow.openAndSettleBatch(requests, receipts, signatures);
        uint256[5] memory together = _moneyState();
        vm.assertEq(opened, openedApart, "opened");
        vm.assertEq(settled, settledApart, "settled");
        vm.assertEq(settled, settles, "every receipt settles, a job locked in the same call included");
        for (uint256 i; i < 5; ++i) vm.assertEq(together[i], apart[i], "money state");
        for (uint256 i; i < locks; ++i) {
            bytes32 id = bytes32(uint256(JOB) + i);
            vm.revertToState(snapshot);
            vm.startPrank(gateway);
            escrow.openJobBatch(requests);
            escrow.settleBatch(receipts, signatures);
            vm.stopPrank();
            JobStatus statusApart = _status(id);
            vm.revertToState(snapshot);
            vm.prank(gateway);
            escrow.openAndSettleBatch(requests, receipts, signatures);
            vm.assertEq(uint8(_status(id)), uint8(statusApart), "job status");
        }
    }

    /// @dev The wallet's available and locked credits, the worker's and the treasury's stablecoin, the escrow's.
    function _moneyState() private view returns (uint256[5] memory state) {
        state = [
            _available(wallet),
            _locked(wallet),
            usd.balanceOf(worker),
            usd.balanceOf(treasury),
            usd.balanceOf(address(escrow))
        ];
    }

    function test_riding_revertsIfCallerNotGateway() public {
        (
            ICreditEscrow.OpenRequest[] memory requests,
            Receipt[] memory receipts,
            bytes[] memory signatures
        ) = _lockAndItsReceipt();
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                wallet,
                escrow.GATEWAY_ROLE()
            )
        );
        vm.prank(wallet);
        escrow.openAndSettleBatch(requests, receipts, signatures);
    }

    function test_riding_revertsIfPaused() public {
        (
            ICreditEscrow.OpenRequest[] memory requests,
            Receipt[] memory receipts,
            bytes[] memory signatures
        ) = _lockAndItsReceipt();
        escrow.pause();
        vm.expectRevert(Pausable.EnforcedPause.selector);
        vm.prank(gateway);
        escrow.openAndSettleBatch(requests, receipts, signatures);
    }

    function test_riding_revertsWhenEitherPartIsEmpty() public {
        (
            ICreditEscrow.OpenRequest[] memory requests,
            Receipt[] memory receipts,
            bytes[] memory signatures
        ) = _lockAndItsReceipt();
        vm.expectRevert(ICreditEscrow.BatchInvalid.selector);
        vm.prank(gateway);
        escrow.openAndSettleBatch(new ICreditEscrow.OpenRequest[](0), receipts, signatures);
        vm.expectRevert(ICreditEscrow.BatchInvalid.selector);
        vm.prank(gateway);
        escrow.openAndSettleBatch(requests, new Receipt[](0), new bytes[](0));
    }
}
