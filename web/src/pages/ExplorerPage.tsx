import type { Hex } from "viem";
import { useApp } from "../appContext";
import { describeTransaction, type FactRow } from "../chain/describeTransaction";
import { Mono } from "../components/ExplorerLink";
import { ErrorNote, Loading } from "../components/StatusNote";
import { useAsync } from "../useAsync";

function Value({ row }: { row: FactRow }) {
  if (row.kind === "address" || row.kind === "hash") return <Mono value={row.value} full />;
  return <span>{row.value}</span>;
}

/** `/tx/<hash>`: what a product transaction did, decoded from the chain (the local chain has no public explorer). */
export function ExplorerPage({ hash }: { hash: Hex | null }) {
  const { config, publicClient } = useApp();
  const described = useAsync(
    () =>
      hash
        ? describeTransaction(config, publicClient, hash).catch((error: unknown) => {
            const text = error instanceof Error ? error.message : "";
            if (/could not be found|not found/i.test(text)) {
              throw new Error("This transaction is not on this chain (yet). Check the hash, or wait a moment.");
            }
            throw error;
          })
        : Promise.reject(new Error("That is not a transaction hash (0x followed by 64 hex digits).")),
    [hash],
  );
  return (
    <section className="card explorer" data-testid="explorer">
      <h1>Transaction</h1>
      <p className="mono small">{hash ?? "—"}</p>
      {described.status === "loading" ? <Loading what="the transaction from the chain" /> : null}
      {described.status === "error" ? <ErrorNote message={described.error} onRetry={described.reload} /> : null}
      {described.status === "ready" ? (
        <>
          <h2 data-testid="tx-headline">{described.data.headline}</h2>
          <dl className="facts">
            <dt>Status</dt>
            <dd className={described.data.status === "success" ? "ok" : "failed"}>
              {described.data.status === "success" ? "Succeeded" : "Reverted"}
            </dd>
            <dt>Block</dt>
            <dd>
              {described.data.blockNumber.toString()} · {described.data.timestamp.toISOString()}
            </dd>
            <dt>From</dt>
            <dd>
              <Mono value={described.data.from} full />
            </dd>
            <dt>To</dt>
            <dd>
              {described.data.toName}
              {described.data.call ? ` · ${described.data.call}()` : ""}
            </dd>
          </dl>
          {described.data.sections.map((section, index) => (
            <div key={`${section.title}-${index}`} className="fact-section" data-testid="tx-section">
              <h3>{section.title}</h3>
              <dl className="facts">
                {section.rows.map((row, rowIndex) => (
                  <div key={`${row.label}-${rowIndex}`} className="fact" data-label={row.label}>
                    <dt>{row.label}</dt>
                    <dd>
                      <Value row={row} />
                    </dd>
                  </div>
                ))}
              </dl>
            </div>
          ))}
        </>
      ) : null}
    </section>
  );
}
