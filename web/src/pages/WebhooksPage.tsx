import { useState } from "react";
import { appApi } from "../appApi";
import { plainError } from "../chain/plainError";
import { DeliveryCard } from "../components/DeliveryCard";
import { Empty, ErrorNote, Loading, SuccessNote } from "../components/StatusNote";
import { useAsync } from "../useAsync";

/** The wallet's webhooks and their failed deliveries, with replay (which also re-activates a failed webhook). */
export function WebhooksPage() {
  const webhooks = useAsync(() => appApi.webhooks(), []);
  const deliveries = useAsync(() => appApi.deliveries(), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [replayed, setReplayed] = useState<number | null>(null);

  const replay = async (run: () => Promise<{ replayed: number }>) => {
    setBusy(true);
    setError(null);
    setReplayed(null);
    try {
      setReplayed((await run()).replayed);
      webhooks.reload();
      deliveries.reload();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <section className="card">
        <h1>Webhooks</h1>
        <p className="muted">Create and delete webhooks with your API key (POST /v1/webhooks); watch them here.</p>
        {webhooks.status === "loading" ? <Loading what="webhooks" /> : null}
        {webhooks.status === "error" ? <ErrorNote message={webhooks.error} onRetry={webhooks.reload} /> : null}
        {webhooks.status === "ready" && webhooks.data.data.length === 0 ? <Empty>No webhooks yet.</Empty> : null}
        {webhooks.status === "ready" && webhooks.data.data.length > 0 ? (
          <table data-testid="webhook-list">
            <thead>
              <tr>
                <th>URL</th>
                <th>Events</th>
                <th>Status</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data.data.map((hook) => (
                <tr key={hook.id}>
                  <td className="mono">{hook.url}</td>
                  <td>{hook.events.join(", ")}</td>
                  <td>
                    <span className={`status status-${hook.status}`} data-testid="webhook-status">
                      {hook.status}
                    </span>
                  </td>
                  <td>{new Date(hook.created_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
      <section className="card">
        <div className="row spread">
          <h2>Failed deliveries</h2>
          <button
            type="button"
            data-testid="replay-all"
            disabled={busy || deliveries.status !== "ready" || deliveries.data.data.length === 0}
            onClick={() => replay(() => appApi.replayAll())}
          >
            Replay all
          </button>
        </div>
        {replayed !== null ? (
          <SuccessNote>
            <span data-testid="replayed">
              {replayed} {replayed === 1 ? "delivery" : "deliveries"} queued again; the webhook is active again.
            </span>
          </SuccessNote>
        ) : null}
        {error ? <ErrorNote message={error} /> : null}
        {deliveries.status === "loading" ? <Loading what="deliveries" /> : null}
        {deliveries.status === "error" ? <ErrorNote message={deliveries.error} onRetry={deliveries.reload} /> : null}
        {deliveries.status === "ready" && deliveries.data.data.length === 0 ? (
          <Empty>No failed deliveries. Every event reached its webhook.</Empty>
        ) : null}
        {deliveries.status === "ready"
          ? deliveries.data.data.map((delivery) => (
              <DeliveryCard
                key={delivery.id}
                delivery={delivery}
                busy={busy}
                onReplay={() => replay(() => appApi.replayOne(delivery.id))}
              />
            ))
          : null}
      </section>
    </>
  );
}
