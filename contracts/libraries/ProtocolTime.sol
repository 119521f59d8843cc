// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title ProtocolTime
/// @notice The protocol's fixed time constants, defined once for every contract that needs them.
/// @dev Deployment-specific windows (job timeout, dispute, arbitration, unbonding) are constructor parameters; the
/// dispute and arbitration windows live in the `WorkerRegistry` and the other contracts read them from there.
library ProtocolTime {
    /// @notice How far a receipt's final-token time may lie after the settlement block or before the job opened.
    uint64 internal constant MAX_CLOCK_SKEW = 30;
    /// @notice How long after the gateway accepted a request (`OpenRequest.acceptedAt`) its lock may still be taken.
    /// A lock stuck behind a fee spike or a dropped transaction still opens within this bound, and its job is judged
    /// from its acceptance, not from the block that took it; an older lock is refused (skipped in a batch), so no
    /// job is opened for a request its client has long given up on. It stays below `SETTLE_GRACE` by a minute, so
    /// the settlement queued behind a lock that landed at the bound still has at least that minute (plus the job
    /// timeout) to land.
    uint64 internal constant MAX_LOCK_DELAY = 240;
    /// @notice The spec's dispute window: a job can always be disputed at least this long after its final token.
    uint64 internal constant MIN_DISPUTE_WINDOW = 60;
    /// @notice After a job's deadline (or the end of a pause) its in-time receipt may still be settled this long;
    /// only then may anyone refund it.
    uint64 internal constant SETTLE_GRACE = 300;
    /// @notice Longest accepted job timeout.
    uint64 internal constant MAX_JOB_TIMEOUT = 1 days;
    /// @notice Delay of `AccessControlDefaultAdminRules` on every contract: a new admin takes over only this long
    /// after the current one starts the transfer (and only once the new one accepts).
    uint48 internal constant ADMIN_TRANSFER_DELAY = 2 days;
    /// @notice Delay before a scheduled protocol-fee or treasury change, role grant or catalog change takes effect.
    uint64 internal constant CONFIG_CHANGE_DELAY = 2 days;
    /// @notice A pending admin transfer may be accepted only this long after it became acceptable; later it has
    /// expired and must be begun again (so a forgotten transfer cannot be accepted months later).
    uint48 internal constant ADMIN_TRANSFER_EXPIRY = 7 days;
}
