import { Router } from "express";
import type { DocsSite } from "../../docs-site/site.js";

/** Where the gateway serves the docs site (the default `{docs_url}` is `PUBLIC_BASE_URL` + this). */
export const DOCS_PATH = "/docs";

/**
 * The docs site (docs-site/), built in memory at start, served at `/docs`: `/docs/` is the overview, `/docs/<name>`
 * and `/docs/<name>.html` a page (error bodies link `{docs_url}/errors#<code>`), other names the site's files. A
 * name the site does not have falls through to the gateway's JSON 404.
 */
export function serveDocs(site: DocsSite): Router {
  const router = Router();
  router.get(`${DOCS_PATH}{/*name}`, (req, res, next) => {
    // `/docs` → `/docs/`, so the overview's relative links resolve inside the site.
    if (!req.originalUrl.split("?")[0]!.endsWith("/") && req.path === DOCS_PATH) {
      res.redirect(301, `${DOCS_PATH}/`);
      return;
    }
    const name = ((req.params as { name?: string[] }).name ?? []).join("/");
    const file = site.get(name === "" ? "index.html" : name) ?? site.get(`${name}.html`);
    if (!file) {
      next();
      return;
    }
    res.setHeader("content-type", file.contentType);
    // Pages change with each release of the gateway; revalidate rather than serve a stale page.
    res.setHeader("cache-control", "no-cache");
    res.send(file.body);
  });
  return router;
}
