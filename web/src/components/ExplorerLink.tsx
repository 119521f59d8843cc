import { useApp } from "../appContext";
import { navigate } from "../useRoute";

const short = (value: string) => (value.length > 14 ? `${value.slice(0, 8)}…${value.slice(-6)}` : value);

/**
 * A link to a transaction on `{explorer_url}`: this app's own /tx page on the local chain (no public explorer),
 * a real explorer elsewhere.
 */
export function TxLink({ hash, label }: { hash: string; label?: string }) {
  const { config } = useApp();
  const href = `${config.explorer_url.replace(/\/$/, "")}/${hash}`;
  const local = href.startsWith(`${window.location.origin}/tx/`);
  return (
    <a
      className="mono"
      href={href}
      title={hash}
      data-tx={hash}
      {...(local
        ? {
            onClick: (event: React.MouseEvent) => {
              event.preventDefault();
              navigate(new URL(href).pathname);
            },
          }
        : { target: "_blank", rel: "noreferrer" })}
    >
      {label ?? short(hash)}
    </a>
  );
}

export function Mono({ value, full }: { value: string; full?: boolean }) {
  return (
    <span className="mono" title={value}>
      {full ? value : short(value)}
    </span>
  );
}
