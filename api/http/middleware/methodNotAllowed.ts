import type { Express, RequestHandler } from "express";
import { ApiError } from "../../errors/ApiError.js";

/** The parts of Express 5's router layers this reads (router@2: `Layer.matchers`, `Layer.route.methods`). */
interface RouterLayer {
  slash?: boolean;
  matchers?: ((path: string) => unknown)[];
  route?: { methods: Record<string, boolean | undefined> };
  handle?: { stack?: RouterLayer[] };
}

interface KnownRoute {
  matchers: ((path: string) => unknown)[];
  methods: string[];
}

/** Every route mounted on `stack`, descending into routers mounted without a path prefix. */
function routesOf(stack: RouterLayer[]): KnownRoute[] {
  const routes: KnownRoute[] = [];
  for (const layer of stack) {
    if (layer.route && layer.matchers) {
      const methods = Object.keys(layer.route.methods)
        .filter((method) => method !== "_all" && layer.route?.methods[method])
        .map((method) => method.toUpperCase());
      if (methods.includes("GET") && !methods.includes("HEAD")) methods.push("HEAD");
      routes.push({ matchers: layer.matchers, methods });
    } else if (layer.slash && Array.isArray(layer.handle?.stack)) {
      routes.push(...routesOf(layer.handle.stack));
    }
  }
  return routes;
}

function matches(route: KnownRoute, path: string): boolean {
  return route.matchers.some((matcher) => {
    try {
      return Boolean(matcher(path));
    } catch {
      return false;
    }
  });
}

/**
 * Mounted after every route: a request no route answered whose path a route does serve, with another method, is
 * 405 `method_not_allowed` with `Allow` listing the methods (RFC 9110 §15.5.6). The routes are read from the app
 * itself on first use, so the list can never drift from what is mounted.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  let routes: KnownRoute[] | undefined;
  return (req, _res, next) => {
    routes ??= routesOf((app as unknown as { router: { stack: RouterLayer[] } }).router.stack);
    const allowed = new Set<string>();
    for (const route of routes) if (matches(route, req.path)) for (const method of route.methods) allowed.add(method);
    if (allowed.size === 0 || allowed.has(req.method)) {
      next();
      return;
    }
    const allow = [...allowed].join(", ");
    next(
      new ApiError("method_not_allowed", {
        message: `${req.method} is not allowed on ${req.path}; use ${allow}.`,
        headers: { allow },
      }),
    );
  };
}
