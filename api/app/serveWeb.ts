import { existsSync } from "node:fs";
import path from "node:path";
import express, { Router } from "express";

/** Paths that belong to the API, never to the web app's client-side routes. */
const API_PREFIXES = ["/app", "/metrics", "/healthz", "/readyz", "/docs"];
/** Every API version prefix, present or future (`/v1`, `/v2`, …): an unknown API path is a JSON 404, never HTML. */
const VERSION_PREFIX = /^\/v[0-9]+(\/|$)/;

const isApiPath = (url: string) =>
  VERSION_PREFIX.test(url) || API_PREFIXES.some((prefix) => url === prefix || url.startsWith(`${prefix}/`));

/**
 * Serves the built web app (`web/dist`) at `/`: its files, and `index.html` for every other GET that is not an API
 * path (client-side routes such as `/tx/0x…` or `/settings`). Without a build, nothing is mounted.
 */
export function serveWeb(distDir: string): Router {
  const router = Router();
  const indexFile = path.resolve(distDir, "index.html");
  if (!existsSync(indexFile)) return router;
  // Hashed asset names may be cached for long; index.html never (it names the current assets).
  router.use(
    "/assets",
    express.static(path.resolve(distDir, "assets"), { immutable: true, maxAge: "365d", fallthrough: false }),
  );
  router.use(express.static(path.resolve(distDir), { index: false }));
  // A middleware rather than a catch-all GET route, so it never counts as "a route for every path" (405 answers).
  router.use((req, res, next) => {
    if ((req.method !== "GET" && req.method !== "HEAD") || isApiPath(req.path) || !req.accepts("html")) {
      next();
      return;
    }
    res.setHeader("cache-control", "no-cache");
    // Relative to `root`: `send` refuses paths with dot-folders (`.local/…`) unless they are inside the root.
    res.sendFile("index.html", { root: path.resolve(distDir) });
  });
  return router;
}
