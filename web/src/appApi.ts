import type {
  AppAccount,
  AppConfig,
  AppSession,
  FailedDelivery,
  ServiceModel,
  WalletActivity,
  WalletJobFilter,
  WalletJobPage,
  Webhook,
} from "./appTypes";

function jobsPath(filter: WalletJobFilter): string {
  const query = new URLSearchParams({ limit: String(filter.limit) });
  for (const name of ["before", "after", "status", "model"] as const) {
    const value = filter[name];
    if (value) query.set(name, value);
  }
  return `/app/jobs?${query.toString()}`;
}

/** An error answer of the backend, in the API's error format. */
export class AppApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "AppApiError";
  }
}

async function request<T>(method: "GET" | "POST" | "PUT", path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      // Balances, keys and deliveries change under us: never answer from the HTTP cache.
      cache: "no-store",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new AppApiError(0, "network_error", "The service cannot be reached. Check your connection and try again.");
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = {};
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } }).error;
    throw new AppApiError(
      response.status,
      error?.code ?? "http_error",
      error?.message ?? `The service answered ${response.status}.`,
    );
  }
  return parsed as T;
}

/** The web app's backend, `/app/*` (same origin; the session is an HttpOnly cookie). */
export const appApi = {
  config: () => request<AppConfig>("GET", "/app/config"),
  nonce: () => request<{ nonce: string }>("POST", "/app/siwe/nonce"),
  login: (message: string, signature: string) => request<AppSession>("POST", "/app/siwe/login", { message, signature }),
  logout: () => request<unknown>("POST", "/app/logout"),
  me: () => request<AppSession>("GET", "/app/me"),
  account: () => request<AppAccount>("GET", "/app/account"),
  jobs: (filter: WalletJobFilter) => request<WalletJobPage>("GET", jobsPath(filter)),
  activity: (days: number) => request<WalletActivity>("GET", `/app/activity?days=${days}`),
  models: () => request<{ data: ServiceModel[] }>("GET", "/app/models"),
  webhooks: () => request<{ data: Webhook[] }>("GET", "/app/webhooks"),
  deliveries: () => request<{ data: FailedDelivery[] }>("GET", "/app/webhooks/deliveries?limit=50"),
  replayOne: (id: string) => request<{ replayed: number }>("POST", `/app/webhooks/deliveries/${id}/replay`),
  replayAll: () => request<{ replayed: number }>("POST", "/app/webhooks/deliveries/replay", {}),
  settings: () => request<{ low_credit_threshold: number }>("GET", "/app/webhooks/settings"),
  setThreshold: (threshold: number) =>
    request<{ low_credit_threshold: number }>("PUT", "/app/webhooks/settings", { low_credit_threshold: threshold }),
  devMint: (usdg: number) => request<{ tx: string }>("POST", "/app/dev/mint", { usdg }),
};
