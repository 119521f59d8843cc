// Parity of the TypeScript client library (@credit-metered/client, packages/client) with the deployed Solidity: the gateway,
// worker and indexer compute prices, ids, hashes and receipts with it, so it must agree with the chain.
import { createHash } from "node:crypto";
import { expect } from "chai";
import hre, { network } from "hardhat";
import { anyValue } from "@nomicfoundation/hardhat-ethers-chai-matchers/withArgs";
import {
  LAUNCH_CATALOG,
  MAX_LOCK_DELAY_SECONDS,
  TIERS,
  TIER_PRICES,
  apiKeyRegistryAbi,
  bytes32ToJobId,
  chargeFor,
  creditEscrowAbi,
  disputeManagerAbi,
  escrowFor,
  fromProofHash,
  isApiKeyFormat,
  isJobId,
  jobIdToBytes32,
  keyHashOf,
  modelCatalogAbi,
  modelKeyOf,
  newJobId,
  outputHashOf,
  priceOf,
  receiptDigest,
  receiptJsonSchema,
  receiptToJson,
  recoverReceiptSigner,
  signReceipt,
  splitCharge,
  stablecoinAbi,
  stakeTokenAbi,
  tierIndex,
  tierName,
  toProofHash,
  workerRegistryAbi,
  generateApiKey,
  type Receipt,
} from "@credit-metered/client";
import { LOCAL_ACCOUNT_INDEX, localAccount } from "@credit-metered/client/local";
import type { Hex } from "viem";
import {
  addModelAfterDelay,
  registerKey,
  deployContracts,
  deployProtocol,
  deployWithOpenJob,
  MODEL_MAX,
  modelKey,
  modelParams,
  OPEN_JOB_ID,
  OPEN_JOB_LOCKED,
  PARAMS,
  STARTING_CREDITS,
  WALLET_KEY,
} from "./fixtures.js";
import type { WithOpenJob } from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const MAX_PRICES = { creditsPerRequest: MODEL_MAX.creditsPerRequest, creditsPer1kTokens: MODEL_MAX.creditsPer1kTokens };

async function clientReceipt(
  d: WithOpenJob,
  completionTokens: number,
  text = "hello from the worker",
): Promise<Receipt> {
  return {
    jobId: OPEN_JOB_ID as Hex,
    outputHash: outputHashOf(text),
    promptTokens: 7,
    completionTokens,
    finalTokenAt: BigInt(await time.latest()),
  };
}

async function domainOf(d: WithOpenJob) {
  return { chainId: Number(d.chainId), escrow: (await d.escrow.getAddress()) as Hex };
}

