// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ICreditEscrow} from "../interfaces/ICreditEscrow.sol";
import {ProtocolTime} from "../libraries/ProtocolTime.sol";

/// @title EscrowStorage
/// @notice The escrow's state, shared by `CreditEscrow` (the hot paths: locks and settlement) and `EscrowModule`
/// (the cold paths it runs by DELEGATECALL: credits, refunds, disputes, reserve, admin), and the helpers both use.
/// @dev Both contracts name this contract as their first base and it has no base with storage, so its variables
/// take the same slots (from 0) in both; every other base of `CreditEscrow` (access control) comes after them.
/// Keep it first in both inheritance lists.
abstract contract EscrowStorage {
    /// @dev The hot word: settlement reads it once and writes it once. A job pays `feeBps` when opened before
    /// `feeSwitchAt`, else `nextFeeBps`; both stay until no job opened under the older one can still settle.
    /// `pausedAt` is the start of the last run of pauses (pauses less than the settle grace apart count as one run)
    /// and `unpausedAt` its end: jobs whose settle window was still open when the run began get a fresh grace.
    struct Config {
        uint16 feeBps;
        uint16 nextFeeBps;
        uint32 feeSwitchAt;
        bool paused;
        uint32 pausedAt;
        uint32 unpausedAt;
        uint56 creditsOutstanding;
        uint32 treasurySwitchAt;
        bool treasuryMoved;
    }

    /// @dev Restitution the reserve could not pay when the dispute was upheld.
    struct OwedRestitution {
        bytes32 jobId;
        address wallet;
        uint64 credits;
    }

    /// @dev Stablecoin units per credit (`CreditEscrow.UNIT_PER_CREDIT`).
    uint256 internal constant UNITS_PER_CREDIT = 10_000;
    /// @dev The top bit of an account's stored `lastTopUpAt` says the wallet has a spending cap, so opening reads
    /// the spend word (`_spend`, a cold slot) only for capped wallets. Set and cleared by `setSpendingCap`, kept by
    /// deposits; `accountOf` reports `lastTopUpAt` without it (a block time never reaches 2^63).
    uint64 internal constant SPEND_CAPPED = 1 << 63;

    mapping(address wallet => ICreditEscrow.Account) internal _accounts;
    mapping(bytes32 jobId => uint256 record) internal _jobs;
    mapping(address wallet => uint256 word) internal _spend;
    mapping(address recipient => uint256 units) internal _claimable;
    Config internal _config;
    /// @dev The treasury once it moved from the deployment's (`treasuryMoved` in `_config`), and a scheduled
    /// successor (taking over at `treasurySwitchAt`). Settlement reads neither until the treasury first moves: the
    /// deployment's treasury is an immutable and the switch time sits in the hot word it reads anyway.
    address internal _movedTreasury;
    address internal _nextTreasury;
    /// @dev Cache of the catalog's price versions, which never change once handed out (a repricing gets a new
    /// index): the model key (never zero: filled) and `creditsPerRequest | creditsPer1kTokens << 32`.
    /// Filled by the first settlement of each version, so later ones skip the catalog call.
    mapping(uint16 index => bytes32 modelKey) internal _versionKey;
    mapping(uint16 index => uint256 prices) internal _versionPrices;
    uint256 internal _reserve;
    uint256 internal _claimableTotal;
    OwedRestitution[] internal _owedQueue;
    uint256 internal _owedHead;
    uint256 internal _owedCredits;
    /// @dev Each worker's bond and charges at risk (`WorkerBond`), the bonds' sum, and disputes pending per worker.
    mapping(address worker => uint256 word) internal _bonds;
    uint256 internal _bondTotal;
    mapping(address worker => uint256 count) internal _disputesPending;

    /// @dev The treasury in effect, making a scheduled one current once its time has come.
    function _treasuryInEffect(address firstTreasury) internal returns (address) {
        Config storage config = _config;
        uint32 switchAt = config.treasurySwitchAt;
        if (switchAt != 0 && block.timestamp >= switchAt) {
            address next = _nextTreasury;
            _movedTreasury = next;
            _nextTreasury = address(0);
            config.treasurySwitchAt = 0;
            config.treasuryMoved = true;
            emit ICreditEscrow.TreasuryUpdated(next);
            return next;
        }
        return config.treasuryMoved ? _movedTreasury : firstTreasury;
    }

    /// @dev Stablecoin held beyond credits, reserve, deferred payouts and bonds.
    function _surplus(IERC20 stablecoin) internal view returns (uint256) {
        uint256 owed = uint256(_config.creditsOutstanding) * UNITS_PER_CREDIT + _reserve + _claimableTotal + _bondTotal;
        uint256 held = stablecoin.balanceOf(address(this));
        return held > owed ? held - owed : 0;
    }

    /// @dev The fee of a job opened at `openedAt`.
    function _feeAt(Config memory config, uint256 openedAt) internal pure returns (uint16) {
        return openedAt >= config.feeSwitchAt ? config.nextFeeBps : config.feeBps;
    }

    /// @dev Last moment an in-time receipt may settle: the settle grace after the deadline, restarted by the end
    /// of a run of pauses that began while it was still running (a pause never turns delivered work into a
    /// refund). Anyone may refund after it.
    function _settleBy(uint64 deadline, Config memory config) internal pure returns (uint64 settleBy) {
        settleBy = deadline + ProtocolTime.SETTLE_GRACE;
        if (
            config.pausedAt != 0 &&
            settleBy >= config.pausedAt &&
            config.unpausedAt + ProtocolTime.SETTLE_GRACE > settleBy
        ) {
            settleBy = config.unpausedAt + ProtocolTime.SETTLE_GRACE;
        }
    }
}
