import { JOB_STATES } from "@credit-metered/client";
import { useState } from "react";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { Mono, TxLink } from "../components/ExplorerLink";
import { Empty, ErrorNote, Loading } from "../components/StatusNote";
import type { WalletJob, WalletJobFilter } from "../appTypes";
import { useAsync } from "../useAsync";

const PAGE_SIZES = [10, 20, 50, 100];

function statusWord(job: WalletJob): string {
  if (job.status === "pending") return "running";
  if (job.dispute_outcome === "upheld") return "refunded (dispute upheld)";
  if (job.dispute_outcome) return `disputed (${job.dispute_outcome})`;
  return job.status;
}

/** What the job cost: the charge once settled, the lock while running, nothing for a job that gave it back. */
function Charge({ job }: { job: WalletJob }) {
  if (job.credits_charged != null) {
    return (
      <>
        {job.credits_charged} credits
        <div className="muted small">{job.usdg_value.toFixed(2)} USDG</div>
      </>
    );
  }
  if (job.status === "failed" || job.status === "refunded") {
    return (
      <>
        not charged
        <div className="muted small">{job.credits_locked} credits returned</div>
      </>
    );
  }
  return <>{job.credits_locked} locked</>;
}

/** The wallet's job history from the chain's index, paged and filtered like `GET /v1/jobs`. */
export function JobsPage() {
  const { refreshKey, config } = useApp();
  const [filter, setFilter] = useState<WalletJobFilter>({ limit: 20 });
  // Cursors of the pages before the current one, so "Newer" goes back exactly where "Older" came from.
  const [trail, setTrail] = useState<WalletJobFilter[]>([]);
  const jobs = useAsync(() => appApi.jobs(filter), [refreshKey, filter]);
  /** A new filter starts again from the newest page; an empty value removes that filter. */
  const refilter = (change: { limit?: number; status?: string; model?: string }) => {
    setTrail([]);
    const merged = { status: filter.status, model: filter.model, ...change };
    const next: WalletJobFilter = { limit: change.limit ?? filter.limit };
    if (merged.status) next.status = merged.status;
    if (merged.model) next.model = merged.model;
    setFilter(next);
  };
  const older = () => {
    if (jobs.status !== "ready" || !jobs.data.next_cursor) return;
    setTrail([...trail, filter]);
    const { after: _after, ...rest } = filter;
    setFilter({ ...rest, before: jobs.data.next_cursor });
  };
  const newer = () => {
    const previous = trail.at(-1);
    if (!previous) return;
    setTrail(trail.slice(0, -1));
    setFilter(previous);
  };
  const page = trail.length + 1;
  return (
    <section className="card">
      <h1>Jobs</h1>
      <div className="row filters">
        <label className="inline-field">
          Status
          <select
            data-testid="jobs-status-filter"
            value={filter.status ?? ""}
            onChange={(event) => refilter({ status: event.target.value })}
          >
            <option value="">any</option>
            {JOB_STATES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Model
          <select
            data-testid="jobs-model-filter"
            value={filter.model ?? ""}
            onChange={(event) => refilter({ model: event.target.value })}
          >
            <option value="">any</option>
            {config.models.map((model) => (
              <option key={model.id} value={model.id}>
                {model.id}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Per page
          <select
            data-testid="jobs-page-size"
            value={filter.limit}
            onChange={(event) => refilter({ limit: Number(event.target.value) })}
          >
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </div>
      {jobs.status === "loading" ? <Loading what="your jobs" /> : null}
      {jobs.status === "error" ? <ErrorNote message={jobs.error} onRetry={jobs.reload} /> : null}
      {jobs.status === "ready" && jobs.data.data.length === 0 ? (
        <Empty>
          {filter.status || filter.model
            ? "No job matches these filters."
            : "No jobs yet. Send a chat completion with your API key and it shows up here."}
        </Empty>
      ) : null}
      {jobs.status === "ready" && jobs.data.data.length > 0 ? (
        <table data-testid="jobs-table">
          <thead>
            <tr>
              <th>Job</th>
              <th>Status</th>
              <th>Model</th>
              <th>Charge</th>
              <th>Worker</th>
              <th>Transactions</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data.data.map((job) => (
              <tr key={job.id} data-testid="job-row" data-job-id={job.id}>
                <td>
                  <Mono value={job.id} />
                  <div className="muted small">{new Date(job.created_at).toLocaleString()}</div>
                </td>
                <td>
                  <span className={`status status-${job.status}`}>{statusWord(job)}</span>
                </td>
                <td>
                  {job.model}
                  <div className="muted small">{job.tier}</div>
                </td>
                <td>
                  <Charge job={job} />
                </td>
                <td>{job.worker_address ? <Mono value={job.worker_address} /> : "—"}</td>
                <td>
                  <div className="txs">
                    <span>
                      escrow <TxLink hash={job.escrow_tx} />
                    </span>
                    {job.settlement_tx ? (
                      <span>
                        settlement <TxLink hash={job.settlement_tx} />
                      </span>
                    ) : null}
                    {job.refund_tx ? (
                      <span>
                        refund <TxLink hash={job.refund_tx} />
                      </span>
                    ) : null}
                    {job.fail_tx ? (
                      <span>
                        failure <TxLink hash={job.fail_tx} />
                      </span>
                    ) : null}
                    {job.dispute_tx ? (
                      <span>
                        dispute <TxLink hash={job.dispute_tx} />
                      </span>
                    ) : null}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="row spread pager">
        <button
          type="button"
          className="secondary"
          data-testid="jobs-newer"
          disabled={trail.length === 0}
          onClick={newer}
        >
          ← Newer
        </button>
        <span className="muted small" data-testid="jobs-page">
          Page {page}
        </span>
        <button
          type="button"
          className="secondary"
          data-testid="jobs-older"
          disabled={jobs.status !== "ready" || !jobs.data.has_more}
          onClick={older}
        >
          Older →
        </button>
      </div>
    </section>
  );
}
