import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseUnits,
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from "viem";
import { hardhat } from "viem/chains";
import {
  creditEscrowAbi,
  disputeManagerAbi,
  stablecoinAbi,
  stakeTokenAbi,
  workerRegistryAbi,
  permitSignatureParts,
  permitTypedData,
  signReceipt,
  type Receipt,
  type Settlement,
  type Deployment,
} from "@credit-metered/client";
import { localAccounts } from "@credit-metered/client/local";

/** Each worker's stablecoin bond: far above what a test settles. */
const WORKER_BOND = 1_000_000n * 10n ** 6n;

/** 1 credit = 10,000 stablecoin units (docs/DESIGN.md). */
export const UNITS_PER_CREDIT = 10_000n;

/** Sends contract transactions as the local accounts and returns their mined receipts. */
export function chainDriver(rpcUrl: string, deployment: Deployment) {
  const publicClient = createPublicClient({ chain: hardhat, transport: http(rpcUrl) });
  const testClient = createTestClient({ chain: hardhat, mode: "hardhat", transport: http(rpcUrl) });
  const roles = localAccounts();
  const c = deployment.contracts;

  async function send<const abi extends Abi, name extends ContractFunctionName<abi, "nonpayable">>(
    account: LocalAccount,
    address: Address,
    abi: abi,
    functionName: name,
    args: ContractFunctionArgs<abi, "nonpayable", name>,
  ): Promise<TransactionReceipt> {
    const wallet = createWalletClient({ chain: hardhat, transport: http(rpcUrl), account });
    // viem's generic overloads cannot be narrowed from here; the call is type-checked at each use below.
    const hash = await (wallet.writeContract as (p: unknown) => Promise<Hex>)({ address, abi, functionName, args });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${String(functionName)} reverted (${hash})`);
    return receipt;
  }

  return {
    publicClient,
    roles,
    send,

    async latestTimestamp(): Promise<bigint> {
      return (await publicClient.getBlock()).timestamp;
    },
    /** Mines `blocks` empty blocks one call each (Hardhat's many-block `hardhat_mine` leaves the blocks between
     *  the first and the last without a parent hash Ponder can follow). */
    async mineOneByOne(blocks: number): Promise<void> {
      for (let mined = 0; mined < blocks; mined++) await testClient.mine({ blocks: 1 });
    },
    /** Moves chain time forward and mines a block at the new time. */
    async travel(seconds: number): Promise<void> {
      await testClient.increaseTime({ seconds });
      await testClient.mine({ blocks: 1 });
    },

    mintStablecoin: (to: Address, credits: bigint) =>
      send(roles.admin, c.stablecoin, stablecoinAbi, "mint", [to, credits * UNITS_PER_CREDIT]),
    mintStake: (to: Address, svc: bigint) =>
      send(roles.admin, c.stakeToken, stakeTokenAbi, "mint", [to, parseUnits(svc.toString(), 18)]),

    async deposit(wallet: LocalAccount, credits: bigint): Promise<TransactionReceipt> {
      await send(wallet, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, credits * UNITS_PER_CREDIT]);
      return send(wallet, c.creditEscrow, creditEscrowAbi, "deposit", [credits * UNITS_PER_CREDIT]);
    },
    async depositWithPermit(wallet: LocalAccount, credits: bigint): Promise<TransactionReceipt> {
      const value = credits * UNITS_PER_CREDIT;
      const deadline = (await publicClient.getBlock()).timestamp + 3600n;
      const [nonce, name] = await Promise.all([
        publicClient.readContract({
          address: c.stablecoin,
          abi: stablecoinAbi,
          functionName: "nonces",
          args: [wallet.address],
        }),
        publicClient.readContract({ address: c.stablecoin, abi: stablecoinAbi, functionName: "name" }),
      ]);
      const signature = await wallet.signTypedData(
        permitTypedData(
          { name, chainId: deployment.chainId, token: c.stablecoin },
          { owner: wallet.address, spender: c.creditEscrow, value, nonce, deadline },
        ),
      );
      const { v, r, s } = permitSignatureParts(signature);
      return send(wallet, c.creditEscrow, creditEscrowAbi, "depositWithPermit", [value, deadline, v, r, s]);
    },
    async fundReserve(funder: LocalAccount, credits: bigint): Promise<TransactionReceipt> {
      await send(funder, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, credits * UNITS_PER_CREDIT]);
      return send(funder, c.creditEscrow, creditEscrowAbi, "fundReserve", [credits * UNITS_PER_CREDIT]);
    },

    async registerWorker(worker: LocalAccount, endpoint: string, modelKeys: Hex[], svc: bigint) {
      const stake = parseUnits(svc.toString(), 18);
      // The worker's stablecoin bond (issue 22: a worker is paid only while its bond covers the charges at risk),
      // posted by the admin so the worker's own balances stay as the tests expect.
      await send(roles.admin, c.stablecoin, stablecoinAbi, "mint", [roles.admin.address, WORKER_BOND]);
      await send(roles.admin, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, WORKER_BOND]);
      await send(roles.admin, c.creditEscrow, creditEscrowAbi, "postBond", [worker.address, WORKER_BOND]);
      await send(worker, c.stakeToken, stakeTokenAbi, "approve", [c.workerRegistry, stake]);
      return send(worker, c.workerRegistry, workerRegistryAbi, "register", [endpoint, modelKeys, stake]);
    },
    async increaseStake(worker: LocalAccount, svc: bigint) {
      const amount = parseUnits(svc.toString(), 18);
      await send(worker, c.stakeToken, stakeTokenAbi, "approve", [c.workerRegistry, amount]);
      return send(worker, c.workerRegistry, workerRegistryAbi, "increaseStake", [amount]);
    },

    openJob: (jobKey: Hex, keyHash: Hex, modelKey: Hex, maxTokens: number) =>
      send(roles.gateway, c.creditEscrow, creditEscrowAbi, "openJob", [jobKey, keyHash, modelKey, maxTokens]),

    /** A receipt signed by `worker` for `completionTokens` of `output`, final token at the latest block time. */
    async signedReceipt(worker: LocalAccount, jobKey: Hex, outputHash: Hex, completionTokens: number) {
      const receipt: Receipt = {
        jobId: jobKey,
        outputHash,
        promptTokens: 12,
        completionTokens,
        finalTokenAt: (await publicClient.getBlock()).timestamp,
      };
      const signature = await signReceipt(worker, { chainId: deployment.chainId, escrow: c.creditEscrow }, receipt);
      return { receipt, signature };
    },

    settlementOf: (wallet: Address, worker: Address, receipt: Receipt, creditsCharged: bigint): Settlement => ({
      wallet,
      worker,
      outputHash: receipt.outputHash,
      creditsCharged,
      finalTokenAt: receipt.finalTokenAt,
    }),

    openDispute: (jobKey: Hex, settlement: Settlement, clientHash: Hex) =>
      send(roles.gateway, c.disputeManager, disputeManagerAbi, "openDispute", [jobKey, settlement, clientHash]),
  };
}

export type ChainDriver = ReturnType<typeof chainDriver>;
