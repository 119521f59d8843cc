import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import type { ServiceModel } from "../appTypes";
import { Empty, ErrorNote, Loading } from "../components/StatusNote";
import { useAsync } from "../useAsync";

const percent = (rate: number | null) =>
  rate === null ? "—" : `${Number.isInteger(rate * 100) ? rate * 100 : (rate * 100).toFixed(1)} %`;
const ms = (value: number | null) => (value === null ? "—" : `${value.toLocaleString("en-US")} ms`);

/** The models served now: prices, live workers, latency and the trust figures of `GET /v1/models`. */
export function ModelsPage() {
  const { refreshKey } = useApp();
  const models = useAsync(() => appApi.models(), [refreshKey]);
  return (
    <>
      <section className="card">
        <h1>Models</h1>
        <p className="muted">
          Models with at least one live worker. Prices are in credits (1 credit = 0.01 USDG); latency and reliability
          cover the last {models.status === "ready" ? (models.data.data[0]?.service.stats_window_hours ?? 24) : 24}{" "}
          hours of every client&apos;s jobs.
        </p>
        {models.status === "loading" ? <Loading what="the models" /> : null}
        {models.status === "error" ? <ErrorNote message={models.error} onRetry={models.reload} /> : null}
        {models.status === "ready" && models.data.data.length === 0 ? (
          <Empty>No model has a live worker right now.</Empty>
        ) : null}
      </section>
      {models.status === "ready" && models.data.data.length > 0 ? (
        <>
          <LatencyChart models={models.data.data} />
          <div className="model-grid" data-testid="model-cards">
            {models.data.data.map((model) => (
              <ModelCard key={model.id} model={model} />
            ))}
          </div>
        </>
      ) : null}
    </>
  );
}

function LatencyChart({ models }: { models: ServiceModel[] }) {
  const data = models.map((model) => ({
    id: model.id,
    median: model.service.median_latency_ms,
    p95: model.service.p95_time_to_first_token_ms ?? 0,
  }));
  return (
    <section className="card chart wide" data-testid="chart-model-latency">
      <h2>Time to first token per model</h2>
      <ResponsiveContainer width="100%" height={260}>
        <BarChart data={data} margin={{ bottom: 50 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="id" fontSize={11} angle={-20} textAnchor="end" interval={0} />
          <YAxis fontSize={12} unit=" ms" width={70} />
          <Tooltip />
          <Legend verticalAlign="top" wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="median" name="median (workers)" fill="#9fb4f5" isAnimationActive={false} />
          <Bar dataKey="p95" name="p95 (clients, incl. escrow lock)" fill="#2f5bea" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </section>
  );
}

function ModelCard({ model }: { model: ServiceModel }) {
  const { service } = model;
  const rate = service.success_rate;
  return (
    <section className="card model-card" data-testid="model-card" data-model-id={model.id}>
      <div className="row spread">
        <h2 className="model-name">{model.id}</h2>
        <span className={`tier tier-${service.tier}`}>{service.tier}</span>
      </div>
      <p className="muted small">
        {service.parameters} parameters · {service.context_window.toLocaleString("en-US")} tokens context · by{" "}
        {model.owned_by}
      </p>
      <dl className="facts">
        <dt>Price</dt>
        <dd data-testid="model-price">
          {service.credits_per_request} credits per request
          <span className="muted small"> · then {service.credits_per_1k_tokens} per 1k tokens past 500</span>
        </dd>
        <dt>Live workers</dt>
        <dd data-testid="model-workers">{service.active_workers}</dd>
        <dt>Time to first token</dt>
        <dd data-testid="model-latency">
          {/* The API says 0 before the first sample: no measure yet, not an instant answer. */}
          median {ms(service.median_latency_ms === 0 ? null : service.median_latency_ms)} · p95{" "}
          {ms(service.p95_time_to_first_token_ms)}
        </dd>
        <dt>Answered</dt>
        <dd>
          <span data-testid="model-success">{percent(rate)}</span>
          <span className="muted small">
            {rate === null ? " no jobs in the window" : ` of ${service.jobs_observed} jobs`}
          </span>
          {rate === null ? null : (
            <div className="meter" aria-hidden="true">
              <div className="meter-fill" style={{ width: `${rate * 100}%` }} />
            </div>
          )}
        </dd>
        <dt>Disputes</dt>
        <dd data-testid="model-disputes">
          {service.disputes_opened} opened · {service.disputes_upheld} upheld
        </dd>
      </dl>
    </section>
  );
}
