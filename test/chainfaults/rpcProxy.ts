import http from "node:http";

/** What the proxy does with requests: pass them on, or hold them unanswered (a stalled endpoint). */
export type ProxyMode = "up" | "stalled";

export interface RpcProxy {
  url: string;
  stop: () => Promise<void>;
}

/**
 * A JSON-RPC endpoint in front of the chain node that the suite can stall: `POST /__mode` with `{"mode":"stalled"}`
 * holds every request without an answer (the worst way an endpoint fails: the client waits out its timeout) until
 * `{"mode":"up"}`, when held connections are dropped. Runs in the suite's global setup, so the gateway's endpoint
 * list is known before it starts.
 */
export async function startRpcProxy(port: number, target: string): Promise<RpcProxy> {
  let mode: ProxyMode = "up";
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (request.url === "/__mode") {
        mode = (JSON.parse(body) as { mode: ProxyMode }).mode;
        if (mode === "up") for (const waiting of held) waiting.destroy();
        held.clear();
        response.end("{}");
        return;
      }
      if (mode === "stalled") {
        held.add(response);
        return;
      }
      fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (answer) => {
          response.writeHead(answer.status, { "content-type": "application/json" });
          response.end(await answer.text());
        },
        () => response.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const waiting of held) waiting.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Switches the proxy (from a test process). */
export async function setProxyMode(url: string, mode: ProxyMode): Promise<void> {
  const response = await fetch(`${url}/__mode`, { method: "POST", body: JSON.stringify({ mode }) });
  if (!response.ok) throw new Error(`proxy mode ${mode}: ${response.status}`);
}
