// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ICreditEscrow} from "../../interfaces/ICreditEscrow.sol";
import {JobStatus} from "../../types/JobStatus.sol";
import {Tier} from "../../types/Tier.sol";
import {EscrowFixture} from "../utils/EscrowFixture.sol";
import {vm} from "../utils/Vm.sol";
import {EscrowHandler} from "./EscrowHandler.sol";

/// @notice Properties of the escrow that hold after any sequence of the handler's actions:
/// value conservation, no job closed twice, and locked credits always recoverable after the timeout.
contract EscrowInvariants is EscrowFixture {
    EscrowHandler internal handler;

    function setUp() public override {
        vm.warp(START_TIME);
        _deploySystem();
        maxModel = _addModel(MAX_MODEL_ID, Tier.Max, MAX_CPR, MAX_CP1K);
        liteModel = _addModel(LITE_MODEL_ID, Tier.Lite, LITE_CPR, LITE_CP1K);
        bytes32[] memory both = new bytes32[](2);
        both[0] = maxModel;
        both[1] = liteModel;
        uint256[3] memory workerKeys = [uint256(0x5EC12E7), 0x5EC12E8, 0x5EC12E9];
        for (uint256 i; i < workerKeys.length; ++i) {
            _registerWorker(workerKeys[i], both);
        }

        address[3] memory wallets = [address(0xC11E47001), address(0xC11E47002), address(0xC11E47003)];
        bytes32[3] memory keyHashes = [keccak256("sk-wallet-1"), keccak256("sk-wallet-2"), keccak256("sk-wallet-3")];
        for (uint256 i; i < wallets.length; ++i) {
            _registerKey(wallets[i], keyHashes[i]);
            _deposit(wallets[i], 20_000);
        }

        handler = new EscrowHandler(
            EscrowHandler.System({
                usd: usd,
                svc: svc,
                keys: keys,
                workers: workers,
                escrow: escrow,
                disputes: disputes,
                gateway: gateway,
                arbiter: arbiter,
                pauser: address(this),
                treasury: treasury,
                modelKeys: [maxModel, liteModel],
                creditsPerRequest: [MAX_CPR, LITE_CPR],
                creditsPer1kTokens: [MAX_CP1K, LITE_CP1K],
                workerKeys: workerKeys,
                wallets: wallets,
                keyHashes: keyHashes
            })
        );
        // The handler mints stablecoin for deposits and stake for top-ups.
        usd.transferOwnership(address(handler));
        svc.transferOwnership(address(handler));
    }

    /// @notice Only the handler is called by the invariant fuzzer.
    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// @notice Every action the rules fix behaved as they say (exact amounts, expected reverts only).
    function invariant_handlerActionsFollowTheRules() public view {
        vm.assertEq(handler.ghostViolations(), 0, handler.lastViolation());
    }

    /// @notice Stablecoin held by the escrow == (Σ available + Σ locked) × 10,000 + reserve, and every unit is
    /// accounted for: deposits + reserve funding − withdrawals − payouts.
    function invariant_valueIsConserved() public view {
        address[3] memory accounts = handler.wallets();
        uint256 credits;
        for (uint256 i; i < accounts.length; ++i) {
            ICreditEscrow.Account memory account = escrow.accountOf(accounts[i]);
            credits += uint256(account.available) + account.locked;
        }
        uint256 held = usd.balanceOf(address(escrow));
        vm.assertEq(held, credits * UNIT_PER_CREDIT + escrow.reserve(), "escrow balance == credits + reserve");
        vm.assertEq(
            held,
            handler.ghostDepositedUnits() +
                handler.ghostReserveFundedUnits() -
                handler.ghostWithdrawnUnits() -
                handler.ghostPaidOutUnits(),
            "escrow balance == money in - money out"
        );
        vm.assertEq(
            escrow.reserve(),
            handler.ghostReserveFundedUnits() - handler.ghostRestoredCredits() * UNIT_PER_CREDIT,
            "reserve == funded - restored"
        );
    }

    /// @notice Workers and treasury together received exactly Σ charged × 10,000; an upheld dispute is repaid
    /// from the reserve, never clawed back from them.
    function invariant_payoutsEqualCharges() public view {
        vm.assertEq(
            handler.paidOutBalances(),
            handler.ghostChargedCredits() * UNIT_PER_CREDIT,
            "paid == charged units"
        );
        vm.assertEq(handler.paidOutBalances(), handler.ghostPaidOutUnits(), "paid == measured payouts");
    }

    /// @notice Each wallet's credits are what the independent ledger says.
    function invariant_accountsMatchLedger() public view {
        address[3] memory accounts = handler.wallets();
        for (uint256 i; i < accounts.length; ++i) {
            ICreditEscrow.Account memory account = escrow.accountOf(accounts[i]);
            vm.assertEq(account.available, handler.ghostAvailable(accounts[i]), "available");
            vm.assertEq(account.locked, handler.ghostLocked(accounts[i]), "locked");
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

    /// @notice Whatever happened, once every open job's deadline has passed anyone can refund it, and then
    /// no credits stay locked. Checked on a snapshot, so the run continues from the real state.
    function invariant_lockedCreditsRecoverableAfterTimeout() public {
        uint256 snapshot = vm.snapshotState();
        uint256 count = handler.jobCount();
        uint256 latestDeadline = block.timestamp;
        for (uint256 i; i < count; ++i) {
            (, JobStatus status, , uint64 deadline) = handler.jobAt(i);
            if (status == JobStatus.Open && deadline > latestDeadline) latestDeadline = deadline;
        }
        vm.warp(latestDeadline + 1);
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
