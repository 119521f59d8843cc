import { ApiKeyPanel } from "../components/ApiKeyPanel";
import { NotificationsPanel } from "../components/NotificationsPanel";
import { SpendingCapPanel } from "../components/SpendingCapPanel";

export function SettingsPage() {
  return (
    <>
      <h1>Settings</h1>
      <ApiKeyPanel />
      <SpendingCapPanel />
      <NotificationsPanel />
    </>
  );
}
