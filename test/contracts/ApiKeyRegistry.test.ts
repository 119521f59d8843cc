import { expect } from "chai";
import { anyValue } from "@nomicfoundation/hardhat-ethers-chai-matchers/withArgs";
import { network } from "hardhat";
import { ZeroAddress, ZeroHash } from "ethers";
import {
  commitKey,
  keyCommitment,
  DEFAULT_ADMIN_ROLE,
  deployContracts,
  keyHash,
  KeyStatus,
  OPERATOR_ROLE,
  registerKey,
  rotateKey,
  WALLET_KEY,
} from "./fixtures.js";

const { networkHelpers } = await network.create();
const { loadFixture, time } = networkHelpers;

const KEY_A = keyHash("sk-live-aaaa");
const KEY_B = keyHash("sk-live-bbbb");

/** Fixes the next block's time so events can be matched exactly. */
async function nextTimestamp(): Promise<number> {
  const at = (await time.latest()) + 1;
  await time.setNextBlockTimestamp(at);
  return at;
}

/** A registry with `wallet` holding KEY_A. */
async function withKey(connection: Parameters<typeof deployContracts>[0]) {
  const d = await deployContracts(connection);
  await registerKey(d.apiKeyRegistry.connect(d.wallet), d.wallet.address, KEY_A);
  return d;
}

/** A registry with `wallet` holding KEY_A, suspended by the operator. */
async function withSuspendedKey(connection: Parameters<typeof deployContracts>[0]) {
  const d = await withKey(connection);
  await d.apiKeyRegistry.connect(d.operator).suspend(d.wallet.address);
  return d;
}

