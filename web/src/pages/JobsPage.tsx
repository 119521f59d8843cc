import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { Mono, TxLink } from "../components/ExplorerLink";
import { Empty, ErrorNote, Loading } from "../components/StatusNote";
import type { WalletJob } from "../appTypes";
import { useAsync } from "../useAsync";

function statusWord(job: WalletJob): string {
  if (job.status === "pending") return "running";
  if (job.dispute_outcome === "upheld") return "refunded (dispute upheld)";
  if (job.dispute_outcome) return `disputed (${job.dispute_outcome})`;
  return job.status;
}

/** The wallet's job history from the chain's index. */
export function JobsPage() {
  const { refreshKey } = useApp();
  const jobs = useAsync(() => appApi.jobs(), [refreshKey]);
  return (
    <section className="card">
      <h1>Jobs</h1>
      {jobs.status === "loading" ? <Loading what="your jobs" /> : null}
      {jobs.status === "error" ? <ErrorNote message={jobs.error} onRetry={jobs.reload} /> : null}
      {jobs.status === "ready" && jobs.data.data.length === 0 ? (
        <Empty>No jobs yet. Send a chat completion with your API key and it shows up here.</Empty>
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
                  {job.credits_charged == null ? `${job.credits_locked} locked` : `${job.credits_charged} credits`}
                  <div className="muted small">{job.usdg_value.toFixed(2)} USDG</div>
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
    </section>
  );
}
