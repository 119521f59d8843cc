// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {CreditEscrow} from "../CreditEscrow.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {JobStatus} from "../types/JobStatus.sol";
import {Receipt} from "../types/Receipt.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice Receipts (EIP-712, docs/DESIGN.md): any receipt a registered worker signs settles its open job once;
/// a changed field, another signer, another job or a second submission never does.
contract ReceiptTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x0192f1d2c3b4a5968778695a4b3c2d1e));
    bytes32 private constant OTHER_JOB = bytes32(uint256(0x0192f1d2c3b4a5968778695a4b3c2d1f));
    uint256 private constant SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;
    uint32 private constant MAX_TOKENS = 4_000;

    function test_receiptDigest_isEip712TypedDataHashOfEscrowDomain() public view {
        Receipt memory receipt = _receipt(JOB, 321);
        bytes32 typeHash = keccak256(
            "Receipt(bytes32 jobId,bytes32 outputHash,uint32 promptTokens,uint32 completionTokens,uint64 finalTokenAt)"
        );
        bytes32 structHash = keccak256(
            abi.encode(
                typeHash,
                receipt.jobId,
                receipt.outputHash,
                receipt.promptTokens,
                receipt.completionTokens,
                receipt.finalTokenAt
            )
        );
        bytes32 domain = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("CreditEscrow"),
                keccak256("1"),
                block.chainid,
                address(escrow)
            )
        );
        bytes32 expected = keccak256(abi.encodePacked("\x19\x01", domain, structHash));
        vm.assertEq(escrow.receiptDigest(receipt), expected, "EIP-712 digest");
    }

    /// @dev Any worker key, any receipt contents within the rules: the job settles and the signer is paid.
    function testFuzz_settle_succeedsIfSignedByRegisteredWorker(
        uint256 privateKey,
        bytes32 outputHash,
        uint32 promptTokens,
        uint32 completionTokens,
        uint256 settleDelay,
        uint256 finalTokenAt
    ) public {
        privateKey = bound(privateKey, 1, SECP256K1_ORDER - 1);
        vm.assume(privateKey != WORKER_PK && privateKey != LITE_WORKER_PK);
        bytes32[] memory hosted = new bytes32[](1);
        hosted[0] = maxModel;
        address signer = _registerWorker(privateKey, hosted);

        _openJob(JOB, maxModel, MAX_TOKENS);
        uint256 deadline = block.timestamp + JOB_TIMEOUT;
        uint256 openedAt = block.timestamp;
        vm.warp(block.timestamp + bound(settleDelay, 0, 2 * JOB_TIMEOUT));
        Receipt memory receipt = Receipt({
            jobId: JOB,
            outputHash: outputHash,
            promptTokens: promptTokens,
            completionTokens: completionTokens,
            finalTokenAt: uint64(bound(finalTokenAt, openedAt, _min(deadline, block.timestamp + 30)))
        });

        _settle(receipt, _sign(privateKey, receipt));

        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled");
        uint256 charged = _min(_priceOf(maxModel, completionTokens), _priceOf(maxModel, MAX_TOKENS));
        uint256 units = charged * UNIT_PER_CREDIT;
        vm.assertEq(usd.balanceOf(signer), units - (units * FEE_BPS) / 10_000, "signer paid its share");
        vm.assertEq(_locked(wallet), 0, "lock released");
    }

    /// @dev Field 0..4 = jobId (moved to another open job), outputHash, promptTokens, completionTokens, finalTokenAt.
    function testFuzz_settle_revertsIfAnySignedFieldChanged(
        uint8 field,
        uint256 delta,
        bytes32 outputHash,
        uint32 completionTokens
    ) public {
        field = uint8(bound(field, 0, 4));
        delta = bound(delta, 1, type(uint32).max);
        _openJob(JOB, maxModel, MAX_TOKENS);
        _openJob(OTHER_JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, completionTokens);
        receipt.outputHash = outputHash;
        bytes memory signature = _sign(WORKER_PK, receipt);

        if (field == 0) receipt.jobId = OTHER_JOB;
        else if (field == 1) receipt.outputHash = bytes32(uint256(receipt.outputHash) ^ delta);
        else if (field == 2) receipt.promptTokens = uint32(receipt.promptTokens + delta);
        else if (field == 3) receipt.completionTokens = uint32(receipt.completionTokens + delta);
        else receipt.finalTokenAt = receipt.finalTokenAt - uint64(delta % receipt.finalTokenAt);
        vm.assume(field != 4 || delta % START_TIME != 0);

        _expectRejected(receipt, signature, maxModel);
        _settle(receipt, signature);
        _assertStillOpen(JOB);
        _assertStillOpen(OTHER_JOB);
    }

    function testFuzz_settle_revertsIfSignedByAnotherKey(uint256 privateKey, uint32 completionTokens) public {
        privateKey = bound(privateKey, 1, SECP256K1_ORDER - 1);
        vm.assume(privateKey != WORKER_PK);
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, completionTokens);

        // The lite-only worker is registered but does not host this model; any other key is not a worker.
        bytes memory signature = _sign(privateKey, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, JOB, vm.addr(privateKey), maxModel)
        );
        _settle(receipt, signature);
        _assertStillOpen(JOB);
    }

    function testFuzz_settle_revertsIfSignatureBytesChanged(
        uint8 index,
        uint8 xorMask,
        uint32 completionTokens
    ) public {
        vm.assume(xorMask != 0);
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, completionTokens);
        bytes memory signature = _sign(WORKER_PK, receipt);
        signature[bound(index, 0, 64)] ^= bytes1(xorMask);

        _expectRejected(receipt, signature, maxModel);
        _settle(receipt, signature);
        _assertStillOpen(JOB);
    }

    function test_settle_revertsIfSignedUnderAnotherEscrowDomain() public {
        CreditEscrow otherEscrow = new CreditEscrow(
            _noRoles(),
            usd,
            keys,
            catalog,
            workers,
            treasury,
            FEE_BPS,
            JOB_TIMEOUT
        );
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, 100);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(WORKER_PK, otherEscrow.receiptDigest(receipt));
        bytes memory signature = abi.encodePacked(r, s, v);

        _expectRejected(receipt, signature, maxModel);
        _settle(receipt, signature);
        _assertStillOpen(JOB);
    }

    function testFuzz_settle_revertsIfSettledTwice(uint32 completionTokens, uint32 secondCompletionTokens) public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, completionTokens);
        bytes memory signature = _sign(WORKER_PK, receipt);
        _settle(receipt, signature);
        uint256 workerPaid = usd.balanceOf(worker);

        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.Settled, JobStatus.Open)
        );
        _settle(receipt, signature);

        // A freshly signed receipt for the same job is no better.
        Receipt memory second = _receipt(JOB, secondCompletionTokens);
        bytes memory secondSignature = _sign(WORKER_PK, second);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.Settled, JobStatus.Open)
        );
        _settle(second, secondSignature);
        vm.assertEq(usd.balanceOf(worker), workerPaid, "paid once");
    }

    function testFuzz_settle_revertsIfReceiptReusedForAnotherJob(uint32 completionTokens) public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt memory receipt = _receipt(JOB, completionTokens);
        bytes memory signature = _sign(WORKER_PK, receipt);
        _settle(receipt, signature);

        // The job id is signed: pointing the settled receipt at a newly opened job changes the signer.
        _openJob(OTHER_JOB, maxModel, MAX_TOKENS);
        receipt.jobId = OTHER_JOB;
        _expectRejected(receipt, signature, maxModel);
        _settle(receipt, signature);
        _assertStillOpen(OTHER_JOB);
    }

    function test_settle_revertsIfJobNeverOpened() public {
        Receipt memory receipt = _receipt(JOB, 10);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.None, JobStatus.Open)
        );
        _settle(receipt, signature);
    }

    function test_settle_revertsIfJobFailed() public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        vm.prank(gateway);
        escrow.failJob(JOB);
        Receipt memory receipt = _receipt(JOB, 10);
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.JobNotInStatus.selector, JOB, JobStatus.Failed, JobStatus.Open)
        );
        _settle(receipt, signature);
    }

    function testFuzz_settle_revertsIfFinalTokenAfterDeadline(uint256 lateBy) public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        uint64 deadline = uint64(block.timestamp) + JOB_TIMEOUT;
        vm.warp(deadline + 10);
        Receipt memory receipt = _receipt(JOB, 10);
        receipt.finalTokenAt = uint64(bound(lateBy, uint256(deadline) + 1, type(uint64).max));
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.ReceiptTimeInvalid.selector, JOB, receipt.finalTokenAt, deadline)
        );
        _settle(receipt, signature);
    }

    function testFuzz_settle_revertsIfFinalTokenInFuture(uint256 ahead) public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        uint64 deadline = uint64(block.timestamp) + JOB_TIMEOUT;
        Receipt memory receipt = _receipt(JOB, 10);
        receipt.finalTokenAt = uint64(bound(ahead, block.timestamp + 31, deadline));
        bytes memory signature = _sign(WORKER_PK, receipt);
        vm.expectRevert(
            abi.encodeWithSelector(ICreditEscrow.ReceiptTimeInvalid.selector, JOB, receipt.finalTokenAt, deadline)
        );
        _settle(receipt, signature);
    }

    function test_settle_succeedsIfWorkerUnbonding() public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        vm.prank(worker);
        workers.startUnbonding();
        Receipt memory receipt = _receipt(JOB, 10);
        _settle(receipt, _sign(WORKER_PK, receipt));
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled");
    }

    // ------------------------------------------------------------ settleBatch

    function testFuzz_settleBatch_settlesEveryJobIfAllReceiptsValid(uint32 a, uint32 b, uint32 c) public {
        bytes32 third = bytes32(uint256(OTHER_JOB) + 1);
        _openJob(JOB, maxModel, MAX_TOKENS);
        _openJob(OTHER_JOB, liteModel, MAX_TOKENS);
        _openJob(third, liteModel, MAX_TOKENS);
        Receipt[] memory receipts = new Receipt[](3);
        bytes[] memory signatures = new bytes[](3);
        receipts[0] = _receipt(JOB, a);
        receipts[1] = _receipt(OTHER_JOB, b);
        receipts[2] = _receipt(third, c);
        signatures[0] = _sign(WORKER_PK, receipts[0]);
        signatures[1] = _sign(LITE_WORKER_PK, receipts[1]);
        signatures[2] = _sign(WORKER_PK, receipts[2]);

        vm.prank(gateway);
        escrow.settleBatch(receipts, signatures);

        uint256 charged = _min(_priceOf(maxModel, a), _priceOf(maxModel, MAX_TOKENS)) +
            _min(_priceOf(liteModel, b), _priceOf(liteModel, MAX_TOKENS)) +
            _min(_priceOf(liteModel, c), _priceOf(liteModel, MAX_TOKENS));
        uint256 paid = usd.balanceOf(worker) + usd.balanceOf(liteWorker) + usd.balanceOf(treasury);
        vm.assertEq(paid, charged * UNIT_PER_CREDIT, "batch pays workers and treasury exactly the charges");
        vm.assertEq(_available(wallet), WALLET_CREDITS - charged, "wallet pays exactly the charges");
        vm.assertEq(_locked(wallet), 0, "locks released");
    }

    function test_settleBatch_settlesOnceAndSkipsTheRepeatIfSameJobTwice() public {
        _openJob(JOB, maxModel, MAX_TOKENS);
        Receipt[] memory receipts = new Receipt[](2);
        bytes[] memory signatures = new bytes[](2);
        receipts[0] = _receipt(JOB, 10);
        receipts[1] = receipts[0];
        signatures[0] = _sign(WORKER_PK, receipts[0]);
        signatures[1] = signatures[0];

        vm.expectEmit(address(escrow));
        emit ICreditEscrow.SettlementSkipped(JOB, ICreditEscrow.SettleSkipReason.JobNotOpen);
        vm.prank(gateway);
        uint256 settled = escrow.settleBatch(receipts, signatures);
        vm.assertEq(settled, 1, "settled once");
        (JobStatus status, , , ) = escrow.jobOf(JOB);
        vm.assertEq(uint8(status), uint8(JobStatus.Settled), "settled");
        vm.assertEq(usd.balanceOf(worker), (40 * UNIT_PER_CREDIT * 9) / 10, "paid once");
    }

    // ------------------------------------------------------------ helpers

    /// @dev Expects the revert the escrow must give for a receipt whose signature does not come from an
    /// eligible worker: OpenZeppelin's ECDSA error for a malformed signature, otherwise `WorkerNotEligible`
    /// naming whoever the signature recovers to.
    function _expectRejected(Receipt memory receipt, bytes memory signature, bytes32 modelKey) private {
        (address recovered, ECDSA.RecoverError error, bytes32 errorArg) = ECDSA.tryRecover(
            escrow.receiptDigest(receipt),
            signature
        );
        if (error == ECDSA.RecoverError.InvalidSignature) {
            vm.expectRevert(ECDSA.ECDSAInvalidSignature.selector);
        } else if (error == ECDSA.RecoverError.InvalidSignatureLength) {
            vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureLength.selector, uint256(errorArg)));
        } else if (error == ECDSA.RecoverError.InvalidSignatureS) {
            vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureS.selector, errorArg));
        } else {
            vm.assertTrue(recovered != worker && recovered != liteWorker, "a changed receipt recovers a stranger");
            vm.expectRevert(
                abi.encodeWithSelector(ICreditEscrow.WorkerNotEligible.selector, receipt.jobId, recovered, modelKey)
            );
        }
    }

    function _assertStillOpen(bytes32 jobId) private view {
        (JobStatus status, , uint256 creditsLocked, ) = escrow.jobOf(jobId);
        vm.assertEq(uint8(status), uint8(JobStatus.Open), "still open");
        vm.assertEq(creditsLocked, _priceOf(maxModel, MAX_TOKENS), "lock intact");
    }
}
