import { useState } from "react";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Pie,
  PieChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import type { WalletActivity } from "../appTypes";
import { colorOf, OUTCOME_STYLE } from "../components/chartColors";
import { Empty, ErrorNote, Loading } from "../components/StatusNote";
import { useAsync } from "../useAsync";

const WINDOWS = [7, 30, 90] as const;
const CHART_HEIGHT = 240;
/** Bars stay readable when a window has few days with data. */
const MAX_BAR = 28;
const shortDay = (date: string) => date.slice(5);

/** The wallet's spending and service quality, as charts: from the chain's index and the gateway's records. */
export function ActivityPage() {
  const { refreshKey } = useApp();
  const [days, setDays] = useState<number>(30);
  const activity = useAsync(() => appApi.activity(days), [refreshKey, days]);
  return (
    <>
      <section className="card">
        <div className="row spread">
          <h1>Activity</h1>
          <div className="row" role="group" aria-label="Window">
            {WINDOWS.map((option) => (
              <button
                key={option}
                type="button"
                className={`preset${option === days ? " selected" : ""}`}
                data-testid={`activity-window-${option}`}
                onClick={() => setDays(option)}
              >
                {option} days
              </button>
            ))}
          </div>
        </div>
        {activity.status === "loading" ? <Loading what="your activity" /> : null}
        {activity.status === "error" ? <ErrorNote message={activity.error} onRetry={activity.reload} /> : null}
        {activity.status === "ready" ? <Totals activity={activity.data} /> : null}
      </section>
      {activity.status === "ready" && activity.data.totals.jobs === 0 ? (
        <section className="card">
          <Empty>No jobs in the last {days} days. Send a chat completion with your API key and it shows up here.</Empty>
        </section>
      ) : null}
      {activity.status === "ready" && activity.data.totals.jobs > 0 ? <Charts activity={activity.data} /> : null}
    </>
  );
}

function Totals({ activity }: { activity: WalletActivity }) {
  const { totals } = activity;
  const settled = activity.by_outcome.find((entry) => entry.status === "settled")?.jobs ?? 0;
  return (
    <div className="tiles" data-testid="activity-totals">
      <Tile label="Credits spent" value={totals.credits_charged.toLocaleString("en-US")} testId="total-credits" />
      <Tile label="Jobs" value={totals.jobs.toLocaleString("en-US")} testId="total-jobs" />
      <Tile
        label="Tokens (prompt + completion)"
        value={(totals.prompt_tokens + totals.completion_tokens).toLocaleString("en-US")}
        testId="total-tokens"
      />
      <Tile
        label="Settled"
        value={totals.jobs === 0 ? "—" : `${Math.round((settled / totals.jobs) * 100)} %`}
        testId="total-settled"
      />
      <p className="muted small tiles-note">
        {activity.from} to {activity.to} (UTC days)
      </p>
    </div>
  );
}

function Tile({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="tile">
      <div className="tile-value" data-testid={testId}>
        {value}
      </div>
      <div className="muted small">{label}</div>
    </div>
  );
}

function Charts({ activity }: { activity: WalletActivity }) {
  const models = activity.by_model.map((entry) => entry.model);
  const spendByDay = activity.by_day.map((day) => ({ date: shortDay(day.date), ...day.credits_by_model }));
  const tokensByDay = activity.by_day.map((day) => ({
    date: shortDay(day.date),
    prompt: day.prompt_tokens,
    completion: day.completion_tokens,
  }));
  const outcomes = activity.by_outcome.map((entry) => ({
    name: OUTCOME_STYLE[entry.status]?.label ?? entry.status,
    status: entry.status,
    value: entry.jobs,
  }));
  // Every day of the window on the axis, like the other charts; a day without a relayed token has no bar.
  const ttftOf = new Map(activity.time_to_first_token.map((day) => [day.date, day]));
  const ttft = activity.by_day.map((day) => ({
    date: shortDay(day.date),
    p50_ms: ttftOf.get(day.date)?.p50_ms ?? null,
    p95_ms: ttftOf.get(day.date)?.p95_ms ?? null,
  }));
  // Only models that cost something are drawn (a job that failed was not charged).
  const spentByModel = activity.by_model.filter((entry) => entry.credits_charged > 0);
  const spentModels = spentByModel.map((entry) => entry.model);
  return (
    <div className="chart-grid">
      <ChartCard title="Credits spent per day, by model" testId="chart-credits-per-day">
        <BarChart data={spendByDay}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="date" fontSize={12} />
          <YAxis allowDecimals={false} fontSize={12} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {spentModels.map((model) => (
            <Bar
              key={model}
              dataKey={model}
              stackId="credits"
              fill={colorOf(model, models)}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ChartCard>
      <ChartCard title="Credits spent per model" testId="chart-credits-per-model">
        <BarChart data={spentByModel} layout="vertical" margin={{ left: 40 }}>
          <CartesianGrid strokeDasharray="3 3" horizontal={false} />
          <XAxis type="number" allowDecimals={false} fontSize={12} />
          <YAxis type="category" dataKey="model" width={170} fontSize={12} />
          <Tooltip />
          <Bar dataKey="credits_charged" name="credits" isAnimationActive={false}>
            {spentByModel.map((entry) => (
              <Cell key={entry.model} fill={colorOf(entry.model, models)} />
            ))}
          </Bar>
        </BarChart>
      </ChartCard>
      <ChartCard title="Tokens per day" testId="chart-tokens">
        <BarChart data={tokensByDay}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="date" fontSize={12} />
          <YAxis allowDecimals={false} fontSize={12} />
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          <Bar dataKey="prompt" stackId="tokens" fill="#9fb4f5" maxBarSize={MAX_BAR} isAnimationActive={false} />
          <Bar dataKey="completion" stackId="tokens" fill="#2f5bea" maxBarSize={MAX_BAR} isAnimationActive={false} />
        </BarChart>
      </ChartCard>
      <ChartCard title="Jobs by outcome" testId="chart-outcomes">
        <PieChart>
          <Pie
            data={outcomes}
            dataKey="value"
            nameKey="name"
            innerRadius={50}
            outerRadius={85}
            isAnimationActive={false}
          >
            {outcomes.map((entry) => (
              <Cell key={entry.status} fill={OUTCOME_STYLE[entry.status]?.color ?? "#627085"} />
            ))}
          </Pie>
          <Tooltip />
          <Legend wrapperStyle={{ fontSize: 12 }} />
        </PieChart>
      </ChartCard>
      <ChartCard title="Time to first token per day (ms)" testId="chart-ttft" wide>
        {activity.time_to_first_token.length === 0 ? (
          <Empty>No token was relayed in this window yet.</Empty>
        ) : (
          <BarChart data={ttft}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="date" fontSize={12} />
            <YAxis fontSize={12} unit=" ms" width={70} />
            <Tooltip />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="p50_ms" name="median" fill="#9fb4f5" maxBarSize={MAX_BAR} isAnimationActive={false} />
            <Bar dataKey="p95_ms" name="p95" fill="#e8833a" maxBarSize={MAX_BAR} isAnimationActive={false} />
          </BarChart>
        )}
      </ChartCard>
    </div>
  );
}

function ChartCard({
  title,
  testId,
  wide = false,
  children,
}: {
  title: string;
  testId: string;
  wide?: boolean;
  children: React.ReactElement;
}) {
  return (
    <section className={`card chart${wide ? " wide" : ""}`} data-testid={testId}>
      <h2>{title}</h2>
      <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
        {children}
      </ResponsiveContainer>
    </section>
  );
}
