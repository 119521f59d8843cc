// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Stablecoin} from "../../tokens/Stablecoin.sol";
import {StakeToken} from "../../tokens/StakeToken.sol";
import {ApiKeyRegistry} from "../../ApiKeyRegistry.sol";
import {ModelCatalog} from "../../ModelCatalog.sol";
import {WorkerRegistry} from "../../WorkerRegistry.sol";
import {CreditEscrow} from "../../CreditEscrow.sol";
import {DisputeManager} from "../../DisputeManager.sol";
import {RoleGrant} from "../../access/DelayedAccessControl.sol";
import {IModelCatalog} from "../../interfaces/IModelCatalog.sol";
import {Tier} from "../../types/Tier.sol";
import {Receipt, Settlement} from "../../types/Receipt.sol";
import {Pricing} from "../../libraries/Pricing.sol";
import {vm} from "./Vm.sol";

/// @notice The whole contract system deployed with the parameters of docs/DESIGN.md, two launch models,
/// two staked workers whose private keys the tests hold (to sign receipts with `vm.sign`), and a wallet
/// with an API key and credits. The test contract is admin, governance and token owner.
abstract contract EscrowFixture {
    uint64 internal constant JOB_TIMEOUT = 120;
    uint64 internal constant DISPUTE_WINDOW = 60;
    uint64 internal constant ARBITRATION_WINDOW = 24 hours;
    uint64 internal constant UNBONDING_DELAY = 3 days;
    uint256 internal constant MIN_STAKE = 1_000e18;
    uint16 internal constant FEE_BPS = 1_000;
    uint256 internal constant UNIT_PER_CREDIT = 10_000;
    uint256 internal constant START_TIME = 1_763_700_000;

    string internal constant MAX_MODEL_ID = "llama-3.3-70b-instruct";
    string internal constant LITE_MODEL_ID = "qwen3-1.7b";
    uint32 internal constant MAX_CPR = 40;
    uint32 internal constant MAX_CP1K = 20;
    uint32 internal constant LITE_CPR = 2;
    uint32 internal constant LITE_CP1K = 1;

    /// @dev The fixture's models accept the whole uint32 range of `maxTokens`, so fuzzed locks span it; the
    /// context-window cap is tested with a model of its own.
    uint32 internal constant CONTEXT_WINDOW = type(uint32).max;

    /// @dev The largest lock the fixture's wallet must afford: the max-tier price of uint32.max tokens.
    uint256 internal constant WALLET_CREDITS = 100_000_000;
    /// @dev Each fixture worker's stablecoin bond: ten times everything the wallet could ever be charged, so no
    /// test but the bond's own runs into it.
    uint256 internal constant WORKER_BOND = 10 * WALLET_CREDITS * UNIT_PER_CREDIT;

    uint256 internal constant WORKER_PK = 0xA11CE;
    uint256 internal constant LITE_WORKER_PK = 0xB0B;

    address internal immutable gateway = address(0x6A7E);
    address internal immutable arbiter = address(0xA4B1);
    address internal immutable operator = address(0x0BE4);
    address internal immutable treasury = address(0x7EA5);
    address internal immutable wallet = address(0xC11E47);
    bytes32 internal immutable walletKeyHash = keccak256("sk-test-wallet-key");

    Stablecoin internal usd;
    StakeToken internal svc;
    ApiKeyRegistry internal keys;
    ModelCatalog internal catalog;
    WorkerRegistry internal workers;
    CreditEscrow internal escrow;
    DisputeManager internal disputes;

    bytes32 internal maxModel;
    bytes32 internal liteModel;
    /// @dev Hosts both models.
    address internal worker;
    /// @dev Hosts only the lite model.
    address internal liteWorker;

    function setUp() public virtual {
        vm.warp(START_TIME);
        IModelCatalog.LaunchModel[] memory launch = new IModelCatalog.LaunchModel[](2);
        launch[0] = _launchModel(MAX_MODEL_ID, Tier.Max, MAX_CPR, MAX_CP1K, CONTEXT_WINDOW);
        launch[1] = _launchModel(LITE_MODEL_ID, Tier.Lite, LITE_CPR, LITE_CP1K, CONTEXT_WINDOW);
        _deploySystem(launch);
        maxModel = keccak256(bytes(MAX_MODEL_ID));
        liteModel = keccak256(bytes(LITE_MODEL_ID));

        bytes32[] memory both = new bytes32[](2);
        both[0] = maxModel;
        both[1] = liteModel;
        worker = _registerWorker(WORKER_PK, both);
        bytes32[] memory liteOnly = new bytes32[](1);
        liteOnly[0] = liteModel;
        liteWorker = _registerWorker(LITE_WORKER_PK, liteOnly);

        _registerKey(wallet, walletKeyHash);
        _deposit(wallet, WALLET_CREDITS);
    }

    // ------------------------------------------------------------ deployment

    /// @dev Deploys as scripts/deploy does: every role and the launch catalog through constructors (the only
    /// grants without the delay); the dispute manager's address is predicted for the roles it needs.
    function _deploySystem(IModelCatalog.LaunchModel[] memory launch) internal {
        usd = new Stablecoin(address(this));
        svc = new StakeToken(address(this));
        keys = new ApiKeyRegistry(address(this), operator);
        catalog = new ModelCatalog(address(this), address(this), launch);
        // Registry, escrow, dispute manager: the next three creations of this contract.
        address predictedDisputes = vm.computeCreateAddress(address(this), vm.getNonce(address(this)) + 2);
        workers = new WorkerRegistry(
            _roles(keccak256("SLASHER_ROLE"), predictedDisputes),
            svc,
            catalog,
            treasury,
            MIN_STAKE,
            UNBONDING_DELAY,
            DISPUTE_WINDOW,
            ARBITRATION_WINDOW
        );
        RoleGrant[] memory escrowRoles = new RoleGrant[](4);
        escrowRoles[0] = RoleGrant(bytes32(0), address(this));
        escrowRoles[1] = RoleGrant(keccak256("GATEWAY_ROLE"), gateway);
        escrowRoles[2] = RoleGrant(keccak256("DISPUTE_ROLE"), predictedDisputes);
        escrowRoles[3] = RoleGrant(keccak256("PAUSER_ROLE"), address(this));
        escrow = new CreditEscrow(escrowRoles, usd, keys, catalog, workers, treasury, FEE_BPS, JOB_TIMEOUT);
        RoleGrant[] memory disputeRoles = new RoleGrant[](3);
        disputeRoles[0] = RoleGrant(bytes32(0), address(this));
        disputeRoles[1] = RoleGrant(keccak256("GATEWAY_ROLE"), gateway);
        disputeRoles[2] = RoleGrant(keccak256("ARBITER_ROLE"), arbiter);
        disputes = new DisputeManager(disputeRoles, escrow, workers);
        require(address(disputes) == predictedDisputes, "dispute manager address prediction");
    }

    /// @dev This contract as default admin, and `role` for `account`.
    function _roles(bytes32 role, address account) internal view returns (RoleGrant[] memory grants) {
        grants = new RoleGrant[](2);
        grants[0] = RoleGrant(bytes32(0), address(this));
        grants[1] = RoleGrant(role, account);
    }

    /// @dev This contract as default admin, no other role.
    function _noRoles() internal view returns (RoleGrant[] memory grants) {
        grants = new RoleGrant[](1);
        grants[0] = RoleGrant(bytes32(0), address(this));
    }

    function _launchModel(
        string memory modelId,
        Tier tier,
        uint32 cpr,
        uint32 cp1k,
        uint32 contextWindow
    ) internal pure returns (IModelCatalog.LaunchModel memory) {
        return
            IModelCatalog.LaunchModel({
                modelId: modelId,
                params: IModelCatalog.ModelParams({
                    tier: tier,
                    creditsPerRequest: cpr,
                    creditsPer1kTokens: cp1k,
                    contextWindow: contextWindow,
                    parameters: "test",
                    ownedBy: "test"
                })
            });
    }

    /// @dev Schedules a catalog change, waits out its delay and applies it (the only way a change takes effect).
    function _applyAfterDelay(uint256 changeId) internal {
        vm.warp(catalog.changeReadyAt(changeId));
        catalog.applyModelChange(changeId);
    }

    function _registerWorker(uint256 privateKey, bytes32[] memory modelKeys) internal returns (address account) {
        account = vm.addr(privateKey);
        svc.mint(account, MIN_STAKE);
        vm.startPrank(account);
        svc.approve(address(workers), MIN_STAKE);
        workers.register("http://worker.test", modelKeys, MIN_STAKE);
        vm.stopPrank();
        _postBond(account, WORKER_BOND);
    }

    /// @dev Storage slots of `EscrowStorage._bonds` and `_bondTotal` (the escrow's first base: slots from 0).
    uint256 private constant BONDS_SLOT = 14;
    uint256 private constant BOND_TOTAL_SLOT = 15;

    /// @dev Stand-in for a worker whose seized bond cannot cover restitution (the only way the owed queue is still
    /// reached since issue 22's bonds): takes its bond out of the escrow's books and holdings.
    function _dropBond(address account) internal {
        bytes32 slot = keccak256(abi.encode(account, BONDS_SLOT));
        uint256 word = uint256(vm.load(address(escrow), slot));
        uint256 bond = word >> 160;
        vm.store(address(escrow), slot, bytes32(word & ((1 << 160) - 1)));
        uint256 total = uint256(vm.load(address(escrow), bytes32(BOND_TOTAL_SLOT)));
        vm.store(address(escrow), bytes32(BOND_TOTAL_SLOT), bytes32(total - bond));
        vm.prank(address(escrow));
        usd.transfer(address(0xdead), bond);
        (uint256 bondAfter, , ) = escrow.bondOf(account);
        vm.assertEq(bondAfter, 0, "bond dropped");
        vm.assertEq(escrow.ledger().bonds, total - bond, "bond total");
    }

    /// @dev Posts `amount` of stablecoin (minted to the fixture) as `account`'s bond.
    function _postBond(address account, uint256 amount) internal {
        usd.mint(address(this), amount);
        usd.approve(address(escrow), amount);
        escrow.postBond(account, amount);
    }

    /// @dev Commit, then register in the next block (commit–reveal, ApiKeyRegistry).
    function _registerKey(address account, bytes32 keyHash) internal {
        _commitKey(account, keyHash);
        vm.prank(account);
        keys.registerKey(keyHash);
    }

    function _commitKey(address account, bytes32 keyHash) internal {
        vm.prank(account);
        keys.commitKey(keccak256(abi.encode(account, keyHash)));
        vm.roll(block.number + 1);
    }

    function _deposit(address account, uint256 credits) internal {
        uint256 amount = credits * UNIT_PER_CREDIT;
        usd.mint(account, amount);
        vm.startPrank(account);
        usd.approve(address(escrow), amount);
        escrow.deposit(amount);
        vm.stopPrank();
    }

    // ------------------------------------------------------------ jobs and receipts

    function _openJob(bytes32 jobId, bytes32 modelKey, uint32 maxTokens) internal {
        vm.prank(gateway);
        escrow.openJob(jobId, walletKeyHash, modelKey, maxTokens);
    }

    function _receipt(bytes32 jobId, uint32 completionTokens) internal view returns (Receipt memory) {
        return
            Receipt({
                jobId: jobId,
                outputHash: sha256(abi.encode(jobId, completionTokens)),
                promptTokens: 12,
                completionTokens: completionTokens,
                finalTokenAt: uint64(block.timestamp)
            });
    }

    function _sign(uint256 privateKey, Receipt memory receipt) internal view returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(privateKey, escrow.receiptDigest(receipt));
        return abi.encodePacked(r, s, v);
    }

    function _settle(Receipt memory receipt, bytes memory signature) internal {
        vm.prank(gateway);
        escrow.settle(receipt, signature);
    }

    function _settlementOf(
        Receipt memory receipt,
        address account,
        address signer,
        uint256 charged
    ) internal pure returns (Settlement memory) {
        return
            Settlement({
                wallet: account,
                worker: signer,
                outputHash: receipt.outputHash,
                creditsCharged: uint64(charged),
                finalTokenAt: receipt.finalTokenAt
            });
    }

    // ------------------------------------------------------------ reads

    function _available(address account) internal view returns (uint256) {
        return escrow.accountOf(account).available;
    }

    function _locked(address account) internal view returns (uint256) {
        return escrow.accountOf(account).locked;
    }

    function _priceOf(bytes32 modelKey, uint32 tokens) internal view returns (uint256) {
        return
            modelKey == maxModel
                ? Pricing.price(MAX_CPR, MAX_CP1K, tokens)
                : Pricing.price(LITE_CPR, LITE_CP1K, tokens);
    }

    function _min(uint256 a, uint256 b) internal pure returns (uint256) {
        return a < b ? a : b;
    }
}
