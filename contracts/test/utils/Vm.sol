// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The cheatcodes these tests use, declared here because the npm `forge-std` is a 2022 copy
/// (no `StdInvariant`, no assertion cheatcodes). Hardhat's EDR serves them at the usual address.
interface Vm {
    // Environment
    function warp(uint256 newTimestamp) external;
    function load(address target, bytes32 slot) external view returns (bytes32 data);
    function store(address target, bytes32 slot, bytes32 value) external;
    function roll(uint256 newHeight) external;
    function getNonce(address account) external view returns (uint64 nonce);
    function computeCreateAddress(address deployer, uint256 nonce) external pure returns (address);
    function getBlockTimestamp() external view returns (uint256 timestamp);
    function prank(address msgSender) external;
    function startPrank(address msgSender) external;
    function stopPrank() external;
    function label(address account, string calldata newLabel) external;
    function snapshotState() external returns (uint256 snapshotId);
    function revertToState(uint256 snapshotId) external returns (bool success);

    // Keys and signatures
    function addr(uint256 privateKey) external pure returns (address keyAddr);
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);

    function toString(bytes calldata value) external pure returns (string memory stringifiedValue);

    // Fuzzing
    function assume(bool condition) external pure;

    // Expectations
    function expectRevert() external;
    function expectRevert(bytes4 revertData) external;
    function expectRevert(bytes calldata revertData) external;
    function expectEmit(address emitter) external;
    function expectEmit(bool checkTopic1, bool checkTopic2, bool checkTopic3, bool checkData, address emitter) external;

    // Assertions
    function assertTrue(bool condition, string calldata error) external pure;
    function assertFalse(bool condition, string calldata error) external pure;
    function assertEq(uint256 left, uint256 right, string calldata error) external pure;
    function assertEq(address left, address right, string calldata error) external pure;
    function assertEq(bytes32 left, bytes32 right, string calldata error) external pure;
    function assertEq(bool left, bool right, string calldata error) external pure;
    function assertLe(uint256 left, uint256 right, string calldata error) external pure;
    function assertGe(uint256 left, uint256 right, string calldata error) external pure;
    function assertLt(uint256 left, uint256 right, string calldata error) external pure;
    function assertGt(uint256 left, uint256 right, string calldata error) external pure;
}

// The cheatcode address: `address(uint160(uint256(keccak256("hevm cheat code"))))`.
Vm constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

/// @notice Maps any fuzzed value into `[min, max]` without rejecting it (rejections cost runs).
function bound(uint256 x, uint256 min, uint256 max) pure returns (uint256) {
    require(min <= max, "bound: min > max");
    if (x >= min && x <= max) return x;
    if (min == 0 && max == type(uint256).max) return x;
    uint256 size = max - min + 1;
    return min + (x % size);
}
