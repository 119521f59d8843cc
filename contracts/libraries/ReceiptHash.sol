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

    /// @notice The EIP-712 `hashStruct` of `receipt`.
    function hash(Receipt calldata receipt) internal pure returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    RECEIPT_TYPEHASH,
                    receipt.jobId,
                    receipt.outputHash,
                    receipt.promptTokens,
                    receipt.completionTokens,
                    receipt.finalTokenAt
                )
            );
    }
}
