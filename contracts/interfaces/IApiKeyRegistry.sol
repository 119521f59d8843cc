// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IApiKeyRegistry
/// @notice One API key per wallet (beta). Only the key's keccak256 hash is ever on chain.
/// @dev A suspension is attached to the wallet, so revoking and re-registering cannot escape it.
interface IApiKeyRegistry {
    /// @notice Status of a wallet's key as the API reports it.
    enum KeyStatus {
        None,
        Active,
        Revoked,
        Suspended
    }

    /// @notice The wallet already has an active key; rotate it instead.
    error KeyAlreadyRegistered(address wallet, bytes32 activeKeyHash);
    /// @notice The hash was registered before (by anyone); a key hash is never reused.
    error KeyHashAlreadyUsed(bytes32 keyHash);
    /// @notice The zero hash is not a key.
    error KeyHashZero();
    /// @notice The wallet has no active key to revoke or rotate.
    error NoActiveKey(address wallet);
    /// @notice The wallet is suspended; it cannot register or rotate a key until an operator lifts it.
    error WalletSuspended(address wallet);
    /// @notice The wallet is not suspended.
    error WalletNotSuspended(address wallet);
    /// @notice The hash does not identify an active key.
    error KeyNotActive(bytes32 keyHash, KeyStatus status);

    /// @notice A wallet registered a key.
    /// @param wallet The wallet whose credits the key spends.
    /// @param keyHash keccak256 of the key's UTF-8 text.
    /// @param timestamp Block time of the registration.
    event KeyRegistered(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice A wallet revoked its key (alone or as the first half of a rotation).
    event KeyRevoked(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice An operator suspended the wallet's key for a policy violation.
    event KeySuspended(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice An operator lifted the suspension.
    event KeyUnsuspended(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);

    /// @notice Registers the caller's key. Reverts if the caller already has an active key.
    /// @param keyHash keccak256 of the key's UTF-8 text.
    function registerKey(bytes32 keyHash) external;

    /// @notice Revokes the caller's key and registers a new one, atomically.
    /// @param newKeyHash keccak256 of the new key.
    function rotateKey(bytes32 newKeyHash) external;

    /// @notice Revokes the caller's key; no spending through it is possible afterwards.
    function revokeKey() external;

    /// @notice Suspends a wallet (and so its key). Operator only.
    /// @param wallet The wallet to suspend.
    function suspend(address wallet) external;

    /// @notice Lifts a wallet's suspension. Operator only.
    /// @param wallet The wallet to reinstate.
    function unsuspend(address wallet) external;

    /// @notice The wallet owning an active key; reverts with `KeyNotActive` otherwise.
    /// @param keyHash keccak256 of the key.
    /// @return wallet The owner of the key.
    function activeWallet(bytes32 keyHash) external view returns (address wallet);

    /// @notice The key currently or last attached to `wallet`.
    /// @return keyHash The hash (zero when none was ever registered).
    /// @return status Its status.
    /// @return createdAt Block time of its registration.
    function keyOf(address wallet) external view returns (bytes32 keyHash, KeyStatus status, uint64 createdAt);

    /// @notice The wallet a key hash was registered by (zero if never) and its status.
    function statusOfKey(bytes32 keyHash) external view returns (address wallet, KeyStatus status);
}
