// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {DelayedAccessControl, adminOnly} from "./access/DelayedAccessControl.sol";
import {IModelCatalog} from "./interfaces/IModelCatalog.sol";
import {Tier} from "./types/Tier.sol";
import {ProtocolTime} from "./libraries/ProtocolTime.sol";

/// @title ModelCatalog
/// @notice Governance-maintained list of models with their tier, prices and context window.
/// @dev Pricing facts sit in one packed word per model (`_pricing`) so the escrow reads a model in one SLOAD;
/// the strings live apart and are only read by `getModel`.
/// The compact `index` names a *price version* of a model: adding a model creates its first version, and an
/// update that changes tier or prices creates a new one. Open jobs record the index they were opened under,
/// so `pricingAt` keeps answering with the prices they were opened at ("takes effect for new jobs").
/// No change applies at once: governance schedules it (`ModelChangeScheduled`, with the time it may apply) and
/// anyone applies it `CHANGE_DELAY` later, so a wallet can withdraw before a price it does not accept. Only the
/// launch catalog (constructor) is listed without the delay.
contract ModelCatalog is IModelCatalog, DelayedAccessControl {
    /// @notice Seconds between scheduling a catalog change and the earliest time it may apply.
    uint64 public constant CHANGE_DELAY = ProtocolTime.CONFIG_CHANGE_DELAY;
    /// @notice May schedule and cancel model additions, updates and retirements.
    bytes32 public constant GOVERNANCE_ROLE = keccak256("GOVERNANCE_ROLE");
    /// @notice Longest accepted model id, in bytes.
    uint256 public constant MAX_MODEL_ID_LENGTH = 64;
    /// @notice Largest compact index (the job record holds a uint16); models and price versions share it.
    uint256 public constant MAX_INDEX = type(uint16).max;

    struct PricingWord {
        uint16 index;
        Tier tier;
        bool retired;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        uint32 contextWindow;
        uint64 createdAt;
    }

    struct Labels {
        string modelId;
        string parameters;
        string ownedBy;
    }

    /// @dev A model's tier and prices as of one compact index.
    struct PriceVersion {
        Tier tier;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
    }

    mapping(bytes32 modelKey => PricingWord) private _pricing;
    mapping(bytes32 modelKey => Labels) private _labels;
    /// @dev Compact index (1-based) -> model key and its prices then; mappings, so `pricingAt` reads two words.
    mapping(uint16 index => bytes32 modelKey) private _keyAt;
    mapping(uint16 index => PriceVersion) private _priceAt;
    /// @dev Highest index handed out.
    uint16 private _lastIndex;
    uint256 private _modelCount;
    /// @dev Scheduled changes by id; the last id handed out.
    mapping(uint256 changeId => PendingChange) private _pending;
    uint256 private _lastChangeId;

    /// @notice The zero address where an address is needed.
    error ZeroAddress();

    /// @param admin Default admin (two-step transfer after `ProtocolTime.ADMIN_TRANSFER_DELAY`).
    /// @param governance Holder of `GOVERNANCE_ROLE`.
    /// @param launchModels The launch catalog, listed at once (nobody can hold credits before deployment).
    constructor(
        address admin,
        address governance,
        LaunchModel[] memory launchModels
    ) DelayedAccessControl(adminOnly(admin)) {
        if (governance == address(0)) revert ZeroAddress();
        _grantRole(GOVERNANCE_ROLE, governance);
        for (uint256 i = 0; i < launchModels.length; ++i) {
            _requireNewModel(launchModels[i].modelId, launchModels[i].params);
            _addModel(launchModels[i].modelId, launchModels[i].params);
        }
    }

    /// @inheritdoc IModelCatalog
    function scheduleAddModel(
        string calldata modelId,
        ModelParams calldata params
    ) external onlyRole(GOVERNANCE_ROLE) returns (uint256 changeId) {
        _requireNewModel(modelId, params);
        return _schedule(ChangeKind.Add, modelId, params);
    }

    /// @inheritdoc IModelCatalog
    function scheduleUpdateModel(
        string calldata modelId,
        ModelParams calldata params
    ) external onlyRole(GOVERNANCE_ROLE) returns (uint256 changeId) {
        bytes32 modelKey = keccak256(bytes(modelId));
        _requireListed(modelKey);
        _requireValidParams(modelKey, params);
        return _schedule(ChangeKind.Update, modelId, params);
    }

    /// @inheritdoc IModelCatalog
    function scheduleRetireModel(
        string calldata modelId
    ) external onlyRole(GOVERNANCE_ROLE) returns (uint256 changeId) {
        _requireListed(keccak256(bytes(modelId)));
        ModelParams memory none;
        return _schedule(ChangeKind.Retire, modelId, none);
    }

    /// @inheritdoc IModelCatalog
    /// @dev Re-checks the model's state: a model added by another change meanwhile, or retired, reverts.
    function applyModelChange(uint256 changeId) external returns (bytes32 modelKey) {
        PendingChange memory change = _pending[changeId];
        if (change.readyAt == 0) revert ModelChangeUnknown(changeId);
        if (block.timestamp < change.readyAt) revert ModelChangeNotReady(changeId, change.readyAt);
        delete _pending[changeId];
        modelKey = keccak256(bytes(change.modelId));
        emit ModelChangeApplied(changeId, modelKey);
        if (change.kind == ChangeKind.Add) {
            _requireNewModel(change.modelId, change.params);
            _addModel(change.modelId, change.params);
        } else if (change.kind == ChangeKind.Update) {
            _updateModel(modelKey, change.params);
        } else {
            _requireListed(modelKey).retired = true;
            emit ModelRetired(modelKey, change.modelId, uint64(block.timestamp));
        }
    }

    /// @inheritdoc IModelCatalog
    function cancelModelChange(uint256 changeId) external onlyRole(GOVERNANCE_ROLE) {
        PendingChange storage change = _pending[changeId];
        if (change.readyAt == 0) revert ModelChangeUnknown(changeId);
        bytes32 modelKey = keccak256(bytes(change.modelId));
        delete _pending[changeId];
        emit ModelChangeCancelled(changeId, modelKey);
    }

    /// @inheritdoc IModelCatalog
    function changeReadyAt(uint256 changeId) external view returns (uint64) {
        return _pending[changeId].readyAt;
    }

    /// @dev Lists a model checked by `_requireNewModel`.
    function _addModel(string memory modelId, ModelParams memory params) private {
        bytes32 modelKey = keccak256(bytes(modelId));
        ++_modelCount;
        _pricing[modelKey] = PricingWord({
            index: _newPriceVersion(modelKey, params),
            tier: params.tier,
            retired: false,
            creditsPerRequest: params.creditsPerRequest,
            creditsPer1kTokens: params.creditsPer1kTokens,
            contextWindow: params.contextWindow,
            createdAt: uint64(block.timestamp)
        });
        _labels[modelKey] = Labels({modelId: modelId, parameters: params.parameters, ownedBy: params.ownedBy});
        _emitAdded(modelKey);
    }

    function _updateModel(bytes32 modelKey, ModelParams memory params) private {
        PricingWord storage word = _requireListed(modelKey);
        if (
            word.tier != params.tier ||
            word.creditsPerRequest != params.creditsPerRequest ||
            word.creditsPer1kTokens != params.creditsPer1kTokens
        ) word.index = _newPriceVersion(modelKey, params);
        word.tier = params.tier;
        word.creditsPerRequest = params.creditsPerRequest;
        word.creditsPer1kTokens = params.creditsPer1kTokens;
        word.contextWindow = params.contextWindow;
        Labels storage labels = _labels[modelKey];
        labels.parameters = params.parameters;
        labels.ownedBy = params.ownedBy;
        _emitUpdated(modelKey);
    }

    function _schedule(
        ChangeKind kind,
        string calldata modelId,
        ModelParams memory params
    ) private returns (uint256 changeId) {
        changeId = ++_lastChangeId;
        uint64 readyAt = uint64(block.timestamp) + CHANGE_DELAY;
        _pending[changeId] = PendingChange({kind: kind, readyAt: readyAt, modelId: modelId, params: params});
        emit ModelChangeScheduled(changeId, keccak256(bytes(modelId)), kind, modelId, params, readyAt);
    }

    function _requireNewModel(string memory modelId, ModelParams memory params) private view {
        uint256 idLength = bytes(modelId).length;
        if (idLength == 0 || idLength > MAX_MODEL_ID_LENGTH) revert ModelIdInvalid(modelId);
        bytes32 modelKey = keccak256(bytes(modelId));
        if (_pricing[modelKey].index != 0) revert ModelAlreadyExists(modelKey, modelId);
        _requireValidParams(modelKey, params);
    }

    /// @inheritdoc IModelCatalog
    function listedPricing(
        bytes32 modelKey
    ) external view returns (uint16 index, Tier tier, uint32 creditsPerRequest, uint32 creditsPer1kTokens) {
        PricingWord memory word = _pricing[modelKey];
        if (word.index == 0) revert ModelUnknown(modelKey);
        if (word.retired) revert ModelIsRetired(modelKey);
        return (word.index, word.tier, word.creditsPerRequest, word.creditsPer1kTokens);
    }

    /// @inheritdoc IModelCatalog
    function listing(
        bytes32 modelKey
    )
        external
        view
        returns (
            uint16 index,
            Tier tier,
            bool retired,
            uint32 creditsPerRequest,
            uint32 creditsPer1kTokens,
            uint32 contextWindow
        )
    {
        PricingWord memory word = _pricing[modelKey];
        return (
            word.index,
            word.tier,
            word.retired,
            word.creditsPerRequest,
            word.creditsPer1kTokens,
            word.contextWindow
        );
    }

    /// @inheritdoc IModelCatalog
    /// @dev Answers with the tier and prices of that price version, even after a later update.
    /// An index that was never assigned reverts with `ModelUnknown(bytes32(0))`.
    function pricingAt(
        uint16 index
    ) external view returns (bytes32 modelKey, Tier tier, uint32 creditsPerRequest, uint32 creditsPer1kTokens) {
        modelKey = _keyAt[index];
        if (modelKey == bytes32(0)) revert ModelUnknown(bytes32(0));
        PriceVersion memory version = _priceAt[index];
        return (modelKey, version.tier, version.creditsPerRequest, version.creditsPer1kTokens);
    }

    /// @inheritdoc IModelCatalog
    function getModel(bytes32 modelKey) external view returns (Model memory model) {
        PricingWord memory word = _pricing[modelKey];
        if (word.index == 0) revert ModelUnknown(modelKey);
        Labels memory labels = _labels[modelKey];
        model = Model({
            modelId: labels.modelId,
            index: word.index,
            tier: word.tier,
            retired: word.retired,
            creditsPerRequest: word.creditsPerRequest,
            creditsPer1kTokens: word.creditsPer1kTokens,
            contextWindow: word.contextWindow,
            createdAt: word.createdAt,
            parameters: labels.parameters,
            ownedBy: labels.ownedBy
        });
    }

    /// @inheritdoc IModelCatalog
    function modelCount() external view returns (uint256) {
        return _modelCount;
    }

    /// @notice Whether `modelKey` is listed and not retired (never reverts).
    function isListed(bytes32 modelKey) external view returns (bool) {
        PricingWord memory word = _pricing[modelKey];
        return word.index != 0 && !word.retired;
    }

    /// @dev Hands out the next compact index for `modelKey` at these prices.
    function _newPriceVersion(bytes32 modelKey, ModelParams memory params) private returns (uint16 index) {
        if (_lastIndex >= MAX_INDEX) revert CatalogFull();
        // Bounded by MAX_INDEX just above, so the increment cannot overflow.
        unchecked {
            index = _lastIndex + 1;
        }
        _lastIndex = index;
        _keyAt[index] = modelKey;
        _priceAt[index] = PriceVersion({
            tier: params.tier,
            creditsPerRequest: params.creditsPerRequest,
            creditsPer1kTokens: params.creditsPer1kTokens
        });
    }

    /// @dev Emits from storage: the event has more fields than the stack can hold as calldata arguments.
    function _emitAdded(bytes32 modelKey) private {
        PricingWord memory word = _pricing[modelKey];
        Labels memory labels = _labels[modelKey];
        emit ModelAdded(
            modelKey,
            labels.modelId,
            word.index,
            word.tier,
            word.creditsPerRequest,
            word.creditsPer1kTokens,
            word.contextWindow,
            labels.parameters,
            labels.ownedBy,
            word.createdAt
        );
    }

    function _emitUpdated(bytes32 modelKey) private {
        PricingWord memory word = _pricing[modelKey];
        Labels memory labels = _labels[modelKey];
        emit ModelUpdated(
            modelKey,
            labels.modelId,
            word.tier,
            word.creditsPerRequest,
            word.creditsPer1kTokens,
            word.contextWindow,
            labels.parameters,
            labels.ownedBy
        );
    }

    function _requireListed(bytes32 modelKey) private view returns (PricingWord storage word) {
        word = _pricing[modelKey];
        if (word.index == 0) revert ModelUnknown(modelKey);
        if (word.retired) revert ModelIsRetired(modelKey);
    }

    function _requireValidParams(bytes32 modelKey, ModelParams memory params) private pure {
        if (params.creditsPerRequest == 0 || params.creditsPer1kTokens == 0 || params.contextWindow == 0) {
            revert ModelParamsInvalid(modelKey);
        }
    }
}
