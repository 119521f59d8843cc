// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {AccessControlDefaultAdminRules} from "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import {ProtocolTime} from "../libraries/ProtocolTime.sol";

/// @notice One role held from deployment on: the only grants that apply at once.
/// @param role The role.
/// @param account Its holder.
struct RoleGrant {
    bytes32 role;
    address account;
}

/// @notice The deployment's roles do not start with the default admin.
error InitialAdminMissing();

/// @notice The default admin of `roles`: its first entry, which must name `DEFAULT_ADMIN_ROLE` (bytes32(0)).
/// @param roles Roles held from deployment on, the default admin first.
function initialAdmin(RoleGrant[] memory roles) pure returns (address) {
    if (roles.length == 0 || roles[0].role != bytes32(0)) revert InitialAdminMissing();
    return roles[0].account;
}

/// @notice Roles of a contract whose only role at deployment is its default admin.
/// @param admin The default admin.
function adminOnly(address admin) pure returns (RoleGrant[] memory roles) {
    roles = new RoleGrant[](1);
    roles[0] = RoleGrant(bytes32(0), admin);
}

/// @title DelayedAccessControl
/// @notice `AccessControlDefaultAdminRules` without instant power: a first `grantRole` only schedules the grant
/// (announced by `RoleGrantScheduled` with the time it may apply) and a second one applies it, no sooner than
/// `ROLE_GRANT_DELAY` later, so a
/// wallet that does not accept the new holder can withdraw first. Revocation stays instant (it only removes
/// power). A scheduled grant needs no cancellation: only the role's admin can apply it, so it stays inert unless
/// applied (and a granted role is revoked at once). A pending default-admin transfer expires
/// `ProtocolTime.ADMIN_TRANSFER_EXPIRY` after it became acceptable.
/// @dev Modelled on TimelockController's schedule/execute split. Roles given at deployment (constructor
/// `roles`) apply at once: nobody can have deposited before the contract existed. The logic is kept to a
/// mapping and two overrides because `CreditEscrow` inherits it and is close to the code-size limit.
abstract contract DelayedAccessControl is AccessControlDefaultAdminRules {
    /// @dev Seconds between scheduling a role grant and the earliest time it may apply (not public: every public
    /// getter costs `CreditEscrow` code size; read `ProtocolTime.CONFIG_CHANGE_DELAY`).
    uint64 internal constant ROLE_GRANT_DELAY = ProtocolTime.CONFIG_CHANGE_DELAY;

    /// @notice When a scheduled grant of `role` to `account` may apply (0: none scheduled).
    mapping(bytes32 role => mapping(address account => uint64 readyAt)) public roleGrantReadyAt;

    /// @notice A grant of `role` to `account` was scheduled; `grantRole` may apply it from `readyAt` on.
    event RoleGrantScheduled(bytes32 indexed role, address indexed account, uint64 readyAt);

    /// @notice `grantRole` again before the scheduled grant's delay has passed (it may apply from `readyAt`).
    error RoleGrantNotReady(uint64 readyAt);
    /// @notice `acceptDefaultAdminTransfer` after the pending transfer expired (at `expiredAt`).
    error AdminTransferExpired(uint256 expiredAt);

    /// @param roles Roles held from deployment on, granted at once: first the default admin (two-step transfer
    /// after `ProtocolTime.ADMIN_TRANSFER_DELAY`), then any others.
    constructor(
        RoleGrant[] memory roles
    ) AccessControlDefaultAdminRules(ProtocolTime.ADMIN_TRANSFER_DELAY, initialAdmin(roles)) {
        for (uint256 i = 1; i < roles.length; ++i) {
            _grantRole(roles[i].role, roles[i].account);
        }
    }

    /// @notice Grants `role` to `account` in two calls by the role's admin: the first schedules the grant
    /// (`RoleGrantScheduled`, with the time it may apply), a call from that time on applies it.
    /// @dev One entry point (TimelockController's schedule/execute, folded) because `CreditEscrow` inherits this
    /// close to the code-size limit. The default admin role cannot be granted (it moves by the two-step transfer).
    /// @param role The role to grant.
    /// @param account The (future) holder.
    function grantRole(bytes32 role, address account) public override onlyRole(getRoleAdmin(role)) {
        uint64 readyAt = roleGrantReadyAt[role][account];
        if (readyAt == 0) {
            if (role == DEFAULT_ADMIN_ROLE) revert AccessControlEnforcedDefaultAdminRules();
            readyAt = uint64(block.timestamp) + ROLE_GRANT_DELAY;
            roleGrantReadyAt[role][account] = readyAt;
            emit RoleGrantScheduled(role, account, readyAt);
            return;
        }
        if (block.timestamp < readyAt) revert RoleGrantNotReady(readyAt);
        delete roleGrantReadyAt[role][account];
        _grantRole(role, account);
    }

    /// @dev A pending transfer may be accepted only within `ADMIN_TRANSFER_EXPIRY` after its schedule.
    function _acceptDefaultAdminTransfer() internal override {
        (, uint48 schedule) = pendingDefaultAdmin();
        uint256 expiresAt = uint256(schedule) + ProtocolTime.ADMIN_TRANSFER_EXPIRY;
        if (schedule != 0 && block.timestamp > expiresAt) revert AdminTransferExpired(expiresAt);
        super._acceptDefaultAdminTransfer();
    }
}
