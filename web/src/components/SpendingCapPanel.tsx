import { useState } from "react";
import { useApp } from "../appContext";
import { plainError } from "../chain/plainError";
import { readSpendingCap, setSpendingCap } from "../chain/spendingCap";
import { useAsync } from "../useAsync";
import { TxLink } from "./ExplorerLink";
import { ErrorNote, Loading } from "./StatusNote";

/** Anchor the key panel links to when it offers the cap after a key is created. */
export const SPENDING_CAP_ANCHOR = "spending-cap";

/**
 * The wallet's own cap on the credits locked for it per rolling hour, enforced by the escrow. None by default: the
 * balance is the only limit unless the wallet sets one here.
 */
export function SpendingCapPanel() {
  const { config, publicClient, wallet, refreshKey } = useApp();
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [lastTx, setLastTx] = useState<string | null>(null);
  const current = useAsync(
    () => (wallet ? readSpendingCap(config, publicClient, wallet.address) : Promise.resolve(null)),
    [wallet?.address, refreshKey, lastTx],
  );

  const save = async (creditsPerHour: bigint) => {
    if (!wallet) return;
    setBusy(true);
    setError(null);
    try {
      setLastTx(await setSpendingCap(config, publicClient, wallet, creditsPerHour));
      setDraft("");
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    const value = draft.trim();
    if (!/^\d+$/.test(value) || BigInt(value) === 0n) {
      setError("Enter a whole number of credits per hour (at least 1).");
      return;
    }
    void save(BigInt(value));
  };

  return (
    <section className="card" id={SPENDING_CAP_ANCHOR} data-testid="spending-cap-panel">
      <h2>Hourly spending cap</h2>
      <p className="muted">
        Limits the credits that can be locked for requests in any rolling hour, whatever key or gateway sends them. It
        protects your balance if your API key leaks, or if the gateway&apos;s own key is stolen: the thief can spend at
        most this much per hour instead of your whole balance. Only this wallet can change it. Requests over the cap are
        refused with <code>402 spending_cap_exceeded</code>, saying when room frees up.
      </p>
      {current.status === "loading" ? <Loading what="your cap" /> : null}
      {current.status === "error" ? <ErrorNote message={current.error} onRetry={current.reload} /> : null}
      {current.status === "ready" && current.data ? (
        <p data-testid="spending-cap-current">
          {current.data.cap === 0n ? (
            <strong>No cap: your balance is the only limit.</strong>
          ) : (
            <>
              Cap: <strong>{current.data.cap.toString()} credits per hour</strong>
              <span className="muted">
                {" "}
                · {current.data.lockedInWindow.toString()} counted now
                {current.data.nextRoomAt > 0n
                  ? `, room frees up at ${new Date(Number(current.data.nextRoomAt) * 1000).toLocaleTimeString()}`
                  : ""}
              </span>
            </>
          )}
        </p>
      ) : null}
      <form className="row" onSubmit={submit}>
        <label>
          Credits per hour{" "}
          <input
            data-testid="spending-cap-input"
            inputMode="numeric"
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            placeholder="e.g. 1000"
            disabled={busy || !wallet}
          />
        </label>
        <button type="submit" data-testid="spending-cap-save" disabled={busy || !wallet}>
          Set cap
        </button>
        {current.status === "ready" && current.data && current.data.cap !== 0n ? (
          <button type="button" className="danger" disabled={busy} onClick={() => void save(0n)}>
            Remove cap
          </button>
        ) : null}
      </form>
      {busy ? <p className="note loading">Confirm the cap in your wallet…</p> : null}
      {lastTx && !busy ? (
        <p className="muted small" data-testid="spending-cap-done">
          Saved in <TxLink hash={lastTx} />.
        </p>
      ) : null}
      {error ? <ErrorNote message={error} /> : null}
    </section>
  );
}
