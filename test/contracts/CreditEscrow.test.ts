import { expect } from "chai";
import { network } from "hardhat";
import { anyValue } from "@nomicfoundation/hardhat-ethers-chai-matchers/withArgs";
import { type ContractTransactionResponse, Signature, TypedDataEncoder } from "ethers";
import { PERMIT_TYPES, PERMIT_VERSION } from "@credit-metered/client";
import {
  addModelAfterDelay,
  adminRoles,
  changeIdOf,
  DEFAULT_ADMIN_ROLE,
  deployContracts,
  deployProtocol,
  deployWithOpenJob,
  deployWithSettledJob,
  DISPUTE_ROLE,
  expectedPrice,
  GATEWAY_ROLE,
  jobId,
  JobStatus,
  keyHash,
  MODEL_LITE,
  MODEL_MAX,
  MODEL_PRO,
  modelKey,
  modelParams,
  ONE_STABLECOIN,
  OPEN_JOB_ID,
  OPEN_JOB_LOCKED,
  OPEN_JOB_MAX_TOKENS,
  outputHash,
  PARAMS,
  PAUSER_ROLE,
  RECEIPT_TYPES,
  receiptDomain,
  RESERVE_FUNDING,
  SETTLED_CHARGE,
  SettleSkipReason,
  signReceipt,
  STARTING_CREDITS,
  STARTING_DEPOSIT,
  Tier,
  UNIT_PER_CREDIT,
  updateModelAfterDelay,
  waitOutChangeDelay,
  WALLET2_KEY,
  WALLET_KEY,
} from "./fixtures.js";
import type { Protocol, ReceiptValues, WithOpenJob } from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

/** A second escrow over the same registries, optionally with one constructor argument changed. */
async function deployEscrow(
  d: Awaited<ReturnType<typeof deployContracts>>,
  overrides: { stablecoin?: string; treasury?: string; feeBps?: bigint } = {},
) {
  return ethers.deployContract("CreditEscrow", [
    adminRoles(d.admin.address),
    overrides.stablecoin ?? (await d.stablecoin.getAddress()),
    await d.apiKeyRegistry.getAddress(),
    await d.modelCatalog.getAddress(),
    await d.workerRegistry.getAddress(),
    overrides.treasury ?? d.treasury.address,
    overrides.feeBps ?? PARAMS.feeBps,
    PARAMS.jobTimeout,
  ]);
}

const feeOf = (credits: bigint, feeBps = PARAMS.feeBps) => (credits * UNIT_PER_CREDIT * feeBps) / 10_000n;

/** A receipt for the open job with `completionTokens`, final token now. */
/**
 * The open job of `deployWithOpenJob`, opened while a catalog change scheduled before it had already waited out
 * its delay, and the change applied right after the job opened (a change cannot apply within a job's lifetime
 * otherwise: the delay is 2 days, a job lives minutes).
 */
async function openJobWithChangeReady(
  schedule: (catalog: Protocol["modelCatalog"]) => Promise<ContractTransactionResponse>,
): Promise<WithOpenJob> {
  const d = await loadFixture(deployProtocol);
  const catalog = d.modelCatalog.connect(d.admin);
  const changeId = await changeIdOf(catalog, schedule(catalog));
  await waitOutChangeDelay(catalog);
  await d.escrow
    .connect(d.gateway)
    .openJob(OPEN_JOB_ID, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), OPEN_JOB_MAX_TOKENS);
  const [, , , deadline] = await d.escrow.jobOf(OPEN_JOB_ID);
  await catalog.applyModelChange(changeId);
  return { ...d, deadline };
}

async function receiptFor(d: WithOpenJob, completionTokens: number, id = OPEN_JOB_ID): Promise<ReceiptValues> {
  return {
    jobId: id,
    outputHash: outputHash(`output of ${completionTokens} tokens`),
    promptTokens: 12,
    completionTokens,
    finalTokenAt: BigInt(await time.latest()),
  };
}

