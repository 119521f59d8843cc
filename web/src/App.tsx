import { useEffect, useMemo, useState } from "react";
import { appApi } from "./appApi";
import { AppContext, type AppState } from "./appContext";
import type { AppConfig, AppSession } from "./appTypes";
import { plainError } from "./chain/plainError";
import { publicClientOf } from "./chain/publicClientOf";
import { ConnectPanel } from "./components/ConnectPanel";
import { Nav } from "./components/Nav";
import { ErrorNote, Loading } from "./components/StatusNote";
import { ActivityPage } from "./pages/ActivityPage";
import { ExplorerPage } from "./pages/ExplorerPage";
import { FundPage } from "./pages/FundPage";
import { HomePage } from "./pages/HomePage";
import { JobsPage } from "./pages/JobsPage";
import { ModelsPage } from "./pages/ModelsPage";
import { SettingsPage } from "./pages/SettingsPage";
import { WebhooksPage } from "./pages/WebhooksPage";
import { useRoute } from "./useRoute";
import type { ConnectedWallet } from "./wallet/ConnectedWallet";

/** Loads the backend's config, then shows the page of the current path. */
export function App() {
  const [config, setConfig] = useState<AppConfig | null>(null);
  const [configError, setConfigError] = useState<string | null>(null);
  useEffect(() => {
    appApi.config().then(setConfig, (error: unknown) => setConfigError(plainError(error)));
  }, []);
  if (configError) {
    return (
      <main className="shell">
        <ErrorNote message={`The app cannot start: ${configError}`} onRetry={() => window.location.reload()} />
      </main>
    );
  }
  if (!config) {
    return (
      <main className="shell">
        <Loading what="the app" />
      </main>
    );
  }
  return <Shell config={config} />;
}

function Shell({ config }: { config: AppConfig }) {
  const [wallet, setWallet] = useState<ConnectedWallet | null>(null);
  const [session, setSession] = useState<AppSession | null>(null);
  const [refreshKey, setRefreshKey] = useState(0);
  const path = useRoute();
  const state: AppState = useMemo(
    () => ({
      config,
      publicClient: publicClientOf(config),
      wallet,
      session,
      setWallet,
      setSession,
      refreshKey,
      refresh: () => setRefreshKey((n) => n + 1),
    }),
    [config, wallet, session, refreshKey],
  );
  const explorerHash = /^\/tx\/(0x[0-9a-fA-F]{64})\/?$/.exec(path)?.[1];
  // The session is only trusted together with the wallet that opened it (a page reload needs a reconnect).
  const signedIn = wallet !== null && session !== null && session.wallet === wallet.address.toLowerCase();
  let page: React.ReactNode;
  if (path.startsWith("/tx/")) {
    page = explorerHash ? <ExplorerPage hash={explorerHash as `0x${string}`} /> : <ExplorerPage hash={null} />;
  } else if (!signedIn) {
    page = <ConnectPanel />;
  } else if (path === "/fund") {
    page = <FundPage />;
  } else if (path === "/settings") {
    page = <SettingsPage />;
  } else if (path === "/webhooks") {
    page = <WebhooksPage />;
  } else if (path === "/jobs") {
    page = <JobsPage />;
  } else if (path === "/activity") {
    page = <ActivityPage />;
  } else if (path === "/models") {
    page = <ModelsPage />;
  } else {
    page = <HomePage />;
  }
  return (
    <AppContext.Provider value={state}>
      <Nav path={path} signedIn={signedIn} />
      <main className="shell">{page}</main>
    </AppContext.Provider>
  );
}
