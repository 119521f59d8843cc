// The audit's findings seen from a client of the contracts (ethers, as the gateway and the web app call them).
// Each property is proven in depth in contracts/test/AuditFindings.t.sol; these tests pin the ABI-level behaviour
// the gateway and the web app rely on.
import { expect } from "chai";
import { network } from "hardhat";
import {
  MODEL_MAX,
  OPEN_JOB_ID,
  OpenSkipReason,
  PARAMS,
  Tier,
  WALLET_KEY,
  deployProtocol,
  deployWithOpenJob,
  expectedPrice,
  jobId,
  keyHash,
  modelKey,
} from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const SLOT_SECONDS = 1_200n;

describe("audit findings (client view)", function () {
  it("H1b: a lock over the wallet's own hourly cap reverts SpendingCapExceeded with when room frees up", async function () {
    const { escrow, gateway, wallet } = await loadFixture(deployProtocol);
    await expect(escrow.connect(wallet).setSpendingCap(100))
      .to.emit(escrow, "SpendingCapSet")
      .withArgs(wallet.address, 100);
    const lock = expectedPrice(MODEL_MAX.creditsPerRequest, MODEL_MAX.creditsPer1kTokens, 1_000); // 50
    await escrow.connect(gateway).openJob(jobId(1), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
    await escrow.connect(gateway).openJob(jobId(2), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000);
    const next = BigInt(await time.latest()) + 1n;
    await time.setNextBlockTimestamp(next);
    const roomAt = (next / SLOT_SECONDS + 4n) * SLOT_SECONDS;
    await expect(escrow.connect(gateway).openJob(jobId(3), keyHash(WALLET_KEY), modelKey(MODEL_MAX.id), 1_000))
      .to.be.revertedWithCustomError(escrow, "SpendingCapExceeded")
      .withArgs(wallet.address, 100, 2n * lock, lock, roomAt);
    const [cap, lockedInWindow] = await escrow.spendingOf(wallet.address);
    expect([cap, lockedInWindow]).to.deep.equal([100n, 2n * lock]);
  });

  it("H1b: the gateway's key cannot change a wallet's cap (the cap is the caller's own)", async function () {
    const { escrow, gateway, wallet } = await loadFixture(deployProtocol);
    await escrow.connect(wallet).setSpendingCap(100);
    await escrow.connect(gateway).setSpendingCap(0);
    expect((await escrow.spendingOf(wallet.address))[0]).to.equal(100n);
  });

  it("L2: openJobBatch opens each valid lock with its own JobOpened and skips the others with a reason", async function () {
    const { escrow, gateway, wallet } = await loadFixture(deployWithOpenJob);
    const acceptedAt = BigInt((await ethers.provider.getBlock("latest"))!.timestamp);
    const requests = [
      {
        jobId: jobId(10),
        keyHash: keyHash(WALLET_KEY),
        modelKey: modelKey(MODEL_MAX.id),
        maxTokens: 1_000,
        acceptedAt,
      },
      {
        jobId: OPEN_JOB_ID,
        keyHash: keyHash(WALLET_KEY),
        modelKey: modelKey(MODEL_MAX.id),
        maxTokens: 1_000,
        acceptedAt,
      },
      {
        jobId: jobId(11),
        keyHash: keyHash("sk-nobody"),
        modelKey: modelKey(MODEL_MAX.id),
        maxTokens: 1_000,
        acceptedAt,
      },
      {
        jobId: jobId(12),
        keyHash: keyHash(WALLET_KEY),
        modelKey: modelKey(MODEL_MAX.id),
        maxTokens: MODEL_MAX.contextWindow + 1,
        acceptedAt,
      },
      { jobId: jobId(13), keyHash: keyHash(WALLET_KEY), modelKey: modelKey(MODEL_MAX.id), maxTokens: 500, acceptedAt },
    ];
    const tx = escrow.connect(gateway).openJobBatch(requests);
    await expect(tx)
      .to.emit(escrow, "JobOpenSkipped")
      .withArgs(OPEN_JOB_ID, keyHash(WALLET_KEY), OpenSkipReason.JobExists);
    await expect(tx)
      .to.emit(escrow, "JobOpenSkipped")
      .withArgs(jobId(11), keyHash("sk-nobody"), OpenSkipReason.KeyNotActive);
    await expect(tx)
      .to.emit(escrow, "JobOpenSkipped")
      .withArgs(jobId(12), keyHash(WALLET_KEY), OpenSkipReason.MaxTokensInvalid);
    const receipt = await (await tx).wait();
    const opened = receipt!.logs
      .map((log) => escrow.interface.parseLog(log))
      .filter((event) => event?.name === "JobOpened")
      .map((event) => [event!.args.jobId as string, event!.args.wallet as string, Number(event!.args.tier)]);
    expect(opened).to.deep.equal([
      [jobId(10), wallet.address, Tier.Max],
      [jobId(13), wallet.address, Tier.Max],
    ]);
  });

  it("L2: openJobBatch reverts BatchInvalid for an empty batch and EnforcedPause while paused", async function () {
    const { escrow, gateway, admin } = await loadFixture(deployProtocol);
    await expect(escrow.connect(gateway).openJobBatch([])).to.be.revertedWithCustomError(escrow, "BatchInvalid");
    await escrow.connect(admin).pause();
    await expect(
      escrow.connect(gateway).openJobBatch([
        {
          jobId: jobId(1),
          keyHash: keyHash(WALLET_KEY),
          modelKey: modelKey(MODEL_MAX.id),
          maxTokens: 1,
          acceptedAt: 0n,
        },
      ]),
    ).to.be.revertedWithCustomError(escrow, "EnforcedPause");
  });

  it("L3: claim pays deferred payouts to another address and reverts NothingToClaim when none is owed", async function () {
    const { escrow, outsider } = await loadFixture(deployProtocol);
    await expect(escrow.connect(outsider).claim(outsider.address))
      .to.be.revertedWithCustomError(escrow, "NothingToClaim")
      .withArgs(outsider.address);
  });

  it("I: sweepSurplus sends stablecoin sent straight to the escrow, and only that", async function () {
    const { escrow, stablecoin, admin, outsider } = await loadFixture(deployWithOpenJob);
    await stablecoin.connect(admin).mint(await escrow.getAddress(), 777n);
    await expect(escrow.connect(admin).sweepSurplus(outsider.address)).to.changeTokenBalance(
      ethers,
      stablecoin,
      outsider,
      777n,
    );
  });

  it("H1c: the escrow's admin is two-step with a 2-day delay", async function () {
    const { escrow, admin } = await loadFixture(deployProtocol);
    expect(await escrow.defaultAdmin()).to.equal(admin.address);
    expect(await escrow.defaultAdminDelay()).to.equal(PARAMS.adminTransferDelay);
  });
});