describe("client library parity with the contracts", function () {
  describe("pricing.ts", function () {
    it("priceOf equals the escrow's Pricing library at the threshold edges for every tier", async function () {
      const escrow = await ethers.deployContract("PricingHarness");
      for (const tier of TIERS) {
        const prices = TIER_PRICES[tier];
        for (const tokens of [0, 1, 499, 500, 501, 502, 999, 1_000, 1_001, 1_500, 32_768, 128_000]) {
          expect(priceOf(prices, tokens), `${tier} ${tokens}`).to.equal(
            await escrow.priceOf(prices.creditsPerRequest, prices.creditsPer1kTokens, tokens),
          );
        }
      }
    });

    it("priceOf equals the escrow's Pricing library for pseudo-random prices and token counts up to uint32", async function () {
      const escrow = await ethers.deployContract("PricingHarness");
      let seed = 0x2545f491n;
      const next = (bound: bigint) => {
        seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
        return seed % bound;
      };
      for (let i = 0; i < 40; i++) {
        const cpr = next(2n ** 32n);
        const cp1k = next(2n ** 32n);
        const tokens = i % 2 === 0 ? next(2n ** 32n) : next(5_000n);
        expect(priceOf({ creditsPerRequest: cpr, creditsPer1kTokens: cp1k }, tokens)).to.equal(
          await escrow.priceOf(cpr, cp1k, tokens),
        );
      }
    });

    it("escrowFor equals the creditsLocked of JobOpened", async function () {
      const { escrow, gateway } = await loadFixture(deployProtocol);
      const id = jobIdToBytes32(newJobId());
      await expect(escrow.connect(gateway).openJob(id, keyHashOf(WALLET_KEY), modelKeyOf(MODEL_MAX.id), 2_345))
        .to.emit(escrow, "JobOpened")
        .withArgs(id, anyValue, anyValue, anyValue, anyValue, escrowFor(MAX_PRICES, 2_345), anyValue, anyValue);
    });

    for (const tokens of [0, 500, 501, 1_500]) {
      it(`chargeFor and splitCharge equal the settlement of ${tokens} tokens (charge capped at the escrow)`, async function () {
        const d = await loadFixture(deployWithOpenJob);
        const receipt = await clientReceipt(d, tokens);
        const signature = await signReceipt(localAccount(LOCAL_ACCOUNT_INDEX.firstWorker), await domainOf(d), receipt);
        const charge = chargeFor(MAX_PRICES, tokens, OPEN_JOB_LOCKED);
        const { workerAmount, feeAmount } = splitCharge(charge, PARAMS.feeBps);
        await expect(d.escrow.connect(d.gateway).settle(receipt, signature))
          .to.emit(d.escrow, "JobSettled")
          .withArgs(
            OPEN_JOB_ID,
            d.wallet.address,
            d.worker1.address,
            receipt.outputHash,
            7,
            tokens,
            receipt.finalTokenAt,
            charge,
            OPEN_JOB_LOCKED - charge,
            workerAmount,
            feeAmount,
            STARTING_CREDITS - charge,
          );
      });
    }
  });

  describe("receipt.ts", function () {
    it("MAX_LOCK_DELAY_SECONDS equals CreditEscrow.MAX_LOCK_DELAY", async function () {
      const d = await loadFixture(deployWithOpenJob);
      expect(BigInt(MAX_LOCK_DELAY_SECONDS)).to.equal(await d.escrow.MAX_LOCK_DELAY());
    });

    it("receiptDigest equals CreditEscrow.receiptDigest", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await clientReceipt(d, 321);
      expect(receiptDigest(await domainOf(d), receipt)).to.equal(await d.escrow.receiptDigest(receipt));
    });

    it("signReceipt with the worker's local account produces a signature the escrow settles", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await clientReceipt(d, 321);
      const signature = await signReceipt(localAccount(LOCAL_ACCOUNT_INDEX.firstWorker), await domainOf(d), receipt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, signature))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(OPEN_JOB_ID, anyValue, d.worker1.address, ...Array<unknown>(9).fill(anyValue));
    });

    it("recoverReceiptSigner finds the address the escrow recovers", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await clientReceipt(d, 10);
      const domain = await domainOf(d);
      const signature = await signReceipt(localAccount(LOCAL_ACCOUNT_INDEX.firstWorker + 1), domain, receipt);
      expect(await recoverReceiptSigner(domain, receipt, signature)).to.equal(d.worker2.address);
    });

    it("a receipt signed for another chain id is refused by the escrow", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await clientReceipt(d, 10);
      const domain = { ...(await domainOf(d)), chainId: Number(d.chainId) + 1 };
      const signature = await signReceipt(localAccount(LOCAL_ACCOUNT_INDEX.firstWorker), domain, receipt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, signature))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, anyValue, modelKey(MODEL_MAX.id));
    });

    it("receiptJsonSchema parses what receiptToJson writes back into an equal receipt", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await clientReceipt(d, 10);
      const wire = JSON.parse(JSON.stringify(receiptToJson(receipt))) as unknown;
      expect(receiptJsonSchema.parse(wire)).to.deep.equal(receipt);
    });

    it("outputHashOf is the sha256 the proof hash names, and toProofHash/fromProofHash round-trip", function () {
      const hash = outputHashOf("héllo");
      expect(hash).to.equal("0x" + createHash("sha256").update("héllo", "utf8").digest("hex"));
      expect(toProofHash(hash)).to.match(/^sha256:[0-9a-f]{64}$/);
      expect(fromProofHash(toProofHash(hash))).to.equal(hash);
    });
  });

  describe("jobId.ts", function () {
    it("jobIdToBytes32 of a new job id is accepted by openJob and reported in JobOpened", async function () {
      const { escrow, gateway, wallet } = await loadFixture(deployProtocol);
      const apiId = newJobId();
      const id = jobIdToBytes32(apiId);
      await expect(escrow.connect(gateway).openJob(id, keyHashOf(WALLET_KEY), modelKeyOf(MODEL_MAX.id), 10))
        .to.emit(escrow, "JobOpened")
        .withArgs(id, wallet.address, ...Array<unknown>(6).fill(anyValue));
      expect(bytes32ToJobId(id)).to.equal(apiId);
    });

    it("keeps the high 16 bytes zero and round-trips through bytes32ToJobId", function () {
      for (let i = 0; i < 20; i++) {
        const apiId = newJobId();
        const id = jobIdToBytes32(apiId);
        expect(id.slice(2, 34)).to.equal("0".repeat(32));
        expect(isJobId(bytes32ToJobId(id))).to.equal(true);
        expect(bytes32ToJobId(id)).to.equal(apiId);
      }
    });

    it("orders bytes32 ids by creation time as the ULIDs are ordered", function () {
      const earlier = jobIdToBytes32(newJobId(1_700_000_000_000));
      const later = jobIdToBytes32(newJobId(1_700_000_000_001));
      expect(BigInt(earlier) < BigInt(later)).to.equal(true);
    });
  });

  describe("keyHash.ts and tiers.ts", function () {
    it("keyHashOf is the hash the key registry stores for a generated key", async function () {
      const { apiKeyRegistry, outsider } = await loadFixture(deployContracts);
      const apiKey = generateApiKey();
      expect(isApiKeyFormat(apiKey)).to.equal(true);
      await registerKey(apiKeyRegistry.connect(outsider), outsider.address, keyHashOf(apiKey));
      expect(await apiKeyRegistry.activeWallet(keyHashOf(apiKey))).to.equal(outsider.address);
    });

    it("the launch catalog lists with modelKeyOf keys, 1-based indexes and tierIndex tiers", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      for (const m of LAUNCH_CATALOG) {
        await addModelAfterDelay(modelCatalog.connect(admin), m.id, modelParams({ ...m, tier: tierIndex(m.tier) }));
      }
      for (const [i, m] of LAUNCH_CATALOG.entries()) {
        const [index, tier, cpr, cp1k] = await modelCatalog.listedPricing(modelKeyOf(m.id));
        expect([index, tierName(Number(tier)), cpr, cp1k]).to.deep.equal([
          BigInt(i + 1),
          m.tier,
          BigInt(TIER_PRICES[m.tier].creditsPerRequest),
          BigInt(TIER_PRICES[m.tier].creditsPer1kTokens),
        ]);
      }
    });
  });

  describe("abis.ts", function () {
    const pairs = [
      ["ApiKeyRegistry", apiKeyRegistryAbi],
      ["CreditEscrow", creditEscrowAbi],
      ["DisputeManager", disputeManagerAbi],
      ["ModelCatalog", modelCatalogAbi],
      ["WorkerRegistry", workerRegistryAbi],
      ["Stablecoin", stablecoinAbi],
      ["StakeToken", stakeTokenAbi],
    ] as const;
    for (const [name, abi] of pairs) {
      it(`${name} ABI matches the compiled artifact (run npm run abis when it does not)`, async function () {
        const artifact = await hre.artifacts.readArtifact(name);
        expect(JSON.parse(JSON.stringify(abi))).to.deep.equal(artifact.abi);
      });
    }
  });
});
