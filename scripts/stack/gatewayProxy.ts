import http from "node:http";
import type { AddressInfo } from "node:net";
import { errorBody } from "../../api/errors/ApiError.js";
import { serviceUnavailable } from "../../api/errors/dependencyOutage.js";

export type GatewayProxyOptions = {
  port: number;
  host?: string;
  /** `http://host:port` of each gateway process. */
  upstreams: string[];
  /** An upstream that refused a connection is skipped for this long. */
  downForMs?: number;
  /** Each forwarded request gives up on an upstream that does not answer its headers within this long. */
  headersTimeoutMs?: number;
  /** `{docs_url}` for the proxy's own error bodies (the gateways' DOCS_URL). */
  docsUrl: string;
};

export type RunningGatewayProxy = {
  url: string;
  stop: () => Promise<void>;
};

const DEFAULT_DOWN_FOR_MS = 2_000;
// Streams keep their connection open far longer; this bounds only the wait for the response headers, which a
// gateway sends within its job timeout at worst.
const DEFAULT_HEADERS_TIMEOUT_MS = 180_000;
/** Errors that prove the request never reached the upstream, so another one may take it safely. */
const NOT_DELIVERED = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"]);

/**
 * `GATEWAYS=N` of `npm start` (docs/DESIGN.md, "Several gateways"): one port in front of N gateway processes,
 * round-robin per request, bodies and streams piped through unbuffered. An upstream that refuses the connection
 * (stopped, killed) is skipped for a moment and the request goes to the next one: a refused connection never
 * reached a gateway, so nothing ran twice. A request already delivered to a gateway that then dies is not retried
 * (it may have locked credits); the client gets the broken connection, as it would from a load balancer.
 */
export async function startGatewayProxy(options: GatewayProxyOptions): Promise<RunningGatewayProxy> {
  if (options.upstreams.length === 0) throw new Error("the proxy needs at least one gateway");
  const upstreams = options.upstreams.map((url) => ({ url: new URL(url), downUntil: 0 }));
  const downForMs = options.downForMs ?? DEFAULT_DOWN_FOR_MS;
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1_024 });
  let next = 0;

  const pick = (exclude: Set<number>): number | undefined => {
    const now = Date.now();
    for (let i = 0; i < upstreams.length; i++) {
      const index = (next + i) % upstreams.length;
      if (!exclude.has(index) && (upstreams[index]?.downUntil ?? 0) <= now) {
        next = (index + 1) % upstreams.length;
        return index;
      }
    }
    // All marked down: try any not yet tried rather than refusing outright.
    for (let index = 0; index < upstreams.length; index++) if (!exclude.has(index)) return index;
    return undefined;
  };

  const server = http.createServer(
    {
      // Like the gateways (api/main.ts): a client trickling its request is cut off within seconds; the answer,
      // a stream included, is not bounded by these.
      headersTimeout: 5_000,
      requestTimeout: 15_000,
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: 500,
    },
    (req, res) => {
      // The body is read once and kept so a refused connection can be retried on another gateway.
      const chunks: Buffer[] = [];
      let retriedStale = false;
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => forward(Buffer.concat(chunks), new Set()));
      req.on("error", () => res.destroy());

      // The spec's error format from the one catalog; both cases are "retry shortly" (503 with retry_after).
      function reply(status: 503, message: string): void {
        const error = serviceUnavailable(message);
        res.writeHead(status, { "content-type": "application/json", ...error.headers });
        res.end(JSON.stringify(errorBody(error, options.docsUrl)));
      }

      function forward(body: Buffer, tried: Set<number>): void {
        const index = pick(tried);
        const upstream = index === undefined ? undefined : upstreams[index];
        if (index === undefined || !upstream) {
          reply(503, "No gateway process is reachable.");
          return;
        }
        tried.add(index);
        const outgoing = http.request(
          {
            agent,
            host: upstream.url.hostname,
            port: upstream.url.port,
            method: req.method,
            path: req.url,
            headers: forwardedHeaders(req),
          },
          (incoming) => {
            clearTimeout(timer);
            res.writeHead(incoming.statusCode ?? 502, incoming.headers);
            incoming.pipe(res);
            incoming.on("error", () => res.destroy());
            res.on("close", () => incoming.destroy());
          },
        );
        const timer = setTimeout(() => outgoing.destroy(new Error("upstream headers timeout")), headersTimeoutMs);
        outgoing.on("error", (error: NodeJS.ErrnoException) => {
          clearTimeout(timer);
          if (res.headersSent) {
            res.destroy();
            return;
          }
          if (error.code && NOT_DELIVERED.has(error.code)) {
            upstream.downUntil = Date.now() + downForMs;
            forward(body, tried);
            return;
          }
          // A kept-alive connection the gateway closed as idle (HTTP_KEEP_ALIVE_TIMEOUT_MS) just as this request
          // left on it: the gateway never read it. Node's advice for this race is one retry on a fresh connection.
          if (outgoing.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE") && !retriedStale) {
            retriedStale = true;
            tried.delete(index);
            forward(body, tried);
            return;
          }
          reply(503, "The gateway process failed before answering; retry shortly.");
        });
        // A client that goes away mid-request is passed on, so the gateway sees the disconnect (and stops the job).
        res.on("close", () => {
          if (!res.writableFinished) outgoing.destroy();
        });
        outgoing.end(body);
      }
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/**
 * The client's headers as the gateways receive them: `X-Forwarded-For` is set here to the address this proxy saw
 * and whatever the client sent in it (or in `Forwarded`, `X-Real-IP`) is dropped, so the gateways, which trust
 * this proxy (TRUSTED_PROXIES), limit the real client and not a name it made up (issue 23 item 4).
 */
function forwardedHeaders(req: http.IncomingMessage): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = { ...req.headers };
  delete headers["forwarded"];
  delete headers["x-real-ip"];
  headers["x-forwarded-for"] = req.socket.remoteAddress ?? "";
  return headers;
}
