import type { Account, Address } from "viem";
import { generateApiKey, keyHashOf } from "@credit-metered/client";
import { IndexClient } from "../../api/readModel/indexClient.js";
import { IndexReader } from "../../api/readModel/indexReader.js";
import { fundCredits, registerApiKey } from "../../scripts/stack/seedDemo.js";
import { freshAccount } from "./chain.js";
import { diagnosed } from "./stackDiagnostics.js";
import { stackInfo } from "./stackInfo.js";
import { waitFor } from "../../scripts/stack/waitFor.js";

export type ClientWallet = { account: Account; wallet: Address; apiKey: string };

function localChain() {
  const { rpcUrl, deploymentsFile } = stackInfo();
  return { rpcUrl, deploymentsFile };
}

/**
 * A new wallet with `usdg` stablecoin deposited (100 credits each; 0 deposits nothing) and a registered API
 * key, returned once the gateway accepts the key (the index has caught up).
 */
export async function createClientWallet({ usdg = 10n }: { usdg?: bigint } = {}): Promise<ClientWallet> {
  const { account } = await freshAccount();
  if (usdg > 0n) await fundCredits(localChain(), account, usdg);
  const apiKey = generateApiKey();
  await registerApiKey(localChain(), account, apiKey);
  await waitUntilKeyAccepted(apiKey);
  return { account, wallet: account.address, apiKey };
}

/** Deposits more credits for an existing wallet. */
export async function depositCredits(account: Account, usdg: bigint): Promise<void> {
  await fundCredits(localChain(), account, usdg);
}

let indexReader: IndexReader | undefined;

/**
 * Waits until `GET /v1/account` answers 200 for the key (the chain's word) and the index holds it active (what the
 * completion path and the credit ledger read): under load the index may trail the chain by more than the gateway's
 * freshness bound, and a test's first request must not measure that lag.
 */
export async function waitUntilKeyAccepted(apiKey: string): Promise<void> {
  await waitFor(`key ${apiKey.slice(0, 14)}… accepted`, async () => {
    const response = await fetch(`${stackInfo().apiUrl}/v1/account`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return response.status === 200;
  });
  indexReader ??= new IndexReader(new IndexClient(stackInfo().indexerUrl));
  const index = indexReader;
  await diagnosed(() =>
    waitFor(`key ${apiKey.slice(0, 14)}… indexed`, async () => {
      const row = await index.apiKey(keyHashOf(apiKey)).catch(() => undefined);
      return row?.status === "active";
    }),
  );
}
