import { type Address, type Hex, parseSignature } from "viem";

/** The EIP-712 version of the tokens' EIP-2612 domain (OpenZeppelin `ERC20Permit` signs as version "1"). */
export const PERMIT_VERSION = "1";

/** EIP-2612's `Permit` struct. */
export const PERMIT_TYPES = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

/** Where a permit is valid: one token (its EIP-712 `name`, e.g. `stablecoin.name()`) on one chain. */
export interface PermitDomainParams {
  name: string;
  version?: string;
  chainId: number | bigint;
  token: Address;
}

/** A permit: `owner` lets `spender` move `value` token units until `deadline` (Unix seconds). */
export interface Permit {
  owner: Address;
  spender: Address;
  value: bigint;
  /** The token's `nonces(owner)` at signing time. */
  nonce: bigint;
  deadline: bigint;
}

/** The typed data a wallet signs for `permit`: pass it to viem's `signTypedData` (ethers: domain, types, message). */
export function permitTypedData(
  { name, version = PERMIT_VERSION, chainId, token }: PermitDomainParams,
  permit: Permit,
) {
  return {
    domain: { name, version, chainId, verifyingContract: token },
    types: PERMIT_TYPES,
    primaryType: "Permit",
    message: permit,
  } as const;
}

/** A 65-byte signature as `permit` and `depositWithPermit` take it: `v` (27 or 28), `r`, `s`. */
export function permitSignatureParts(signature: Hex): { v: number; r: Hex; s: Hex } {
  const { r, s, v, yParity } = parseSignature(signature);
  return { v: Number(v ?? BigInt(yParity + 27)), r, s };
}
