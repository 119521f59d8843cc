import { expect } from "chai";
import { network } from "hardhat";
import {
  adminRoles,
  CLIENT_HASH,
  DEFAULT_ADMIN_ROLE,
  WORKER_BOND,
  deployContracts,
  deployProtocol,
  deployWithDispute,
  deployWithOpenJob,
  deployWithSettledJob,
  dropBond,
  expectedPrice,
  FRAUD_REASON,
  jobId,
  JobStatus,
  keyHash,
  MODEL_MAX,
  modelKey,
  OPEN_JOB_ID,
  Outcome,
  outputHash,
  PARAMS,
  RESERVE_FUNDING,
  SETTLED_CHARGE,
  signReceipt,
  SLASHER_ROLE,
  STARTING_CREDITS,
  UNIT_PER_CREDIT,
  WALLET_KEY,
} from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const WHOLE_STAKE = PARAMS.minStake;

async function nextTimestamp(): Promise<bigint> {
  const at = (await time.latest()) + 1;
  await time.setNextBlockTimestamp(at);
  return BigInt(at);
}

/**
 * Two settled whole-context jobs (2,590 credits each) by two workers, both disputed; the first upheld dispute took
 * 2,590 of the reserve's 5,000 credits, so the second (BIG_JOB) is worth more than what is left.
 */
const FIRST_BIG_JOB = jobId(499);
const BIG_JOB = jobId(500);
const BIG_TOKENS = MODEL_MAX.contextWindow;
const BIG_CHARGE = expectedPrice(MODEL_MAX.creditsPerRequest, MODEL_MAX.creditsPer1kTokens, BIG_TOKENS);

async function withDisputeAboveReserve(connection: Parameters<typeof deployProtocol>[0]) {
  const d = await deployProtocol(connection);
  const settlements = [];
  for (const [id, worker] of [
    [FIRST_BIG_JOB, d.worker1],
    [BIG_JOB, d.worker2],
  ] as const) {
    await d.escrow.connect(d.gateway).openJob(id, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), BIG_TOKENS);
    const finalTokenAt = BigInt(await time.latest());
    const receipt = {
      jobId: id,
      outputHash: outputHash("a very long answer"),
      promptTokens: 10,
      completionTokens: BIG_TOKENS,
      finalTokenAt,
    };
    await d.escrow.connect(d.gateway).settle(receipt, await signReceipt(worker, d.domain, receipt));
    const settlement = {
      wallet: d.wallet.address,
      worker: worker.address,
      outputHash: receipt.outputHash,
      creditsCharged: BIG_CHARGE,
      finalTokenAt,
    };
    await d.disputeManager.connect(d.gateway).openDispute(id, settlement, CLIENT_HASH);
    settlements.push(settlement);
  }
  // Neither worker's bond can pay (issue 22: a seized bond pays restitution first), so the reserve decides.
  await dropBond(connection, d, d.worker1.address);
  await dropBond(connection, d, d.worker2.address);
  await d.disputeManager.connect(d.arbiter).resolveDispute(FIRST_BIG_JOB, true);
  return { ...d, settlement: settlements[1]! };
}

