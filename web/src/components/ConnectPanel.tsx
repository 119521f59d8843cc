import { useState } from "react";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { plainError } from "../chain/plainError";
import { connectDevWallet, devWalletAvailable } from "../wallet/connectDevWallet";
import { connectInjected, hasInjectedWallet } from "../wallet/connectInjected";
import type { ConnectedWallet } from "../wallet/ConnectedWallet";
import { signIn } from "../wallet/signIn";
import { Mono } from "./ExplorerLink";
import { ErrorNote } from "./StatusNote";

/** Step 1: connect a wallet (browser extension, or the development wallet locally). Step 2: Sign-In with Ethereum. */
export function ConnectPanel() {
  const { config, wallet, setWallet, setSession } = useApp();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const run = async (what: string, action: () => Promise<void>) => {
    setBusy(what);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(null);
    }
  };
  const connect = (make: () => Promise<ConnectedWallet>) =>
    run("Connecting…", async () => {
      const connected = await make();
      setWallet(connected);
      // A session this browser still holds for the same wallet (e.g. after a reload) needs no new signature.
      const existing = await appApi.me().catch(() => null);
      if (existing && existing.wallet === connected.address.toLowerCase()) setSession(existing);
    });
  const signInNow = (connected: ConnectedWallet) =>
    run("Waiting for your signature…", async () => {
      setSession(await signIn(connected, config.chain_id));
    });

  return (
    <section className="card narrow">
      <h1>Sign in with your wallet</h1>
      <p className="muted">
        Your wallet holds your credits and your API key. Connect it, then sign a short message to prove it is yours.
        Signing costs nothing and sends no transaction.
      </p>
      {!wallet ? (
        <div className="stack">
          <button
            type="button"
            disabled={busy !== null || !hasInjectedWallet()}
            onClick={() => connect(() => connectInjected(config))}
          >
            Connect browser wallet
          </button>
          {!hasInjectedWallet() ? <p className="muted small">No browser wallet detected in this browser.</p> : null}
          {devWalletAvailable(config) ? (
            <button
              type="button"
              className="secondary"
              data-testid="connect-dev-wallet"
              disabled={busy !== null}
              onClick={() => connect(async () => connectDevWallet(config))}
            >
              Use the development wallet (local chain)
            </button>
          ) : null}
        </div>
      ) : (
        <div className="stack">
          <p>
            Connected: <Mono value={wallet.address} full /> {wallet.kind === "dev" ? "(development wallet)" : ""}
          </p>
          <button type="button" data-testid="sign-in" disabled={busy !== null} onClick={() => signInNow(wallet)}>
            Sign in with Ethereum
          </button>
          <button type="button" className="link" disabled={busy !== null} onClick={() => setWallet(null)}>
            Use another wallet
          </button>
        </div>
      )}
      {busy ? <p className="note loading">{busy}</p> : null}
      {error ? <ErrorNote message={error} /> : null}
    </section>
  );
}
