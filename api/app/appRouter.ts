import { Router, type Request } from "express";
import type pg from "pg";
import { createPublicClient, getAddress, http, type Address, type PublicClient } from "viem";
import { z } from "zod";
import {
  CREDITS_PER_USDG,
  JOB_CURSOR_PATTERN,
  KEY_STATUSES,
  MIN_DEPOSIT,
  apiKeyRegistryAbi,
  creditEscrowAbi,
  creditsToUsdg,
  type Deployment,
} from "@credit-metered/client";
import type { GatewayConfig } from "../config.js";
import { ApiError } from "../errors/ApiError.js";
import { integerParam, pageLimitParam, parseQuery } from "../http/parseQuery.js";
import { parseOrThrow } from "../http/validate.js";
import type { AppSettings } from "./appSettings.js";
import { mintTestStablecoin } from "./mintTestStablecoin.js";
import { issueNonce } from "./nonceStore.js";
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from "./sessionCookie.js";
import { createSession, endSession, findSession } from "./sessionStore.js";
import { verifySignIn } from "./verifySignIn.js";
import { WalletActivity } from "./walletActivity.js";
import { INDEX_STATUS_OF, WalletJobs } from "./walletJobs.js";

export interface AppRouterDeps {
  config: GatewayConfig;
  settings: AppSettings;
  pool: pg.Pool;
  deployment: Deployment;
  publicClient: PublicClient;
  /** The Model resources of `GET /v1/models` (the Models page shows the same facts without an API key). */
  listModels: () => Promise<unknown[]>;
}

/** The Activity page shows at most this many days. */
export const MAX_ACTIVITY_DAYS = 90;

/** The chain the local stack runs (Hardhat); dev-mode helpers exist only there. */
export const LOCAL_CHAIN_ID = 31337;
/** The Fund page preselects this many stablecoin (1,000 credits). */
export const SUGGESTED_DEPOSIT_USDG = 10;

const loginBody = z.object({ message: z.string().min(1).max(4096), signature: z.string().min(1).max(4096) });
const jobCursor = z.string().regex(JOB_CURSOR_PATTERN).optional();
/** Paged and filtered like `GET /v1/jobs` (api/README.md "Job list"). */
const jobsQuery = z.object({
  limit: pageLimitParam(),
  before: jobCursor,
  after: jobCursor,
  status: z.enum(Object.keys(INDEX_STATUS_OF) as [keyof typeof INDEX_STATUS_OF]).optional(),
  model: z.string().min(1).max(200).optional(),
});
const activityQuery = z.object({ days: integerParam("days", 1, MAX_ACTIVITY_DAYS).default(30) });
const mintBody = z.object({ usdg: z.number().int().min(1).max(10_000) });

