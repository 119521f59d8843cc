import { expect } from "chai";
import { network } from "hardhat";
import {
  addModelAfterDelay,
  adminRoles,
  DEFAULT_ADMIN_ROLE,
  deployContracts,
  deployProtocol,
  FRAUD_REASON,
  grantRoleAfterDelay,
  MODEL_LITE,
  MODEL_MAX,
  MODEL_PRO,
  modelKey,
  modelParams,
  OPEN_JOB_ID,
  PARAMS,
  retireModelAfterDelay,
  SLASHER_ROLE,
  SVC,
  WorkerStatus,
} from "./fixtures.js";
import type { Deployed } from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const ENDPOINT = "https://worker.example/v1";
const MAX_KEY = modelKey(MODEL_MAX.id);
const LITE_KEY = modelKey(MODEL_LITE.id);
const PRO_KEY = modelKey(MODEL_PRO.id);

/** Catalog with three models; `stranger` holds 5,000 SVC approved for the registry but is not registered. */
async function withCandidate(connection: Parameters<typeof deployContracts>[0]) {
  const d = await deployContracts(connection);
  for (const m of [MODEL_MAX, MODEL_LITE, MODEL_PRO]) {
    await addModelAfterDelay(d.modelCatalog.connect(d.admin), m.id, modelParams(m));
  }
  await d.stakeToken.connect(d.admin).mint(d.stranger.address, 5_000n * SVC);
  await d.stakeToken.connect(d.stranger).approve(await d.workerRegistry.getAddress(), 5_000n * SVC);
  // The admin plays the slasher here so slashing can be tested without a dispute.
  await grantRoleAfterDelay(d.workerRegistry.connect(d.admin), SLASHER_ROLE, d.admin.address);
  return d;
}

/** `stranger` registered with the minimum stake, hosting max and lite. */
async function withWorker(connection: Parameters<typeof deployContracts>[0]) {
  const d = await withCandidate(connection);
  await d.workerRegistry.connect(d.stranger).register(ENDPOINT, [MAX_KEY, LITE_KEY], PARAMS.minStake);
  return d;
}

/** `stranger` registered and unbonding. */
async function withUnbondingWorker(connection: Parameters<typeof deployContracts>[0]) {
  const d = await withWorker(connection);
  await d.workerRegistry.connect(d.stranger).startUnbonding();
  const { unlockAt } = await d.workerRegistry.getWorker(d.stranger.address);
  return { ...d, unlockAt };
}

async function nextTimestamp(): Promise<bigint> {
  const at = (await time.latest()) + 1;
  await time.setNextBlockTimestamp(at);
  return BigInt(at);
}

function deployRegistry(d: Deployed, overrides: { unbondingDelay?: bigint; disputeWindow?: bigint }) {
  return ethers.deployContract("WorkerRegistry", [
    adminRoles(d.admin.address),
    d.stakeToken.getAddress(),
    d.modelCatalog.getAddress(),
    d.treasury.address,
    PARAMS.minStake,
    overrides.unbondingDelay ?? PARAMS.unbondingDelay,
    overrides.disputeWindow ?? PARAMS.disputeWindow,
    PARAMS.arbitrationWindow,
  ]);
}

