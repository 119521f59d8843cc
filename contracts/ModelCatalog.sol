// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
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
contract ModelCatalog is IModelCatalog, AccessControlDefaultAdminRules {
    /// @notice May add, update and retire models.
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

    /// @notice The zero address where an address is needed.
    error ZeroAddress();

    /// @param admin Default admin (two-step transfer after `ProtocolTime.ADMIN_TRANSFER_DELAY`).
    /// @param governance Holder of `GOVERNANCE_ROLE`.
    constructor(
        address admin,
        address governance
    ) AccessControlDefaultAdminRules(ProtocolTime.ADMIN_TRANSFER_DELAY, admin) {
        if (governance == address(0)) revert ZeroAddress();
        _grantRole(GOVERNANCE_ROLE, governance);
    }

    /// @inheritdoc IModelCatalog
    function addModel(
        string calldata modelId,
        ModelParams calldata params
    ) external onlyRole(GOVERNANCE_ROLE) returns (bytes32 modelKey) {
        uint256 idLength = bytes(modelId).length;
        if (idLength == 0 || idLength > MAX_MODEL_ID_LENGTH) revert ModelIdInvalid(modelId);
        modelKey = keccak256(bytes(modelId));
        if (_pricing[modelKey].index != 0) revert ModelAlreadyExists(modelKey, modelId);
        _requireValidParams(modelKey, params);

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

    /// @inheritdoc IModelCatalog
    function updateModel(string calldata modelId, ModelParams calldata params) external onlyRole(GOVERNANCE_ROLE) {
        bytes32 modelKey = keccak256(bytes(modelId));
        PricingWord storage word = _requireListed(modelKey);
        _requireValidParams(modelKey, params);
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

    /// @inheritdoc IModelCatalog
    function retireModel(string calldata modelId) external onlyRole(GOVERNANCE_ROLE) {
        bytes32 modelKey = keccak256(bytes(modelId));
        PricingWord storage word = _requireListed(modelKey);
        word.retired = true;
        emit ModelRetired(modelKey, modelId, uint64(block.timestamp));
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
    function _newPriceVersion(bytes32 modelKey, ModelParams calldata params) private returns (uint16 index) {
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

    function _requireValidParams(bytes32 modelKey, ModelParams calldata params) private pure {
        if (params.creditsPerRequest == 0 || params.creditsPer1kTokens == 0 || params.contextWindow == 0) {
            revert ModelParamsInvalid(modelKey);
        }
    }
}
