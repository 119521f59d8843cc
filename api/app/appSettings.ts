import { z } from "zod";

const boolean = z.enum(["true", "false", "1", "0"]).transform((value) => value === "true" || value === "1");

/** Settings of the web application's backend, read from the environment next to the gateway's config. */
export const appSettingsSchema = z.object({
  /**
   * Development mode: on a local chain (31337) the app offers the demo wallet and a test-stablecoin faucet.
   * Never set in production.
   */
  APP_DEV_MODE: boolean.default(false),
  /** Folder of the built web app (`web/dist`); when set the gateway serves it at `/`. */
  WEB_DIST_DIR: z.string().min(1).optional(),
  /** Public RPC URL the browser uses; without it the gateway proxies its own RPC_URL at /app/rpc. */
  APP_RPC_URL: z.url().optional(),
  /** Session lifetime, seconds (default 24 h). */
  APP_SESSION_TTL_S: z.coerce.number().int().positive().default(86_400),
  /** SIWE nonce lifetime, seconds (default 10 min). */
  APP_NONCE_TTL_S: z.coerce.number().int().positive().default(600),
});

export type AppSettings = z.infer<typeof appSettingsSchema>;

/** Parses the app settings; throws naming every bad variable. */
export function loadAppSettings(env: NodeJS.ProcessEnv = process.env): AppSettings {
  const parsed = appSettingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid web app configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
