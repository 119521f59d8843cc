// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Receipt} from "../types/Receipt.sol";

/// @title ReceiptHash
/// @notice EIP-712 struct hash of a worker's receipt; the escrow wraps it in its domain separator.
library ReceiptHash {
    /// @notice keccak256 of the EIP-712 type string of `Receipt`.
    bytes32 internal constant RECEIPT_TYPEHASH =
        keccak256(
            "Receipt(bytes32 jobId,bytes32 outputHash,uint32 promptTokens,uint32 completionTokens,uint64 finalTokenAt)"
        );

    /// @notice Whether the receipt's words are canonical ABI encodings (uint32 and uint64 words zero-padded), so
    /// that `hash` will not revert on it.
    function isCanonical(Receipt calldata receipt) internal pure returns (bool canonical) {
        assembly ("memory-safe") {
            canonical := iszero(
                or(
                    or(shr(32, calldataload(add(receipt, 0x40))), shr(32, calldataload(add(receipt, 0x60)))),
                    shr(64, calldataload(add(receipt, 0x80)))
                )
            )
        }
    }

    /// @notice The EIP-712 `hashStruct` of `receipt`.
    /// @dev The receipt's five words are static and already ABI-encoded in calldata: copied behind the type hash
    /// past the free-memory pointer (nothing allocated) and hashed. A word with dirty high bits is not a valid
    /// encoding and reverts, as the ABI decoder would.
    function hash(Receipt calldata receipt) internal pure returns (bytes32 digest) {
        bytes32 typeHash = RECEIPT_TYPEHASH;
        assembly ("memory-safe") {
            let data := mload(0x40)
            mstore(data, typeHash)
            calldatacopy(add(data, 0x20), receipt, 0xa0)
            // promptTokens and completionTokens are uint32, finalTokenAt uint64.
            if or(
                or(shr(32, mload(add(data, 0x60))), shr(32, mload(add(data, 0x80)))),
                shr(64, mload(add(data, 0xa0)))
            ) {
                revert(0, 0)
            }
            digest := keccak256(data, 0xc0)
        }
    }
}
