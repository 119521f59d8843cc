import type { Hex, PublicClient } from "viem";

/**
 * The hash of the canonical chain's block at this height (undefined if the chain has none there yet). Read raw:
 * only the hash is wanted, and viem's `getBlock` formats the whole header, which cost more than the read itself in
 * the gateway's profile (the transaction manager's reorg check makes about one such read per batch on automine).
 */
export async function blockHashAt(
  client: Pick<PublicClient, "request">,
  blockNumber: bigint,
): Promise<Hex | undefined> {
  const block = await client.request({
    method: "eth_getBlockByNumber",
    params: [`0x${blockNumber.toString(16)}`, false],
  });
  return block?.hash ?? undefined;
}
