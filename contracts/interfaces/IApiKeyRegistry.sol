// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IApiKeyRegistry
/// @notice One API key per wallet (beta). Only the key's keccak256 hash is ever on chain.
/// @dev A suspension is attached to the wallet, so revoking and re-registering cannot escape it.
/// Registration is commit–reveal: a wallet first commits to `keccak256(abi.encode(wallet, keyHash))`, then
/// registers the hash in a later block. The earliest commitment to a hash wins, even over a registration that
/// landed first, so a wallet that copies a hash from a pending registration can never keep it (docs/DESIGN.md).
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
    /// @notice The hash was registered before by a wallet whose commitment is not later than the caller's (or by
    /// the caller); a key hash is never reused.
    error KeyHashAlreadyUsed(bytes32 keyHash);
    /// @notice No commitment to `keyHash` by `wallet` (see `commitKey`).
    error KeyNotCommitted(address wallet, bytes32 keyHash);
    /// @notice The commitment was made in this block; the registration must come in a later one.
    error KeyCommitmentTooRecent(address wallet, bytes32 keyHash);
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

    /// @notice A wallet committed to a key hash it will register (the hash stays hidden until then).
    /// @param wallet The committing wallet.
    /// @param commitment keccak256(abi.encode(wallet, keyHash)).
    /// @param blockNumber Block of the (first) commitment; registration is possible from the next block on.
    event KeyCommitted(address indexed wallet, bytes32 indexed commitment, uint64 blockNumber);
    /// @notice A wallet registered a key.
    /// @param wallet The wallet whose credits the key spends.
    /// @param keyHash keccak256 of the key's UTF-8 text.
    /// @param timestamp Block time of the registration.
    event KeyRegistered(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice A wallet revoked its key (alone or as the first half of a rotation), or lost a hash it had copied to
    /// the wallet with the earlier commitment.
    event KeyRevoked(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice An operator suspended the wallet's key for a policy violation.
    event KeySuspended(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);
    /// @notice An operator lifted the suspension.
    event KeyUnsuspended(address indexed wallet, bytes32 indexed keyHash, uint64 timestamp);

    /// @notice Commits the caller to a key hash it will register or rotate to in a later block.
    /// @dev Committing again to the same hash keeps the first commitment's block.
    /// @param commitment keccak256(abi.encode(msg.sender, keyHash)).
    function commitKey(bytes32 commitment) external;

    /// @notice Registers the caller's committed key. Reverts if the caller already has an active key.
    /// @dev If another wallet holds the hash under a later commitment (it copied the hash from this pending
    /// registration), the hash moves to the caller and the copier's record is revoked.
    /// @param keyHash keccak256 of the key's UTF-8 text, committed by the caller in an earlier block.
    function registerKey(bytes32 keyHash) external;

    /// @notice Revokes the caller's key and registers a new committed one, atomically.
    /// @param newKeyHash keccak256 of the new key, committed by the caller in an earlier block.
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

    /// @notice The block of `wallet`'s commitment to `keyHash` (zero: none, or consumed by a registration).
    /// @param wallet The committing wallet.
    /// @param keyHash The committed hash.
    function commitmentBlock(address wallet, bytes32 keyHash) external view returns (uint64);

    /// @notice The wallet a key hash was registered by (zero if never) and its status.
    function statusOfKey(bytes32 keyHash) external view returns (address wallet, KeyStatus status);
}