describe("CreditEscrow", function () {
  describe("deployment", function () {
    it("exposes the job timeout it was deployed with and the dispute window of the registry", async function () {
      const { escrow } = await loadFixture(deployContracts);
      expect(await escrow.jobTimeout()).to.equal(PARAMS.jobTimeout);
      expect(await escrow.disputeWindow()).to.equal(PARAMS.disputeWindow);
    });

    it("starts with an empty reserve", async function () {
      const { escrow } = await loadFixture(deployContracts);
      expect(await escrow.reserve()).to.equal(0n);
    });

    it("exposes the treasury, the 10% fee and the EIP-712 domain separator", async function () {
      const { escrow, treasury, domain } = await loadFixture(deployContracts);
      expect(await escrow.treasury()).to.equal(treasury.address);
      expect(await escrow.feeBps()).to.equal(PARAMS.feeBps);
      expect(await escrow.domainSeparator()).to.equal(TypedDataEncoder.hashDomain(domain));
    });

    it("reverts with ZeroAddress for a zero treasury", async function () {
      const d = await loadFixture(deployContracts);
      const factory = await ethers.getContractFactory("CreditEscrow");
      await expect(deployEscrow(d, { treasury: ethers.ZeroAddress })).to.be.revertedWithCustomError(
        factory,
        "ZeroAddress",
      );
    });

    it("reverts with ZeroAddress for a zero stablecoin", async function () {
      const d = await loadFixture(deployContracts);
      const factory = await ethers.getContractFactory("CreditEscrow");
      await expect(deployEscrow(d, { stablecoin: ethers.ZeroAddress })).to.be.revertedWithCustomError(
        factory,
        "ZeroAddress",
      );
    });

    it("reverts with FeeTooHigh for a fee above 20%", async function () {
      const d = await loadFixture(deployContracts);
      const factory = await ethers.getContractFactory("CreditEscrow");
      await expect(deployEscrow(d, { feeBps: 2_001n }))
        .to.be.revertedWithCustomError(factory, "FeeTooHigh")
        .withArgs(2_001, 2_000);
    });

    it("gives the deployer's admin the default admin role", async function () {
      const { escrow, admin } = await loadFixture(deployContracts);
      expect(await escrow.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
    });
  });

  describe("deposit", function () {
    it("adds whole credits for the stablecoin paid and emits Deposited", async function () {
      const { escrow, stablecoin, admin, outsider } = await loadFixture(deployProtocol);
      const amount = 3n * ONE_STABLECOIN;
      await stablecoin.connect(admin).mint(outsider.address, amount);
      await stablecoin.connect(outsider).approve(await escrow.getAddress(), amount);
      await expect(escrow.connect(outsider).deposit(amount))
        .to.emit(escrow, "Deposited")
        .withArgs(outsider.address, outsider.address, amount, 300n, 300n);
      expect((await escrow.accountOf(outsider.address)).available).to.equal(300n);
    });

    it("moves the stablecoin from the wallet to the escrow", async function () {
      const { escrow, stablecoin, admin, outsider } = await loadFixture(deployProtocol);
      const amount = 2n * ONE_STABLECOIN;
      await stablecoin.connect(admin).mint(outsider.address, amount);
      await stablecoin.connect(outsider).approve(await escrow.getAddress(), amount);
      await expect(escrow.connect(outsider).deposit(amount)).to.changeTokenBalances(
        ethers,
        stablecoin,
        [outsider, escrow],
        [-amount, amount],
      );
    });

    it("records the time of the last top-up", async function () {
      const { escrow, wallet } = await loadFixture(deployProtocol);
      const account = await escrow.accountOf(wallet.address);
      expect(account.lastTopUpAt).to.be.greaterThan(0n);
      expect(account.available).to.equal(STARTING_CREDITS);
    });

    it("reverts with EnforcedPause while paused", async function () {
      const { escrow, admin, wallet } = await loadFixture(deployProtocol);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(wallet).deposit(ONE_STABLECOIN)).to.be.revertedWithCustomError(
        escrow,
        "EnforcedPause",
      );
    });
  });

  describe("depositWithPermit", function () {
    async function permitFor(d: Awaited<ReturnType<typeof deployProtocol>>, amount: bigint, deadline: bigint) {
      const { stablecoin, escrow, outsider, chainId } = d;
      const domain = {
        name: await stablecoin.name(),
        version: PERMIT_VERSION,
        chainId,
        verifyingContract: await stablecoin.getAddress(),
      };
      const types = { Permit: [...PERMIT_TYPES.Permit] };
      const value = {
        owner: outsider.address,
        spender: await escrow.getAddress(),
        value: amount,
        nonce: await stablecoin.nonces(outsider.address),
        deadline,
      };
      return Signature.from(await outsider.signTypedData(domain, types, value));
    }

    it("deposits with one signed permit and no prior approval", async function () {
      const d = await loadFixture(deployProtocol);
      const amount = 5n * ONE_STABLECOIN;
      await d.stablecoin.connect(d.admin).mint(d.outsider.address, amount);
      const deadline = BigInt(await time.latest()) + 3_600n;
      const sig = await permitFor(d, amount, deadline);
      await expect(d.escrow.connect(d.outsider).depositWithPermit(amount, deadline, sig.v, sig.r, sig.s))
        .to.emit(d.escrow, "Deposited")
        .withArgs(d.outsider.address, d.outsider.address, amount, 500n, 500n);
    });

    it("still deposits when the permit was already used by someone else (front-run)", async function () {
      const d = await loadFixture(deployProtocol);
      const amount = 5n * ONE_STABLECOIN;
      await d.stablecoin.connect(d.admin).mint(d.outsider.address, amount);
      const deadline = BigInt(await time.latest()) + 3_600n;
      const sig = await permitFor(d, amount, deadline);
      await d.stablecoin
        .connect(d.stranger)
        .permit(d.outsider.address, await d.escrow.getAddress(), amount, deadline, sig.v, sig.r, sig.s);
      await expect(
        d.escrow.connect(d.outsider).depositWithPermit(amount, deadline, sig.v, sig.r, sig.s),
      ).to.changeTokenBalance(ethers, d.stablecoin, d.escrow, amount);
    });

    it("reverts with EnforcedPause while paused", async function () {
      const d = await loadFixture(deployProtocol);
      await d.escrow.connect(d.admin).pause();
      const deadline = BigInt(await time.latest()) + 3_600n;
      const sig = await permitFor(d, ONE_STABLECOIN, deadline);
      await expect(
        d.escrow.connect(d.outsider).depositWithPermit(ONE_STABLECOIN, deadline, sig.v, sig.r, sig.s),
      ).to.be.revertedWithCustomError(d.escrow, "EnforcedPause");
    });
  });

  describe("withdraw", function () {
    it("pays available credits out as stablecoin and emits Withdrawn", async function () {
      const { escrow, wallet } = await loadFixture(deployProtocol);
      await expect(escrow.connect(wallet).withdraw(1_000n))
        .to.emit(escrow, "Withdrawn")
        .withArgs(wallet.address, 1_000n, 1_000n * UNIT_PER_CREDIT, STARTING_CREDITS - 1_000n);
    });

    it("transfers the stablecoin to the wallet", async function () {
      const { escrow, stablecoin, wallet } = await loadFixture(deployProtocol);
      await expect(escrow.connect(wallet).withdraw(100n)).to.changeTokenBalances(
        ethers,
        stablecoin,
        [wallet, escrow],
        [100n * UNIT_PER_CREDIT, -100n * UNIT_PER_CREDIT],
      );
    });

    it("still works while paused", async function () {
      const { escrow, admin, wallet } = await loadFixture(deployProtocol);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(wallet).withdraw(10n)).to.emit(escrow, "Withdrawn");
    });
  });

  describe("fundReserve", function () {
    it("adds stablecoin to the reserve and emits ReserveFunded", async function () {
      const { escrow, stablecoin, admin } = await loadFixture(deployProtocol);
      await stablecoin.connect(admin).mint(admin.address, ONE_STABLECOIN);
      await stablecoin.connect(admin).approve(await escrow.getAddress(), ONE_STABLECOIN);
      await expect(escrow.connect(admin).fundReserve(ONE_STABLECOIN))
        .to.emit(escrow, "ReserveFunded")
        .withArgs(admin.address, ONE_STABLECOIN, RESERVE_FUNDING + ONE_STABLECOIN);
      expect(await escrow.reserve()).to.equal(RESERVE_FUNDING + ONE_STABLECOIN);
    });

    it("accepts funding from anyone", async function () {
      const { escrow, stablecoin, admin, outsider } = await loadFixture(deployProtocol);
      await stablecoin.connect(admin).mint(outsider.address, 7n);
      await stablecoin.connect(outsider).approve(await escrow.getAddress(), 7n);
      await expect(escrow.connect(outsider).fundReserve(7n)).to.changeTokenBalances(
        ethers,
        stablecoin,
        [outsider, escrow],
        [-7n, 7n],
      );
    });
  });

  describe("openJob", function () {
    it("locks the worst-case price for maxTokens and emits JobOpened", async function () {
      const { escrow, gateway, wallet } = await loadFixture(deployProtocol);
      const id = jobId(42);
      const openedAt = BigInt(await time.latest()) + 1n;
      await time.setNextBlockTimestamp(openedAt);
      await expect(escrow.connect(gateway).openJob(id, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000))
        .to.emit(escrow, "JobOpened")
        .withArgs(
          id,
          wallet.address,
          keyHash(WALLET_KEY),
          modelKey(MODEL_MAX.id),
          Tier.Max,
          50n,
          STARTING_CREDITS - 50n,
          openedAt + PARAMS.jobTimeout,
        );
    });

    it("moves the locked credits from available to locked", async function () {
      const { escrow, wallet } = await loadFixture(deployWithOpenJob);
      const account = await escrow.accountOf(wallet.address);
      expect(account.available).to.equal(STARTING_CREDITS - OPEN_JOB_LOCKED);
      expect(account.locked).to.equal(OPEN_JOB_LOCKED);
    });

    it("records the job as open with its wallet, locked credits and deadline", async function () {
      const { escrow, wallet, deadline } = await loadFixture(deployWithOpenJob);
      const [status, jobWallet, locked, jobDeadline] = await escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Open);
      expect(jobWallet).to.equal(wallet.address);
      expect(locked).to.equal(OPEN_JOB_LOCKED);
      expect(jobDeadline).to.equal(deadline);
    });

    it("locks exactly the per-request price up to 500 tokens", async function () {
      const { escrow, gateway } = await loadFixture(deployProtocol);
      await expect(escrow.connect(gateway).openJob(jobId(2), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 500))
        .to.emit(escrow, "JobOpened")
        .withArgs(jobId(2), anyValue, anyValue, anyValue, anyValue, 40n, anyValue, anyValue);
    });

    it("reverts with JobAlreadyExists when the id belongs to a settled job", async function () {
      const { escrow, gateway } = await loadFixture(deployWithSettledJob);
      await expect(escrow.connect(gateway).openJob(OPEN_JOB_ID, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 10))
        .to.be.revertedWithCustomError(escrow, "JobAlreadyExists")
        .withArgs(OPEN_JOB_ID);
    });

    it("reverts with MaxTokensInvalid when the escrow would not fit a job record (2^40 credits)", async function () {
      const { escrow, modelCatalog, admin, gateway } = await loadFixture(deployProtocol);
      const pricey = { ...modelParams(MODEL_MAX), creditsPer1kTokens: 4_000_000_000 };
      await addModelAfterDelay(modelCatalog.connect(admin), "pricey-model", pricey);
      // 40 + ceil(3,999,500 * 4e9 / 1000) ~ 1.6e13 credits > 2^40 - 1
      await expect(escrow.connect(gateway).openJob(jobId(12), keyHash(WALLET_KEY), modelKey("pricey-model"), 4_000_000))
        .to.be.revertedWithCustomError(escrow, "MaxTokensInvalid")
        .withArgs(4_000_000);
    });

    it("reverts with KeyNotActive for a key that was never registered", async function () {
      const { escrow, apiKeyRegistry, gateway } = await loadFixture(deployProtocol);
      const unknown = keyHash("sk-never-registered");
      await expect(escrow.connect(gateway).openJob(jobId(5), unknown, modelKey(MODEL_MAX.id), 10))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotActive")
        .withArgs(unknown, 0);
    });

    it("reverts with ModelUnknown for a model not in the catalog", async function () {
      const { escrow, modelCatalog, gateway } = await loadFixture(deployProtocol);
      const unknown = modelKey("gpt-unknown");
      await expect(escrow.connect(gateway).openJob(jobId(8), keyHash(WALLET_KEY), unknown, 10))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(unknown);
    });
  });

  describe("settle", function () {
    it("charges the pricing rule, refunds the rest and emits JobSettled", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 700);
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      const fee = feeOf(SETTLED_CHARGE);
      await expect(d.escrow.connect(d.gateway).settle(receipt, sig))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          OPEN_JOB_ID,
          d.wallet.address,
          d.worker1.address,
          receipt.outputHash,
          receipt.promptTokens,
          700,
          receipt.finalTokenAt,
          SETTLED_CHARGE,
          OPEN_JOB_LOCKED - SETTLED_CHARGE,
          SETTLED_CHARGE * UNIT_PER_CREDIT - fee,
          fee,
          STARTING_CREDITS - SETTLED_CHARGE,
        );
    });

    it("pays the worker the charge minus the fee and the treasury the fee, both in the settlement transaction", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 700);
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      const charge = SETTLED_CHARGE * UNIT_PER_CREDIT;
      const fee = feeOf(SETTLED_CHARGE);
      const settle = d.escrow.connect(d.gateway).settle(receipt, sig);
      await expect(settle).to.changeTokenBalances(
        ethers,
        d.stablecoin,
        [d.worker1, d.treasury, d.escrow],
        [charge - fee, fee, -charge],
      );
      await expect(settle)
        .to.emit(d.stablecoin, "Transfer")
        .withArgs(await d.escrow.getAddress(), d.treasury.address, fee);
    });

    it("releases the lock and leaves the unused escrow available", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 700);
      await d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt));
      const account = await d.escrow.accountOf(d.wallet.address);
      expect(account.locked).to.equal(0n);
      expect(account.available).to.equal(STARTING_CREDITS - SETTLED_CHARGE);
    });

    it("marks the job settled and no longer reports its wallet or lock", async function () {
      const d = await loadFixture(deployWithSettledJob);
      const [status, , locked] = await d.escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Settled);
      expect(locked).to.equal(0n);
    });

    for (const [tokens, label] of [
      [0, "0 tokens charges nothing"],
      [500, "500 tokens charges the per-request price"],
      [501, "501 tokens charges the per-request price plus one rounded-up credit"],
      [1_000, "1,000 tokens charges the whole escrow"],
    ] as const) {
      it(`settling ${label}`, async function () {
        const d = await loadFixture(deployWithOpenJob);
        const receipt = await receiptFor(d, tokens);
        const charge = expectedPrice(40, 20, tokens);
        await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
          .to.emit(d.escrow, "JobSettled")
          .withArgs(
            OPEN_JOB_ID,
            anyValue,
            anyValue,
            anyValue,
            anyValue,
            tokens,
            anyValue,
            charge,
            OPEN_JOB_LOCKED - charge,
            anyValue,
            anyValue,
            STARTING_CREDITS - charge,
          );
      });
    }

    it("caps the charge at the escrow when the receipt reports more tokens than maxTokens", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 1_500);
      expect(expectedPrice(40, 20, 1_500)).to.equal(60n);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          OPEN_JOB_ID,
          anyValue,
          anyValue,
          anyValue,
          anyValue,
          1_500,
          anyValue,
          OPEN_JOB_LOCKED,
          0n,
          anyValue,
          anyValue,
          STARTING_CREDITS - OPEN_JOB_LOCKED,
        );
    });

    it("accepts a receipt from an unbonding worker", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.workerRegistry.connect(d.worker1).startUnbonding();
      const receipt = await receiptFor(d, 10);
      await expect(
        d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)),
      ).to.emit(d.escrow, "JobSettled");
    });

    it("settles after the deadline when the job was not refunded and the final token came in time", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: d.deadline };
      await time.increaseTo(d.deadline + 10n);
      await expect(
        d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)),
      ).to.emit(d.escrow, "JobSettled");
    });

    it("reverts with ReceiptTimeInvalid when the final token came after the deadline", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await time.increaseTo(d.deadline + 5n);
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: d.deadline + 1n };
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "ReceiptTimeInvalid")
        .withArgs(OPEN_JOB_ID, d.deadline + 1n, d.deadline);
    });

    it("reverts with ReceiptTimeInvalid when the final token is more than the clock skew in the future", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const now = BigInt(await time.latest());
      const settleAt = now + 1n;
      const future = settleAt + PARAMS.maxClockSkew + 1n; // still before the 120 s deadline
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: future };
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      await time.setNextBlockTimestamp(settleAt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, sig))
        .to.be.revertedWithCustomError(d.escrow, "ReceiptTimeInvalid")
        .withArgs(OPEN_JOB_ID, future, d.deadline);
    });

    it("reverts with ReceiptTimeInvalid when the final token is before the job was opened", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const openedAt = d.deadline - PARAMS.jobTimeout;
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: openedAt - PARAMS.maxClockSkew - 1n };
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "ReceiptTimeInvalid")
        .withArgs(OPEN_JOB_ID, receipt.finalTokenAt, d.deadline);
    });

    it("accepts a final token up to the clock skew before the job was opened", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const openedAt = d.deadline - PARAMS.jobTimeout;
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: openedAt - PARAMS.maxClockSkew };
      await expect(
        d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)),
      ).to.emit(d.escrow, "JobSettled");
    });

    it("accepts a final token up to the clock skew in the future", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const settleAt = BigInt(await time.latest()) + 1n;
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: settleAt + PARAMS.maxClockSkew };
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      await time.setNextBlockTimestamp(settleAt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, sig)).to.emit(d.escrow, "JobSettled");
    });

    it("reverts with WorkerNotEligible for a receipt signed by an unregistered address", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.stranger, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, d.stranger.address, modelKey(MODEL_MAX.id));
    });

    it("reverts with WorkerNotEligible for a registered worker that does not host the job's model", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker3, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, d.worker3.address, modelKey(MODEL_MAX.id));
    });

    it("reverts with WorkerNotEligible for a worker that exited", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.workerRegistry.connect(d.worker2).startUnbonding();
      await time.increase(PARAMS.unbondingDelay + 1n);
      await d.workerRegistry.connect(d.worker2).withdraw();
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: d.deadline };
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker2, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, d.worker2.address, modelKey(MODEL_MAX.id));
    });

    it("reverts with WorkerNotEligible when the signature was tampered with (wrong signer recovered)", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      const tampered = { ...receipt, completionTokens: 400 };
      await expect(d.escrow.connect(d.gateway).settle(tampered, sig))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, anyValue, modelKey(MODEL_MAX.id));
    });

    it("refuses a receipt signed for one job when replayed on another job", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const other = jobId(77);
      await d.escrow.connect(d.gateway).openJob(other, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
      const receipt = await receiptFor(d, 10);
      const sig = await signReceipt(d.worker1, d.domain, receipt);
      await expect(d.escrow.connect(d.gateway).settle({ ...receipt, jobId: other }, sig))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(other, anyValue, modelKey(MODEL_MAX.id));
    });

    it("refuses a receipt signed for another escrow deployment", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const otherEscrow = await deployEscrow(d);
      const receipt = await receiptFor(d, 10);
      const sig = await signReceipt(d.worker1, receiptDomain(d.chainId, await otherEscrow.getAddress()), receipt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, sig))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, anyValue, modelKey(MODEL_MAX.id));
    });

    it("refuses a receipt signed for another chain id", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      const sig = await signReceipt(d.worker1, receiptDomain(d.chainId + 1n, await d.escrow.getAddress()), receipt);
      await expect(d.escrow.connect(d.gateway).settle(receipt, sig))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(OPEN_JOB_ID, anyValue, modelKey(MODEL_MAX.id));
    });

    it("reverts with ECDSAInvalidSignatureLength for a malformed signature", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      await expect(d.escrow.connect(d.gateway).settle(receipt, "0x1234")).to.be.revertedWithCustomError(
        d.escrow,
        "ECDSAInvalidSignatureLength",
      );
    });

    it("reverts with JobNotInStatus when the same receipt is submitted twice", async function () {
      const d = await loadFixture(deployWithSettledJob);
      await expect(d.escrow.connect(d.gateway).settle(d.receipt, d.signature))
        .to.be.revertedWithCustomError(d.escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Settled, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a job that was never opened", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10, jobId(999));
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "JobNotInStatus")
        .withArgs(jobId(999), JobStatus.None, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a failed job", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.escrow.connect(d.gateway).failJob(OPEN_JOB_ID);
      const receipt = await receiptFor(d, 10);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Failed, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a refunded job", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = { ...(await receiptFor(d, 10)), finalTokenAt: d.deadline };
      await time.increaseTo(d.deadline + PARAMS.settleGrace + 1n);
      await d.escrow.connect(d.outsider).refund(OPEN_JOB_ID);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Refunded, JobStatus.Open);
    });

    it("still settles an open job of a model retired after the job was opened", async function () {
      const d = await openJobWithChangeReady((catalog) => catalog.scheduleRetireModel(MODEL_MAX.id));
      const receipt = await receiptFor(d, 700);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          OPEN_JOB_ID,
          anyValue,
          d.worker1.address,
          anyValue,
          anyValue,
          anyValue,
          anyValue,
          SETTLED_CHARGE,
          anyValue,
          anyValue,
          anyValue,
          anyValue,
        );
    });

    it("settles at the prices the job was opened at when governance reprices the model meanwhile", async function () {
      const d = await openJobWithChangeReady((catalog) =>
        catalog.scheduleUpdateModel(MODEL_MAX.id, {
          ...modelParams(MODEL_MAX),
          creditsPerRequest: 10,
          creditsPer1kTokens: 5,
        }),
      );
      const receipt = await receiptFor(d, 700);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          OPEN_JOB_ID,
          ...Array<unknown>(6).fill(anyValue),
          SETTLED_CHARGE,
          ...Array<unknown>(4).fill(anyValue),
        );
    });

    it("locks new jobs at the new prices after a repricing", async function () {
      const d = await loadFixture(deployProtocol);
      await updateModelAfterDelay(d.modelCatalog.connect(d.admin), MODEL_MAX.id, {
        ...modelParams(MODEL_MAX),
        creditsPerRequest: 10,
        creditsPer1kTokens: 5,
      });
      await expect(d.escrow.connect(d.gateway).openJob(jobId(31), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000))
        .to.emit(d.escrow, "JobOpened")
        .withArgs(jobId(31), ...Array<unknown>(4).fill(anyValue), 10n + 3n, anyValue, anyValue);
    });

    it("pays whichever eligible worker signed the receipt (here worker2, also hosting the model)", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 100);
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker2, d.domain, receipt)))
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          OPEN_JOB_ID,
          d.wallet.address,
          d.worker2.address,
          anyValue,
          anyValue,
          100,
          anyValue,
          40n,
          OPEN_JOB_LOCKED - 40n,
          anyValue,
          anyValue,
          anyValue,
        );
    });

    it("charges the fee a job was opened under, even if the admin changes it before settlement", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.escrow.connect(d.admin).scheduleProtocolFee(2_000);
      await time.increase(PARAMS.configChangeDelay);
      const later = jobId(77);
      await d.escrow.connect(d.gateway).openJob(later, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
      // The first job's deadline passed long ago; only the one opened under 20% can still settle.
      const receipt = { ...(await receiptFor(d, 1_000)), jobId: later };
      const charge = OPEN_JOB_LOCKED * UNIT_PER_CREDIT;
      await expect(
        d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)),
      ).to.changeTokenBalances(
        ethers,
        d.stablecoin,
        [d.worker1, d.treasury],
        [(charge * 8n) / 10n, (charge * 2n) / 10n],
      );
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GATEWAY_ROLE", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      await expect(d.escrow.connect(d.outsider).settle(receipt, await signReceipt(d.worker1, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "AccessControlUnauthorizedAccount")
        .withArgs(d.outsider.address, GATEWAY_ROLE);
    });
  });

  describe("receiptDigest", function () {
    it("equals the EIP-712 hash of the receipt under the escrow's domain", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const receipt = await receiptFor(d, 10);
      expect(await d.escrow.receiptDigest(receipt)).to.equal(TypedDataEncoder.hash(d.domain, RECEIPT_TYPES, receipt));
    });
  });

  describe("settleBatch", function () {
    async function batchFixture(connection: Parameters<typeof deployProtocol>[0]) {
      const d = await deployProtocol(connection);
      const ids = [jobId(101), jobId(102), jobId(103), jobId(104)];
      await d.escrow.connect(d.gateway).openJob(ids[0]!, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
      await d.escrow.connect(d.gateway).openJob(ids[1]!, keyHash(WALLET_KEY), modelKey(MODEL_LITE.id), 2_000);
      await d.escrow.connect(d.gateway).openJob(ids[2]!, keyHash(WALLET2_KEY), modelKey(MODEL_MAX.id), 600);
      await d.escrow.connect(d.gateway).openJob(ids[3]!, keyHash(WALLET2_KEY), modelKey(MODEL_PRO.id), 500);
      const now = BigInt(await time.latest());
      const plan = [
        { id: ids[0]!, worker: d.worker1, tokens: 700 }, // max: 44 credits
        { id: ids[1]!, worker: d.worker1, tokens: 1_500 }, // lite: 2 + 1 = 3 credits
        { id: ids[2]!, worker: d.worker2, tokens: 600 }, // max: 40 + 2 = 42 credits
        { id: ids[3]!, worker: d.worker3, tokens: 200 }, // pro: 18 credits
      ];
      const receipts: ReceiptValues[] = plan.map((p) => ({
        jobId: p.id,
        outputHash: outputHash(`batch ${p.id}`),
        promptTokens: 9,
        completionTokens: p.tokens,
        finalTokenAt: now,
      }));
      const signatures = await Promise.all(plan.map((p, i) => signReceipt(p.worker, d.domain, receipts[i]!)));
      return { ...d, ids, receipts, signatures };
    }

    it("settles every job of the batch with its own JobSettled event", async function () {
      const d = await loadFixture(batchFixture);
      const tx = d.escrow.connect(d.gateway).settleBatch(d.receipts, d.signatures);
      await expect(tx)
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          d.ids[0],
          d.wallet.address,
          d.worker1.address,
          anyValue,
          9,
          700,
          anyValue,
          44n,
          6n,
          anyValue,
          anyValue,
          anyValue,
        );
      await expect(tx)
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          d.ids[1],
          d.wallet.address,
          d.worker1.address,
          anyValue,
          9,
          1_500,
          anyValue,
          3n,
          1n,
          anyValue,
          anyValue,
          anyValue,
        );
      await expect(tx)
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          d.ids[2],
          d.wallet2.address,
          d.worker2.address,
          anyValue,
          9,
          600,
          anyValue,
          42n,
          0n,
          anyValue,
          anyValue,
          anyValue,
        );
      await expect(tx)
        .to.emit(d.escrow, "JobSettled")
        .withArgs(
          d.ids[3],
          d.wallet2.address,
          d.worker3.address,
          anyValue,
          9,
          200,
          anyValue,
          18n,
          0n,
          anyValue,
          anyValue,
          anyValue,
        );
    });

    it("pays each worker the sum of its jobs and the treasury the batch's total fee in one transfer", async function () {
      const d = await loadFixture(batchFixture);
      const net = (credits: bigint) => credits * UNIT_PER_CREDIT - feeOf(credits);
      const fees = feeOf(44n) + feeOf(3n) + feeOf(42n) + feeOf(18n);
      const batch = d.escrow.connect(d.gateway).settleBatch(d.receipts, d.signatures);
      await expect(batch).to.changeTokenBalances(
        ethers,
        d.stablecoin,
        [d.worker1, d.worker2, d.worker3, d.treasury, d.escrow],
        [net(44n) + net(3n), net(42n), net(18n), fees, -(net(44n) + net(3n) + net(42n) + net(18n) + fees)],
      );
      const transfers = (await (await batch).wait())!.logs.filter(
        (log) => d.stablecoin.interface.parseLog(log)?.name === "Transfer",
      );
      expect(transfers.map((log) => d.stablecoin.interface.parseLog(log)!.args.to)).to.deep.equal([
        d.worker1.address,
        d.worker2.address,
        d.worker3.address,
        d.treasury.address,
      ]);
    });

    it("leaves each wallet with its balance minus its charges and nothing locked", async function () {
      const d = await loadFixture(batchFixture);
      await d.escrow.connect(d.gateway).settleBatch(d.receipts, d.signatures);
      const a = await d.escrow.accountOf(d.wallet.address);
      const b = await d.escrow.accountOf(d.wallet2.address);
      expect([a.available, a.locked]).to.deep.equal([STARTING_CREDITS - 47n, 0n]);
      expect([b.available, b.locked]).to.deep.equal([STARTING_CREDITS - 60n, 0n]);
    });

    it("skips the one invalid receipt with SettlementSkipped and settles the rest", async function () {
      const d = await loadFixture(batchFixture);
      const signatures = [...d.signatures];
      signatures[2] = await signReceipt(d.stranger, d.domain, d.receipts[2]!);
      await expect(d.escrow.connect(d.gateway).settleBatch(d.receipts, signatures))
        .to.emit(d.escrow, "SettlementSkipped")
        .withArgs(d.ids[2], SettleSkipReason.WorkerNotEligible);
      const statuses = await Promise.all(d.ids.map(async (id) => (await d.escrow.jobOf(id))[0]));
      expect(statuses).to.deep.equal(
        [JobStatus.Settled, JobStatus.Settled, JobStatus.Open, JobStatus.Settled].map(BigInt),
      );
    });

    it("skips a worker valid for its first job that signs a job of a model it does not host", async function () {
      const d = await loadFixture(batchFixture);
      // worker1 hosts max and lite but not pro: its eligibility for the first job must not carry over.
      const receipts = [d.receipts[0]!, d.receipts[3]!];
      const signatures = [d.signatures[0]!, await signReceipt(d.worker1, d.domain, d.receipts[3]!)];
      await expect(d.escrow.connect(d.gateway).settleBatch(receipts, signatures))
        .to.emit(d.escrow, "SettlementSkipped")
        .withArgs(d.ids[3], SettleSkipReason.WorkerNotEligible);
    });

    it("skips a malformed signature with SignatureInvalid instead of reverting", async function () {
      const d = await loadFixture(batchFixture);
      const signatures = [...d.signatures];
      signatures[1] = "0x1234";
      await expect(d.escrow.connect(d.gateway).settleBatch(d.receipts, signatures))
        .to.emit(d.escrow, "SettlementSkipped")
        .withArgs(d.ids[1], SettleSkipReason.SignatureInvalid);
    });

    it("pays one worker the sum of two jobs of the same model in one batch", async function () {
      const d = await loadFixture(batchFixture);
      const extra = jobId(105);
      await d.escrow.connect(d.gateway).openJob(extra, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
      const receipt = { ...d.receipts[0]!, jobId: extra };
      const receipts = [d.receipts[0]!, receipt];
      const signatures = [d.signatures[0]!, await signReceipt(d.worker1, d.domain, receipt)];
      await expect(d.escrow.connect(d.gateway).settleBatch(receipts, signatures)).to.changeTokenBalance(
        ethers,
        d.stablecoin,
        d.worker1,
        2n * (44n * UNIT_PER_CREDIT - feeOf(44n)),
      );
    });

    it("leaves every job open when every receipt of the batch is skipped", async function () {
      const d = await loadFixture(batchFixture);
      const signatures = await Promise.all(d.receipts.map((r) => signReceipt(d.stranger, d.domain, r)));
      await d.escrow.connect(d.gateway).settleBatch(d.receipts, signatures);
      for (const id of d.ids) {
        const [status] = await d.escrow.jobOf(id);
        expect(status).to.equal(JobStatus.Open);
      }
    });

    it("skips the repeat with JobNotOpen when a job appears twice in the batch", async function () {
      const d = await loadFixture(batchFixture);
      await expect(
        d.escrow.connect(d.gateway).settleBatch([d.receipts[0]!, d.receipts[0]!], [d.signatures[0]!, d.signatures[0]!]),
      )
        .to.emit(d.escrow, "SettlementSkipped")
        .withArgs(d.ids[0], SettleSkipReason.JobNotOpen);
    });

    it("reverts with BatchInvalid when the arrays differ in length", async function () {
      const d = await loadFixture(batchFixture);
      await expect(
        d.escrow.connect(d.gateway).settleBatch(d.receipts, d.signatures.slice(1)),
      ).to.be.revertedWithCustomError(d.escrow, "BatchInvalid");
    });

    it("reverts with BatchInvalid for an empty batch", async function () {
      const d = await loadFixture(batchFixture);
      await expect(d.escrow.connect(d.gateway).settleBatch([], [])).to.be.revertedWithCustomError(
        d.escrow,
        "BatchInvalid",
      );
    });

    it("reverts with EnforcedPause while paused", async function () {
      const d = await loadFixture(batchFixture);
      await d.escrow.connect(d.admin).pause();
      await expect(d.escrow.connect(d.gateway).settleBatch(d.receipts, d.signatures)).to.be.revertedWithCustomError(
        d.escrow,
        "EnforcedPause",
      );
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GATEWAY_ROLE", async function () {
      const d = await loadFixture(batchFixture);
      await expect(d.escrow.connect(d.outsider).settleBatch(d.receipts, d.signatures))
        .to.be.revertedWithCustomError(d.escrow, "AccessControlUnauthorizedAccount")
        .withArgs(d.outsider.address, GATEWAY_ROLE);
    });
  });

  describe("failJob", function () {
    it("returns the whole escrow and emits JobFailed", async function () {
      const { escrow, gateway, wallet } = await loadFixture(deployWithOpenJob);
      await expect(escrow.connect(gateway).failJob(OPEN_JOB_ID))
        .to.emit(escrow, "JobFailed")
        .withArgs(OPEN_JOB_ID, wallet.address, OPEN_JOB_LOCKED, STARTING_CREDITS);
    });

    it("marks the job failed and unlocks the credits", async function () {
      const { escrow, gateway, wallet } = await loadFixture(deployWithOpenJob);
      await escrow.connect(gateway).failJob(OPEN_JOB_ID);
      const [status] = await escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Failed);
      expect((await escrow.accountOf(wallet.address)).locked).to.equal(0n);
    });

    it("reverts with JobNotInStatus the second time", async function () {
      const { escrow, gateway } = await loadFixture(deployWithOpenJob);
      await escrow.connect(gateway).failJob(OPEN_JOB_ID);
      await expect(escrow.connect(gateway).failJob(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Failed, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a settled job", async function () {
      const { escrow, gateway } = await loadFixture(deployWithSettledJob);
      await expect(escrow.connect(gateway).failJob(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Settled, JobStatus.Open);
    });

    it("still works while paused", async function () {
      const { escrow, admin, gateway } = await loadFixture(deployWithOpenJob);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(gateway).failJob(OPEN_JOB_ID)).to.emit(escrow, "JobFailed");
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GATEWAY_ROLE", async function () {
      const { escrow, outsider } = await loadFixture(deployWithOpenJob);
      await expect(escrow.connect(outsider).failJob(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, GATEWAY_ROLE);
    });
  });

  describe("refund", function () {
    it("refunds an open job to anyone's call once the settle grace after the 120 s timeout is over", async function () {
      const { escrow, wallet, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline + PARAMS.settleGrace + 1n);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.emit(escrow, "JobRefunded")
        .withArgs(OPEN_JOB_ID, wallet.address, OPEN_JOB_LOCKED, STARTING_CREDITS, outsider.address);
    });

    it("sets the deadline 120 s after opening", async function () {
      const { escrow, gateway } = await loadFixture(deployProtocol);
      await escrow.connect(gateway).openJob(jobId(5), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 10);
      const openedAt = BigInt(await time.latest());
      const [, , , deadline] = await escrow.jobOf(jobId(5));
      expect(deadline).to.equal(openedAt + PARAMS.jobTimeout);
    });

    it("reverts with JobNotExpired for anyone but the gateway until the settle grace is over", async function () {
      const { escrow, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline + PARAMS.settleGrace - 1n);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotExpired")
        .withArgs(OPEN_JOB_ID, deadline + PARAMS.settleGrace);
    });

    it("lets the gateway refund its own job once the deadline has passed", async function () {
      const { escrow, gateway, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline + 1n);
      await expect(escrow.connect(gateway).refund(OPEN_JOB_ID)).to.emit(escrow, "JobRefunded");
    });

    it("reverts with JobNotExpired for the gateway before the deadline", async function () {
      const { escrow, gateway, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline - 10n);
      await expect(escrow.connect(gateway).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotExpired")
        .withArgs(OPEN_JOB_ID, deadline + PARAMS.settleGrace);
    });

    it("marks the job refunded and returns the locked credits", async function () {
      const { escrow, wallet, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline + PARAMS.settleGrace + 1n);
      await escrow.connect(outsider).refund(OPEN_JOB_ID);
      const [status] = await escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Refunded);
      const account = await escrow.accountOf(wallet.address);
      expect([account.available, account.locked]).to.deep.equal([STARTING_CREDITS, 0n]);
    });

    it("reverts with JobNotInStatus the second time", async function () {
      const { escrow, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await time.increaseTo(deadline + PARAMS.settleGrace + 1n);
      await escrow.connect(outsider).refund(OPEN_JOB_ID);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Refunded, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a settled job", async function () {
      const { escrow, outsider } = await loadFixture(deployWithSettledJob);
      await time.increase(PARAMS.jobTimeout + 1n);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Settled, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for a failed job", async function () {
      const { escrow, gateway, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await escrow.connect(gateway).failJob(OPEN_JOB_ID);
      await time.increaseTo(deadline + 1n);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Failed, JobStatus.Open);
    });

    it("reverts with JobNotInStatus for an unknown job", async function () {
      const { escrow, outsider } = await loadFixture(deployWithOpenJob);
      await expect(escrow.connect(outsider).refund(jobId(404)))
        .to.be.revertedWithCustomError(escrow, "JobNotInStatus")
        .withArgs(jobId(404), JobStatus.None, JobStatus.Open);
    });

    it("reverts with EnforcedPause while paused (a pause never turns delivered work into a refund)", async function () {
      const { escrow, admin, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await escrow.connect(admin).pause();
      await time.increaseTo(deadline + PARAMS.settleGrace + 1n);
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID)).to.be.revertedWithCustomError(escrow, "EnforcedPause");
    });

    it("restarts the settle grace when the pause ends", async function () {
      const { escrow, admin, outsider, deadline } = await loadFixture(deployWithOpenJob);
      await escrow.connect(admin).pause();
      await time.increaseTo(deadline + 3_600n);
      await escrow.connect(admin).unpause();
      const unpausedAt = BigInt(await time.latest());
      await expect(escrow.connect(outsider).refund(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(escrow, "JobNotExpired")
        .withArgs(OPEN_JOB_ID, unpausedAt + PARAMS.settleGrace);
    });
  });

  describe("markDisputed and closeDispute", function () {
    it("reverts markDisputed with AccessControlUnauthorizedAccount for a caller without DISPUTE_ROLE", async function () {
      const { escrow, gateway, settlement } = await loadFixture(deployWithSettledJob);
      await expect(escrow.connect(gateway).markDisputed(OPEN_JOB_ID, settlement))
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(gateway.address, DISPUTE_ROLE);
    });

    it("reverts closeDispute with AccessControlUnauthorizedAccount for a caller without DISPUTE_ROLE", async function () {
      const { escrow, arbiter, settlement } = await loadFixture(deployWithSettledJob);
      await expect(escrow.connect(arbiter).closeDispute(OPEN_JOB_ID, settlement, true))
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(arbiter.address, DISPUTE_ROLE);
    });
  });

  describe("admin settings", function () {
    it("scheduleTreasury emits TreasuryScheduled and the treasury changes only after the delay", async function () {
      const { escrow, admin, treasury, outsider } = await loadFixture(deployProtocol);
      const tx = escrow.connect(admin).scheduleTreasury(outsider.address);
      await expect(tx).to.emit(escrow, "TreasuryScheduled");
      expect(await escrow.treasury()).to.equal(treasury.address);
      await time.increase(PARAMS.configChangeDelay);
      expect(await escrow.treasury()).to.equal(outsider.address);
    });

    it("pays the fee to the treasury in effect and emits TreasuryUpdated when it takes over", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.escrow.connect(d.admin).scheduleTreasury(d.outsider.address);
      await time.increase(PARAMS.configChangeDelay);
      const later = jobId(78);
      await d.escrow.connect(d.gateway).openJob(later, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
      const receipt = { ...(await receiptFor(d, 1_000)), jobId: later };
      const settle = d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker1, d.domain, receipt));
      await expect(settle).to.changeTokenBalances(
        ethers,
        d.stablecoin,
        [d.outsider, d.treasury],
        [feeOf(OPEN_JOB_LOCKED), 0n],
      );
      await expect(settle).to.emit(d.escrow, "TreasuryUpdated").withArgs(d.outsider.address);
    });

    it("scheduleTreasury reverts with ZeroAddress for the zero address", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await expect(escrow.connect(admin).scheduleTreasury(ethers.ZeroAddress)).to.be.revertedWithCustomError(
        escrow,
        "ZeroAddress",
      );
    });

    it("scheduleTreasury reverts with AccessControlUnauthorizedAccount for a non-admin", async function () {
      const { escrow, outsider } = await loadFixture(deployProtocol);
      await expect(escrow.connect(outsider).scheduleTreasury(outsider.address))
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, DEFAULT_ADMIN_ROLE);
    });

    it("scheduleProtocolFee accepts the 20% cap, emits ProtocolFeeScheduled and applies it after the delay", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await expect(escrow.connect(admin).scheduleProtocolFee(2_000)).to.emit(escrow, "ProtocolFeeScheduled");
      expect(await escrow.feeBps()).to.equal(PARAMS.feeBps);
      await time.increase(PARAMS.configChangeDelay);
      expect(await escrow.feeBps()).to.equal(2_000n);
    });

    it("scheduleProtocolFee replaces a change that has not taken effect yet", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await escrow.connect(admin).scheduleProtocolFee(2_000);
      await escrow.connect(admin).scheduleProtocolFee(500);
      await time.increase(PARAMS.configChangeDelay);
      expect(await escrow.feeBps()).to.equal(500n);
    });

    it("scheduleProtocolFee reverts with FeeChangeTooSoon while jobs opened under the older fee may still settle", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await escrow.connect(admin).scheduleProtocolFee(2_000);
      await time.increase(PARAMS.configChangeDelay);
      const switchAt = BigInt(await time.latest());
      await expect(escrow.connect(admin).scheduleProtocolFee(500)).to.be.revertedWithCustomError(
        escrow,
        "FeeChangeTooSoon",
      );
      await time.increaseTo(switchAt + PARAMS.jobTimeout + PARAMS.settleGrace + 1n);
      await expect(escrow.connect(admin).scheduleProtocolFee(500)).to.emit(escrow, "ProtocolFeeScheduled");
    });

    it("scheduleProtocolFee reverts with FeeTooHigh above the cap", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await expect(escrow.connect(admin).scheduleProtocolFee(2_001))
        .to.be.revertedWithCustomError(escrow, "FeeTooHigh")
        .withArgs(2_001, 2_000);
    });

    it("scheduleProtocolFee reverts with AccessControlUnauthorizedAccount for a non-admin", async function () {
      const { escrow, gateway } = await loadFixture(deployProtocol);
      await expect(escrow.connect(gateway).scheduleProtocolFee(0))
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(gateway.address, DEFAULT_ADMIN_ROLE);
    });

    it("pause emits Paused and unpause emits Unpaused", async function () {
      const { escrow, admin } = await loadFixture(deployProtocol);
      await expect(escrow.connect(admin).pause()).to.emit(escrow, "Paused").withArgs(admin.address);
      await expect(escrow.connect(admin).unpause()).to.emit(escrow, "Unpaused").withArgs(admin.address);
    });

    it("accepts deposits again after unpause", async function () {
      const { escrow, admin, wallet, stablecoin } = await loadFixture(deployProtocol);
      await escrow.connect(admin).pause();
      await escrow.connect(admin).unpause();
      await stablecoin.connect(admin).mint(wallet.address, ONE_STABLECOIN);
      await stablecoin.connect(wallet).approve(await escrow.getAddress(), ONE_STABLECOIN);
      await expect(escrow.connect(wallet).deposit(ONE_STABLECOIN)).to.emit(escrow, "Deposited");
    });

    it("pause reverts with AccessControlUnauthorizedAccount for a caller without PAUSER_ROLE", async function () {
      const { escrow, outsider } = await loadFixture(deployProtocol);
      await expect(escrow.connect(outsider).pause())
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, PAUSER_ROLE);
    });

    it("unpause reverts with AccessControlUnauthorizedAccount for a caller without PAUSER_ROLE", async function () {
      const { escrow, admin, outsider } = await loadFixture(deployProtocol);
      await escrow.connect(admin).pause();
      await expect(escrow.connect(outsider).unpause())
        .to.be.revertedWithCustomError(escrow, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, PAUSER_ROLE);
    });
  });

  describe("value conservation", function () {
    it("holds stablecoin equal to (available + locked) credits x 10,000 + reserve after a settlement", async function () {
      const d = await loadFixture(deployWithSettledJob);
      const held = await d.stablecoin.balanceOf(await d.escrow.getAddress());
      const a = await d.escrow.accountOf(d.wallet.address);
      const b = await d.escrow.accountOf(d.wallet2.address);
      const credits = a.available + a.locked + b.available + b.locked;
      const ledger = await d.escrow.ledger();
      expect(ledger.creditsOutstanding).to.equal(credits);
      expect(held).to.equal(credits * UNIT_PER_CREDIT + ledger.reserve + ledger.claimableTotal + ledger.bonds);
    });
  });

  describe("full lifetime", function () {
    it("keeps the deposited total when jobs are opened, failed and refunded", async function () {
      const d = await loadFixture(deployWithOpenJob);
      await d.escrow.connect(d.gateway).openJob(jobId(2), keyHash(WALLET_KEY), modelKey(MODEL_LITE.id), 10);
      await d.escrow.connect(d.gateway).failJob(jobId(2));
      await time.increase(PARAMS.jobTimeout + PARAMS.settleGrace + 1n);
      await d.escrow.connect(d.outsider).refund(OPEN_JOB_ID);
      const account = await d.escrow.accountOf(d.wallet.address);
      expect(account.available + account.locked).to.equal(STARTING_DEPOSIT / UNIT_PER_CREDIT);
    });
  });
});
