// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice What a worker signs (EIP-712) when it finishes a job.
/// @param jobId The escrow job id (the API's `job_<ULID>` as 16 bytes, right-aligned).
/// @param outputHash sha256 of the full output text, UTF-8, no trailing newline.
/// @param promptTokens Prompt tokens counted by the worker's tokenizer.
/// @param completionTokens Completion tokens generated (and delivered).
/// @param finalTokenAt Unix time of the final output token; opens the dispute window.
struct Receipt {
    bytes32 jobId;
    bytes32 outputHash;
    uint32 promptTokens;
    uint32 completionTokens;
    uint64 finalTokenAt;
}

/// @notice The facts a settlement fixed for a job, committed to in storage and emitted in `JobSettled`.
/// @dev Disputes pass them back; the escrow checks them against its commitment instead of storing each one.
struct Settlement {
    address wallet;
    address worker;
    bytes32 outputHash;
    uint64 creditsCharged;
    uint64 finalTokenAt;
}
