import { BalanceCard } from "../components/BalanceCard";
import { navigate } from "../useRoute";

export function HomePage() {
  return (
    <>
      <BalanceCard />
      <section className="card">
        <h2>Next steps</h2>
        <div className="row">
          <button type="button" onClick={() => navigate("/fund")}>
            Add credits
          </button>
          <button type="button" className="secondary" onClick={() => navigate("/settings")}>
            Manage API key
          </button>
          <button type="button" className="secondary" onClick={() => navigate("/activity")}>
            See activity
          </button>
          <button type="button" className="secondary" onClick={() => navigate("/jobs")}>
            See jobs
          </button>
        </div>
      </section>
    </>
  );
}
