import type { Abi, Address, ContractFunctionArgs, ContractFunctionName, Hex, TransactionReceipt } from "viem";
import type { ChainClients } from "./createChainClients.js";

export interface ContractWrite<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">> {
  address: Address;
  abi: TAbi;
  functionName: TName;
  args: ContractFunctionArgs<TAbi, "nonpayable" | "payable", TName>;
}

export class TransactionRevertedError extends Error {
  override name = "TransactionRevertedError";
  constructor(readonly hash: Hex) {
    super(`transaction ${hash} reverted`);
  }
}

/**
 * The gateway's only way to send transactions. Gas is estimated first (outside the lock), which surfaces a
 * revert with its decoded custom error before a nonce is spent; then sends are serialised behind one local nonce
 * counter so concurrent requests never collide on a nonce. A failed send resynchronises the counter from the node.
 */
export class TransactionSender {
  private tail: Promise<unknown> = Promise.resolve();
  private nextNonce: number | undefined;

  constructor(private readonly clients: ChainClients) {}

  get address(): Address {
    return this.clients.walletClient.account.address;
  }

  async send<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">>(
    write: ContractWrite<TAbi, TName>,
  ): Promise<Hex> {
    const { publicClient, walletClient } = this.clients;
    const account = walletClient.account;
    // viem's generic parameter plumbing cannot follow the generic write through; the shapes are checked above.
    const call = { ...write, account } as unknown as Parameters<typeof publicClient.estimateContractGas>[0];
    const gas = await publicClient.estimateContractGas(call);
    return this.serialised(async () => {
      // One retry after resynchronising: another sender (an operator script, a restarted replica) may have used
      // the account's next nonce.
      for (let attempt = 0; ; attempt++) {
        this.nextNonce ??= await publicClient.getTransactionCount({ address: account.address, blockTag: "pending" });
        const nonce = this.nextNonce;
        try {
          const hash = await walletClient.writeContract({
            ...(call as unknown as Parameters<typeof walletClient.writeContract>[0]),
            gas: (gas * 12n) / 10n + 10_000n,
            nonce,
          });
          this.nextNonce = nonce + 1;
          return hash;
        } catch (error) {
          this.nextNonce = undefined;
          if (attempt > 0 || !/nonce/i.test((error as Error).message)) throw error;
        }
      }
    });
  }

  /** Waits until mined; throws TransactionRevertedError when it reverted. */
  async waitMined(hash: Hex): Promise<TransactionReceipt> {
    const receipt = await this.clients.publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
    if (receipt.status !== "success") throw new TransactionRevertedError(hash);
    return receipt;
  }

  private serialised<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
