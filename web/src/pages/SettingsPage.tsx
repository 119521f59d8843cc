import { ApiKeyPanel } from "../components/ApiKeyPanel";
import { NotificationsPanel } from "../components/NotificationsPanel";

export function SettingsPage() {
  return (
    <>
      <h1>Settings</h1>
      <ApiKeyPanel />
      <NotificationsPanel />
    </>
  );
}
