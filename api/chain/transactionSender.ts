import {
  ContractFunctionRevertedError,
  encodeFunctionData,
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type TransactionReceipt,
} from "viem";
import type { ChainClients } from "./createChainClients.js";
import { RawTransactionError, RawTransactionPipe } from "./rawTransactionPipe.js";

export interface ContractWrite<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">> {
  address: Address;
  abi: TAbi;
  functionName: TName;
  args: ContractFunctionArgs<TAbi, "nonpayable" | "payable", TName>;
}

/** How long one fee estimate serves every transaction sent meanwhile. */
const FEE_TTL_MS = 2_000;

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
  private feeCache: { at: number; fees: Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> } | undefined;

  private readonly pipe: RawTransactionPipe;

  constructor(private readonly clients: ChainClients) {
    const rpcUrl = clients.chain.rpcUrls.default.http[0];
    if (!rpcUrl) throw new Error("the chain needs an HTTP RPC URL");
    this.pipe = new RawTransactionPipe(rpcUrl);
  }

  get address(): Address {
    return this.clients.walletClient.account.address;
  }

  async send<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">>(
    write: ContractWrite<TAbi, TName>,
    options: { gasLimit?: bigint } = {},
  ): Promise<Hex> {
    const { publicClient, walletClient, chain } = this.clients;
    const account = walletClient.account;
    // viem's generic parameter plumbing cannot follow the generic write through; the shapes are checked above.
    const call = { ...write, account } as unknown as Parameters<typeof publicClient.estimateContractGas>[0];
    // A caller that knows a safe bound (a batch that never reverts, e.g. openJobBatch) skips the estimate: with
    // viem it is four round trips (nonce, block, tip, estimate) before the transaction can leave.
    const [gasLimit, fees] = await Promise.all([
      options.gasLimit ?? publicClient.estimateContractGas(call).then((gas) => (gas * 12n) / 10n + 10_000n),
      this.fees(),
    ]);
    const data = encodeFunctionData(write as unknown as Parameters<typeof encodeFunctionData>[0]);
    if (account.signTransaction === undefined) throw new Error("the gateway account must be a local account");
    const sign = account.signTransaction;
    // Only signing happens under the nonce lock: chain id, fees and gas are known beforehand, and the signed
    // transaction goes to the pipe, which sends in signing order, several per round trip.
    for (let attempt = 0; ; attempt++) {
      const sent = await this.serialised(async () => {
        this.nextNonce ??= await publicClient.getTransactionCount({ address: account.address, blockTag: "pending" });
        const nonce = this.nextNonce;
        const serializedTransaction = await sign({
          type: "eip1559",
          chainId: chain.id,
          to: write.address,
          data,
          gas: gasLimit,
          nonce,
          ...(attempt === 0 ? fees : await this.fees(true)),
        });
        this.nextNonce = nonce + 1;
        // Not awaited here: the lock is free for the next signature while this one travels.
        return { hash: this.pipe.send(serializedTransaction) };
      });
      try {
        return await sent.hash;
      } catch (error) {
        // One retry after resynchronising: another sender (an operator script, a restarted replica) may have used
        // the account's next nonce; a fee the node refuses refreshes the fee estimate.
        this.nextNonce = undefined;
        // Reverted while being mined: the same decoded error viem gives for a reverted write (revertOf reads it).
        if (error instanceof RawTransactionError && error.data && error.data !== "0x") {
          throw new ContractFunctionRevertedError({
            abi: write.abi,
            data: error.data,
            functionName: write.functionName,
            message: error.message,
          });
        }
        if (attempt > 0 || !/nonce|fee|underpriced/i.test((error as Error).message)) throw error;
      }
    }
  }

  /**
   * EIP-1559 fees, estimated at most once per FEE_TTL_MS (not once per transaction) with headroom: the base fee
   * can rise 12.5% per block, so the cap is twice the estimate.
   */
  private async fees(refresh = false): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    if (refresh || !this.feeCache || Date.now() - this.feeCache.at > FEE_TTL_MS) {
      this.feeCache = {
        at: Date.now(),
        fees: this.clients.publicClient.estimateFeesPerGas().then((estimate) => ({
          maxFeePerGas: estimate.maxFeePerGas * 2n,
          maxPriorityFeePerGas: estimate.maxPriorityFeePerGas,
        })),
      };
      this.feeCache.fees.catch(() => (this.feeCache = undefined));
    }
    return this.feeCache.fees;
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
