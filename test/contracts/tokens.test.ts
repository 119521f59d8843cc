import { expect } from "chai";
import { network } from "hardhat";
import { Signature } from "ethers";
import { PERMIT_TYPES, PERMIT_VERSION } from "@credit-metered/client";
import { ONE_STABLECOIN, SVC, deployContracts } from "./fixtures.js";

const { ethers, networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

describe("Stablecoin (local chains)", function () {
  it("has 6 decimals like USDC", async function () {
    const { stablecoin } = await loadFixture(deployContracts);
    expect(await stablecoin.decimals()).to.equal(6n);
    expect(await stablecoin.DECIMALS()).to.equal(6n);
  });

  it("is named USD Gateway Dollar with symbol USDG", async function () {
    const { stablecoin } = await loadFixture(deployContracts);
    expect([await stablecoin.name(), await stablecoin.symbol()]).to.deep.equal(["USD Gateway Dollar", "USDG"]);
  });

  it("lets the owner mint and emits Transfer from the zero address", async function () {
    const { stablecoin, admin, wallet } = await loadFixture(deployContracts);
    await expect(stablecoin.connect(admin).mint(wallet.address, ONE_STABLECOIN))
      .to.emit(stablecoin, "Transfer")
      .withArgs(ethers.ZeroAddress, wallet.address, ONE_STABLECOIN);
    expect(await stablecoin.balanceOf(wallet.address)).to.equal(ONE_STABLECOIN);
  });

  it("reverts with OwnableUnauthorizedAccount when anyone else mints", async function () {
    const { stablecoin, wallet } = await loadFixture(deployContracts);
    await expect(stablecoin.connect(wallet).mint(wallet.address, 1n))
      .to.be.revertedWithCustomError(stablecoin, "OwnableUnauthorizedAccount")
      .withArgs(wallet.address);
  });

  it("sets an allowance from an EIP-2612 permit signature", async function () {
    const { stablecoin, wallet, escrow, chainId } = await loadFixture(deployContracts);
    const deadline = BigInt(await time.latest()) + 600n;
    const spender = await escrow.getAddress();
    const signature = Signature.from(
      await wallet.signTypedData(
        {
          name: "USD Gateway Dollar",
          version: PERMIT_VERSION,
          chainId,
          verifyingContract: await stablecoin.getAddress(),
        },
        { Permit: [...PERMIT_TYPES.Permit] },
        { owner: wallet.address, spender, value: ONE_STABLECOIN, nonce: 0n, deadline },
      ),
    );
    await stablecoin.permit(wallet.address, spender, ONE_STABLECOIN, deadline, signature.v, signature.r, signature.s);
    expect(await stablecoin.allowance(wallet.address, spender)).to.equal(ONE_STABLECOIN);
  });
});

describe("StakeToken (local chains)", function () {
  it("is SVC with 18 decimals", async function () {
    const { stakeToken } = await loadFixture(deployContracts);
    expect([await stakeToken.symbol(), await stakeToken.decimals()]).to.deep.equal(["SVC", 18n]);
  });

  it("lets the owner mint", async function () {
    const { stakeToken, admin, worker1 } = await loadFixture(deployContracts);
    await expect(stakeToken.connect(admin).mint(worker1.address, SVC)).to.changeTokenBalance(
      ethers,
      stakeToken,
      worker1,
      SVC,
    );
  });

  it("reverts with OwnableUnauthorizedAccount when anyone else mints", async function () {
    const { stakeToken, worker1 } = await loadFixture(deployContracts);
    await expect(stakeToken.connect(worker1).mint(worker1.address, SVC))
      .to.be.revertedWithCustomError(stakeToken, "OwnableUnauthorizedAccount")
      .withArgs(worker1.address);
  });
});
