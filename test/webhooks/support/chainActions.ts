import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEventLogs,
  parseUnits,
  type Abi,
  type Address,
  type Hex,
  type LocalAccount,
  type TransactionReceipt,
} from "viem";
import { hardhat } from "viem/chains";
import {
  apiKeyRegistryAbi,
  creditEscrowAbi,
  disputeManagerAbi,
  stablecoinAbi,
  stakeTokenAbi,
  workerRegistryAbi,
  jobIdToBytes32,
  newJobId,
  keyCommitmentOf,
  keyHashOf,
  modelKeyOf,
  outputHashOf,
  signReceipt,
  type Receipt,
  type Settlement,
  type Deployment,
  generateApiKey,
} from "@credit-metered/client";
import { localAccount, localAccounts } from "@credit-metered/client/local";

const UNITS_PER_CREDIT = 10_000n;

/** Drives the deployed contracts with viem as the local accounts; every call waits for its mined receipt. */
export function chainActions(rpcUrl: string, deployment: Deployment) {
  const publicClient = createPublicClient({ chain: hardhat, transport: http(rpcUrl), pollingInterval: 50 });
  const testClient = createTestClient({ chain: hardhat, mode: "hardhat", transport: http(rpcUrl) });
  const roles = localAccounts();
  const c = deployment.contracts;
  /** Wall-clock time each transaction was mined (Hardhat automines inside eth_sendTransaction). */
  const minedAt = new Map<string, number>();

  async function send(account: LocalAccount, address: Address, abi: Abi, functionName: string, args: unknown[]) {
    const wallet = createWalletClient({ chain: hardhat, transport: http(rpcUrl), account });
    const hash = await (wallet.writeContract as (p: unknown) => Promise<Hex>)({ address, abi, functionName, args });
    minedAt.set(hash.toLowerCase(), Date.now());
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== "success") throw new Error(`${functionName} reverted (${hash})`);
    return receipt;
  }

  const actions = {
    publicClient,
    roles,
    minedAt,
    /** A test wallet (HD index ≥ 13, past the roles of docs/DESIGN.md) with gas money. */
    async wallet(index: number): Promise<LocalAccount> {
      const account = localAccount(index);
      await testClient.setBalance({ address: account.address, value: parseUnits("100", 18) });
      return account;
    },
    async registerKey(wallet: LocalAccount): Promise<{ apiKey: string; keyHash: Hex }> {
      const apiKey = generateApiKey();
      const keyHash = keyHashOf(apiKey);
      await send(wallet, c.apiKeyRegistry, apiKeyRegistryAbi, "commitKey", [keyCommitmentOf(wallet.address, keyHash)]);
      await send(wallet, c.apiKeyRegistry, apiKeyRegistryAbi, "registerKey", [keyHash]);
      return { apiKey, keyHash };
    },
    async rotateKey(wallet: LocalAccount): Promise<{ apiKey: string; keyHash: Hex }> {
      const apiKey = generateApiKey();
      const keyHash = keyHashOf(apiKey);
      await send(wallet, c.apiKeyRegistry, apiKeyRegistryAbi, "commitKey", [keyCommitmentOf(wallet.address, keyHash)]);
      await send(wallet, c.apiKeyRegistry, apiKeyRegistryAbi, "rotateKey", [keyHash]);
      return { apiKey, keyHash };
    },
    async deposit(wallet: LocalAccount, credits: bigint): Promise<TransactionReceipt> {
      const units = credits * UNITS_PER_CREDIT;
      await send(roles.admin, c.stablecoin, stablecoinAbi, "mint", [wallet.address, units]);
      await send(wallet, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, units]);
      return send(wallet, c.creditEscrow, creditEscrowAbi, "deposit", [units]);
    },
    async fundReserve(credits: bigint): Promise<void> {
      const units = credits * UNITS_PER_CREDIT;
      await send(roles.admin, c.stablecoin, stablecoinAbi, "mint", [roles.admin.address, units]);
      await send(roles.admin, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, units]);
      await send(roles.admin, c.creditEscrow, creditEscrowAbi, "fundReserve", [units]);
    },
    async registerWorker(worker: LocalAccount, modelIds: string[], svc = 1_000n): Promise<TransactionReceipt> {
      const stake = parseUnits(svc.toString(), 18);
      await testClient.setBalance({ address: worker.address, value: parseUnits("100", 18) });
      await send(roles.admin, c.stakeToken, stakeTokenAbi, "mint", [worker.address, stake]);
      await send(worker, c.stakeToken, stakeTokenAbi, "approve", [c.workerRegistry, stake]);
      // The worker's stablecoin bond (issue 22), posted by the admin.
      const bond = 1_000_000n * 10n ** 6n;
      await send(roles.admin, c.stablecoin, stablecoinAbi, "mint", [roles.admin.address, bond]);
      await send(roles.admin, c.stablecoin, stablecoinAbi, "approve", [c.creditEscrow, bond]);
      await send(roles.admin, c.creditEscrow, creditEscrowAbi, "postBond", [worker.address, bond]);
      return send(worker, c.workerRegistry, workerRegistryAbi, "register", [
        `https://worker-${worker.address.slice(2, 8).toLowerCase()}.example`,
        modelIds.map(modelKeyOf),
        stake,
      ]);
    },
    async openJob(keyHash: Hex, modelId: string, maxTokens: number) {
      const jobId = newJobId();
      const jobKey = jobIdToBytes32(jobId);
      const receipt = await send(roles.gateway, c.creditEscrow, creditEscrowAbi, "openJob", [
        jobKey,
        keyHash,
        modelKeyOf(modelId),
        maxTokens,
      ]);
      return { jobId, jobKey, receipt };
    },
    /** Settles a job against `worker`'s signed receipt; returns the settlement facts for a later dispute. */
    async settle(worker: LocalAccount, jobKey: Hex, completionTokens: number, output = "the answer") {
      const finalTokenAt = (await publicClient.getBlock()).timestamp;
      const receipt: Receipt = {
        jobId: jobKey,
        outputHash: outputHashOf(output),
        promptTokens: 12,
        completionTokens,
        finalTokenAt,
      };
      const signature = await signReceipt(worker, { chainId: deployment.chainId, escrow: c.creditEscrow }, receipt);
      const mined = await send(roles.gateway, c.creditEscrow, creditEscrowAbi, "settle", [receipt, signature]);
      const [settled] = parseEventLogs({ abi: creditEscrowAbi, logs: mined.logs, eventName: "JobSettled" });
      if (!settled) throw new Error("no JobSettled in the settlement");
      const settlement: Settlement = {
        wallet: settled.args.wallet,
        worker: settled.args.worker,
        outputHash: receipt.outputHash,
        creditsCharged: settled.args.creditsCharged,
        finalTokenAt,
      };
      return { receipt: mined, settlement, settled: settled.args };
    },
    failJob: (jobKey: Hex) => send(roles.gateway, c.creditEscrow, creditEscrowAbi, "failJob", [jobKey]),
    /** Moves past the job deadline and its 300 s settle grace, then refunds (anyone may by then). */
    async refundAfterTimeout(jobKey: Hex, timeoutSeconds = 421) {
      await testClient.increaseTime({ seconds: timeoutSeconds });
      await testClient.mine({ blocks: 1 });
      return send(roles.admin, c.creditEscrow, creditEscrowAbi, "refund", [jobKey]);
    },
    openDispute: (jobKey: Hex, settlement: Settlement, clientText: string) =>
      send(roles.gateway, c.disputeManager, disputeManagerAbi, "openDispute", [
        jobKey,
        settlement,
        outputHashOf(clientText),
      ]),
    resolveDispute: (jobKey: Hex, fraud: boolean) =>
      send(roles.arbiter, c.disputeManager, disputeManagerAbi, "resolveDispute", [jobKey, fraud]),
  };
  return actions;
}

export type ChainActions = ReturnType<typeof chainActions>;