describe("WorkerRegistry", function () {
  describe("deployment", function () {
    it("exposes the minimum stake, the unbonding delay and the dispute and arbitration windows", async function () {
      const { workerRegistry } = await loadFixture(deployContracts);
      expect(await workerRegistry.minStake()).to.equal(PARAMS.minStake);
      expect(await workerRegistry.unbondingDelay()).to.equal(PARAMS.unbondingDelay);
      expect(await workerRegistry.disputeWindow()).to.equal(PARAMS.disputeWindow);
      expect(await workerRegistry.arbitrationWindow()).to.equal(PARAMS.arbitrationWindow);
    });

    it("grants the default admin role to the admin", async function () {
      const { workerRegistry, admin } = await loadFixture(deployContracts);
      expect(await workerRegistry.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
    });

    it("reverts with UnbondingDelayTooShort when the delay does not exceed the dispute and arbitration windows", async function () {
      const d = await loadFixture(deployContracts);
      const windows = PARAMS.disputeWindow + PARAMS.maxClockSkew + PARAMS.arbitrationWindow;
      const factory = await ethers.getContractFactory("WorkerRegistry");
      await expect(deployRegistry(d, { unbondingDelay: windows }))
        .to.be.revertedWithCustomError(factory, "UnbondingDelayTooShort")
        .withArgs(windows, windows + 1n);
    });

    it("reverts with WindowOutOfRange for a dispute window below the spec's 60 s", async function () {
      const d = await loadFixture(deployContracts);
      const factory = await ethers.getContractFactory("WorkerRegistry");
      await expect(deployRegistry(d, { disputeWindow: 59n }))
        .to.be.revertedWithCustomError(factory, "WindowOutOfRange")
        .withArgs(59, 60, 86_400);
    });
  });

  describe("register", function () {
    it("registers the caller with its stake, endpoint and models and emits WorkerRegistered", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY, LITE_KEY], PARAMS.minStake))
        .to.emit(workerRegistry, "WorkerRegistered")
        .withArgs(stranger.address, ENDPOINT, PARAMS.minStake, [MAX_KEY, LITE_KEY]);
    });

    it("pulls the stake into the registry", async function () {
      const { workerRegistry, stakeToken, stranger } = await loadFixture(withCandidate);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY], 1_500n * SVC)).to.changeTokenBalances(
        ethers,
        stakeToken,
        [stranger, workerRegistry],
        [-1_500n * SVC, 1_500n * SVC],
      );
    });

    it("stores the worker record", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      const w = await workerRegistry.getWorker(stranger.address);
      expect(w.status).to.equal(BigInt(WorkerStatus.Active));
      expect(w.unlockAt).to.equal(0n);
      expect(w.stake).to.equal(PARAMS.minStake);
      expect(w.endpoint).to.equal(ENDPOINT);
      expect(w.modelKeys).to.deep.equal([MAX_KEY, LITE_KEY]);
    });

    it("makes the worker eligible for its models only", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(true);
      expect(await workerRegistry.canServe(stranger.address, LITE_KEY)).to.equal(true);
      expect(await workerRegistry.canServe(stranger.address, PRO_KEY)).to.equal(false);
    });

    it("reverts with StakeBelowMinimum for less than 1,000 SVC", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY], PARAMS.minStake - 1n))
        .to.be.revertedWithCustomError(workerRegistry, "StakeBelowMinimum")
        .withArgs(PARAMS.minStake - 1n, PARAMS.minStake);
    });

    it("reverts with WorkerAlreadyRegistered when the caller is registered", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY], PARAMS.minStake))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerAlreadyRegistered")
        .withArgs(stranger.address);
    });

    it("reverts with WorkerAlreadyRegistered while unbonding", async function () {
      const { workerRegistry, stranger } = await loadFixture(withUnbondingWorker);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY], PARAMS.minStake))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerAlreadyRegistered")
        .withArgs(stranger.address);
    });

    it("lets a worker that exited register again", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt);
      await workerRegistry.connect(stranger).withdraw();
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [PRO_KEY], PARAMS.minStake))
        .to.emit(workerRegistry, "WorkerRegistered")
        .withArgs(stranger.address, ENDPOINT, PARAMS.minStake, [PRO_KEY]);
    });

    it("reverts with EndpointInvalid for an empty endpoint", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(
        workerRegistry.connect(stranger).register("", [MAX_KEY], PARAMS.minStake),
      ).to.be.revertedWithCustomError(workerRegistry, "EndpointInvalid");
    });

    it("reverts with EndpointInvalid for an endpoint longer than 256 bytes", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(
        workerRegistry.connect(stranger).register(`https://${"a".repeat(250)}`, [MAX_KEY], PARAMS.minStake),
      ).to.be.revertedWithCustomError(workerRegistry, "EndpointInvalid");
    });

    it("reverts with ModelNotListed for a model not in the catalog", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      const unknown = modelKey("not-in-catalog");
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY, unknown], PARAMS.minStake))
        .to.be.revertedWithCustomError(workerRegistry, "ModelNotListed")
        .withArgs(unknown);
    });

    it("reverts with ModelNotListed for a retired model", async function () {
      const { workerRegistry, modelCatalog, admin, stranger } = await loadFixture(withCandidate);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_PRO.id);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [PRO_KEY], PARAMS.minStake))
        .to.be.revertedWithCustomError(workerRegistry, "ModelNotListed")
        .withArgs(PRO_KEY);
    });

    it("reverts with ModelListInvalid for an empty model list", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(
        workerRegistry.connect(stranger).register(ENDPOINT, [], PARAMS.minStake),
      ).to.be.revertedWithCustomError(workerRegistry, "ModelListInvalid");
    });

    it("reverts with ModelListInvalid for a model listed twice", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      await expect(
        workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY, LITE_KEY, MAX_KEY], PARAMS.minStake),
      ).to.be.revertedWithCustomError(workerRegistry, "ModelListInvalid");
    });

    it("reverts with ModelListInvalid for more than 32 models", async function () {
      const { workerRegistry, stranger } = await loadFixture(withCandidate);
      const keys = Array.from({ length: 33 }, (_, i) => modelKey(`m-${i}`));
      await expect(
        workerRegistry.connect(stranger).register(ENDPOINT, keys, PARAMS.minStake),
      ).to.be.revertedWithCustomError(workerRegistry, "ModelListInvalid");
    });
  });

  describe("updateModels", function () {
    it("replaces the hosted models and emits WorkerModelsUpdated", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).updateModels([PRO_KEY]))
        .to.emit(workerRegistry, "WorkerModelsUpdated")
        .withArgs(stranger.address, [PRO_KEY]);
    });

    it("drops eligibility for models no longer hosted", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await workerRegistry.connect(stranger).updateModels([PRO_KEY, LITE_KEY]);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(false);
      expect(await workerRegistry.canServe(stranger.address, PRO_KEY)).to.equal(true);
      expect((await workerRegistry.getWorker(stranger.address)).modelKeys).to.deep.equal([PRO_KEY, LITE_KEY]);
    });

    it("reverts with ModelNotListed for a model not in the catalog", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).updateModels([modelKey("nope")]))
        .to.be.revertedWithCustomError(workerRegistry, "ModelNotListed")
        .withArgs(modelKey("nope"));
    });

    it("reverts with ModelListInvalid for an empty list", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).updateModels([])).to.be.revertedWithCustomError(
        workerRegistry,
        "ModelListInvalid",
      );
    });

    it("reverts with WorkerNotActive for an address that never registered", async function () {
      const { workerRegistry, outsider } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(outsider).updateModels([MAX_KEY]))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(outsider.address, WorkerStatus.None);
    });

    it("reverts with WorkerNotActive while unbonding", async function () {
      const { workerRegistry, stranger } = await loadFixture(withUnbondingWorker);
      await expect(workerRegistry.connect(stranger).updateModels([MAX_KEY]))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(stranger.address, WorkerStatus.Unbonding);
    });
  });

  describe("updateEndpoint", function () {
    it("changes the endpoint and emits WorkerEndpointUpdated", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).updateEndpoint("https://new.example"))
        .to.emit(workerRegistry, "WorkerEndpointUpdated")
        .withArgs(stranger.address, "https://new.example");
      expect((await workerRegistry.getWorker(stranger.address)).endpoint).to.equal("https://new.example");
    });

    it("reverts with EndpointInvalid for an empty endpoint", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).updateEndpoint("")).to.be.revertedWithCustomError(
        workerRegistry,
        "EndpointInvalid",
      );
    });

    it("reverts with WorkerNotActive for an address that never registered", async function () {
      const { workerRegistry, outsider } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(outsider).updateEndpoint("https://x.example"))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(outsider.address, WorkerStatus.None);
    });
  });

  describe("increaseStake", function () {
    it("adds stake and emits WorkerStakeIncreased", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).increaseStake(250n * SVC))
        .to.emit(workerRegistry, "WorkerStakeIncreased")
        .withArgs(stranger.address, 250n * SVC, PARAMS.minStake + 250n * SVC);
    });

    it("pulls the added stake into the registry", async function () {
      const { workerRegistry, stakeToken, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).increaseStake(SVC)).to.changeTokenBalances(
        ethers,
        stakeToken,
        [stranger, workerRegistry],
        [-SVC, SVC],
      );
    });

    it("cannot bring a slashed worker back: it left the pool for good", async function () {
      const { workerRegistry, admin, stranger } = await loadFixture(withWorker);
      await workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON);
      await expect(workerRegistry.connect(stranger).increaseStake(500n * SVC))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(stranger.address, WorkerStatus.Slashed);
      await expect(workerRegistry.connect(stranger).register(ENDPOINT, [MAX_KEY], PARAMS.minStake))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerBanned")
        .withArgs(stranger.address);
    });

    it("reverts with WorkerNotActive for an address that never registered", async function () {
      const { workerRegistry, outsider } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(outsider).increaseStake(SVC))
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(outsider.address, WorkerStatus.None);
    });
  });

  describe("startUnbonding and withdraw", function () {
    it("startUnbonding sets the unlock time 3 days ahead and emits WorkerUnbondingStarted", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      const at = await nextTimestamp();
      await expect(workerRegistry.connect(stranger).startUnbonding())
        .to.emit(workerRegistry, "WorkerUnbondingStarted")
        .withArgs(stranger.address, at + PARAMS.unbondingDelay);
    });

    it("keeps an unbonding worker eligible to settle its jobs", async function () {
      const { workerRegistry, stranger } = await loadFixture(withUnbondingWorker);
      expect((await workerRegistry.getWorker(stranger.address)).status).to.equal(BigInt(WorkerStatus.Unbonding));
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(true);
    });

    it("startUnbonding reverts with WorkerNotActive the second time", async function () {
      const { workerRegistry, stranger } = await loadFixture(withUnbondingWorker);
      await expect(workerRegistry.connect(stranger).startUnbonding())
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(stranger.address, WorkerStatus.Unbonding);
    });

    it("withdraw reverts with StakeLocked before the unbonding delay has passed", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt - 2n);
      await expect(workerRegistry.connect(stranger).withdraw())
        .to.be.revertedWithCustomError(workerRegistry, "StakeLocked")
        .withArgs(stranger.address, unlockAt);
    });

    it("withdraw returns the whole stake after the delay and emits WorkerWithdrawn", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt);
      await expect(workerRegistry.connect(stranger).withdraw())
        .to.emit(workerRegistry, "WorkerWithdrawn")
        .withArgs(stranger.address, PARAMS.minStake);
    });

    it("withdraw transfers the stake back to the worker", async function () {
      const { workerRegistry, stakeToken, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt);
      await expect(workerRegistry.connect(stranger).withdraw()).to.changeTokenBalances(
        ethers,
        stakeToken,
        [stranger, workerRegistry],
        [PARAMS.minStake, -PARAMS.minStake],
      );
    });

    it("withdraw leaves the worker exited, without stake or models, and ineligible", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt);
      await workerRegistry.connect(stranger).withdraw();
      const w = await workerRegistry.getWorker(stranger.address);
      expect([w.status, w.stake, w.modelKeys.length]).to.deep.equal([BigInt(WorkerStatus.Exited), 0n, 0]);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(false);
    });

    it("withdraw reverts with WorkerNotActive for an active worker that did not start unbonding", async function () {
      const { workerRegistry, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(stranger).withdraw())
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(stranger.address, WorkerStatus.Active);
    });

    it("withdraw reverts with WorkerNotActive the second time", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt);
      await workerRegistry.connect(stranger).withdraw();
      await expect(workerRegistry.connect(stranger).withdraw())
        .to.be.revertedWithCustomError(workerRegistry, "WorkerNotActive")
        .withArgs(stranger.address, WorkerStatus.Exited);
    });
  });

  describe("slash", function () {
    it("takes the whole stake, emits WorkerSlashed with the reason and returns the amount", async function () {
      const { workerRegistry, admin, stranger } = await loadFixture(withWorker);
      const whole = PARAMS.minStake;
      expect(
        await workerRegistry.connect(admin).slash.staticCall(stranger.address, OPEN_JOB_ID, FRAUD_REASON),
      ).to.equal(whole);
      await expect(workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON))
        .to.emit(workerRegistry, "WorkerSlashed")
        .withArgs(stranger.address, OPEN_JOB_ID, whole, 0n, FRAUD_REASON);
    });

    it("removes the worker from the pool: status Slashed, no models", async function () {
      const { workerRegistry, admin, stranger } = await loadFixture(withWorker);
      await workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON);
      const w = await workerRegistry.getWorker(stranger.address);
      expect([w.status, w.stake, w.modelKeys.length]).to.deep.equal([BigInt(WorkerStatus.Slashed), 0n, 0]);
    });

    it("sends the slashed stake to the treasury", async function () {
      const { workerRegistry, stakeToken, admin, treasury, stranger } = await loadFixture(withWorker);
      const whole = PARAMS.minStake;
      await expect(
        workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON),
      ).to.changeTokenBalances(ethers, stakeToken, [treasury, workerRegistry], [whole, -whole]);
    });

    it("slashes an unbonding worker", async function () {
      const { workerRegistry, admin, stranger } = await loadFixture(withUnbondingWorker);
      await expect(workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON)).to.emit(
        workerRegistry,
        "WorkerSlashed",
      );
    });

    it("bans an address without stake too, slashing nothing (a worker that withdrew cannot come back)", async function () {
      const { workerRegistry, admin, outsider } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(admin).slash(outsider.address, OPEN_JOB_ID, FRAUD_REASON))
        .to.emit(workerRegistry, "WorkerSlashed")
        .withArgs(outsider.address, OPEN_JOB_ID, 0n, 0n, FRAUD_REASON);
      expect((await workerRegistry.getWorker(outsider.address)).status).to.equal(BigInt(WorkerStatus.Slashed));
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without SLASHER_ROLE", async function () {
      const { workerRegistry, arbiter, stranger } = await loadFixture(withWorker);
      await expect(workerRegistry.connect(arbiter).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON))
        .to.be.revertedWithCustomError(workerRegistry, "AccessControlUnauthorizedAccount")
        .withArgs(arbiter.address, SLASHER_ROLE);
    });

    it("is granted to the DisputeManager only in the deployed protocol", async function () {
      const { workerRegistry, disputeManager, admin, arbiter } = await loadFixture(deployProtocol);
      expect(await workerRegistry.hasRole(SLASHER_ROLE, await disputeManager.getAddress())).to.equal(true);
      expect(await workerRegistry.hasRole(SLASHER_ROLE, admin.address)).to.equal(false);
      expect(await workerRegistry.hasRole(SLASHER_ROLE, arbiter.address)).to.equal(false);
    });
  });

  describe("canServe", function () {
    it("is false for an address that never registered", async function () {
      const { workerRegistry, outsider } = await loadFixture(withWorker);
      expect(await workerRegistry.canServe(outsider.address, MAX_KEY)).to.equal(false);
    });

    it("is true for an unbonding worker while a dispute could still be decided before the unlock", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      const lastPayableAt = unlockAt - PARAMS.disputeWindow - 30n - PARAMS.arbitrationWindow - 1n;
      await time.increaseTo(lastPayableAt);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(true);
    });

    it("is false for an unbonding worker whose stake unlocks before a dispute over a new job could be decided", async function () {
      const { workerRegistry, stranger, unlockAt } = await loadFixture(withUnbondingWorker);
      await time.increaseTo(unlockAt - PARAMS.disputeWindow - 30n - PARAMS.arbitrationWindow);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(false);
    });

    it("is false once the worker was slashed", async function () {
      const { workerRegistry, admin, stranger } = await loadFixture(withWorker);
      await workerRegistry.connect(admin).slash(stranger.address, OPEN_JOB_ID, FRAUD_REASON);
      expect(await workerRegistry.canServe(stranger.address, MAX_KEY)).to.equal(false);
    });
  });
});
