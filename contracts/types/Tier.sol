// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice Price tier of a catalog model; the API spells them `lite`, `standard`, `pro`, `max`.
enum Tier {
    Lite,
    Standard,
    Pro,
    Max
}