/** A public client on the deployment's chain, for reads and signature checks. */
export function appPublicClient(config: GatewayConfig, deployment: Deployment): PublicClient {
  const chain = {
    id: deployment.chainId,
    name: `chain ${deployment.chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [config.RPC_URL] } },
  } as const;
  return createPublicClient({ chain, transport: http(config.RPC_URL), pollingInterval: 250 });
}

/** Where the app is served: the configured APP_URL, else the origin the browser used. */
function appOriginOf(req: Request, config: GatewayConfig): { domain: string; origin: string } {
  if (config.APP_URL) {
    const url = new URL(config.APP_URL);
    return { domain: url.host, origin: url.origin };
  }
  const host = req.get("host") ?? `${config.API_HOST}:${config.API_PORT}`;
  return { domain: host, origin: `${req.protocol}://${host}` };
}

/**
 * The web application's backend (`/app/*`): config, Sign-In with Ethereum and the session, and the wallet views
 * the API key cannot give (account with locked credits, key status, job history, dev-mode faucet).
 * `resolveWallet` is the session lookup the other `/app` routers (webhooks) use too.
 */
export function appRouter(deps: AppRouterDeps): {
  router: Router;
  resolveWallet: (req: Request) => Promise<string | null>;
} {
  const router = Router();
  const jobs = new WalletJobs(deps.config.INDEXER_URL, deps.config.INDEX_TIMEOUT_MS);
  const activity = new WalletActivity(deps.config.INDEXER_URL, deps.pool);
  const devMode = deps.settings.APP_DEV_MODE && deps.deployment.chainId === LOCAL_CHAIN_ID;

  const resolveWallet = async (req: Request): Promise<string | null> => {
    const token = sessionTokenOf(req);
    if (!token) return null;
    const session = await findSession(deps.pool, token);
    return session && session.chainId === deps.deployment.chainId ? session.wallet : null;
  };
  const walletOf = async (req: Request): Promise<Address> => {
    const wallet = await resolveWallet(req);
    if (!wallet) throw new ApiError("app_session_required");
    return getAddress(wallet);
  };

  router.get("/app/config", (req, res) => {
    const { origin } = appOriginOf(req, deps.config);
    res.json({
      object: "app_config",
      chain_id: deps.deployment.chainId,
      // Without a public RPC URL the browser goes through this origin (api/app/rpcProxy.ts).
      rpc_url: deps.settings.APP_RPC_URL ?? "/app/rpc",
      contracts: deps.deployment.contracts,
      treasury: deps.deployment.roles.treasury,
      models: deps.deployment.models.map(({ id, key }) => ({ id, key })),
      fee_bps: deps.deployment.params.feeBps,
      dispute_window_s: deps.deployment.params.disputeWindow,
      dev_mode: devMode,
      api_url: `${deps.config.PUBLIC_BASE_URL}/v1`,
      // `{explorer_url}`: a real explorer where there is one; locally this app's own /tx page.
      explorer_url: deps.config.EXPLORER_URL ?? `${origin}/tx`,
      min_deposit_usdg: Number(MIN_DEPOSIT) / 1_000_000,
      suggested_deposit_usdg: SUGGESTED_DEPOSIT_USDG,
      credits_per_usdg: CREDITS_PER_USDG,
    });
  });

  router.post("/app/siwe/nonce", async (_req, res) => {
    const { nonce, expiresAt } = await issueNonce(deps.pool, deps.settings.APP_NONCE_TTL_S);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "siwe_nonce", nonce, expires_at: expiresAt.toISOString() });
  });

  router.post("/app/siwe/login", async (req, res) => {
    const body = parseOrThrow(loginBody, req.body ?? {});
    const { domain, origin } = appOriginOf(req, deps.config);
    const wallet = await verifySignIn({ pool: deps.pool, publicClient: deps.publicClient }, body, {
      domain,
      origin,
      chainId: deps.deployment.chainId,
    });
    const session = await createSession(deps.pool, {
      wallet,
      chainId: deps.deployment.chainId,
      ttlSeconds: deps.settings.APP_SESSION_TTL_S,
    });
    setSessionCookie(req, res, session.token, session.expiresAt);
    res.json({ object: "session", wallet: wallet.toLowerCase(), expires_at: session.expiresAt.toISOString() });
  });

  router.post("/app/logout", async (req, res) => {
    const token = sessionTokenOf(req);
    if (token) await endSession(deps.pool, token);
    clearSessionCookie(req, res);
    res.json({ object: "session", signed_out: true });
  });

  router.get("/app/me", async (req, res) => {
    const token = sessionTokenOf(req);
    const session = token ? await findSession(deps.pool, token) : undefined;
    if (!session || session.chainId !== deps.deployment.chainId) throw new ApiError("app_session_required");
    res.json({
      object: "session",
      wallet: session.wallet,
      chain_id: session.chainId,
      expires_at: session.expiresAt.toISOString(),
    });
  });

  router.get("/app/account", async (req, res) => {
    const wallet = await walletOf(req);
    const [account, key] = await Promise.all([
      deps.publicClient.readContract({
        address: deps.deployment.contracts.creditEscrow,
        abi: creditEscrowAbi,
        functionName: "accountOf",
        args: [wallet],
      }),
      deps.publicClient.readContract({
        address: deps.deployment.contracts.apiKeyRegistry,
        abi: apiKeyRegistryAbi,
        functionName: "keyOf",
        args: [wallet],
      }),
    ]);
    const available = Number(account.available);
    const locked = Number(account.locked);
    const [keyHash, keyStatus, keyCreatedAt] = key;
    res.setHeader("cache-control", "no-store");
    res.json({
      object: "app_account",
      wallet: wallet.toLowerCase(),
      credits_available: available,
      usdg_value: creditsToUsdg(available),
      credits_locked: locked,
      locked_usdg_value: creditsToUsdg(locked),
      last_topup_at: account.lastTopUpAt === 0n ? null : new Date(Number(account.lastTopUpAt) * 1000).toISOString(),
      key: {
        status: KEY_STATUSES[keyStatus] ?? "none",
        key_hash: keyStatus === 0 ? null : keyHash,
        created_at: keyCreatedAt === 0n ? null : new Date(Number(keyCreatedAt) * 1000).toISOString(),
      },
    });
  });

  router.get("/app/jobs", async (req, res) => {
    const wallet = await walletOf(req);
    const query = parseQuery(req, jobsQuery);
    if (query.before && query.after) {
      throw new ApiError("invalid_request", { param: "after", message: "Use either before or after, not both." });
    }
    const page = await jobs.page(wallet, query);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "list", ...page });
  });

  router.get("/app/activity", async (req, res) => {
    const wallet = await walletOf(req);
    const query = parseQuery(req, activityQuery);
    res.setHeader("cache-control", "no-store");
    res.json(await activity.report(wallet, query.days));
  });

  router.get("/app/models", async (req, res) => {
    await walletOf(req);
    res.setHeader("cache-control", "no-store");
    res.json({ object: "list", data: await deps.listModels() });
  });

  if (devMode) {
    // Local chain only: test stablecoin for the signed-in wallet, so the Fund page can be tried end to end.
    router.post("/app/dev/mint", async (req, res) => {
      const wallet = await walletOf(req);
      const body = parseOrThrow(mintBody, req.body ?? {});
      const tx = await mintTestStablecoin(
        { rpcUrl: deps.config.RPC_URL, deployment: deps.deployment, publicClient: deps.publicClient },
        wallet,
        BigInt(body.usdg) * 1_000_000n,
      );
      res.json({ object: "mint", wallet: wallet.toLowerCase(), usdg: body.usdg, tx });
    });
  }

  return { router, resolveWallet };
}
