import { formatLog, numberToHex, type Address, type Hex, type Log, type RpcLog } from "viem";
import type { ChainReader } from "./chainReader.js";

/**
 * Blocks per `eth_getLogs` call: RPC providers cap the range (often 10,000 blocks) and the answer size (viem's
 * 10 MB), so a long history is read in pages. `VERIFY_BLOCKS_PER_QUERY` overrides.
 */
export const DEFAULT_BLOCKS_PER_QUERY = 5_000n;

/** Where a scan stands, after each page: blocks read of the range, and logs found so far. */
export interface ScanProgress {
  fromBlock: bigint;
  toBlock: bigint;
  scannedTo: bigint;
  logs: number;
}

export interface ScanOptions {
  blocksPerQuery?: bigint;
  onProgress?: (progress: ScanProgress) => void;
}

/**
 * `eth_getLogs` of one contract by topic position, from the deployment's start block to the latest block, page by
 * page: viem's typed `getLogs` filters indexed arguments of one event only, and a job id (or wallet) sits in the
 * same topic across several. Every page is fetched for each topic filter before the next page starts, so progress
 * is reported once per page over all filters.
 */
export async function logsByTopicsPaged(
  reader: ChainReader,
  address: Address,
  filters: (Hex | null)[][],
  options: ScanOptions = {},
): Promise<Log[][]> {
  const fromBlock = BigInt(reader.deployment.startBlock);
  const toBlock = await reader.client.getBlockNumber();
  const step = options.blocksPerQuery ?? DEFAULT_BLOCKS_PER_QUERY;
  const found: Log[][] = filters.map(() => []);
  let logs = 0;
  for (let start = fromBlock; start <= toBlock; start += step) {
    const end = start + step - 1n < toBlock ? start + step - 1n : toBlock;
    const pages = await Promise.all(
      filters.map(
        async (topics) =>
          (await reader.client.request({
            method: "eth_getLogs",
            params: [{ address, fromBlock: numberToHex(start), toBlock: numberToHex(end), topics }],
          })) as RpcLog[],
      ),
    );
    pages.forEach((page, i) => {
      found[i]!.push(...page.map((log) => formatLog(log)));
      logs += page.length;
    });
    options.onProgress?.({ fromBlock, toBlock, scannedTo: end, logs });
  }
  return found;
}

/** One topic filter over the whole history (a job's few events: no progress needed). */
export async function logsByTopics(
  reader: ChainReader,
  address: Address,
  topics: (Hex | null)[],
  options: ScanOptions = {},
): Promise<Log[]> {
  return (await logsByTopicsPaged(reader, address, [topics], options))[0]!;
}

/** An address as a 32-byte topic. */
export function addressTopic(address: Address): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
}
