import { generateApiKey, keyHashOf, type KeyStatus } from "@credit-metered/client";
import { useState } from "react";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { registerOrRotateKey, revokeKey } from "../chain/apiKeyActions";
import { plainError } from "../chain/plainError";
import { useAsync } from "../useAsync";
import { Mono, TxLink } from "./ExplorerLink";
import { SPENDING_CAP_ANCHOR } from "./SpendingCapPanel";
import { ErrorNote, Loading } from "./StatusNote";

const STATUS_WORDS: Record<KeyStatus, string> = {
  none: "No key yet",
  active: "Active",
  revoked: "Revoked",
  suspended: "Suspended by an operator",
};

/**
 * The wallet's one API key: created in this browser (only its keccak hash goes on chain), shown once; rotate
 * replaces it, revoke ends it.
 */
export function ApiKeyPanel() {
  const { config, publicClient, wallet, refresh, refreshKey } = useApp();
  const account = useAsync(() => appApi.account(), [refreshKey]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fresh, setFresh] = useState<{ key: string; tx: string } | null>(null);
  const [lastTx, setLastTx] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);

  if (account.status === "loading") return <Loading what="your key" />;
  if (account.status === "error") return <ErrorNote message={account.error} onRetry={account.reload} />;
  const key = account.data.key;

  const create = async () => {
    if (!wallet) return;
    const apiKey = generateApiKey();
    setBusy(key.status === "active" ? "Confirm the key rotation in your wallet…" : "Confirm the key registration…");
    setError(null);
    setFresh(null);
    setCopied(false);
    try {
      const tx = await registerOrRotateKey(config, publicClient, wallet, keyHashOf(apiKey), key.status === "active");
      setFresh({ key: apiKey, tx });
      refresh();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(null);
    }
  };
  const revoke = async () => {
    if (!wallet) return;
    setBusy("Confirm the revocation in your wallet…");
    setError(null);
    setFresh(null);
    try {
      setLastTx(await revokeKey(config, publicClient, wallet));
      refresh();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(null);
    }
  };
  const copy = async () => {
    if (!fresh) return;
    await navigator.clipboard.writeText(fresh.key).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  };

  return (
    <section className="card" data-testid="api-key-panel">
      <h2>API key</h2>
      <p>
        Status:{" "}
        <strong className={`status status-${key.status}`} data-testid="key-status">
          {STATUS_WORDS[key.status] ?? key.status}
        </strong>
        {key.created_at ? <span className="muted"> · created {new Date(key.created_at).toLocaleString()}</span> : null}
      </p>
      {key.key_hash ? (
        <p className="muted small">
          Key hash on chain: <Mono value={key.key_hash} full />
        </p>
      ) : null}
      {fresh ? (
        <div className="secret" data-testid="new-key">
          <p>
            <strong>Copy your key now.</strong> It is shown only this once and cannot be recovered: only its hash is
            stored on chain. Anyone holding it can spend your credits.
          </p>
          <code data-testid="new-key-value">{fresh.key}</code>
          <div className="row">
            <button type="button" onClick={copy}>
              {copied ? "Copied" : "Copy key"}
            </button>
            <span className="muted small">
              Registered in <TxLink hash={fresh.tx} />
            </span>
          </div>
          <p className="small" data-testid="spending-cap-offer">
            Limit what a leaked key (or a stolen gateway key) could spend:{" "}
            <a href={`#${SPENDING_CAP_ANCHOR}`}>set an hourly spending cap</a> for this wallet. None is set unless you
            choose one.
          </p>
        </div>
      ) : null}
      {key.status === "suspended" ? (
        <p className="note error">This key was suspended for a policy violation. Contact support to lift it.</p>
      ) : (
        <div className="row">
          <button type="button" data-testid="create-key" disabled={busy !== null} onClick={create}>
            {key.status === "active" ? "Rotate key" : "Create key"}
          </button>
          {key.status === "active" ? (
            <button type="button" className="danger" data-testid="revoke-key" disabled={busy !== null} onClick={revoke}>
              Revoke key
            </button>
          ) : null}
        </div>
      )}
      {lastTx && !fresh ? (
        <p className="muted small" data-testid="revoke-done">
          Key revoked in <TxLink hash={lastTx} />. Requests with it now get 401.
        </p>
      ) : null}
      {busy ? <p className="note loading">{busy}</p> : null}
      {error ? <ErrorNote message={error} /> : null}
    </section>
  );
}
