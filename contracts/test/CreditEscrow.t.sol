// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "../interfaces/IApiKeyRegistry.sol";
import {IModelCatalog} from "../interfaces/IModelCatalog.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Tier} from "../types/Tier.sol";
import {Receipt} from "../types/Receipt.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice Credits in and out, the lock at `openJob`, and the arithmetic of settlement, failure and refund.
contract CreditEscrowTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x0192f1d2c3b4a5968778695a4b3c2d1e));

    // ------------------------------------------------------------ deposit and withdraw

    function testFuzz_deposit_addsWholeCreditsIfAmountValid(uint256 credits) public {
        credits = bound(credits, 100, 1e12);
        address payer = address(0xFEED);
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        _deposit(payer, credits);
        vm.assertEq(_available(payer), credits, "credits added");
        vm.assertEq(usd.balanceOf(address(escrow)) - escrowBefore, credits * UNIT_PER_CREDIT, "stablecoin pulled");
        vm.assertEq(escrow.accountOf(payer).lastTopUpAt, block.timestamp, "top-up time");
    }

    function test_deposit_revertsIfBelowOneStablecoin() public {
        usd.mint(wallet, 990_000);
        vm.startPrank(wallet);
        usd.approve(address(escrow), 990_000);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.DepositTooSmall.selector, 990_000, 1_000_000));
        escrow.deposit(990_000);
        vm.stopPrank();
    }

    function testFuzz_deposit_revertsIfNotWholeCredits(uint256 amount) public {
        amount = bound(amount, 1_000_000, 1e18);
        vm.assume(amount % UNIT_PER_CREDIT != 0);
        usd.mint(wallet, amount);
        vm.startPrank(wallet);
        usd.approve(address(escrow), amount);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.AmountNotWholeCredits.selector, amount, UNIT_PER_CREDIT));
        escrow.deposit(amount);
        vm.stopPrank();
    }

    function testFuzz_depositWithPermit_addsCreditsIfPermitSigned(uint256 privateKey, uint256 credits) public {
        privateKey = bound(privateKey, 1, 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364140);
        credits = bound(credits, 100, 1e9);
        address owner = vm.addr(privateKey);
        uint256 amount = credits * UNIT_PER_CREDIT;
        usd.mint(owner, amount);
        uint256 deadline = block.timestamp + 1 hours;
        bytes32 structHash = keccak256(
            abi.encode(
                keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"),
                owner,
                address(escrow),
                amount,
                usd.nonces(owner),
                deadline
            )
        );
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(
            privateKey,
            keccak256(abi.encodePacked("\x19\x01", usd.DOMAIN_SEPARATOR(), structHash))
        );

        vm.prank(owner);
        escrow.depositWithPermit(amount, deadline, v, r, s);
        vm.assertEq(_available(owner), credits, "credits added in one transaction");
        vm.assertEq(usd.balanceOf(owner), 0, "stablecoin pulled");
    }

    function test_withdraw_succeedsIfPaused() public {
        escrow.pause();
        vm.prank(wallet);
        escrow.withdraw(100);
        vm.assertEq(_available(wallet), WALLET_CREDITS - 100, "withdrawn while paused");
    }

    function testFuzz_withdraw_returnsExactStablecoinIfCreditsAvailable(uint256 credits) public {
        credits = bound(credits, 0, WALLET_CREDITS);
        uint256 walletBefore = usd.balanceOf(wallet);
        vm.prank(wallet);
        escrow.withdraw(credits);
        vm.assertEq(_available(wallet), WALLET_CREDITS - credits, "credits taken out");
        vm.assertEq(usd.balanceOf(wallet) - walletBefore, credits * UNIT_PER_CREDIT, "stablecoin returned");
    }

    function testFuzz_withdraw_revertsIfMoreThanAvailable(uint256 credits) public {
        credits = bound(credits, WALLET_CREDITS + 1, type(uint96).max);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, wallet, WALLET_CREDITS, credits)
        );
        vm.prank(wallet);
        escrow.withdraw(credits);
    }

    function test_withdraw_revertsIfCreditsLocked() public {
        _openJob(JOB, maxModel, 1_000);
        uint256 locked = _priceOf(maxModel, 1_000);
        vm.expectRevert(
            abi.encodeWithSelector(
                ICreditEscrow.InsufficientCredits.selector,
                wallet,
                WALLET_CREDITS - locked,
                WALLET_CREDITS
            )
        );
        vm.prank(wallet);
        escrow.withdraw(WALLET_CREDITS);
    }

    // ------------------------------------------------------------ openJob

    function testFuzz_openJob_locksWorstCasePriceIfCreditsSuffice(uint32 maxTokens, bool lite) public {
        maxTokens = uint32(bound(maxTokens, 1, type(uint32).max));
        bytes32 modelKey = lite ? liteModel : maxModel;
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        _openJob(JOB, modelKey, maxTokens);

        uint256 expected = _priceOf(modelKey, maxTokens);
        vm.assertEq(_available(wallet), WALLET_CREDITS - expected, "available debited");
        vm.assertEq(_locked(wallet), expected, "locked");
        (JobStatus status, address account, uint256 creditsLocked, uint64 deadline) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Open), "open");
        vm.assertEq(account, wallet, "wallet");
        vm.assertEq(creditsLocked, expected, "job lock");
        vm.assertEq(deadline, block.timestamp + JOB_TIMEOUT, "deadline");
        vm.assertEq(usd.balanceOf(address(escrow)), escrowBefore, "no stablecoin moves");
    }

    function test_openJob_revertsIfCreditsInsufficient() public {
        vm.prank(wallet);
        escrow.withdraw(WALLET_CREDITS - 39);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, wallet, 39, 40));
        _openJob(JOB, maxModel, 1);
    }

    function test_openJob_revertsIfJobIdExists() public {
        _openJob(JOB, maxModel, 100);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.JobAlreadyExists.selector, JOB));
        _openJob(JOB, liteModel, 100);
    }

    function test_openJob_revertsIfMaxTokensZero() public {
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.MaxTokensInvalid.selector, 0));
        _openJob(JOB, maxModel, 0);
    }

    function test_openJobBatch_skipsARequestOfZeroKeyModelAndSizeAsItsFirst() public {
        // Nothing has passed the check yet: an all-zero request must not pass for a repeat of an earlier one.
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](1);
        requests[0] = ICreditEscrow.OpenRequest(JOB, bytes32(0), bytes32(0), 0, uint64(block.timestamp));
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(JOB, bytes32(0), ICreditEscrow.OpenSkipReason.KeyNotActive);
        vm.prank(gateway);
        uint256 opened = escrow.openJobBatch(requests);
        vm.assertEq(opened, 0, "nothing opened");
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.None), "no job recorded");
    }

    function test_openJob_revertsIfCallerNotGateway() public {
        vm.expectRevert(
            abi.encodeWithSelector(
                IAccessControl.AccessControlUnauthorizedAccount.selector,
                wallet,
                escrow.GATEWAY_ROLE()
            )
        );
        vm.prank(wallet);
        escrow.openJob(JOB, walletKeyHash, maxModel, 100);
    }

    function test_openJob_revertsIfPaused() public {
        escrow.pause();
        vm.expectRevert(Pausable.EnforcedPause.selector);
        _openJob(JOB, maxModel, 100);
    }

    function test_openJob_revertsIfKeyRevoked() public {
        vm.prank(wallet);
        keys.revokeKey();
        vm.expectRevert(
            abi.encodeWithSelector(
                IApiKeyRegistry.KeyNotActive.selector,
                walletKeyHash,
                IApiKeyRegistry.KeyStatus.Revoked
            )
        );
        _openJob(JOB, maxModel, 100);
    }

    function test_openJob_revertsIfWalletSuspended() public {
        vm.prank(operator);
        keys.suspend(wallet);
        vm.expectRevert(
            abi.encodeWithSelector(
                IApiKeyRegistry.KeyNotActive.selector,
                walletKeyHash,
                IApiKeyRegistry.KeyStatus.Suspended
            )
        );
        _openJob(JOB, maxModel, 100);
    }

    function test_openJob_revertsIfModelRetired() public {
        _applyAfterDelay(catalog.scheduleRetireModel(MAX_MODEL_ID));
        vm.expectRevert(abi.encodeWithSelector(IModelCatalog.ModelIsRetired.selector, maxModel));
        _openJob(JOB, maxModel, 100);
    }

    /// @dev The escrow caches each price version the first time one of its jobs settles (gas); a repricing hands
    /// out a new version, so a job settles at the prices it was opened at whether or not its version is cached.
    function test_settle_chargesEachJobItsOpeningPricesThroughTheVersionCache() public {
        // The repricing is scheduled first and applied between the two jobs (it waits the catalog's delay).
        uint256 repricing = catalog.scheduleUpdateModel(
            MAX_MODEL_ID,
            IModelCatalog.ModelParams({
                tier: Tier.Max,
                creditsPerRequest: MAX_CPR * 2,
                creditsPer1kTokens: MAX_CP1K * 3,
                contextWindow: CONTEXT_WINDOW,
                parameters: "test",
                ownedBy: "test"
            })
        );
        vm.warp(catalog.changeReadyAt(repricing));
        bytes32 cachedFirst = bytes32(uint256(JOB) + 10);
        _openJob(cachedFirst, maxModel, 1_000);
        Receipt memory warmUp = _receipt(cachedFirst, 600);
        _settle(warmUp, _sign(WORKER_PK, warmUp)); // fills the cache for the max model's first version
        _openJob(JOB, maxModel, 1_000);
        catalog.applyModelChange(repricing);
        bytes32 repriced = bytes32(uint256(JOB) + 11);
        _openJob(repriced, maxModel, 1_000);

        uint256 before = _available(wallet) + _locked(wallet);
        Receipt memory old = _receipt(JOB, 600);
        _settle(old, _sign(WORKER_PK, old));
        uint256 oldPrice = MAX_CPR + (100 * uint256(MAX_CP1K) + 999) / 1_000;
        vm.assertEq(before - (_available(wallet) + _locked(wallet)), oldPrice, "cached version: opening prices");

        before = _available(wallet) + _locked(wallet);
        Receipt memory fresh = _receipt(repriced, 600);
        _settle(fresh, _sign(WORKER_PK, fresh));
        uint256 newPrice = 2 * MAX_CPR + (100 * 3 * uint256(MAX_CP1K) + 999) / 1_000;
        vm.assertEq(before - (_available(wallet) + _locked(wallet)), newPrice, "new version: its own prices");
    }

    /// @dev The max model's version (index 1) is cached first, so a cache read that ignored the index would find
    /// its prices.
    function test_settle_chargesAJobItsOwnVersionsPricesFromTheCache() public {
        bytes32 maxJob = bytes32(uint256(JOB) + 20);
        bytes32 liteFirst = bytes32(uint256(JOB) + 21);
        _openJob(maxJob, maxModel, 1_000);
        _openJob(liteFirst, liteModel, 1_000);
        _openJob(JOB, liteModel, 1_000);
        _settleAndMeasure(maxJob, 600);
        _settleAndMeasure(liteFirst, 600); // fills the cache for the lite model's version
        // Within the threshold: the flat price, below the lock (which would cap another version's higher price).
        (uint256 charged, , , ) = _settleAndMeasure(JOB, 100);
        vm.assertEq(charged, LITE_CPR, "the lite version's prices");
    }

    function test_settle_succeedsIfModelRetiredWhileOpen() public {
        uint256 retirement = catalog.scheduleRetireModel(MAX_MODEL_ID);
        vm.warp(catalog.changeReadyAt(retirement));
        _openJob(JOB, maxModel, 2_000);
        catalog.applyModelChange(retirement);
        (uint256 charged, , , ) = _settleAndMeasure(JOB, 1_200);
        vm.assertEq(charged, 54, "charged as listed");
    }

    // ------------------------------------------------------------ settle: arithmetic

    /// @dev For any completion within `maxTokens`: charged + refunded == locked, worker + fee == charged
    /// units, and every balance moves by exactly that.
    function testFuzz_settle_chargesPriceAndRefundsRestIfCompletionWithinMax(
        uint32 maxTokens,
        uint32 completionTokens,
        bool lite,
        uint16 feeBps
    ) public {
        maxTokens = uint32(bound(maxTokens, 1, type(uint32).max));
        completionTokens = uint32(bound(completionTokens, 0, maxTokens));
        feeBps = uint16(bound(feeBps, 0, escrow.MAX_FEE_BPS()));
        escrow.scheduleProtocolFee(feeBps);
        vm.warp(block.timestamp + escrow.CONFIG_CHANGE_DELAY());
        bytes32 modelKey = lite ? liteModel : maxModel;
        _openJob(JOB, modelKey, maxTokens);
        uint256 locked = _priceOf(modelKey, maxTokens);
        uint256 availableBefore = _available(wallet);

        (uint256 charged, uint256 workerGot, uint256 feeGot, uint256 escrowPaid) = _settleAndMeasure(
            JOB,
            completionTokens
        );

        uint256 expectedCharge = _priceOf(modelKey, completionTokens);
        vm.assertEq(charged, expectedCharge, "charge is the price of the completion");
        vm.assertEq(charged + (_available(wallet) - availableBefore), locked, "charged + refunded == locked");
        vm.assertEq(_locked(wallet), 0, "nothing stays locked");
        vm.assertEq(workerGot + feeGot, charged * UNIT_PER_CREDIT, "worker + fee == charged units");
        vm.assertEq(feeGot, (charged * UNIT_PER_CREDIT * feeBps) / 10_000, "fee share");
        vm.assertEq(escrowPaid, charged * UNIT_PER_CREDIT, "escrow pays out exactly the charge, in this transaction");
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled");
    }

    function testFuzz_settle_chargesWholeLockIfCompletionExceedsMax(
        uint32 maxTokens,
        uint32 completionTokens,
        bool lite
    ) public {
        maxTokens = uint32(bound(maxTokens, 1, type(uint32).max - 1));
        completionTokens = uint32(bound(completionTokens, uint256(maxTokens) + 1, type(uint32).max));
        bytes32 modelKey = lite ? liteModel : maxModel;
        _openJob(JOB, modelKey, maxTokens);
        uint256 locked = _priceOf(modelKey, maxTokens);
        uint256 availableBefore = _available(wallet);

        (uint256 charged, uint256 workerGot, uint256 feeGot, ) = _settleAndMeasure(JOB, completionTokens);

        vm.assertEq(charged, locked, "capped at the escrow");
        vm.assertEq(_available(wallet), availableBefore, "nothing refunded");
        vm.assertEq(workerGot + feeGot, locked * UNIT_PER_CREDIT, "worker + fee == lock units");
    }

    function test_settle_chargesNothingIfNoTokens() public {
        _openJob(JOB, maxModel, 4_000);
        (uint256 charged, uint256 workerGot, uint256 feeGot, ) = _settleAndMeasure(JOB, 0);
        vm.assertEq(charged, 0, "free");
        vm.assertEq(workerGot + feeGot, 0, "no payout");
        vm.assertEq(_available(wallet), WALLET_CREDITS, "whole lock refunded");
    }

    function test_settle_matchesWorkedExample() public {
        // max tier, max_tokens 2000 locks 40 + ceil(1500 * 20 / 1000) = 70; 1200 tokens cost 40 + 14 = 54.
        _openJob(JOB, maxModel, 2_000);
        vm.assertEq(_locked(wallet), 70, "lock");
        (uint256 charged, uint256 workerGot, uint256 feeGot, ) = _settleAndMeasure(JOB, 1_200);
        vm.assertEq(charged, 54, "charge");
        vm.assertEq(_available(wallet), WALLET_CREDITS - 54, "16 refunded");
        vm.assertEq(feeGot, 54_000, "10% fee");
        vm.assertEq(workerGot, 486_000, "90% to the worker");
    }

    function test_settle_revertsIfPaused() public {
        _openJob(JOB, maxModel, 100);
        Receipt memory receipt = _receipt(JOB, 50);
        bytes memory signature = _sign(WORKER_PK, receipt);
        escrow.pause();
        vm.expectRevert(Pausable.EnforcedPause.selector);
        _settle(receipt, signature);
    }

    // ------------------------------------------------------------ failJob and refund

    function testFuzz_failJob_restoresLockIfOpen(uint32 maxTokens, bool lite) public {
        maxTokens = uint32(bound(maxTokens, 1, type(uint32).max));
        bytes32 modelKey = lite ? liteModel : maxModel;
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        _openJob(JOB, modelKey, maxTokens);
        vm.prank(gateway);
        escrow.failJob(JOB);
        vm.assertEq(_available(wallet), WALLET_CREDITS, "restored exactly");
        vm.assertEq(_locked(wallet), 0, "nothing locked");
        vm.assertEq(usd.balanceOf(address(escrow)), escrowBefore, "no stablecoin moves");
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Failed), "failed");
    }

    function testFuzz_refund_restoresLockIfPastDeadline(
        uint32 maxTokens,
        bool lite,
        uint256 wait,
        address caller
    ) public {
        maxTokens = uint32(bound(maxTokens, 1, type(uint32).max));
        wait = bound(wait, uint256(JOB_TIMEOUT + escrow.SETTLE_GRACE()) + 1, 3_650 days);
        bytes32 modelKey = lite ? liteModel : maxModel;
        uint256 escrowBefore = usd.balanceOf(address(escrow));
        _openJob(JOB, modelKey, maxTokens);

        vm.warp(block.timestamp + wait);
        vm.prank(caller);
        escrow.refund(JOB);

        vm.assertEq(_available(wallet), WALLET_CREDITS, "restored exactly");
        vm.assertEq(_locked(wallet), 0, "nothing locked");
        vm.assertEq(usd.balanceOf(address(escrow)), escrowBefore, "no stablecoin moves");
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Refunded), "refunded");
    }

    function test_failJob_succeedsIfPaused() public {
        _openJob(JOB, maxModel, 100);
        escrow.pause();
        vm.prank(gateway);
        escrow.failJob(JOB);
        vm.assertEq(_available(wallet), WALLET_CREDITS, "restored while paused");
    }

    function testFuzz_refund_revertsIfBeforeSettleGraceEnds(uint256 wait) public {
        wait = bound(wait, 0, JOB_TIMEOUT + escrow.SETTLE_GRACE());
        _openJob(JOB, maxModel, 100);
        uint64 refundableAfter = uint64(block.timestamp) + JOB_TIMEOUT + escrow.SETTLE_GRACE();
        vm.warp(block.timestamp + wait);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.JobNotExpired.selector, JOB, refundableAfter));
        escrow.refund(JOB);
    }

    function test_refund_revertsIfJobSettled() public {
        _openJob(JOB, maxModel, 100);
        Receipt memory receipt = _receipt(JOB, 50);
        _settle(receipt, _sign(WORKER_PK, receipt));
        vm.warp(block.timestamp + JOB_TIMEOUT + 1);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.Settled, JobStatus.Open)
        );
        escrow.refund(JOB);
    }

    function test_failJob_revertsIfJobRefunded() public {
        _openJob(JOB, maxModel, 100);
        vm.warp(block.timestamp + JOB_TIMEOUT + escrow.SETTLE_GRACE() + 1);
        escrow.refund(JOB);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.Refunded, JobStatus.Open)
        );
        vm.prank(gateway);
        escrow.failJob(JOB);
    }

    // ------------------------------------------------------------ helpers

    /// @dev Settles `jobId` with a fresh receipt from the two-model worker and measures what moved.
    function _settleAndMeasure(
        bytes32 jobId,
        uint32 completionTokens
    ) private returns (uint256 charged, uint256 workerGot, uint256 feeGot, uint256 escrowPaid) {
        uint256 lockedBefore = _locked(wallet);
        uint256 availableBefore = _available(wallet);
        uint256 workerBefore = usd.balanceOf(worker);
        uint256 feesBefore = usd.balanceOf(treasury);
        uint256 escrowBefore = usd.balanceOf(address(escrow));

        Receipt memory receipt = _receipt(jobId, completionTokens);
        _settle(receipt, _sign(WORKER_PK, receipt));

        uint256 refunded = _available(wallet) - availableBefore;
        charged = lockedBefore - _locked(wallet) - refunded;
        workerGot = usd.balanceOf(worker) - workerBefore;
        // The fee goes to the treasury in the settlement transaction itself (spec: settlement rule 6).
        feeGot = usd.balanceOf(treasury) - feesBefore;
        escrowPaid = escrowBefore - usd.balanceOf(address(escrow));
    }
}