describe("ApiKeyRegistry", function () {
  describe("deployment", function () {
    it("grants the admin role and the operator role given to the constructor", async function () {
      const { apiKeyRegistry, admin, operator } = await loadFixture(deployContracts);
      expect(await apiKeyRegistry.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
      expect(await apiKeyRegistry.hasRole(OPERATOR_ROLE, operator.address)).to.equal(true);
    });
  });

  describe("registerKey", function () {
    it("registers the caller's key and emits KeyRegistered", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      await commitKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(wallet).registerKey(KEY_A))
        .to.emit(apiKeyRegistry, "KeyRegistered")
        .withArgs(wallet.address, KEY_A, at);
    });

    it("emits KeyCommitted with the commitment and its block, hiding the hash", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      const commitment = keyCommitment(wallet.address, KEY_A);
      const tx = await apiKeyRegistry.connect(wallet).commitKey(commitment);
      const mined = await tx.wait();
      await expect(tx).to.emit(apiKeyRegistry, "KeyCommitted").withArgs(wallet.address, commitment, mined?.blockNumber);
      expect(await apiKeyRegistry.commitmentBlock(wallet.address, KEY_A)).to.equal(BigInt(mined?.blockNumber ?? 0));
    });

    it("reverts with KeyNotCommitted without a commitment by the caller", async function () {
      const { apiKeyRegistry, wallet, wallet2 } = await loadFixture(deployContracts);
      await commitKey(apiKeyRegistry.connect(wallet2), wallet2.address, KEY_A);
      await expect(apiKeyRegistry.connect(wallet).registerKey(KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotCommitted")
        .withArgs(wallet.address, KEY_A);
    });

    it("gives the hash to the earlier commitment even after a copier registered it first", async function () {
      const { apiKeyRegistry, wallet, wallet2 } = await loadFixture(deployContracts);
      await commitKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A);
      await registerKey(apiKeyRegistry.connect(wallet2), wallet2.address, KEY_A); // copied from the mempool
      await expect(apiKeyRegistry.connect(wallet).registerKey(KEY_A))
        .to.emit(apiKeyRegistry, "KeyRevoked")
        .withArgs(wallet2.address, KEY_A, anyValue)
        .and.to.emit(apiKeyRegistry, "KeyRegistered")
        .withArgs(wallet.address, KEY_A, anyValue);
      expect(await apiKeyRegistry.activeWallet(KEY_A)).to.equal(wallet.address);
    });

    it("makes the key active for its wallet", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      expect(await apiKeyRegistry.activeWallet(KEY_A)).to.equal(wallet.address);
      const [hash, status, createdAt] = await apiKeyRegistry.keyOf(wallet.address);
      expect([hash, status]).to.deep.equal([KEY_A, BigInt(KeyStatus.Active)]);
      expect(createdAt).to.equal(BigInt(await time.latest()));
      expect(await apiKeyRegistry.statusOfKey(KEY_A)).to.deep.equal([wallet.address, BigInt(KeyStatus.Active)]);
    });

    it("reverts with KeyAlreadyRegistered when the wallet has an active key", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyAlreadyRegistered")
        .withArgs(wallet.address, KEY_A);
    });

    it("reverts with KeyHashAlreadyUsed when another wallet registered the hash", async function () {
      const { apiKeyRegistry, wallet2 } = await loadFixture(withKey);
      await expect(registerKey(apiKeyRegistry.connect(wallet2), wallet2.address, KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyHashAlreadyUsed")
        .withArgs(KEY_A);
    });

    it("reverts with KeyHashAlreadyUsed when the wallet re-registers its own revoked hash", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyHashAlreadyUsed")
        .withArgs(KEY_A);
    });

    it("reverts with KeyHashZero for the zero hash", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, ZeroHash)).to.be.revertedWithCustomError(
        apiKeyRegistry,
        "KeyHashZero",
      );
    });

    it("registers a new key after the old one was revoked", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await commitKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(wallet).registerKey(KEY_B))
        .to.emit(apiKeyRegistry, "KeyRegistered")
        .withArgs(wallet.address, KEY_B, at);
    });

    it("reverts with WalletSuspended when a suspended wallet registers", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(deployContracts);
      await apiKeyRegistry.connect(operator).suspend(wallet.address);
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "WalletSuspended")
        .withArgs(wallet.address);
    });

    it("reverts with WalletSuspended when a suspended wallet revokes and registers again", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withSuspendedKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B))
        .to.be.revertedWithCustomError(apiKeyRegistry, "WalletSuspended")
        .withArgs(wallet.address);
    });
  });

  describe("rotateKey", function () {
    it("emits KeyRevoked for the old key and KeyRegistered for the new one", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await commitKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B);
      const at = await nextTimestamp();
      const tx = apiKeyRegistry.connect(wallet).rotateKey(KEY_B);
      await expect(tx).to.emit(apiKeyRegistry, "KeyRevoked").withArgs(wallet.address, KEY_A, at);
      await expect(tx).to.emit(apiKeyRegistry, "KeyRegistered").withArgs(wallet.address, KEY_B, at);
    });

    it("leaves the old key revoked and the new key active", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B);
      await expect(apiKeyRegistry.activeWallet(KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotActive")
        .withArgs(KEY_A, KeyStatus.Revoked);
      expect(await apiKeyRegistry.activeWallet(KEY_B)).to.equal(wallet.address);
    });

    it("reverts with NoActiveKey when the wallet has no key", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B))
        .to.be.revertedWithCustomError(apiKeyRegistry, "NoActiveKey")
        .withArgs(wallet.address);
    });

    it("reverts with NoActiveKey when the wallet's key was revoked", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B))
        .to.be.revertedWithCustomError(apiKeyRegistry, "NoActiveKey")
        .withArgs(wallet.address);
    });

    it("reverts with KeyHashAlreadyUsed when rotating to a hash used before", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B);
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyHashAlreadyUsed")
        .withArgs(KEY_A);
    });

    it("reverts with KeyHashAlreadyUsed when rotating to the current hash", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyHashAlreadyUsed")
        .withArgs(KEY_A);
    });

    it("reverts with KeyHashZero when rotating to the zero hash", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, ZeroHash)).to.be.revertedWithCustomError(
        apiKeyRegistry,
        "KeyHashZero",
      );
    });

    it("reverts with WalletSuspended for a suspended wallet", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withSuspendedKey);
      await expect(rotateKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B))
        .to.be.revertedWithCustomError(apiKeyRegistry, "WalletSuspended")
        .withArgs(wallet.address);
    });
  });

  describe("revokeKey", function () {
    it("revokes the caller's key and emits KeyRevoked", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(wallet).revokeKey())
        .to.emit(apiKeyRegistry, "KeyRevoked")
        .withArgs(wallet.address, KEY_A, at);
    });

    it("makes activeWallet refuse the key", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await expect(apiKeyRegistry.activeWallet(KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotActive")
        .withArgs(KEY_A, KeyStatus.Revoked);
    });

    it("reports the revoked key as the wallet's last key", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      const [hash, status] = await apiKeyRegistry.keyOf(wallet.address);
      expect([hash, status]).to.deep.equal([KEY_A, BigInt(KeyStatus.Revoked)]);
    });

    it("reverts with NoActiveKey when the wallet never registered", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      await expect(apiKeyRegistry.connect(wallet).revokeKey())
        .to.be.revertedWithCustomError(apiKeyRegistry, "NoActiveKey")
        .withArgs(wallet.address);
    });

    it("reverts with NoActiveKey the second time", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await expect(apiKeyRegistry.connect(wallet).revokeKey())
        .to.be.revertedWithCustomError(apiKeyRegistry, "NoActiveKey")
        .withArgs(wallet.address);
    });

    it("revokes a suspended key (after a leak) while the wallet stays suspended", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withSuspendedKey);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(wallet).revokeKey())
        .to.emit(apiKeyRegistry, "KeyRevoked")
        .withArgs(wallet.address, KEY_A, at);
      expect(await apiKeyRegistry.isSuspended(wallet.address)).to.equal(true);
    });
  });

  describe("suspend and unsuspend", function () {
    it("suspend emits KeySuspended with the wallet's key", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withKey);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(operator).suspend(wallet.address))
        .to.emit(apiKeyRegistry, "KeySuspended")
        .withArgs(wallet.address, KEY_A, at);
    });

    it("suspend makes activeWallet refuse the key with status Suspended", async function () {
      const { apiKeyRegistry } = await loadFixture(withSuspendedKey);
      await expect(apiKeyRegistry.activeWallet(KEY_A))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotActive")
        .withArgs(KEY_A, KeyStatus.Suspended);
    });

    it("suspends a wallet that has no key yet, with the zero hash in the event", async function () {
      const { apiKeyRegistry, operator, wallet2 } = await loadFixture(withKey);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(operator).suspend(wallet2.address))
        .to.emit(apiKeyRegistry, "KeySuspended")
        .withArgs(wallet2.address, ZeroHash, at);
    });

    it("suspend reverts with WalletSuspended when already suspended", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withSuspendedKey);
      await expect(apiKeyRegistry.connect(operator).suspend(wallet.address))
        .to.be.revertedWithCustomError(apiKeyRegistry, "WalletSuspended")
        .withArgs(wallet.address);
    });

    it("unsuspend emits KeyUnsuspended and makes the key active again", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withSuspendedKey);
      const at = await nextTimestamp();
      await expect(apiKeyRegistry.connect(operator).unsuspend(wallet.address))
        .to.emit(apiKeyRegistry, "KeyUnsuspended")
        .withArgs(wallet.address, KEY_A, at);
      expect(await apiKeyRegistry.activeWallet(KEY_A)).to.equal(wallet.address);
    });

    it("unsuspend keeps a key revoked during the suspension revoked", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withSuspendedKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await apiKeyRegistry.connect(operator).unsuspend(wallet.address);
      const [, status] = await apiKeyRegistry.keyOf(wallet.address);
      expect(status).to.equal(BigInt(KeyStatus.Revoked));
    });

    it("unsuspend lets the wallet register a key again", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withSuspendedKey);
      await apiKeyRegistry.connect(wallet).revokeKey();
      await apiKeyRegistry.connect(operator).unsuspend(wallet.address);
      await expect(registerKey(apiKeyRegistry.connect(wallet), wallet.address, KEY_B)).to.emit(
        apiKeyRegistry,
        "KeyRegistered",
      );
    });

    it("unsuspend reverts with WalletNotSuspended for a wallet in good standing", async function () {
      const { apiKeyRegistry, operator, wallet } = await loadFixture(withKey);
      await expect(apiKeyRegistry.connect(operator).unsuspend(wallet.address))
        .to.be.revertedWithCustomError(apiKeyRegistry, "WalletNotSuspended")
        .withArgs(wallet.address);
    });

    it("suspend reverts with AccessControlUnauthorizedAccount for a caller without OPERATOR_ROLE", async function () {
      const { apiKeyRegistry, outsider, wallet } = await loadFixture(withKey);
      await expect(apiKeyRegistry.connect(outsider).suspend(wallet.address))
        .to.be.revertedWithCustomError(apiKeyRegistry, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, OPERATOR_ROLE);
    });

    it("unsuspend reverts with AccessControlUnauthorizedAccount for a caller without OPERATOR_ROLE", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(withSuspendedKey);
      await expect(apiKeyRegistry.connect(wallet).unsuspend(wallet.address))
        .to.be.revertedWithCustomError(apiKeyRegistry, "AccessControlUnauthorizedAccount")
        .withArgs(wallet.address, OPERATOR_ROLE);
    });
  });

  describe("views", function () {
    it("activeWallet reverts with KeyNotActive and status None for an unknown hash", async function () {
      const { apiKeyRegistry } = await loadFixture(deployContracts);
      const unknown = keyHash(WALLET_KEY);
      await expect(apiKeyRegistry.activeWallet(unknown))
        .to.be.revertedWithCustomError(apiKeyRegistry, "KeyNotActive")
        .withArgs(unknown, KeyStatus.None);
    });

    it("keyOf reports the zero hash and None for a wallet without a key", async function () {
      const { apiKeyRegistry, wallet } = await loadFixture(deployContracts);
      expect(await apiKeyRegistry.keyOf(wallet.address)).to.deep.equal([ZeroHash, 0n, 0n]);
    });

    it("statusOfKey reports the zero address and None for an unknown hash", async function () {
      const { apiKeyRegistry } = await loadFixture(deployContracts);
      expect(await apiKeyRegistry.statusOfKey(KEY_B)).to.deep.equal([ZeroAddress, 0n]);
    });
  });
});
