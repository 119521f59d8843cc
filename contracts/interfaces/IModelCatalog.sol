// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Tier} from "../types/Tier.sol";

/// @title IModelCatalog
/// @notice Governance-maintained catalog: stable string model id -> tier, prices and limits.
/// @dev Models are addressed by `modelKey = keccak256(bytes(modelId))`; each also gets a compact
/// `index` (1-based) that the escrow packs into its one-word job record.
interface IModelCatalog {
    /// @notice What governance sets for a model.
    struct ModelParams {
        Tier tier;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        uint32 contextWindow;
        string parameters;
        string ownedBy;
    }

    /// @notice A model as stored.
    struct Model {
        string modelId;
        uint16 index;
        Tier tier;
        bool retired;
        uint32 creditsPerRequest;
        uint32 creditsPer1kTokens;
        uint32 contextWindow;
        uint64 createdAt;
        string parameters;
        string ownedBy;
    }

    /// @notice A model with this id exists already.
    error ModelAlreadyExists(bytes32 modelKey, string modelId);
    /// @notice No model has this key.
    error ModelUnknown(bytes32 modelKey);
    /// @notice The model was retired by governance.
    error ModelIsRetired(bytes32 modelKey);
    /// @notice The model id is empty or longer than the catalog accepts.
    error ModelIdInvalid(string modelId);
    /// @notice Prices or context window are out of range (zero price, zero window).
    error ModelParamsInvalid(bytes32 modelKey);
    /// @notice The catalog is full (the compact index space is exhausted).
    error CatalogFull();

    /// @notice Governance added a model.
    /// @param modelKey keccak256 of `modelId`.
    /// @param modelId The stable string id clients send.
    /// @param index Compact index used in job records.
    event ModelAdded(
        bytes32 indexed modelKey,
        string modelId,
        uint16 index,
        Tier tier,
        uint32 creditsPerRequest,
        uint32 creditsPer1kTokens,
        uint32 contextWindow,
        string parameters,
        string ownedBy,
        uint64 createdAt
    );
    /// @notice Governance changed a model's tier, prices, window or labels (takes effect for new jobs).
    event ModelUpdated(
        bytes32 indexed modelKey,
        string modelId,
        Tier tier,
        uint32 creditsPerRequest,
        uint32 creditsPer1kTokens,
        uint32 contextWindow,
        string parameters,
        string ownedBy
    );
    /// @notice Governance retired a model; new jobs for it are refused, open ones still settle.
    event ModelRetired(bytes32 indexed modelKey, string modelId, uint64 timestamp);

    /// @notice Adds a model. Governance only.
    /// @param modelId Stable string id (1-64 bytes).
    /// @param params Tier, prices, window and labels.
    /// @return modelKey keccak256 of `modelId`.
    function addModel(string calldata modelId, ModelParams calldata params) external returns (bytes32 modelKey);

    /// @notice Updates a listed model. Governance only.
    function updateModel(string calldata modelId, ModelParams calldata params) external;

    /// @notice Retires a model for good. Governance only.
    function retireModel(string calldata modelId) external;

    /// @notice Pricing of a listed (not retired) model; reverts otherwise.
    /// @return index Compact index.
    /// @return tier Price tier.
    /// @return creditsPerRequest Price of completions up to the long-completion threshold.
    /// @return creditsPer1kTokens Price per 1,000 tokens beyond it.
    function listedPricing(
        bytes32 modelKey
    ) external view returns (uint16 index, Tier tier, uint32 creditsPerRequest, uint32 creditsPer1kTokens);

    /// @notice Everything the escrow needs to open a job of `modelKey`, without reverting: `index` zero when the
    /// model is unknown.
    /// @return index Compact index of the current price version (zero: unknown).
    /// @return tier Price tier.
    /// @return retired Whether governance retired it.
    /// @return creditsPerRequest Price of completions up to the long-completion threshold.
    /// @return creditsPer1kTokens Price per 1,000 tokens beyond it.
    /// @return contextWindow Context window, tokens (no job may ask for more output tokens).
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
        );

    /// @notice Pricing by compact index, retired or not (open jobs of a retired model still settle).
    /// @return modelKey The model's key.
    /// @return tier Price tier.
    /// @return creditsPerRequest Price of completions up to the long-completion threshold.
    /// @return creditsPer1kTokens Price per 1,000 tokens beyond it.
    function pricingAt(
        uint16 index
    ) external view returns (bytes32 modelKey, Tier tier, uint32 creditsPerRequest, uint32 creditsPer1kTokens);

    /// @notice The full record of a model.
    function getModel(bytes32 modelKey) external view returns (Model memory);

    /// @notice Number of models ever added (retired included).
    function modelCount() external view returns (uint256);
}
