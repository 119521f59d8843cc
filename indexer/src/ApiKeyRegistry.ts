import { ponder } from "ponder:registry";
import { changeAccount } from "./write/account.js";
import { changeApiKey, findApiKey, insertApiKey } from "./write/apiKey.js";
import { recordChainEvent } from "./write/chainEvent.js";

// Keys by hash (api_key) and each wallet's current key (account.keyHash/keyStatus/suspended).

ponder.on("ApiKeyRegistry:KeyRegistered", async ({ event, context }) => {
  const { wallet, keyHash, timestamp } = event.args;
  await insertApiKey(context.db, { keyHash, wallet, status: "active", createdAt: timestamp, revokedAt: null });
  await changeAccount(context.db, wallet, () => ({ keyHash, keyStatus: "active", keyCreatedAt: timestamp }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "KeyRegistered",
    wallet,
    data: { wallet, keyHash, timestamp },
  });
});

ponder.on("ApiKeyRegistry:KeyRevoked", async ({ event, context }) => {
  const { wallet, keyHash, timestamp } = event.args;
  await changeApiKey(context.db, keyHash, { status: "revoked", revokedAt: timestamp });
  await changeAccount(context.db, wallet, (row) => (row.keyHash === keyHash ? { keyStatus: "revoked" } : {}));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "KeyRevoked",
    wallet,
    data: { wallet, keyHash, timestamp },
  });
});

ponder.on("ApiKeyRegistry:KeySuspended", async ({ event, context }) => {
  const { wallet, keyHash, timestamp } = event.args;
  // The suspension belongs to the wallet; only a key that was active shows as suspended.
  const key = await findApiKey(context.db, keyHash);
  if (key?.status === "active") await changeApiKey(context.db, keyHash, { status: "suspended" });
  await changeAccount(context.db, wallet, (row) => ({
    suspended: true,
    ...(row.keyHash === keyHash && row.keyStatus === "active" ? { keyStatus: "suspended" } : {}),
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "KeySuspended",
    wallet,
    data: { wallet, keyHash, timestamp },
  });
});

ponder.on("ApiKeyRegistry:KeyUnsuspended", async ({ event, context }) => {
  const { wallet, keyHash, timestamp } = event.args;
  const key = await findApiKey(context.db, keyHash);
  if (key?.status === "suspended") await changeApiKey(context.db, keyHash, { status: "active" });
  await changeAccount(context.db, wallet, (row) => ({
    suspended: false,
    ...(row.keyHash === keyHash && row.keyStatus === "suspended" ? { keyStatus: "active" } : {}),
  }));
  await recordChainEvent(context.db, context.chain.id, event, {
    name: "KeyUnsuspended",
    wallet,
    data: { wallet, keyHash, timestamp },
  });
});
