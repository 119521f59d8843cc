import { useState } from "react";
import { parseUnits, type Hex } from "viem";
import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { stablecoinAbi } from "@credit-metered/client";
import { depositWithPermit } from "../chain/depositWithPermit";
import { plainError } from "../chain/plainError";
import { BalanceCard } from "../components/BalanceCard";
import { TxLink } from "../components/ExplorerLink";
import { ErrorNote, SuccessNote } from "../components/StatusNote";
import { useAsync } from "../useAsync";

const PRESETS = [1, 5, 10, 25, 100];

/** Deposit stablecoin with an EIP-2612 permit: one signature, one transaction. */
export function FundPage() {
  const { config, publicClient, wallet, refresh, refreshKey } = useApp();
  const [amount, setAmount] = useState(String(config.suggested_deposit_usdg));
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<{ tx: Hex; usdg: string } | null>(null);
  const held = useAsync(
    () =>
      publicClient.readContract({
        address: config.contracts.stablecoin,
        abi: stablecoinAbi,
        functionName: "balanceOf",
        args: [wallet!.address],
      }),
    [refreshKey, wallet?.address],
  );
  const parsed = /^\d+(\.\d{1,2})?$/.test(amount.trim()) ? parseUnits(amount.trim(), 6) : null;
  const tooSmall = parsed !== null && parsed < BigInt(config.min_deposit_usdg * 1_000_000);

  const deposit = async () => {
    if (!wallet || parsed === null || tooSmall) return;
    setBusy("Sign the permit in your wallet, then confirm the deposit…");
    setError(null);
    setDone(null);
    try {
      const tx = await depositWithPermit(config, publicClient, wallet, parsed);
      setDone({ tx, usdg: amount.trim() });
      refresh();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(null);
    }
  };
  const mint = async () => {
    setBusy("Minting test USDG…");
    setError(null);
    try {
      await appApi.devMint(100);
      refresh();
    } catch (caught) {
      setError(plainError(caught));
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <section className="card">
        <h1>Add credits</h1>
        <p className="muted">
          Deposit USDG from your wallet: you sign a permit and send one transaction. 1 USDG buys 100 credits; the
          minimum is {config.min_deposit_usdg} USDG.
        </p>
        <p>
          In your wallet:{" "}
          <strong data-testid="wallet-usdg">
            {held.status === "ready"
              ? `${(Number(held.data) / 1e6).toFixed(2)} USDG`
              : held.status === "error"
                ? "unknown"
                : "…"}
          </strong>
          {config.dev_mode && wallet?.kind === "dev" ? (
            <button type="button" className="link" data-testid="mint-test-usdg" disabled={busy !== null} onClick={mint}>
              Mint 100 test USDG (local chain)
            </button>
          ) : null}
        </p>
        <div className="row">
          {PRESETS.map((preset) => (
            <button
              key={preset}
              type="button"
              className={amount === String(preset) ? "preset selected" : "preset"}
              onClick={() => setAmount(String(preset))}
            >
              {preset} USDG
            </button>
          ))}
        </div>
        <label className="field">
          Amount (USDG)
          <input
            data-testid="deposit-amount"
            inputMode="decimal"
            value={amount}
            onChange={(event) => setAmount(event.target.value)}
          />
        </label>
        <p className="muted small">
          {parsed === null
            ? "Enter an amount like 10 or 12.50."
            : tooSmall
              ? `The minimum deposit is ${config.min_deposit_usdg} USDG.`
              : `You get ${(Number(parsed) / 10_000).toLocaleString("en-US")} credits.`}
        </p>
        <button
          type="button"
          data-testid="deposit"
          disabled={busy !== null || parsed === null || tooSmall}
          onClick={deposit}
        >
          Deposit
        </button>
        {busy ? <p className="note loading">{busy}</p> : null}
        {error ? <ErrorNote message={error} /> : null}
        {done ? (
          <SuccessNote>
            <span data-testid="deposit-done">
              Deposited {done.usdg} USDG. Transaction: <TxLink hash={done.tx} />
            </span>
          </SuccessNote>
        ) : null}
      </section>
      <BalanceCard />
    </>
  );
}
