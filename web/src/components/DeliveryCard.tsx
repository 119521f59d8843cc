import type { FailedDelivery } from "../appTypes";

/** A failed (or held) delivery: its event, and every attempt with the receiver's answer. */
export function DeliveryCard({
  delivery,
  busy,
  onReplay,
}: {
  delivery: FailedDelivery;
  busy: boolean;
  onReplay: () => void;
}) {
  return (
    <article className="delivery" data-testid="failed-delivery" data-delivery-id={delivery.id}>
      <header className="row spread">
        <span>
          <strong>{delivery.event.event}</strong>{" "}
          <span className={`status status-${delivery.status}`}>{delivery.status}</span>
          <span className="muted small">
            {" "}
            · {new Date(delivery.created_at).toLocaleString()} · to {delivery.url}
          </span>
        </span>
        <button type="button" className="secondary" disabled={busy} onClick={onReplay} data-testid="replay-one">
          Replay
        </button>
      </header>
      {delivery.status === "held" ? (
        <p className="muted small">Not attempted: the webhook was marked failed before this event arrived.</p>
      ) : null}
      {delivery.attempts.length > 0 ? (
        <table className="attempts">
          <thead>
            <tr>
              <th>#</th>
              <th>Started</th>
              <th>Took</th>
              <th>Answer</th>
              <th>Response</th>
            </tr>
          </thead>
          <tbody>
            {delivery.attempts.map((attempt) => (
              <tr key={attempt.attempt_number} className={attempt.ok ? "ok" : "failed"}>
                <td>{attempt.attempt_number}</td>
                <td>{new Date(attempt.started_at).toLocaleTimeString()}</td>
                <td>{attempt.duration_ms == null ? "—" : `${attempt.duration_ms} ms`}</td>
                <td data-testid="attempt-status">{attempt.status_code ?? attempt.error ?? "no answer"}</td>
                <td className="mono small">{attempt.response_snippet?.slice(0, 120) || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </article>
  );
}
