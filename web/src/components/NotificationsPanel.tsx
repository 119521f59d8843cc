import { useEffect, useState } from "react";
import { appApi } from "../appApi";
import { plainError } from "../chain/plainError";
import { useAsync } from "../useAsync";
import { ErrorNote, Loading, SuccessNote } from "./StatusNote";

/** The `credit.low` webhook threshold (default 100 credits). */
export function NotificationsPanel() {
  const settings = useAsync(() => appApi.settings(), []);
  const [value, setValue] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<number | null>(null);
  useEffect(() => {
    if (settings.status === "ready") setValue(String(settings.data.low_credit_threshold));
  }, [settings.status, settings.data]);

  if (settings.status === "loading") return <Loading what="notification settings" />;
  if (settings.status === "error") return <ErrorNote message={settings.error} onRetry={settings.reload} />;
  const valid = /^\d{1,9}$/.test(value.trim());
  const save = async () => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const result = await appApi.setThreshold(Number(value.trim()));
      setSaved(result.low_credit_threshold);
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" data-testid="notifications-panel">
      <h2>Notifications</h2>
      <p className="muted">
        Your webhooks subscribed to <code>credit.low</code> are called once when your available credits fall below this
        threshold.
      </p>
      <label className="field">
        Low-credit threshold (credits)
        <input data-testid="threshold" inputMode="numeric" value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      {!valid ? <p className="muted small">Enter a whole number of credits, 0 or more.</p> : null}
      <button type="button" data-testid="save-threshold" disabled={busy || !valid} onClick={save}>
        Save
      </button>
      {saved !== null ? (
        <SuccessNote>
          <span data-testid="threshold-saved">Saved: you are notified below {saved} credits.</span>
        </SuccessNote>
      ) : null}
      {error ? <ErrorNote message={error} /> : null}
    </section>
  );
}
