// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice On-chain life of a job. `processing` and `settling` are gateway-side states and never stored here.
enum JobStatus {
    None,
    Open,
    Settled,
    Failed,
    Refunded,
    Disputed,
    DisputeUpheld
}
