import { expect } from "chai";
import { network } from "hardhat";
import { ZeroHash } from "ethers";
import { anyValue } from "@nomicfoundation/hardhat-ethers-chai-matchers/withArgs";
import {
  addModelAfterDelay,
  changeIdOf,
  waitOutChangeDelay,
  DEFAULT_ADMIN_ROLE,
  deployContracts,
  GOVERNANCE_ROLE,
  MODEL_LITE,
  MODEL_MAX,
  MODEL_PRO,
  modelKey,
  modelParams,
  retireModelAfterDelay,
  Tier,
  updateModelAfterDelay,
} from "./fixtures.js";

const { networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

/** A catalog holding the max and lite models (indexes 1 and 2). */
async function withModels(connection: Parameters<typeof deployContracts>[0]) {
  const d = await deployContracts(connection);
  await addModelAfterDelay(d.modelCatalog.connect(d.admin), MODEL_MAX.id, modelParams(MODEL_MAX));
  await addModelAfterDelay(d.modelCatalog.connect(d.admin), MODEL_LITE.id, modelParams(MODEL_LITE));
  return d;
}

describe("ModelCatalog", function () {
  describe("deployment", function () {
    it("grants the admin and governance roles given to the constructor", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      expect(await modelCatalog.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
      expect(await modelCatalog.hasRole(GOVERNANCE_ROLE, admin.address)).to.equal(true);
    });

    it("starts empty", async function () {
      const { modelCatalog } = await loadFixture(deployContracts);
      expect(await modelCatalog.modelCount()).to.equal(0n);
    });
  });

  describe("addModel", function () {
    it("lists a model under keccak256 of its id and emits ModelAdded", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, modelParams(MODEL_MAX)))
        .to.emit(modelCatalog, "ModelAdded")
        .withArgs(modelKey(MODEL_MAX.id), MODEL_MAX.id, 1, Tier.Max, 40, 20, 128_000, "70B", "meta", anyValue);
      // Listed when the change applied, not when it was scheduled.
      expect((await modelCatalog.getModel(modelKey(MODEL_MAX.id))).createdAt).to.equal(BigInt(await time.latest()));
    });

    it("returns the change id when scheduled and the model key when applied", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      const catalog = modelCatalog.connect(admin);
      expect(await catalog.scheduleAddModel.staticCall(MODEL_PRO.id, modelParams(MODEL_PRO))).to.equal(1n);
      const changeId = await changeIdOf(catalog, catalog.scheduleAddModel(MODEL_PRO.id, modelParams(MODEL_PRO)));
      await waitOutChangeDelay(catalog);
      expect(await catalog.applyModelChange.staticCall(changeId)).to.equal(modelKey(MODEL_PRO.id));
    });

    it("hands out consecutive 1-based indexes", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), MODEL_PRO.id, modelParams(MODEL_PRO)))
        .to.emit(modelCatalog, "ModelAdded")
        .withArgs(modelKey(MODEL_PRO.id), MODEL_PRO.id, 3, Tier.Pro, 18, 9, 128_000, "27B", "google", anyValue);
      expect(await modelCatalog.modelCount()).to.equal(3n);
    });

    it("stores the full record", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      const model = await modelCatalog.getModel(modelKey(MODEL_LITE.id));
      expect(model.modelId).to.equal(MODEL_LITE.id);
      expect(model.index).to.equal(2n);
      expect(model.tier).to.equal(BigInt(Tier.Lite));
      expect(model.retired).to.equal(false);
      expect([model.creditsPerRequest, model.creditsPer1kTokens, model.contextWindow]).to.deep.equal([
        2n,
        1n,
        128_000n,
      ]);
      expect([model.parameters, model.ownedBy]).to.deep.equal(["3B", "meta"]);
      expect(model.createdAt).to.be.greaterThan(0n);
    });

    it("reverts with ModelAlreadyExists for an id already listed", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, modelParams(MODEL_MAX)))
        .to.be.revertedWithCustomError(modelCatalog, "ModelAlreadyExists")
        .withArgs(modelKey(MODEL_MAX.id), MODEL_MAX.id);
    });

    it("reverts with ModelAlreadyExists for the id of a retired model", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id, modelParams(MODEL_LITE)))
        .to.be.revertedWithCustomError(modelCatalog, "ModelAlreadyExists")
        .withArgs(modelKey(MODEL_LITE.id), MODEL_LITE.id);
    });

    it("reverts with ModelIdInvalid for an empty id", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), "", modelParams(MODEL_MAX)))
        .to.be.revertedWithCustomError(modelCatalog, "ModelIdInvalid")
        .withArgs("");
    });

    it("reverts with ModelIdInvalid for an id longer than 64 bytes", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      const longId = "m".repeat(65);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), longId, modelParams(MODEL_MAX)))
        .to.be.revertedWithCustomError(modelCatalog, "ModelIdInvalid")
        .withArgs(longId);
    });

    it("accepts an id of exactly 64 bytes", async function () {
      const { modelCatalog, admin } = await loadFixture(deployContracts);
      await expect(addModelAfterDelay(modelCatalog.connect(admin), "m".repeat(64), modelParams(MODEL_MAX))).to.emit(
        modelCatalog,
        "ModelAdded",
      );
    });

    for (const field of ["creditsPerRequest", "creditsPer1kTokens", "contextWindow"] as const) {
      it(`reverts with ModelParamsInvalid for a zero ${field}`, async function () {
        const { modelCatalog, admin } = await loadFixture(deployContracts);
        await expect(
          addModelAfterDelay(modelCatalog.connect(admin), "new-model", { ...modelParams(MODEL_MAX), [field]: 0 }),
        )
          .to.be.revertedWithCustomError(modelCatalog, "ModelParamsInvalid")
          .withArgs(modelKey("new-model"));
      });
    }

    it("reverts with CatalogFull once the 65,535 compact indexes are used", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      // Using up 65,535 indexes takes minutes; overwrite the private last-index counter instead. Its slot
      // is found, not hard-coded: after two models and one repricing it is the one low slot holding 3.
      await updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, {
        ...modelParams(MODEL_MAX),
        creditsPerRequest: 41,
      });
      const address = await modelCatalog.getAddress();
      let counterSlot = -1;
      for (let slot = 0; slot < 16 && counterSlot < 0; slot++) {
        if (BigInt(await networkHelpers.getStorageAt(address, slot)) === 3n) counterSlot = slot;
      }
      expect(counterSlot).to.be.greaterThanOrEqual(0);
      await networkHelpers.setStorageAt(address, counterSlot, 65_535);
      await expect(
        addModelAfterDelay(modelCatalog.connect(admin), MODEL_PRO.id, modelParams(MODEL_PRO)),
      ).to.be.revertedWithCustomError(modelCatalog, "CatalogFull");
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GOVERNANCE_ROLE", async function () {
      const { modelCatalog, outsider } = await loadFixture(deployContracts);
      await expect(addModelAfterDelay(modelCatalog.connect(outsider), MODEL_MAX.id, modelParams(MODEL_MAX)))
        .to.be.revertedWithCustomError(modelCatalog, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, GOVERNANCE_ROLE);
    });
  });

  describe("updateModel", function () {
    const repriced = {
      ...modelParams(MODEL_MAX),
      tier: Tier.Pro,
      creditsPerRequest: 18,
      creditsPer1kTokens: 9,
      contextWindow: 64_000,
      parameters: "70B-q",
      ownedBy: "meta-ai",
    };

    it("changes tier, prices, window and labels and emits ModelUpdated", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, repriced))
        .to.emit(modelCatalog, "ModelUpdated")
        .withArgs(modelKey(MODEL_MAX.id), MODEL_MAX.id, Tier.Pro, 18, 9, 64_000, "70B-q", "meta-ai");
    });

    it("moves a repriced model to a new price version index and lists its new prices", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, repriced);
      expect(await modelCatalog.listedPricing(modelKey(MODEL_MAX.id))).to.deep.equal([3n, BigInt(Tier.Pro), 18n, 9n]);
      expect((await modelCatalog.getModel(modelKey(MODEL_MAX.id))).index).to.equal(3n);
    });

    it("keeps the old prices readable at the old index for jobs opened before the repricing", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, repriced);
      expect(await modelCatalog.pricingAt(1)).to.deep.equal([modelKey(MODEL_MAX.id), BigInt(Tier.Max), 40n, 20n]);
      expect(await modelCatalog.pricingAt(3)).to.deep.equal([modelKey(MODEL_MAX.id), BigInt(Tier.Pro), 18n, 9n]);
    });

    it("keeps the index when only the window and labels change", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      const relabelled = { ...modelParams(MODEL_MAX), contextWindow: 64_000, parameters: "70B-q", ownedBy: "meta-ai" };
      await updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, relabelled);
      const model = await modelCatalog.getModel(modelKey(MODEL_MAX.id));
      expect([model.index, model.contextWindow, model.parameters, model.ownedBy]).to.deep.equal([
        1n,
        64_000n,
        "70B-q",
        "meta-ai",
      ]);
    });

    it("does not count a new price version as a model", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, repriced);
      expect(await modelCatalog.modelCount()).to.equal(2n);
    });

    it("reverts with ModelUnknown for an id never added", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(updateModelAfterDelay(modelCatalog.connect(admin), "nope", repriced))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(modelKey("nope"));
    });

    it("reverts with ModelIsRetired for a retired model", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id);
      await expect(updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, repriced))
        .to.be.revertedWithCustomError(modelCatalog, "ModelIsRetired")
        .withArgs(modelKey(MODEL_MAX.id));
    });

    it("reverts with ModelParamsInvalid for a zero price", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(
        updateModelAfterDelay(modelCatalog.connect(admin), MODEL_MAX.id, { ...repriced, creditsPerRequest: 0 }),
      )
        .to.be.revertedWithCustomError(modelCatalog, "ModelParamsInvalid")
        .withArgs(modelKey(MODEL_MAX.id));
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GOVERNANCE_ROLE", async function () {
      const { modelCatalog, outsider } = await loadFixture(withModels);
      await expect(updateModelAfterDelay(modelCatalog.connect(outsider), MODEL_MAX.id, repriced))
        .to.be.revertedWithCustomError(modelCatalog, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, GOVERNANCE_ROLE);
    });
  });

  describe("retireModel", function () {
    it("retires a listed model and emits ModelRetired", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id))
        .to.emit(modelCatalog, "ModelRetired")
        .withArgs(modelKey(MODEL_LITE.id), MODEL_LITE.id, anyValue);
    });

    it("marks the record retired and refuses it in listedPricing", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      expect((await modelCatalog.getModel(modelKey(MODEL_LITE.id))).retired).to.equal(true);
      await expect(modelCatalog.listedPricing(modelKey(MODEL_LITE.id)))
        .to.be.revertedWithCustomError(modelCatalog, "ModelIsRetired")
        .withArgs(modelKey(MODEL_LITE.id));
    });

    it("keeps the retired model's pricing readable by index", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      expect(await modelCatalog.pricingAt(2)).to.deep.equal([modelKey(MODEL_LITE.id), BigInt(Tier.Lite), 2n, 1n]);
    });

    it("reverts with ModelIsRetired the second time", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      await expect(retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id))
        .to.be.revertedWithCustomError(modelCatalog, "ModelIsRetired")
        .withArgs(modelKey(MODEL_LITE.id));
    });

    it("reverts with ModelUnknown for an id never added", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await expect(retireModelAfterDelay(modelCatalog.connect(admin), "nope"))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(modelKey("nope"));
    });

    it("reverts with AccessControlUnauthorizedAccount for a caller without GOVERNANCE_ROLE", async function () {
      const { modelCatalog, outsider } = await loadFixture(withModels);
      await expect(retireModelAfterDelay(modelCatalog.connect(outsider), MODEL_LITE.id))
        .to.be.revertedWithCustomError(modelCatalog, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, GOVERNANCE_ROLE);
    });
  });

  describe("views", function () {
    it("listedPricing returns index, tier and prices of a listed model", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      expect(await modelCatalog.listedPricing(modelKey(MODEL_MAX.id))).to.deep.equal([1n, BigInt(Tier.Max), 40n, 20n]);
    });

    it("listedPricing reverts with ModelUnknown for an unknown key", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      await expect(modelCatalog.listedPricing(modelKey("nope")))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(modelKey("nope"));
    });

    it("pricingAt returns the model of an index", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      expect(await modelCatalog.pricingAt(1)).to.deep.equal([modelKey(MODEL_MAX.id), BigInt(Tier.Max), 40n, 20n]);
    });

    it("pricingAt reverts with ModelUnknown for index 0", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      await expect(modelCatalog.pricingAt(0))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(ZeroHash);
    });

    it("pricingAt reverts with ModelUnknown past the last index", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      await expect(modelCatalog.pricingAt(3))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(ZeroHash);
    });

    it("getModel reverts with ModelUnknown for an unknown key", async function () {
      const { modelCatalog } = await loadFixture(withModels);
      await expect(modelCatalog.getModel(modelKey("nope")))
        .to.be.revertedWithCustomError(modelCatalog, "ModelUnknown")
        .withArgs(modelKey("nope"));
    });

    it("isListed is true for a listed model and false for retired or unknown ones", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      expect(await modelCatalog.isListed(modelKey(MODEL_MAX.id))).to.equal(true);
      expect(await modelCatalog.isListed(modelKey(MODEL_LITE.id))).to.equal(false);
      expect(await modelCatalog.isListed(modelKey("nope"))).to.equal(false);
    });

    it("modelCount counts retired models too", async function () {
      const { modelCatalog, admin } = await loadFixture(withModels);
      await retireModelAfterDelay(modelCatalog.connect(admin), MODEL_LITE.id);
      expect(await modelCatalog.modelCount()).to.equal(2n);
    });
  });
});