describe("DisputeManager", function () {
  describe("deployment", function () {
    it("exposes the 24 h arbitration window and its escrow and registry", async function () {
      const { disputeManager, escrow, workerRegistry } = await loadFixture(deployContracts);
      expect(await disputeManager.arbitrationWindow()).to.equal(PARAMS.arbitrationWindow);
      expect(await disputeManager.escrow()).to.equal(await escrow.getAddress());
      expect(await disputeManager.workerRegistry()).to.equal(await workerRegistry.getAddress());
    });

    it("grants the default admin role to the admin", async function () {
      const { disputeManager, admin } = await loadFixture(deployContracts);
      expect(await disputeManager.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
    });

    it("reads its arbitration window from the worker registry (one place for the windows)", async function () {
      const { disputeManager, workerRegistry } = await loadFixture(deployContracts);
      expect(await disputeManager.arbitrationWindow()).to.equal(await workerRegistry.arbitrationWindow());
    });

    it("reverts with RegistryMismatch when the escrow checks another registry", async function () {
      const { admin, escrow, stakeToken, modelCatalog, treasury } = await loadFixture(deployContracts);
      const other = await ethers.deployContract("WorkerRegistry", [
        adminRoles(admin.address),
        await stakeToken.getAddress(),
        await modelCatalog.getAddress(),
        treasury.address,
        PARAMS.minStake,
        PARAMS.unbondingDelay,
        PARAMS.disputeWindow,
        PARAMS.arbitrationWindow,
      ]);
      const factory = await ethers.getContractFactory("DisputeManager");
      await expect(
        ethers.deployContract("DisputeManager", [
          adminRoles(admin.address),
          await escrow.getAddress(),
          await other.getAddress(),
        ]),
      ).to.be.revertedWithCustomError(factory, "RegistryMismatch");
    });
  });

  describe("openDispute", function () {
    it("opens a dispute with a 24 h arbitration deadline and emits DisputeOpened", async function () {
      const d = await loadFixture(deployWithSettledJob);
      const at = await nextTimestamp();
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH))
        .to.emit(d.disputeManager, "DisputeOpened")
        .withArgs(
          OPEN_JOB_ID,
          d.wallet.address,
          d.worker1.address,
          CLIENT_HASH,
          d.settlement.outputHash,
          at + PARAMS.arbitrationWindow,
        );
    });

    it("marks the job disputed in the escrow, which emits JobDisputed", async function () {
      const d = await loadFixture(deployWithSettledJob);
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH))
        .to.emit(d.escrow, "JobDisputed")
        .withArgs(OPEN_JOB_ID, d.wallet.address, d.worker1.address);
      const [status] = await d.escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Disputed);
    });

    it("records the dispute as pending with the client hash and settlement", async function () {
      const d = await loadFixture(deployWithDispute);
      const dispute = await d.disputeManager.getDispute(OPEN_JOB_ID);
      expect(dispute.outcome).to.equal(BigInt(Outcome.Pending));
      expect(dispute.deadline - dispute.openedAt).to.equal(PARAMS.arbitrationWindow);
      expect(dispute.clientHash).to.equal(CLIENT_HASH);
      expect(dispute.settlement.worker).to.equal(d.worker1.address);
      expect(dispute.settlement.creditsCharged).to.equal(SETTLED_CHARGE);
    });

    it("accepts a dispute at the last second of the 60 s window", async function () {
      const d = await loadFixture(deployWithSettledJob);
      await time.setNextBlockTimestamp(d.settledAt + PARAMS.disputeWindow);
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH)).to.emit(
        d.disputeManager,
        "DisputeOpened",
      );
    });

    it("reverts with JobNotInStatus for a job that is still open", async function () {
      const d = await loadFixture(deployWithOpenJob);
      const settlement = {
        wallet: d.wallet.address,
        worker: d.worker1.address,
        outputHash: outputHash("x"),
        creditsCharged: 1n,
        finalTokenAt: BigInt(await time.latest()),
      };
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, settlement, CLIENT_HASH))
        .to.be.revertedWithCustomError(d.escrow, "JobNotInStatus")
        .withArgs(OPEN_JOB_ID, JobStatus.Open, JobStatus.Settled);
    });

    it("reverts with DisputeAlreadyOpened while a dispute is pending", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH))
        .to.be.revertedWithCustomError(d.disputeManager, "DisputeAlreadyOpened")
        .withArgs(OPEN_JOB_ID, Outcome.Pending);
    });

    it("still opens while the escrow is paused", async function () {
      const d = await loadFixture(deployWithSettledJob);
      await d.escrow.connect(d.admin).pause();
      await expect(d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH)).to.emit(
        d.disputeManager,
        "DisputeOpened",
      );
    });
  });

  describe("resolveDispute upheld (fraud)", function () {
    it("emits DisputeResolved with the restored credits and the slashed stake", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.emit(d.disputeManager, "DisputeResolved")
        .withArgs(OPEN_JOB_ID, Outcome.Upheld, SETTLED_CHARGE, WHOLE_STAKE, d.arbiter.address);
    });

    it("slashes the worker's whole stake for a fraudulent proof and removes it from the pool", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.emit(d.workerRegistry, "WorkerSlashed")
        .withArgs(d.worker1.address, OPEN_JOB_ID, WHOLE_STAKE, 0n, FRAUD_REASON);
    });

    it("sends the slashed stake to the treasury", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true)).to.changeTokenBalance(
        ethers,
        d.stakeToken,
        d.treasury,
        WHOLE_STAKE,
      );
    });

    it("restores the charged credits to the wallet and emits JobDisputeClosed", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.emit(d.escrow, "JobDisputeClosed")
        .withArgs(OPEN_JOB_ID, d.wallet.address, true, SETTLED_CHARGE, STARTING_CREDITS);
    });

    it("pays the restored credits out of the reserve", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true);
      // Issue 22: the worker's whole bond is seized into the reserve first.
      expect(await d.escrow.reserve()).to.equal(RESERVE_FUNDING + WORKER_BOND - SETTLED_CHARGE * UNIT_PER_CREDIT);
    });

    it("keeps the escrow's stablecoin equal to credits x 10,000 + reserve + deferred payouts", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true);
      const held = await d.stablecoin.balanceOf(await d.escrow.getAddress());
      let credits = 0n;
      for (const w of [d.wallet, d.wallet2]) {
        const a = await d.escrow.accountOf(w.address);
        credits += a.available + a.locked;
      }
      const ledger = await d.escrow.ledger();
      expect(held).to.equal(credits * UNIT_PER_CREDIT + ledger.reserve + ledger.claimableTotal + ledger.bonds);
    });

    it("leaves the job DisputeUpheld and the dispute Upheld", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true);
      const [status] = await d.escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.DisputeUpheld);
      expect((await d.disputeManager.getDispute(OPEN_JOB_ID)).outcome).to.equal(BigInt(Outcome.Upheld));
    });

    it("makes the slashed worker ineligible", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true);
      expect(await d.workerRegistry.canServe(d.worker1.address, modelKey(MODEL_MAX.id))).to.equal(false);
    });

    it("upholds and slashes even when the reserve cannot cover the credits, recording them as owed", async function () {
      const d = await loadFixture(withDisputeAboveReserve);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(BIG_JOB, true))
        .to.emit(d.escrow, "RestitutionOwed")
        .withArgs(BIG_JOB, d.wallet.address, BIG_CHARGE, BIG_CHARGE)
        .and.to.emit(d.workerRegistry, "WorkerSlashed")
        .and.to.emit(d.disputeManager, "DisputeResolved")
        .withArgs(BIG_JOB, Outcome.Upheld, 0n, WHOLE_STAKE, d.arbiter.address);
      expect((await d.escrow.ledger()).owedCredits).to.equal(BIG_CHARGE);
    });

    it("pays the owed restitution first when the reserve is topped up (RestitutionPaid)", async function () {
      const d = await loadFixture(withDisputeAboveReserve);
      await d.disputeManager.connect(d.arbiter).resolveDispute(BIG_JOB, true);
      const before = (await d.escrow.accountOf(d.wallet.address)).available;
      const topUp = BIG_CHARGE * UNIT_PER_CREDIT;
      await d.stablecoin.connect(d.admin).mint(d.admin.address, topUp);
      await d.stablecoin.connect(d.admin).approve(await d.escrow.getAddress(), topUp);
      await expect(d.escrow.connect(d.admin).fundReserve(topUp))
        .to.emit(d.escrow, "RestitutionPaid")
        .withArgs(BIG_JOB, d.wallet.address, BIG_CHARGE, before + BIG_CHARGE);
      expect((await d.escrow.ledger()).owedCredits).to.equal(0n);
    });

    it("payOwedRestitution pays nothing while the reserve stays short", async function () {
      const d = await loadFixture(withDisputeAboveReserve);
      await d.disputeManager.connect(d.arbiter).resolveDispute(BIG_JOB, true);
      await expect(d.escrow.payOwedRestitution(10)).not.to.emit(d.escrow, "RestitutionPaid");
      expect((await d.escrow.ledger()).owedEntries).to.equal(1n);
    });

    it("refuses to pay an unbonding worker so close to its unlock that a dispute could outlast its stake", async function () {
      const d = await loadFixture(deployProtocol);
      await d.workerRegistry.connect(d.worker2).startUnbonding();
      const { unlockAt } = await d.workerRegistry.getWorker(d.worker2.address);
      await time.increaseTo(unlockAt - 10n);
      const id = jobId(600);
      await d.escrow.connect(d.gateway).openJob(id, keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 100);
      const receipt = {
        jobId: id,
        outputHash: outputHash("late"),
        promptTokens: 1,
        completionTokens: 100,
        finalTokenAt: BigInt(await time.latest()),
      };
      await expect(d.escrow.connect(d.gateway).settle(receipt, await signReceipt(d.worker2, d.domain, receipt)))
        .to.be.revertedWithCustomError(d.escrow, "WorkerNotEligible")
        .withArgs(id, d.worker2.address, modelKey(MODEL_MAX.id));
    });

    it("upholds a dispute against a worker with no stake left to slash, restoring credits with nothing slashed", async function () {
      const d = await loadFixture(deployWithDispute);
      // An earlier verdict of the dispute manager (the registry's slasher) took the whole stake already.
      const slasher = await d.disputeManager.getAddress();
      await networkHelpers.impersonateAccount(slasher);
      await networkHelpers.setBalance(slasher, 10n ** 18n);
      const worker = d.settlement.worker;
      await d.workerRegistry.connect(await d.ethers.getSigner(slasher)).slash(worker, OPEN_JOB_ID, FRAUD_REASON);
      await networkHelpers.stopImpersonatingAccount(slasher);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.emit(d.disputeManager, "DisputeResolved")
        .withArgs(OPEN_JOB_ID, Outcome.Upheld, d.settlement.creditsCharged, 0n, d.arbiter.address);
    });

    it("reverts with the registry's error when slashing fails for another reason than an empty stake", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.workerRegistry.connect(d.admin).revokeRole(SLASHER_ROLE, await d.disputeManager.getAddress());
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.be.revertedWithCustomError(d.workerRegistry, "AccessControlUnauthorizedAccount")
        .withArgs(await d.disputeManager.getAddress(), SLASHER_ROLE);
    });

    it("still resolves while the escrow is paused", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.escrow.connect(d.admin).pause();
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true)).to.emit(
        d.disputeManager,
        "DisputeResolved",
      );
    });
  });

  describe("resolveDispute rejected", function () {
    it("emits DisputeResolved with nothing restored or slashed", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, false))
        .to.emit(d.disputeManager, "DisputeResolved")
        .withArgs(OPEN_JOB_ID, Outcome.Rejected, 0n, 0n, d.arbiter.address);
    });

    it("closes the escrow's dispute without restoring credits", async function () {
      const d = await loadFixture(deployWithDispute);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, false))
        .to.emit(d.escrow, "JobDisputeClosed")
        .withArgs(OPEN_JOB_ID, d.wallet.address, false, 0n, STARTING_CREDITS - SETTLED_CHARGE);
    });

    it("returns the job to Settled and leaves the worker's stake alone", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, false);
      const [status] = await d.escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Settled);
      expect((await d.workerRegistry.getWorker(d.worker1.address)).stake).to.equal(PARAMS.minStake);
      expect(await d.escrow.reserve()).to.equal(RESERVE_FUNDING);
    });
  });

  describe("resolveDispute windows and roles", function () {
    it("accepts a decision at the last second of the 24 h window", async function () {
      const d = await loadFixture(deployWithDispute);
      await time.setNextBlockTimestamp(d.disputeDeadline);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, false)).to.emit(
        d.disputeManager,
        "DisputeResolved",
      );
    });

    it("reverts with DisputeNotPending when the dispute was already decided", async function () {
      const d = await loadFixture(deployWithDispute);
      await d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.be.revertedWithCustomError(d.disputeManager, "DisputeNotPending")
        .withArgs(OPEN_JOB_ID, Outcome.Upheld);
    });
  });

  describe("closeExpired", function () {
    it("closes an undecided dispute after 24 h to anyone's call and emits DisputeResolved(Expired)", async function () {
      const d = await loadFixture(deployWithDispute);
      await time.increaseTo(d.disputeDeadline + 1n);
      await expect(d.disputeManager.connect(d.outsider).closeExpired(OPEN_JOB_ID))
        .to.emit(d.disputeManager, "DisputeResolved")
        .withArgs(OPEN_JOB_ID, Outcome.Expired, 0n, 0n, d.outsider.address);
    });

    it("closes the escrow's dispute as not upheld", async function () {
      const d = await loadFixture(deployWithDispute);
      await time.increaseTo(d.disputeDeadline + 1n);
      await expect(d.disputeManager.connect(d.outsider).closeExpired(OPEN_JOB_ID))
        .to.emit(d.escrow, "JobDisputeClosed")
        .withArgs(OPEN_JOB_ID, d.wallet.address, false, 0n, STARTING_CREDITS - SETTLED_CHARGE);
    });

    it("returns the job to Settled and records the dispute as Expired", async function () {
      const d = await loadFixture(deployWithDispute);
      await time.increaseTo(d.disputeDeadline + 1n);
      await d.disputeManager.connect(d.outsider).closeExpired(OPEN_JOB_ID);
      const [status] = await d.escrow.jobOf(OPEN_JOB_ID);
      expect(status).to.equal(JobStatus.Settled);
      expect((await d.disputeManager.getDispute(OPEN_JOB_ID)).outcome).to.equal(BigInt(Outcome.Expired));
    });

    it("reverts with DisputeNotPending the second time", async function () {
      const d = await loadFixture(deployWithDispute);
      await time.increaseTo(d.disputeDeadline + 1n);
      await d.disputeManager.connect(d.outsider).closeExpired(OPEN_JOB_ID);
      await expect(d.disputeManager.connect(d.outsider).closeExpired(OPEN_JOB_ID))
        .to.be.revertedWithCustomError(d.disputeManager, "DisputeNotPending")
        .withArgs(OPEN_JOB_ID, Outcome.Expired);
    });
  });

  describe("worker exit against disputes", function () {
    it("keeps a worker's stake slashable for the whole dispute and arbitration windows after unbonding starts", async function () {
      const d = await loadFixture(deployWithSettledJob);
      await d.workerRegistry.connect(d.worker1).startUnbonding();
      await d.disputeManager.connect(d.gateway).openDispute(OPEN_JOB_ID, d.settlement, CLIENT_HASH);
      const { deadline } = await d.disputeManager.getDispute(OPEN_JOB_ID);
      await time.setNextBlockTimestamp(deadline);
      await expect(d.disputeManager.connect(d.arbiter).resolveDispute(OPEN_JOB_ID, true))
        .to.emit(d.workerRegistry, "WorkerSlashed")
        .withArgs(d.worker1.address, OPEN_JOB_ID, WHOLE_STAKE, 0n, FRAUD_REASON);
    });
  });
});
