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
import { RawTransactionError } from "./rawTransactionPipe.js";
import type { TransactionManager } from "./transactionManager.js";

export interface ContractWrite<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">> {
  address: Address;
  abi: TAbi;
  functionName: TName;
  args: ContractFunctionArgs<TAbi, "nonpayable" | "payable", TName>;
}

/** Gas limit from an estimate: +20% and a fixed margin (state may move between estimate and inclusion). */
function withHeadroom(estimate: bigint): bigint {
  return (estimate * 12n) / 10n + 10_000n;
}

export class TransactionRevertedError extends Error {
  override name = "TransactionRevertedError";
  constructor(readonly hash: Hex) {
    super(`transaction ${hash} reverted`);
  }
}

/**
 * Contract calls as transactions: encodes the call and estimates its gas (outside the signer's lock, which surfaces
 * a revert with its decoded custom error before a nonce is spent), then hands it to the transaction manager, which
 * owns nonces, fees, replacement and rebroadcast until the transaction is final (api/chain/transactionManager.ts).
 */
export class TransactionSender {
  constructor(
    private readonly clients: ChainClients,
    readonly manager: TransactionManager,
    private readonly waitMinedTimeoutMs = 120_000,
  ) {}

  get address(): Address {
    return this.manager.address;
  }

  async send<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "nonpayable" | "payable">>(
    write: ContractWrite<TAbi, TName>,
    options: { gasLimit?: bigint; onSigned?: (hash: Hex) => void } = {},
  ): Promise<Hex> {
    const { publicClient } = this.clients;
    // viem's generic parameter plumbing cannot follow the generic write through; the shapes are checked above.
    const call = { ...write, account: this.address } as unknown as Parameters<
      typeof publicClient.estimateContractGas
    >[0];
    // A caller that knows a safe bound (a batch that never reverts, e.g. openJobBatch) skips the estimate: it is a
    // round trip before the transaction can leave.
    const gas: bigint = options.gasLimit ?? withHeadroom(await publicClient.estimateContractGas(call));
    const data = encodeFunctionData(write as unknown as Parameters<typeof encodeFunctionData>[0]);
    try {
      return await this.manager.send({ to: write.address, data, gas, purpose: write.functionName }, options.onSigned);
    } catch (error) {
      // Reverted while being mined (automine): the same decoded error viem gives for a reverted write (revertOf).
      if (error instanceof RawTransactionError && error.data && error.data !== "0x") {
        throw new ContractFunctionRevertedError({
          abi: write.abi,
          data: error.data,
          functionName: write.functionName,
          message: error.message,
        });
      }
      throw error;
    }
  }

  /**
   * Waits until the transaction sent as `hash` (or the replacement mined in its place) is mined; throws
   * TransactionRevertedError when it reverted.
   */
  async waitMined(hash: Hex): Promise<TransactionReceipt> {
    const receipt = await this.manager.waitMined(hash, this.waitMinedTimeoutMs);
    if (receipt.status !== "success") throw new TransactionRevertedError(receipt.transactionHash);
    return receipt;
  }
}
