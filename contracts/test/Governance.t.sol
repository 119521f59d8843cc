// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IAccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/IAccessControlDefaultAdminRules.sol";
import {DelayedAccessControl} from "../access/DelayedAccessControl.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {IApiKeyRegistry} from "../interfaces/IApiKeyRegistry.sol";
import {IModelCatalog} from "../interfaces/IModelCatalog.sol";
import {Tier} from "../types/Tier.sol";
import {EscrowFixture} from "./utils/EscrowFixture.sol";
import {vm, bound} from "./utils/Vm.sol";

/// @notice Issue 22 item 2, "no instant power": every role grant and every catalog change is announced with its
/// effective time and applies only after the 2-day delay, so a wallet can withdraw first; a pending admin
/// transfer expires. Item 5: a key registration cannot be blocked by another wallet (commit–reveal).
contract GovernanceTest is EscrowFixture {
    bytes32 private constant JOB = bytes32(uint256(0x60e1));
    uint64 private constant DELAY = 2 days;
    uint64 private constant ADMIN_EXPIRY = 7 days;
    address private constant NEWCOMER = address(0x4E3C);

    event RoleGrantScheduled(bytes32 indexed role, address indexed account, uint64 readyAt);
    event ModelChangeScheduled(
        uint256 indexed changeId,
        bytes32 indexed modelKey,
        IModelCatalog.ChangeKind kind,
        string modelId,
        IModelCatalog.ModelParams params,
        uint64 readyAt
    );

    // ================================================================ role grants

    function test_grantRole_firstCallOnlySchedulesAndAnnouncesWhenItApplies() public {
        address[5] memory contracts_ = _contracts();
        bytes32[5] memory roles = _roles5();
        for (uint256 i; i < contracts_.length; ++i) {
            vm.expectEmit(contracts_[i]);
            emit RoleGrantScheduled(roles[i], NEWCOMER, uint64(block.timestamp) + DELAY);
            IAccessControl(contracts_[i]).grantRole(roles[i], NEWCOMER);
            vm.assertFalse(IAccessControl(contracts_[i]).hasRole(roles[i], NEWCOMER), "not granted yet");
            vm.assertEq(
                DelayedAccessControl(contracts_[i]).roleGrantReadyAt(roles[i], NEWCOMER),
                block.timestamp + DELAY,
                "readyAt"
            );
        }
    }

    function test_grantRole_revertsBeforeTheDelayOnEveryContract() public {
        address[5] memory contracts_ = _contracts();
        bytes32[5] memory roles = _roles5();
        for (uint256 i; i < contracts_.length; ++i) IAccessControl(contracts_[i]).grantRole(roles[i], NEWCOMER);
        vm.warp(block.timestamp + DELAY - 1);
        for (uint256 i; i < contracts_.length; ++i) {
            vm.expectRevert(
                abi.encodeWithSelector(DelayedAccessControl.RoleGrantNotReady.selector, START_TIME + DELAY)
            );
            IAccessControl(contracts_[i]).grantRole(roles[i], NEWCOMER);
        }
    }

    function test_grantRole_appliesOnTheSecondCallAfterTheDelayOnEveryContract() public {
        address[5] memory contracts_ = _contracts();
        bytes32[5] memory roles = _roles5();
        for (uint256 i; i < contracts_.length; ++i) IAccessControl(contracts_[i]).grantRole(roles[i], NEWCOMER);
        vm.warp(block.timestamp + DELAY);
        for (uint256 i; i < contracts_.length; ++i) {
            IAccessControl(contracts_[i]).grantRole(roles[i], NEWCOMER);
            vm.assertTrue(IAccessControl(contracts_[i]).hasRole(roles[i], NEWCOMER), "granted");
            vm.assertEq(DelayedAccessControl(contracts_[i]).roleGrantReadyAt(roles[i], NEWCOMER), 0, "consumed");
        }
    }

    function test_grantRole_revertsIfCallerIsNotTheRolesAdmin() public {
        bytes32 role = escrow.GATEWAY_ROLE();
        vm.prank(gateway);
        vm.expectRevert(
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, gateway, bytes32(0))
        );
        escrow.grantRole(role, gateway);
    }

    /// @dev The audit's attack: an admin key grants itself the gateway role to drain an uncapped wallet in the same
    /// block. Now the grant is announced and the wallet withdraws everything before it can apply.
    function test_grantRole_walletWithdrawsBeforeANewGatewayCanLockItsCredits() public {
        address thief = address(0x7B1EF);
        bytes32 gatewayRole = escrow.GATEWAY_ROLE();
        escrow.grantRole(gatewayRole, thief);
        vm.prank(thief);
        vm.expectRevert(
            abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, thief, gatewayRole)
        );
        escrow.openJob(JOB, walletKeyHash, maxModel, 1_000);

        uint256 credits = _available(wallet);
        vm.prank(wallet);
        escrow.withdraw(credits); // the wallet saw RoleGrantScheduled and leaves
        vm.warp(block.timestamp + DELAY);
        escrow.grantRole(gatewayRole, thief);
        vm.prank(thief);
        vm.expectRevert(abi.encodeWithSelector(ICreditEscrow.InsufficientCredits.selector, wallet, 0, 50));
        escrow.openJob(JOB, walletKeyHash, maxModel, 1_000);
    }

    function test_grantRole_disputeRoleCannotPayTheReserveOutBeforeTheDelay() public {
        bytes32 disputeRole = escrow.DISPUTE_ROLE();
        escrow.grantRole(disputeRole, address(this));
        vm.assertFalse(escrow.hasRole(disputeRole, address(this)), "no dispute power in the grant block");
    }

    function test_revokeRole_isInstant() public {
        bytes32 gatewayRole = escrow.GATEWAY_ROLE();
        escrow.revokeRole(gatewayRole, gateway);
        vm.assertFalse(escrow.hasRole(gatewayRole, gateway), "revoked in the same block");
    }

    function test_initialRoles_holdFromDeployment() public view {
        vm.assertTrue(escrow.hasRole(escrow.GATEWAY_ROLE(), gateway), "escrow gateway");
        vm.assertTrue(escrow.hasRole(escrow.DISPUTE_ROLE(), address(disputes)), "escrow dispute manager");
        vm.assertTrue(escrow.hasRole(escrow.PAUSER_ROLE(), address(this)), "escrow pauser");
        vm.assertTrue(workers.hasRole(workers.SLASHER_ROLE(), address(disputes)), "registry slasher");
        vm.assertTrue(disputes.hasRole(disputes.GATEWAY_ROLE(), gateway), "dispute gateway");
        vm.assertTrue(disputes.hasRole(disputes.ARBITER_ROLE(), arbiter), "arbiter");
        vm.assertTrue(keys.hasRole(keys.OPERATOR_ROLE(), operator), "operator");
        vm.assertTrue(catalog.hasRole(catalog.GOVERNANCE_ROLE(), address(this)), "governance");
        vm.assertEq(escrow.defaultAdmin(), address(this), "admin");
    }

    // ================================================================ admin transfer

    function test_acceptDefaultAdminTransfer_revertsAfterTheTransferExpired() public {
        escrow.beginDefaultAdminTransfer(NEWCOMER);
        (, uint48 schedule) = escrow.pendingDefaultAdmin();
        vm.warp(uint256(schedule) + ADMIN_EXPIRY + 1);
        vm.prank(NEWCOMER);
        vm.expectRevert(
            abi.encodeWithSelector(DelayedAccessControl.AdminTransferExpired.selector, uint256(schedule) + ADMIN_EXPIRY)
        );
        escrow.acceptDefaultAdminTransfer();
        vm.assertEq(escrow.defaultAdmin(), address(this), "the admin stays");
    }

    function test_acceptDefaultAdminTransfer_succeedsUntilTheLastSecondOfTheWindow() public {
        address[5] memory contracts_ = _contracts();
        for (uint256 i; i < contracts_.length; ++i) {
            IAccessControlDefaultAdminRules(contracts_[i]).beginDefaultAdminTransfer(NEWCOMER);
        }
        (, uint48 schedule) = escrow.pendingDefaultAdmin();
        vm.warp(uint256(schedule) + ADMIN_EXPIRY);
        for (uint256 i; i < contracts_.length; ++i) {
            vm.prank(NEWCOMER);
            IAccessControlDefaultAdminRules(contracts_[i]).acceptDefaultAdminTransfer();
            vm.assertEq(IAccessControlDefaultAdminRules(contracts_[i]).defaultAdmin(), NEWCOMER, "new admin");
        }
    }

    // ================================================================ catalog changes

    function test_scheduleUpdateModel_announcesTheChangeAndItsEffectiveTime() public {
        IModelCatalog.ModelParams memory params = _params(MAX_CPR * 100, MAX_CP1K * 100);
        vm.expectEmit(address(catalog));
        emit ModelChangeScheduled(
            1,
            maxModel,
            IModelCatalog.ChangeKind.Update,
            MAX_MODEL_ID,
            params,
            uint64(block.timestamp) + DELAY
        );
        uint256 changeId = catalog.scheduleUpdateModel(MAX_MODEL_ID, params);
        vm.assertEq(catalog.changeReadyAt(changeId), block.timestamp + DELAY, "readyAt");
    }

    /// @dev The audit's attack: reprice a model 100x for the very next request. The next request still pays the
    /// listed price; the new one applies only after the delay.
    function test_applyModelChange_revertsBeforeTheDelayAndTheNextJobPaysTheListedPrice() public {
        uint256 changeId = catalog.scheduleUpdateModel(MAX_MODEL_ID, _params(MAX_CPR * 100, MAX_CP1K * 100));
        vm.warp(block.timestamp + DELAY - 1);
        vm.expectRevert(
            abi.encodeWithSelector(IModelCatalog.ModelChangeNotReady.selector, changeId, START_TIME + DELAY)
        );
        catalog.applyModelChange(changeId);
        uint256 before = _available(wallet);
        _openJob(JOB, maxModel, 1_000);
        vm.assertEq(before - _available(wallet), 50, "locked at the listed price");
    }

    function test_applyModelChange_appliesARepricingAfterTheDelayForAnyCaller() public {
        uint256 changeId = catalog.scheduleUpdateModel(MAX_MODEL_ID, _params(MAX_CPR * 2, MAX_CP1K * 2));
        vm.warp(block.timestamp + DELAY);
        vm.prank(address(0xA11CE5));
        catalog.applyModelChange(changeId);
        (, , , uint32 cpr, uint32 cp1k, ) = catalog.listing(maxModel);
        vm.assertEq(cpr, MAX_CPR * 2, "new price per request");
        vm.assertEq(cp1k, MAX_CP1K * 2, "new price per 1k");
        vm.assertEq(catalog.changeReadyAt(changeId), 0, "consumed");
    }

    function test_scheduleAddModel_listsTheModelOnlyAfterTheDelay() public {
        uint256 changeId = catalog.scheduleAddModel("new-model", _params(3, 2));
        bytes32 key = keccak256("new-model");
        vm.assertFalse(catalog.isListed(key), "not listed when scheduled");
        vm.warp(block.timestamp + DELAY);
        catalog.applyModelChange(changeId);
        vm.assertTrue(catalog.isListed(key), "listed after the delay");
    }

    function test_scheduleRetireModel_retiresOnlyAfterTheDelay() public {
        uint256 changeId = catalog.scheduleRetireModel(LITE_MODEL_ID);
        vm.warp(block.timestamp + DELAY - 1);
        vm.assertTrue(catalog.isListed(liteModel), "still listed");
        vm.warp(block.timestamp + 1);
        catalog.applyModelChange(changeId);
        vm.assertFalse(catalog.isListed(liteModel), "retired");
    }

    function test_cancelModelChange_preventsItFromEverApplying() public {
        uint256 changeId = catalog.scheduleUpdateModel(MAX_MODEL_ID, _params(1, 1));
        catalog.cancelModelChange(changeId);
        vm.warp(block.timestamp + DELAY);
        vm.expectRevert(abi.encodeWithSelector(IModelCatalog.ModelChangeUnknown.selector, changeId));
        catalog.applyModelChange(changeId);
    }

    function test_scheduleModelChanges_revertIfCallerIsNotGovernance() public {
        bytes32 governance = catalog.GOVERNANCE_ROLE();
        bytes memory unauthorized = abi.encodeWithSelector(
            IAccessControl.AccessControlUnauthorizedAccount.selector,
            gateway,
            governance
        );
        vm.startPrank(gateway);
        vm.expectRevert(unauthorized);
        catalog.scheduleAddModel("x", _params(1, 1));
        vm.expectRevert(unauthorized);
        catalog.scheduleUpdateModel(MAX_MODEL_ID, _params(1, 1));
        vm.expectRevert(unauthorized);
        catalog.scheduleRetireModel(MAX_MODEL_ID);
        vm.expectRevert(unauthorized);
        catalog.cancelModelChange(1);
        vm.stopPrank();
    }

    function test_applyModelChange_rechecksTheModelWhenApplying() public {
        uint256 first = catalog.scheduleAddModel("twin", _params(1, 1));
        uint256 second = catalog.scheduleAddModel("twin", _params(2, 2));
        vm.warp(block.timestamp + DELAY);
        catalog.applyModelChange(first);
        vm.expectRevert(abi.encodeWithSelector(IModelCatalog.ModelAlreadyExists.selector, keccak256("twin"), "twin"));
        catalog.applyModelChange(second);
    }

    function test_launchModels_areListedAtDeployment() public view {
        vm.assertTrue(catalog.isListed(maxModel), "max listed");
        vm.assertTrue(catalog.isListed(liteModel), "lite listed");
        vm.assertEq(catalog.modelCount(), 2, "two launch models");
    }

    // ================================================================ fuzz: nothing applies early

    /// @dev For any time short of the delay, neither a role grant nor a catalog change has any effect, and both
    /// apply once the delay has passed.
    function testFuzz_noRoleGrantOrCatalogChangeTakesEffectBeforeItsDelay(
        uint256 elapsed,
        uint8 contractSeed,
        uint32 cpr,
        uint8 kindSeed
    ) public {
        elapsed = bound(elapsed, 0, DELAY - 1);
        uint256 i = contractSeed % 5;
        address target = _contracts()[i];
        bytes32 role = _roles5()[i];
        cpr = uint32(bound(cpr, 1, 1_000));
        uint256 changeId;
        uint256 kind = kindSeed % 3;
        if (kind == 0) changeId = catalog.scheduleUpdateModel(MAX_MODEL_ID, _params(cpr, cpr));
        else if (kind == 1) changeId = catalog.scheduleRetireModel(MAX_MODEL_ID);
        else changeId = catalog.scheduleAddModel("fuzz-model", _params(cpr, cpr));
        IAccessControl(target).grantRole(role, NEWCOMER);

        vm.warp(block.timestamp + elapsed);
        vm.expectRevert(abi.encodeWithSelector(DelayedAccessControl.RoleGrantNotReady.selector, START_TIME + DELAY));
        IAccessControl(target).grantRole(role, NEWCOMER);
        vm.expectRevert(
            abi.encodeWithSelector(IModelCatalog.ModelChangeNotReady.selector, changeId, START_TIME + DELAY)
        );
        vm.prank(NEWCOMER);
        catalog.applyModelChange(changeId);
        vm.assertFalse(IAccessControl(target).hasRole(role, NEWCOMER), "no role before the delay");
        (, , bool retired, uint32 listedCpr, uint32 listedCp1k, ) = catalog.listing(maxModel);
        vm.assertEq(listedCpr, MAX_CPR, "price per request unchanged");
        vm.assertEq(listedCp1k, MAX_CP1K, "price per 1k unchanged");
        vm.assertFalse(retired, "not retired");
        vm.assertFalse(catalog.isListed(keccak256("fuzz-model")), "not added");

        vm.warp(START_TIME + DELAY);
        IAccessControl(target).grantRole(role, NEWCOMER);
        catalog.applyModelChange(changeId);
        vm.assertTrue(IAccessControl(target).hasRole(role, NEWCOMER), "role after the delay");
    }

    // ================================================================ key registration (item 5)

    function test_registerKey_revertsWithoutACommitment() public {
        address fresh = address(0xF4E5);
        bytes32 keyHash = keccak256("uncommitted");
        vm.prank(fresh);
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyNotCommitted.selector, fresh, keyHash));
        keys.registerKey(keyHash);
    }

    function test_registerKey_revertsInTheCommitmentsBlock() public {
        address fresh = address(0xF4E5);
        bytes32 keyHash = keccak256("same-block");
        vm.startPrank(fresh);
        keys.commitKey(keccak256(abi.encode(fresh, keyHash)));
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyCommitmentTooRecent.selector, fresh, keyHash));
        keys.registerKey(keyHash);
        vm.stopPrank();
    }

    /// @dev The copier registered first, but the owner committed first: the owner's registration takes it back.
    function test_registerKey_takesTheHashBackFromAWalletThatCommittedLater() public {
        address owner = address(0x0E4E);
        address copier = address(0xC0B1);
        bytes32 keyHash = keccak256("svc_live_ownersKey");
        _commitKey(owner, keyHash);
        _registerKey(copier, keyHash);
        vm.assertEq(keys.activeWallet(keyHash), copier, "the copier landed first");
        vm.prank(owner);
        keys.registerKey(keyHash);
        vm.assertEq(keys.activeWallet(keyHash), owner, "the owner holds it");
        (bytes32 copierKey, , ) = keys.keyOf(copier);
        vm.assertEq(copierKey, bytes32(0), "the copier has no key");
    }

    function test_registerKey_revertsIfTheHoldersCommitmentIsEarlier() public {
        address owner = address(0x0E4E);
        address latecomer = address(0x1A7E);
        bytes32 keyHash = keccak256("svc_live_ownersKey");
        _registerKey(owner, keyHash);
        _commitKey(latecomer, keyHash);
        vm.prank(latecomer);
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyHashAlreadyUsed.selector, keyHash));
        keys.registerKey(keyHash);
    }

    function test_rotateKey_needsACommitmentToo() public {
        bytes32 next = keccak256("sk-next");
        vm.prank(wallet);
        vm.expectRevert(abi.encodeWithSelector(IApiKeyRegistry.KeyNotCommitted.selector, wallet, next));
        keys.rotateKey(next);
        _commitKey(wallet, next);
        vm.prank(wallet);
        keys.rotateKey(next);
        vm.assertEq(keys.activeWallet(next), wallet, "rotated");
    }

    // ================================================================ helpers

    function _contracts() private view returns (address[5] memory) {
        return [address(escrow), address(disputes), address(workers), address(catalog), address(keys)];
    }

    function _roles5() private view returns (bytes32[5] memory) {
        return
            [
                escrow.GATEWAY_ROLE(),
                disputes.ARBITER_ROLE(),
                workers.SLASHER_ROLE(),
                catalog.GOVERNANCE_ROLE(),
                keys.OPERATOR_ROLE()
            ];
    }

    function _params(uint32 cpr, uint32 cp1k) private pure returns (IModelCatalog.ModelParams memory) {
        return
            IModelCatalog.ModelParams({
                tier: Tier.Max,
                creditsPerRequest: cpr,
                creditsPer1kTokens: cp1k,
                contextWindow: CONTEXT_WINDOW,
                parameters: "test",
                ownedBy: "test"
            });
    }
}
