import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { useAsync } from "../useAsync";
import { ErrorNote, Loading } from "./StatusNote";

const usdg = (value: number) => value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Credits (available and locked in running jobs), their stablecoin value, the last top-up. */
export function BalanceCard() {
  const { refreshKey } = useApp();
  const account = useAsync(() => appApi.account(), [refreshKey]);
  return (
    <section className="card" data-testid="balance">
      <h2>Balance</h2>
      {account.status === "loading" ? <Loading what="your balance" /> : null}
      {account.status === "error" ? <ErrorNote message={account.error} onRetry={account.reload} /> : null}
      {account.status === "ready" ? (
        <div className="figures">
          <div>
            <span className="label">Available</span>
            <span className="big" data-testid="credits-available">
              {account.data.credits_available.toLocaleString("en-US")} credits
            </span>
            <span className="muted">{usdg(account.data.usdg_value)} USDG</span>
          </div>
          <div>
            <span className="label">Locked in running jobs</span>
            <span className="big" data-testid="credits-locked">
              {account.data.credits_locked.toLocaleString("en-US")} credits
            </span>
            <span className="muted">{usdg(account.data.locked_usdg_value)} USDG</span>
          </div>
          <div>
            <span className="label">Last top-up</span>
            <span className="big small-big">
              {account.data.last_topup_at ? new Date(account.data.last_topup_at).toLocaleString() : "Never"}
            </span>
            <span className="muted">1 USDG = 100 credits</span>
          </div>
        </div>
      ) : null}
    </section>
  );
}
