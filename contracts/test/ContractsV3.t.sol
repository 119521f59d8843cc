// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IDisputeManager} from "../interfaces/IDisputeManager.sol";
import {IWorkerRegistry} from "../interfaces/IWorkerRegistry.sol";
import {CreditEscrow} from "../CreditEscrow.sol";
import {DisputeManager} from "../DisputeManager.sol";
import {WorkerRegistry} from "../WorkerRegistry.sol";
import {EscrowModule} from "../escrow/EscrowModule.sol";
import {RoleGrant} from "../access/DelayedAccessControl.sol";
import {Receipt, Settlement} from "../types/Receipt.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {BlocklistStablecoin} from "./utils/QuirkyStablecoins.sol";
import {vm, bound} from "./utils/Vm.sol";
import {SpendWindow} from "../libraries/SpendWindow.sol";

/// @notice Issue 22 ("Contracts v3"): fraud never pays (items 1, 3, 4) and batches never revert for one malformed
/// element (item 6). One behaviour per test, named after it; the fuzz test states the property of item 1.
contract ContractsV3Test is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0xC3000000));
    bytes32 private constant CLIENT_HASH = keccak256("what the client really received");
    /// @dev A max-model job of 1,200 completion tokens charges 54 credits = 540,000 stablecoin units.
    uint32 private constant TOKENS = 1_200;
    uint256 private constant CHARGE = 54 * UNIT_PER_CREDIT;
    uint256 private constant BONDED_PK = 0xB0DED;
    /// @dev An `OpenRequest` and a `Receipt` are each five static words in calldata.
    uint256 private constant OPEN_REQUEST_BYTES = 5 * 32;
    uint256 private constant RECEIPT_BYTES = 5 * 32;

    // ================================================================ item 1: fraud never pays

    function test_fraud_settleRevertsBondInsufficientWhenTheChargesAtRiskWouldExceedTheBond() public {
        address bonded = _workerWithBond(CHARGE);
        _settleAs(BONDED_PK, JOB);
        bytes32 second = bytes32(uint256(JOB) + 1);
        _openJob(second, maxModel, 4_000);
        Receipt memory receipt = _receipt(second, TOKENS);
        bytes memory signature = _sign(BONDED_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.BondInsufficient.selector, bonded, CHARGE, CHARGE, CHARGE)
        );
        vm.prank(gateway);
        escrow.settle(receipt, signature);
    }

    function test_fraud_settleBatchSkipsASettlementBeyondTheBondWithBondInsufficient() public {
        _workerWithBond(CHARGE * 2);
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        for (uint256 i; i < 3; ++i) {
            bytes32 jobId = bytes32(uint256(JOB) + i);
            _openJob(jobId, maxModel, 4_000);
            receipts[i] = _receipt(jobId, TOKENS);
            signatures[i] = _sign(BONDED_PK, receipts[i]);
        }
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(receipts[2].jobId, ICreditEscrow.SettleSkipReason.BondInsufficient);
        vm.prank(gateway);
        uint256 settled = escrow.settleBatch(receipts, signatures);
        vm.assertEq(settled, 2, "two fit the bond, the third is skipped");
    }

    function test_fraud_bondCannotBeWithdrawnBelowTheChargesAtRiskUntilTheirWindowsClose() public {
        address bonded = _workerWithBond(CHARGE * 3);
        _settleAs(BONDED_PK, JOB);
        (uint256 bond, uint256 atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, CHARGE, "the charge is at risk");
        vm.prank(bonded);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.BondLocked.selector, bonded, bond - CHARGE));
        escrow.withdrawBond(bond);

        vm.warp(block.timestamp + 2 * workers.slashExposure());
        (, atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, 0, "nothing at risk once every window closed");
        vm.prank(bonded);
        escrow.withdrawBond(bond);
        vm.assertEq(usd.balanceOf(bonded), WORKER_BOND + CHARGE - CHARGE / 10, "the whole bond back, beside its pay");
    }

    function test_fraud_aChargeStaysAtRiskForItsWholeExposureAndLeavesAfter() public {
        address bonded = _workerWithBond(CHARGE * 2);
        uint64 exposure = workers.slashExposure();
        vm.warp((block.timestamp / exposure + 1) * exposure - 1); // the last second of a slot
        _settleAs(BONDED_PK, JOB);
        vm.warp(block.timestamp + exposure);
        (, uint256 atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, CHARGE, "still at risk a whole exposure later");
        _settleAs(BONDED_PK, bytes32(uint256(JOB) + 1));
        (, atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, 2 * CHARGE, "both at risk");
        vm.warp(block.timestamp + exposure);
        (, atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, CHARGE, "the first left, the second stays");
        vm.warp(block.timestamp + exposure);
        (, atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, 0, "both left");
    }

    function test_fraud_postBondRefusesABondAboveWhatTheEscrowRecords() public {
        uint256 tooMuch = uint256(type(uint64).max) + 1 - WORKER_BOND;
        usd.mint(address(this), tooMuch);
        usd.approve(address(escrow), tooMuch);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.BondTooLarge.selector, uint256(type(uint64).max) + 1));
        escrow.postBond(worker, tooMuch);
    }

    function test_fraud_upheldVerdictSeizesTheWholeBondIntoTheReserve() public {
        Settlement memory facts = _settleAs(WORKER_PK, JOB);
        uint256 reserveBefore = escrow.reserve();
        uint256 availableBefore = _available(wallet);
        _dispute(JOB, facts, true);
        (uint256 bond, , ) = escrow.bondOf(worker);
        vm.assertEq(bond, 0, "bond seized");
        vm.assertEq(escrow.reserve(), reserveBefore + WORKER_BOND - CHARGE, "bond in, restitution out");
        vm.assertEq(_available(wallet), availableBefore + 54, "client made whole");
        vm.assertEq(usd.balanceOf(treasury) >= CHARGE / 10, true, "the fee stays where it went");
    }

    /// @dev The audit's case: three frauds, an empty reserve. Every verdict after the first (the bond is gone by
    /// then) is still paid, from what the first seized.
    function test_fraud_everyUpheldVerdictAfterTheFirstIsPaidFromTheSeizedBond() public {
        address bonded = _workerWithBond(CHARGE * 3);
        Settlement[3] memory facts;
        for (uint256 i; i < 3; ++i) facts[i] = _settleAs(BONDED_PK, bytes32(uint256(JOB) + i));
        uint256 availableBefore = _available(wallet);
        for (uint256 i; i < 3; ++i) _dispute(bytes32(uint256(JOB) + i), facts[i], true);
        vm.assertEq(_available(wallet), availableBefore + 3 * 54, "all three clients made whole");
        vm.assertEq(escrow.ledger().owedCredits, 0, "nothing owed");
        vm.assertEq(escrow.reserve(), 0, "the bond covered exactly the charges at risk");
        (uint256 bond, , ) = escrow.bondOf(bonded);
        vm.assertEq(bond, 0, "the cheater keeps no bond");
    }

    /// @dev Property (issue 22 item 1): for any sequence of jobs and upheld disputes, a cheating worker ends with
    /// less stablecoin (pay + bond) than its honest twin doing the same jobs, and every wronged client is made
    /// whole, with an empty reserve and a bond far below the worker's turnover.
    function testFuzz_fraud_aCheaterEndsBehindItsHonestTwinAndEveryWrongedClientIsMadeWhole(uint256 seed) public {
        address bonded = _workerWithBond(CHARGE * 4);
        uint256 snapshot = vm.snapshotState();
        (uint256 cheaterValue, uint256 wronged, uint256 restored, bool caught) = _history(seed, bonded, true);
        vm.revertToState(snapshot);
        (uint256 honestValue, , , ) = _history(seed, bonded, false);
        vm.assertEq(restored, wronged, "every wronged client made whole");
        vm.assertLe(cheaterValue, honestValue, "never ahead of the honest twin");
        if (caught) vm.assertLt(cheaterValue, honestValue, "strictly behind once caught");
    }

    // ================================================================ item 3: a verdict never waits on a transfer

    function test_slash_verdictStandsWhenTheStakeTokenRefusesTheTransfer() public {
        BlocklistStablecoin stake = new BlocklistStablecoin();
        WorkerRegistry registry = new WorkerRegistry(
            _roles(keccak256("SLASHER_ROLE"), address(this)),
            IERC20(address(stake)),
            catalog,
            treasury,
            1_000,
            UNBONDING_DELAY,
            DISPUTE_WINDOW,
            ARBITRATION_WINDOW
        );
        address staker = vm.addr(0x57A4E);
        stake.mint(staker, 1_000);
        bytes32[] memory models = new bytes32[](1);
        models[0] = maxModel;
        vm.startPrank(staker);
        stake.approve(address(registry), 1_000);
        registry.register("http://staker.test", models, 1_000);
        vm.stopPrank();
        stake.setBlocked(treasury, true);

        vm.expectEmit(address(registry));
        emit IWorkerRegistry.SlashedStakeDeferred(staker, JOB, 1_000, 1_000);
        vm.assertEq(registry.slash(staker, JOB, "fraudulent_proof"), 1_000, "the slash stands");
        vm.assertEq(uint8(registry.getWorker(staker).status), uint8(IWorkerRegistry.WorkerStatus.Slashed), "banned");
        vm.assertEq(registry.slashedStakePending(), 1_000, "waiting");

        stake.setBlocked(treasury, false);
        registry.sendSlashedStake();
        vm.assertEq(stake.balanceOf(treasury), 1_000, "reaches the treasury later");
        vm.assertEq(registry.slashedStakePending(), 0, "nothing waiting");
    }

    // ================================================================ item 4: no deferred pay for a fraud

    function test_deferredPay_cannotBeClaimedWhileADisputeIsPendingAndIsForfeitedWhenUpheld() public {
        (BlocklistStablecoin token, CreditEscrow quirky, DisputeManager manager) = _blocklistSystem();
        token.setBlocked(worker, true);
        _openOn(quirky, JOB);
        Receipt memory receipt = _receipt(JOB, TOKENS);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(WORKER_PK, quirky.receiptDigest(receipt));
        vm.prank(gateway);
        quirky.settle(receipt, abi.encodePacked(r, s, v));
        uint256 workerShare = CHARGE - CHARGE / 10;
        vm.assertEq(quirky.claimable(worker), workerShare, "pay deferred");

        vm.prank(gateway);
        manager.openDispute(JOB, _settlementOf(receipt, wallet, worker, 54), CLIENT_HASH);
        vm.prank(worker);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.ClaimFrozen.selector, worker));
        quirky.claim(address(0xC1A1));

        vm.expectEmit(address(quirky));
        emit ICreditEscrow.PayoutForfeited(worker, JOB, workerShare, WORKER_BOND + workerShare);
        vm.prank(arbiter);
        manager.resolveDispute(JOB, true);
        vm.assertEq(quirky.claimable(worker), 0, "the fraudulent job's pay is gone");
        vm.prank(worker);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.NothingToClaim.selector, worker));
        quirky.claim(address(0xC1A1));
    }

    // ================================================================ item 6: malformed batch elements

    function test_batch_openJobBatchSkipsANonCanonicalMaxTokensWordWithRequestMalformed() public {
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](2);
        requests[0] = ICreditEscrow.OpenRequest(JOB, walletKeyHash, maxModel, 1_000, uint64(block.timestamp));
        requests[1] = ICreditEscrow.OpenRequest(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            maxModel,
            1_000,
            uint64(block.timestamp)
        );
        bytes memory data = abi.encodeCall(CreditEscrow.openJobBatch, (requests));
        // Selector, offset, length, then 5 words per request: dirty the high bytes of the second maxTokens word.
        uint256 at = 4 + 32 * 2 + 160 + 96;
        data[at] = 0x01;
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            ICreditEscrow.OpenSkipReason.RequestMalformed
        );
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertEq(abi.decode(result, (uint256)), 1, "the well-formed lock opens");
    }

    function test_batch_settleBatchSkipsANonCanonicalReceiptWordWithReceiptMalformed() public {
        (Receipt[] memory receipts, bytes[] memory signatures) = _twoReceipts();
        bytes memory data = abi.encodeCall(CreditEscrow.settleBatch, (receipts, signatures));
        // Selector, two offsets, length, then 5 words per receipt: dirty the second receipt's completionTokens.
        uint256 at = 4 + 32 * 3 + 160 + 96;
        data[at] = 0x01;
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(receipts[1].jobId, ICreditEscrow.SettleSkipReason.ReceiptMalformed);
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertEq(abi.decode(result, (uint256)), 1, "the well-formed receipt settles");
    }

    function test_batch_settleBatchSkipsASignatureOffsetOutsideTheCalldataWithReceiptMalformed() public {
        (Receipt[] memory receipts, bytes[] memory signatures) = _twoReceipts();
        bytes memory data = abi.encodeCall(CreditEscrow.settleBatch, (receipts, signatures));
        // The signatures array starts at its head offset; its second element's offset word follows the length.
        uint256 head;
        assembly {
            head := mload(add(data, add(0x20, 0x24)))
        }
        uint256 at = 4 + head + 32 + 32 + 31;
        data[at - 3] = 0x7f; // offset far beyond the calldata
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(receipts[1].jobId, ICreditEscrow.SettleSkipReason.ReceiptMalformed);
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertEq(abi.decode(result, (uint256)), 1, "the well-formed receipt settles");
    }

    /// @dev Item 6 as a property: flipping any bits of any byte of one request's five words never reverts
    /// `openJobBatch`, and the requests around it still open. Ids differ in every byte, so no flip of the middle
    /// request's id can take a neighbour's.
    function testFuzz_batch_openJobBatchNeverRevertsForAnyCorruptionOfOneRequest(uint256 at, uint8 mask) public {
        at = bound(at, 0, OPEN_REQUEST_BYTES - 1);
        mask = uint8(bound(mask, 1, type(uint8).max));
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](3);
        for (uint256 i; i < 3; ++i) {
            requests[i] = ICreditEscrow.OpenRequest(
                _spreadId(i),
                walletKeyHash,
                maxModel,
                1_000,
                uint64(block.timestamp)
            );
        }
        bytes memory data = abi.encodeCall(CreditEscrow.openJobBatch, (requests));
        // Selector, offset, length, then the requests' words: corrupt one byte of the middle request.
        uint256 position = 4 + 32 * 2 + OPEN_REQUEST_BYTES + at;
        data[position] = data[position] ^ bytes1(mask);
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertGe(abi.decode(result, (uint256)), 2, "the well-formed locks open");
        (JobStatus first, , , ) = escrow.jobOf(_spreadId(0));
        (JobStatus last, , , ) = escrow.jobOf(_spreadId(2));
        vm.assertEq(uint8(first), uint8(JobStatus.Open), "the request before it opens");
        vm.assertEq(uint8(last), uint8(JobStatus.Open), "the request after it opens");
    }

    /// @dev Item 6 as a property: flipping any bits of any byte of one receipt's five words, of its signature's
    /// offset or length word, or of its signature's bytes never reverts `settleBatch`, and the receipts around it
    /// still settle.
    function testFuzz_batch_settleBatchNeverRevertsForAnyCorruptionOfOneReceipt(uint256 at, uint8 mask) public {
        mask = uint8(bound(mask, 1, type(uint8).max));
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        for (uint256 i; i < 3; ++i) {
            _openJob(_spreadId(i), maxModel, 4_000);
            receipts[i] = _receipt(_spreadId(i), TOKENS);
            signatures[i] = _sign(WORKER_PK, receipts[i]);
        }
        bytes memory data = abi.encodeCall(CreditEscrow.settleBatch, (receipts, signatures));
        uint256 position = _settleBatchByteOfMiddleElement(data, bound(at, 0, RECEIPT_BYTES + 32 * 2 + 96 - 1));
        data[position] = data[position] ^ bytes1(mask);
        vm.prank(gateway);
        (bool ok, bytes memory result) = address(escrow).call(data);
        vm.assertTrue(ok, "the batch does not revert");
        vm.assertGe(abi.decode(result, (uint256)), 2, "the well-formed receipts settle");
        (JobStatus first, , , ) = escrow.jobOf(_spreadId(0));
        (JobStatus last, , , ) = escrow.jobOf(_spreadId(2));
        vm.assertEq(uint8(first), uint8(JobStatus.Settled), "the receipt before it settles");
        vm.assertEq(uint8(last), uint8(JobStatus.Settled), "the receipt after it settles");
    }

    // ================================================================ item 8: gas (batch bookkeeping)

    /// @dev A batch reads each worker's bond word once and stores it once, with every charge it settled for that
    /// worker counted at risk, whichever order the workers come in.
    function test_batch_settleBatchCountsEveryChargeAtRiskAgainstItsOwnWorker() public {
        address bonded = _workerWithBond(CHARGE * 3);
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        uint256[3] memory pks = [BONDED_PK, WORKER_PK, BONDED_PK];
        for (uint256 i; i < 3; ++i) {
            bytes32 jobId = bytes32(uint256(JOB) + i);
            _openJob(jobId, maxModel, 4_000);
            receipts[i] = _receipt(jobId, TOKENS);
            signatures[i] = _sign(pks[i], receipts[i]);
        }
        vm.prank(gateway);
        vm.assertEq(escrow.settleBatch(receipts, signatures), 3, "all three settle");
        (, uint256 bondedAtRisk, ) = escrow.bondOf(bonded);
        (, uint256 workerAtRisk, ) = escrow.bondOf(worker);
        vm.assertEq(bondedAtRisk, 2 * CHARGE, "both of the bonded worker's charges at risk");
        vm.assertEq(workerAtRisk, CHARGE, "the other worker's one charge at risk");
    }

    /// @dev A batch adds to what earlier settlements left at risk (rolled to its own slot), never replaces it.
    function test_batch_settleBatchAddsToTheChargesAlreadyAtRiskFromAnEarlierSlot() public {
        address bonded = _workerWithBond(CHARGE * 2);
        uint64 exposure = workers.slashExposure();
        vm.warp((block.timestamp / exposure + 1) * exposure - 1); // the last second of a slot
        _settleAs(BONDED_PK, JOB);
        vm.warp(block.timestamp + 1); // the next slot: the first charge still counts
        Receipt[] memory receipts = new Receipt[](2);
        bytes[] memory signatures = new bytes[](2);
        for (uint256 i; i < 2; ++i) {
            bytes32 jobId = bytes32(uint256(JOB) + 1 + i);
            _openJob(jobId, maxModel, 4_000);
            receipts[i] = _receipt(jobId, TOKENS);
            signatures[i] = _sign(BONDED_PK, receipts[i]);
        }
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(receipts[1].jobId, ICreditEscrow.SettleSkipReason.BondInsufficient);
        vm.prank(gateway);
        vm.assertEq(escrow.settleBatch(receipts, signatures), 1, "room for one more charge only");
        (, uint256 atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, 2 * CHARGE, "the earlier charge and the batch's");
        vm.warp(block.timestamp + exposure);
        (, atRisk, ) = escrow.bondOf(bonded);
        vm.assertEq(atRisk, CHARGE, "the earlier charge left, the batch's stays");
    }

    /// @dev The escrow reads a wallet's spend word only when its account says it has a cap (one cold slot less
    /// per wallet for everyone else): a deposit after the cap was set must not lose that mark.
    function test_cap_aDepositAfterTheCapKeepsItEnforcedInABatch() public {
        uint256 lock = _priceOf(maxModel, 4_000);
        vm.prank(wallet);
        escrow.setSpendingCap(lock);
        _deposit(wallet, 1_000);
        ICreditEscrow.OpenRequest[] memory requests = new ICreditEscrow.OpenRequest[](2);
        for (uint256 i; i < 2; ++i) {
            requests[i] = ICreditEscrow.OpenRequest(
                bytes32(uint256(JOB) + i),
                walletKeyHash,
                maxModel,
                4_000,
                uint64(block.timestamp)
            );
        }
        vm.expectEmit(address(escrow));
        emit ICreditEscrow.JobOpenSkipped(
            bytes32(uint256(JOB) + 1),
            walletKeyHash,
            ICreditEscrow.OpenSkipReason.SpendingCapExceeded
        );
        vm.prank(gateway);
        vm.assertEq(escrow.openJobBatch(requests), 1, "the second lock is over the cap");
    }

    /// @dev Removing the cap clears the mark: the wallet's locks are no longer counted against the old one.
    function test_cap_removingTheCapLetsLocksPastTheOldCap() public {
        uint256 lock = _priceOf(maxModel, 4_000);
        vm.startPrank(wallet);
        escrow.setSpendingCap(lock);
        escrow.setSpendingCap(0);
        vm.stopPrank();
        _openJob(JOB, maxModel, 4_000);
        _openJob(bytes32(uint256(JOB) + 1), maxModel, 4_000);
        vm.assertEq(_locked(wallet), 2 * lock, "both locked");
    }

    /// @dev The escrow no longer asks the window of an uncapped wallet; the library still answers "fits, unchanged".
    function test_cap_aWindowWithoutACapFitsEveryLockAndStaysUnchanged() public view {
        (bool ok, uint256 updated, uint256 locked) = SpendWindow.tryLock(7 << 160, 1_000, block.timestamp);
        vm.assertTrue(ok, "fits");
        vm.assertEq(updated, 7 << 160, "unchanged");
        vm.assertEq(locked, 0, "nothing counted");
        vm.assertEq(SpendWindow.roomAt(7 << 160, 1_000, block.timestamp), block.timestamp, "room now");
    }

    function test_cap_accountOfReportsTheLastTopUpTimeWithoutTheCapMark() public {
        vm.prank(wallet);
        escrow.setSpendingCap(1_000);
        vm.warp(block.timestamp + 1_000);
        _deposit(wallet, 100);
        vm.assertEq(escrow.accountOf(wallet).lastTopUpAt, block.timestamp, "the deposit's time");
    }

    // ================================================================ item 7: structure

    function test_size_moduleRunsOnlyThroughTheEscrow() public {
        EscrowModule module = new EscrowModule(usd, JOB_TIMEOUT, DISPUTE_WINDOW, treasury, 1);
        vm.expectRevert(EscrowModule.OnlyThroughEscrow.selector);
        module.withdraw(1);
    }

    // ================================================================ helpers

    /// @dev Registers a worker hosting the max model whose bond is exactly `bond`.
    function _workerWithBond(uint256 bond) private returns (address bonded) {
        bytes32[] memory models = new bytes32[](1);
        models[0] = maxModel;
        bonded = _registerWorker(BONDED_PK, models);
        vm.prank(bonded);
        escrow.withdrawBond(WORKER_BOND - bond);
        vm.assertEq(usd.balanceOf(bonded), WORKER_BOND - bond, "the rest withdrawn");
    }

    function _settleAs(uint256 pk, bytes32 jobId) private returns (Settlement memory) {
        _openJob(jobId, maxModel, 4_000);
        Receipt memory receipt = _receipt(jobId, TOKENS);
        _settle(receipt, _sign(pk, receipt));
        return _settlementOf(receipt, wallet, vm.addr(pk), 54);
    }

    function _dispute(bytes32 jobId, Settlement memory facts, bool fraud) private {
        vm.prank(gateway);
        disputes.openDispute(jobId, facts, CLIENT_HASH);
        vm.prank(arbiter);
        disputes.resolveDispute(jobId, fraud);
    }

    /// @dev Up to 10 jobs by the bonded worker; a cheater fakes about a third and the clients dispute those
    /// (upheld). Returns the worker's stablecoin (pay + bond left), the credits charged on faked jobs and the
    /// credits restored.
    function _history(
        uint256 seed,
        address bonded,
        bool cheat
    ) private returns (uint256 value, uint256 wronged, uint256 restored, bool caught) {
        for (uint256 i; i < 10; ++i) {
            (uint256 charged, uint256 back) = _step(uint256(keccak256(abi.encode(seed, i))), i, bonded, cheat);
            wronged += charged;
            restored += back;
            if (charged != 0) caught = true;
            vm.warp(block.timestamp + 600);
        }
        (uint256 bond, , ) = escrow.bondOf(bonded);
        value = usd.balanceOf(bonded) + bond;
    }

    /// @dev One job; when faked, disputed and upheld: returns its charge and the credits restored.
    function _step(uint256 r, uint256 i, address bonded, bool cheat) private returns (uint256, uint256) {
        bytes32 jobId = bytes32(uint256(JOB) + 100 + i);
        uint32 tokens = uint32(bound(r, 1, 4_000));
        _openJob(jobId, maxModel, 4_000);
        Receipt memory receipt = _receipt(jobId, tokens);
        vm.prank(gateway);
        try escrow.settle(receipt, _sign(BONDED_PK, receipt)) {
            if (!cheat || (r >> 32) % 3 != 0) return (0, 0);
            uint256 charged = _priceOf(maxModel, tokens);
            return (charged, _upheld(jobId, _settlementOf(receipt, wallet, bonded, charged)));
        } catch {
            vm.prank(gateway);
            escrow.failJob(jobId); // beyond the bond, or banned: the lock goes back
            return (0, 0);
        }
    }

    /// @dev Disputes a fraudulent job (upheld); returns the credits the wallet got back.
    function _upheld(bytes32 jobId, Settlement memory facts) private returns (uint256) {
        uint256 before = _available(wallet);
        _dispute(jobId, facts, true);
        return _available(wallet) - before;
    }

    /// @dev Job ids that differ in every byte, so flipping bits of one byte never turns one into another.
    function _spreadId(uint256 i) private pure returns (bytes32) {
        return keccak256(abi.encode("spread job", i));
    }

    /// @dev The calldata position of byte `at` of the middle element of a three-element `settleBatch`: its receipt's
    /// five words, then its signature's offset word (in the signatures' head), its length word and its 96 padded
    /// bytes.
    function _settleBatchByteOfMiddleElement(bytes memory data, uint256 at) private pure returns (uint256) {
        uint256 receiptsStart = 4 + 32 * 3; // selector, two head offsets, the receipts' length
        if (at < RECEIPT_BYTES) return receiptsStart + RECEIPT_BYTES + at;
        at -= RECEIPT_BYTES;
        uint256 signaturesHead;
        assembly {
            signaturesHead := mload(add(data, 0x44)) // the second head word, after the 4-byte selector
        }
        uint256 signaturesStart = 4 + signaturesHead + 32; // past the signatures' length word
        if (at < 32) return signaturesStart + 32 + at; // the middle signature's offset word
        at -= 32;
        uint256 middleOffset;
        assembly {
            middleOffset := mload(add(add(data, 0x20), add(signaturesStart, 32)))
        }
        return signaturesStart + middleOffset + at; // its length word, then its bytes
    }

    function _twoReceipts() private returns (Receipt[] memory receipts, bytes[] memory signatures) {
        receipts = new Receipt[](2);
        signatures = new bytes[](2);
        for (uint256 i; i < 2; ++i) {
            bytes32 jobId = bytes32(uint256(JOB) + i);
            _openJob(jobId, maxModel, 4_000);
            receipts[i] = _receipt(jobId, TOKENS);
            signatures[i] = _sign(WORKER_PK, receipts[i]);
        }
    }

    /// @dev An escrow on a blocklisting stablecoin with its own dispute manager, the fixture worker bonded there.
    function _blocklistSystem()
        private
        returns (BlocklistStablecoin token, CreditEscrow quirky, DisputeManager manager)
    {
        token = new BlocklistStablecoin();
        // The manager is deployed right after the escrow: its address is known before, for the escrow's roles.
        address predictedManager = vm.computeCreateAddress(address(this), vm.getNonce(address(this)) + 1);
        RoleGrant[] memory escrowRoles = new RoleGrant[](3);
        escrowRoles[0] = RoleGrant(bytes32(0), address(this));
        escrowRoles[1] = RoleGrant(keccak256("GATEWAY_ROLE"), gateway);
        escrowRoles[2] = RoleGrant(keccak256("DISPUTE_ROLE"), predictedManager);
        quirky = new CreditEscrow(
            escrowRoles,
            IERC20(address(token)),
            keys,
            catalog,
            workers,
            treasury,
            FEE_BPS,
            JOB_TIMEOUT
        );
        RoleGrant[] memory managerRoles = new RoleGrant[](3);
        managerRoles[0] = RoleGrant(bytes32(0), address(this));
        managerRoles[1] = RoleGrant(keccak256("GATEWAY_ROLE"), gateway);
        managerRoles[2] = RoleGrant(keccak256("ARBITER_ROLE"), arbiter);
        manager = new DisputeManager(managerRoles, quirky, workers);
        vm.assertEq(address(manager), predictedManager, "manager at its predicted address");
        // A role grant waits for its delay (issue 22 item 2): scheduled, then applied after it.
        workers.grantRole(workers.SLASHER_ROLE(), address(manager));
        vm.warp(workers.roleGrantReadyAt(workers.SLASHER_ROLE(), address(manager)));
        workers.grantRole(workers.SLASHER_ROLE(), address(manager));
        token.mint(wallet, 10_000_000);
        vm.startPrank(wallet);
        token.approve(address(quirky), 10_000_000);
        quirky.deposit(10_000_000);
        vm.stopPrank();
        token.mint(address(this), WORKER_BOND);
        token.approve(address(quirky), WORKER_BOND);
        quirky.postBond(worker, WORKER_BOND);
    }

    function _openOn(CreditEscrow quirky, bytes32 jobId) private {
        vm.prank(gateway);
        quirky.openJob(jobId, walletKeyHash, maxModel, 4_000);
    }
}
