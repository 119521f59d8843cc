// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {DelayedAccessControl, adminOnly} from "./access/DelayedAccessControl.sol";
import {IApiKeyRegistry} from "./interfaces/IApiKeyRegistry.sol";

/// @title ApiKeyRegistry
/// @notice One API key per wallet (beta); only keccak256 hashes of keys are stored.
/// @dev `_keys[keyHash]` is one word (wallet, status, createdAt, claimBlock) so the escrow resolves a key with one
/// read and a registration writes one word.
/// A suspension is a flag on the wallet and is mirrored into the status of the wallet's current key.
/// Registration cannot be blocked by another wallet: a key is 128+ random bits generated in the wallet's browser,
/// and its hash is first seen in the wallet's own registration, which needs a commitment
/// (`keccak256(abi.encode(wallet, keyHash))`) mined in an earlier block. A wallet that copies the hash from the
/// pending registration can only commit after it, so the owner's registration takes the hash back from it.
contract ApiKeyRegistry is IApiKeyRegistry, DelayedAccessControl {
    /// @notice May suspend and unsuspend wallets.
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");

    struct KeyRecord {
        address wallet;
        KeyStatus status;
        uint32 createdAt;
        /// @dev Block of the commitment the hash was registered under (the earliest commitment wins).
        uint56 claimBlock;
    }

    mapping(bytes32 keyHash => KeyRecord) private _keys;
    mapping(address wallet => bytes32 keyHash) private _currentKey;
    mapping(address wallet => bool) private _suspended;
    /// @dev Block of each commitment not yet used by a registration.
    mapping(bytes32 commitment => uint64 blockNumber) private _commitBlock;

    /// @notice The zero address where an address is needed.
    error ZeroAddress();

    /// @param admin Default admin (two-step transfer after `ProtocolTime.ADMIN_TRANSFER_DELAY`).
    /// @param operator Holder of `OPERATOR_ROLE` (policy enforcement).
    constructor(address admin, address operator) DelayedAccessControl(adminOnly(admin)) {
        if (operator == address(0)) revert ZeroAddress();
        _grantRole(OPERATOR_ROLE, operator);
    }

    /// @inheritdoc IApiKeyRegistry
    function commitKey(bytes32 commitment) external {
        uint64 committed = _commitBlock[commitment];
        if (committed == 0) {
            committed = uint64(block.number);
            _commitBlock[commitment] = committed;
        }
        emit KeyCommitted(msg.sender, commitment, committed);
    }

    /// @inheritdoc IApiKeyRegistry
    function registerKey(bytes32 keyHash) external {
        if (_suspended[msg.sender]) revert WalletSuspended(msg.sender);
        bytes32 current = _currentKey[msg.sender];
        if (current != bytes32(0) && _keys[current].status == KeyStatus.Active) {
            revert KeyAlreadyRegistered(msg.sender, current);
        }
        _register(msg.sender, keyHash);
    }

    /// @inheritdoc IApiKeyRegistry
    function rotateKey(bytes32 newKeyHash) external {
        if (_suspended[msg.sender]) revert WalletSuspended(msg.sender);
        bytes32 current = _requireActiveKey(msg.sender);
        _revoke(msg.sender, current);
        _register(msg.sender, newKeyHash);
    }

    /// @inheritdoc IApiKeyRegistry
    /// @dev A suspended key may be revoked too (e.g. after a leak); the wallet stays suspended.
    function revokeKey() external {
        bytes32 current = _currentKey[msg.sender];
        KeyStatus status = _keys[current].status;
        if (current == bytes32(0) || (status != KeyStatus.Active && status != KeyStatus.Suspended)) {
            revert NoActiveKey(msg.sender);
        }
        _revoke(msg.sender, current);
    }

    /// @inheritdoc IApiKeyRegistry
    /// @dev A wallet without a key may be suspended too, so that it cannot register one.
    function suspend(address wallet) external onlyRole(OPERATOR_ROLE) {
        if (_suspended[wallet]) revert WalletSuspended(wallet);
        _suspended[wallet] = true;
        bytes32 current = _currentKey[wallet];
        if (current != bytes32(0) && _keys[current].status == KeyStatus.Active) {
            _keys[current].status = KeyStatus.Suspended;
        }
        emit KeySuspended(wallet, current, uint64(block.timestamp));
    }

    /// @inheritdoc IApiKeyRegistry
    function unsuspend(address wallet) external onlyRole(OPERATOR_ROLE) {
        if (!_suspended[wallet]) revert WalletNotSuspended(wallet);
        _suspended[wallet] = false;
        bytes32 current = _currentKey[wallet];
        if (current != bytes32(0) && _keys[current].status == KeyStatus.Suspended) {
            _keys[current].status = KeyStatus.Active;
        }
        emit KeyUnsuspended(wallet, current, uint64(block.timestamp));
    }

    /// @inheritdoc IApiKeyRegistry
    function activeWallet(bytes32 keyHash) external view returns (address wallet) {
        KeyRecord memory record = _keys[keyHash];
        if (record.status != KeyStatus.Active) revert KeyNotActive(keyHash, record.status);
        return record.wallet;
    }

    /// @inheritdoc IApiKeyRegistry
    function keyOf(address wallet) external view returns (bytes32 keyHash, KeyStatus status, uint64 createdAt) {
        keyHash = _currentKey[wallet];
        KeyRecord memory record = _keys[keyHash];
        return (keyHash, record.status, record.createdAt);
    }

    /// @inheritdoc IApiKeyRegistry
    function statusOfKey(bytes32 keyHash) external view returns (address wallet, KeyStatus status) {
        KeyRecord memory record = _keys[keyHash];
        return (record.wallet, record.status);
    }

    /// @inheritdoc IApiKeyRegistry
    function commitmentBlock(address wallet, bytes32 keyHash) external view returns (uint64) {
        return _commitBlock[_commitment(wallet, keyHash)];
    }

    /// @notice Whether an operator suspended `wallet`.
    function isSuspended(address wallet) external view returns (bool) {
        return _suspended[wallet];
    }

    function _register(address wallet, bytes32 keyHash) private {
        if (keyHash == bytes32(0)) revert KeyHashZero();
        bytes32 commitment = _commitment(wallet, keyHash);
        uint64 committed = _commitBlock[commitment];
        if (committed == 0) revert KeyNotCommitted(wallet, keyHash);
        if (committed >= block.number) revert KeyCommitmentTooRecent(wallet, keyHash);
        address holder = _keys[keyHash].wallet;
        if (holder != address(0)) {
            if (holder == wallet || _keys[keyHash].claimBlock <= committed) revert KeyHashAlreadyUsed(keyHash);
            // The holder committed later than this wallet, so it copied the hash from this wallet's pending
            // registration (the key itself never left the wallet): the hash goes back to its owner.
            if (_currentKey[holder] == keyHash) delete _currentKey[holder];
            emit KeyRevoked(holder, keyHash, uint64(block.timestamp));
        }
        delete _commitBlock[commitment];
        // Timestamps fit 32 bits until 2106, block numbers 56 bits for good.
        _keys[keyHash] = KeyRecord({
            wallet: wallet,
            status: KeyStatus.Active,
            createdAt: uint32(block.timestamp),
            claimBlock: uint56(committed)
        });
        _currentKey[wallet] = keyHash;
        emit KeyRegistered(wallet, keyHash, uint64(block.timestamp));
    }

    function _revoke(address wallet, bytes32 keyHash) private {
        _keys[keyHash].status = KeyStatus.Revoked;
        emit KeyRevoked(wallet, keyHash, uint64(block.timestamp));
    }

    function _commitment(address wallet, bytes32 keyHash) private pure returns (bytes32) {
        return keccak256(abi.encode(wallet, keyHash));
    }

    function _requireActiveKey(address wallet) private view returns (bytes32 keyHash) {
        keyHash = _currentKey[wallet];
        if (keyHash == bytes32(0) || _keys[keyHash].status != KeyStatus.Active) revert NoActiveKey(wallet);
    }
}
