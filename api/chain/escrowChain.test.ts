import { describe, expect, it } from "vitest";
import {
  encodeAbiParameters,
  encodeEventTopics,
  getAbiItem,
  type AbiEvent,
  type Address,
  type Hex,
  type Log,
  type TransactionReceipt,
} from "viem";
import { jobIdToBytes32, type Deployment } from "@credit-metered/client";
import { creditEscrowAbi } from "./abis.js";
import type { ChainClients } from "./createChainClients.js";
import { EscrowChain } from "./escrowChain.js";
import type { TransactionSender } from "./transactionSender.js";

const escrow: Address = "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707";
const other: Address = "0x0165878A594ca255338adfa4d48449f69242Eb8F";
const wallet: Address = "0xFABB0ac9d68B0B445fB7357272Ff202C5651694a";
const worker: Address = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
const jobSettled = getAbiItem({ abi: creditEscrowAbi, name: "JobSettled" });
const jobOpened = getAbiItem({ abi: creditEscrowAbi, name: "JobOpened" });
const jobOpenSkipped = getAbiItem({ abi: creditEscrowAbi, name: "JobOpenSkipped" });
const settlementSkipped = getAbiItem({ abi: creditEscrowAbi, name: "SettlementSkipped" });

// Only the escrow's address is read by the receipt decoders; the chain clients and the sender play no part.
const chain = new EscrowChain(
  {} as ChainClients,
  { chainId: 31337, contracts: { creditEscrow: escrow } } as unknown as Deployment,
  {} as TransactionSender,
);

/** A log of `event` as the escrow (or `address`) emits it; fields not given are zero. */
function logOf(event: AbiEvent, args: Record<string, unknown>, address: Address = escrow): Log {
  const dataInputs = event.inputs.filter((input) => !input.indexed);
  const zero = (type: string) => (type === "bytes32" ? `0x${"ab".repeat(32)}` : type === "address" ? wallet : 0n);
  const indexedArgs = Object.fromEntries(
    event.inputs.filter((input) => input.indexed).map((input) => [input.name!, args[input.name!] ?? zero(input.type)]),
  );
  return {
    address,
    topics: encodeEventTopics({ abi: [event], eventName: event.name, args: indexedArgs } as never) as [Hex, ...Hex[]],
    data: encodeAbiParameters(
      dataInputs,
      dataInputs.map((input) => args[input.name!] ?? zero(input.type)),
    ),
  } as Log;
}

function settledLog(address: Address, jobKey: Hex, creditsCharged: bigint, balanceAfter: bigint): Log {
  return logOf(jobSettled, { jobId: jobKey, wallet, worker, creditsCharged, balanceAfter }, address);
}

function receiptOf(logs: Log[]): TransactionReceipt {
  return { logs, blockNumber: 7n } as unknown as TransactionReceipt;
}

describe("EscrowChain.settledJobOf", () => {
  const first = jobIdToBytes32("job_01JD0000000000000000000001");
  const second = jobIdToBytes32("job_01JD0000000000000000000002");
  const batch = receiptOf([settledLog(escrow, first, 11n, 900n), settledLog(escrow, second, 22n, 800n)]);

  it("finds each job's JobSettled facts in a batch's receipt", () => {
    expect(chain.settledJobOf(batch, second)).toEqual({ creditsCharged: 22n, balanceAfter: 800n });
    expect(chain.settledJobOf(batch, first)).toEqual({ creditsCharged: 11n, balanceAfter: 900n });
  });

  it("matches the job id whatever its case", () => {
    expect(chain.settledJobOf(batch, first.toUpperCase().replace("0X", "0x") as Hex)?.creditsCharged).toBe(11n);
  });

  it("finds nothing for a job the receipt did not settle", () => {
    expect(chain.settledJobOf(batch, jobIdToBytes32("job_01JD0000000000000000000003"))).toBeUndefined();
  });

  it("ignores a JobSettled emitted by another contract", () => {
    expect(chain.settledJobOf(receiptOf([settledLog(other, first, 11n, 900n)]), first)).toBeUndefined();
  });
});

describe("EscrowChain.lockOutcomesOf", () => {
  const opened = jobIdToBytes32("job_01JD0000000000000000000001");
  const skipped = jobIdToBytes32("job_01JD0000000000000000000002");
  const batch = receiptOf([
    logOf(jobOpened, { jobId: opened, creditsLocked: 50n, balanceAfter: 950n, deadline: 1_700_000_600n }),
    logOf(jobOpenSkipped, { jobId: skipped, reason: 1 }),
    logOf(jobOpened, { jobId: skipped, creditsLocked: 1n }, other),
  ]);

  it("gives each opened lock its JobOpened facts", () => {
    expect(chain.lockOutcomesOf(batch).get(opened.toLowerCase())).toEqual({
      kind: "opened",
      creditsLocked: 50n,
      balanceAfter: 950n,
      deadline: 1_700_000_600n,
    });
  });

  it("gives each skipped lock its reason and block, and ignores other contracts' logs", () => {
    const outcome = chain.lockOutcomesOf(batch).get(skipped.toLowerCase());
    expect(outcome).toMatchObject({ kind: "skipped", blockNumber: 7n });
    expect(outcome?.kind === "skipped" && outcome.reason).not.toBe("none");
  });

  it("reads a single lock's JobOpened facts (openedJobOf)", () => {
    expect(chain.openedJobOf(batch)).toEqual({ creditsLocked: 50n, balanceAfter: 950n, deadline: 1_700_000_600n });
  });
});

describe("EscrowChain.skippedJobsOf", () => {
  it("names the jobs a settlement batch skipped", () => {
    const job = jobIdToBytes32("job_01JD0000000000000000000004");
    const receipt = receiptOf([logOf(settlementSkipped, { jobId: job, reason: 2 }), settledLog(escrow, job, 1n, 1n)]);
    expect([...chain.skippedJobsOf(receipt)]).toEqual([job.toLowerCase()]);
  });
});
