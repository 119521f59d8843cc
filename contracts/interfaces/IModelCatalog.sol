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

    /// @notice What a scheduled catalog change does.
    enum ChangeKind {
        Add,
        Update,
        Retire
    }

    /// @notice A model listed at deployment (constructor), without the change delay.
    struct LaunchModel {
        string modelId;
        ModelParams params;
    }

    /// @notice A scheduled catalog change, applicable from `readyAt` on (`readyAt` zero: none).
    struct PendingChange {
        ChangeKind kind;
        uint64 readyAt;
        string modelId;
        ModelParams params;
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

    /// @notice No scheduled change has this id (never scheduled, applied or cancelled).
    error ModelChangeUnknown(uint256 changeId);
    /// @notice The change's delay has not passed yet.
    error ModelChangeNotReady(uint256 changeId, uint64 readyAt);

    /// @notice Governance scheduled a catalog change; it may apply from `readyAt` on, so wallets see it coming.
    /// @param changeId Id to apply or cancel it with.
    /// @param modelKey keccak256 of `modelId`.
    /// @param kind Add, update or retire.
    /// @param modelId The model's stable string id.
    /// @param params The new tier, prices, window and labels (empty for a retirement).
    /// @param readyAt Earliest time `applyModelChange` accepts it.
    event ModelChangeScheduled(
        uint256 indexed changeId,
        bytes32 indexed modelKey,
        ChangeKind kind,
        string modelId,
        ModelParams params,
        uint64 readyAt
    );
    /// @notice Governance withdrew a scheduled change before it applied.
    event ModelChangeCancelled(uint256 indexed changeId, bytes32 indexed modelKey);
    /// @notice A scheduled change applied (followed, in the same transaction, by `ModelAdded`, `ModelUpdated` or
    /// `ModelRetired`).
    event ModelChangeApplied(uint256 indexed changeId, bytes32 indexed modelKey);

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

    /// @notice Schedules adding a model (governance only); it may apply after the change delay.
    /// @param modelId Stable string id (1-64 bytes), not yet in the catalog.
    /// @param params Tier, prices, window and labels.
    /// @return changeId Id to apply or cancel the change with.
    function scheduleAddModel(string calldata modelId, ModelParams calldata params) external returns (uint256 changeId);

    /// @notice Schedules new tier, prices, window or labels for a listed model (governance only).
    /// @param modelId A listed model's id.
    /// @param params Tier, prices, window and labels it will have.
    /// @return changeId Id to apply or cancel the change with.
    function scheduleUpdateModel(
        string calldata modelId,
        ModelParams calldata params
    ) external returns (uint256 changeId);

    /// @notice Schedules retiring a listed model for good (governance only).
    /// @param modelId A listed model's id.
    /// @return changeId Id to apply or cancel the change with.
    function scheduleRetireModel(string calldata modelId) external returns (uint256 changeId);

    /// @notice Applies a scheduled change whose delay has passed; anyone may call it.
    /// @param changeId The id `ModelChangeScheduled` announced.
    /// @return modelKey The model changed.
    function applyModelChange(uint256 changeId) external returns (bytes32 modelKey);

    /// @notice Withdraws a scheduled change before it applies (governance only).
    /// @param changeId The id `ModelChangeScheduled` announced.
    function cancelModelChange(uint256 changeId) external;

    /// @notice When a scheduled change may apply (zero: no such change pending).
    /// @param changeId The id `ModelChangeScheduled` announced.
    function changeReadyAt(uint256 changeId) external view returns (uint64);

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
