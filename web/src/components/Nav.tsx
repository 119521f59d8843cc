import { appApi } from "../appApi";
import { useApp } from "../appContext";
import { navigate } from "../useRoute";
import { Mono } from "./ExplorerLink";

const LINKS = [
  { path: "/", label: "Balance" },
  { path: "/fund", label: "Fund" },
  { path: "/activity", label: "Activity" },
  { path: "/jobs", label: "Jobs" },
  { path: "/models", label: "Models" },
  { path: "/webhooks", label: "Webhooks" },
  { path: "/settings", label: "Settings" },
];

export function Nav({ path, signedIn }: { path: string; signedIn: boolean }) {
  const { wallet, setWallet, setSession, config } = useApp();
  const signOut = async () => {
    await appApi.logout().catch(() => undefined);
    setSession(null);
    setWallet(null);
    navigate("/");
  };
  return (
    <header className="topbar">
      <strong className="brand">Inference credits</strong>
      {signedIn ? (
        <nav>
          {LINKS.map((link) => (
            <a
              key={link.path}
              href={link.path}
              className={path === link.path ? "active" : ""}
              onClick={(event) => {
                event.preventDefault();
                navigate(link.path);
              }}
            >
              {link.label}
            </a>
          ))}
        </nav>
      ) : (
        <nav />
      )}
      <div className="who">
        <span className="chip">{config.chain_id === 31337 ? "Local chain" : `Chain ${config.chain_id}`}</span>
        {wallet && signedIn ? (
          <>
            <span className="chip" data-testid="wallet-address">
              {wallet.kind === "dev" ? "Dev wallet " : ""}
              <Mono value={wallet.address} />
            </span>
            <button type="button" className="link" onClick={signOut}>
              Sign out
            </button>
          </>
        ) : null}
      </div>
    </header>
  );
}
