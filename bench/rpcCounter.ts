import { createServer, request, type Server } from "node:http";

/**
 * A JSON-RPC pass-through that counts the calls it forwards by method (batch members one by one; `eth_call` by
 * function selector; a block asked for with its transactions as `…:whole`), for a measurement run or a test only (`bench/keepStack.ts` with `BENCH_COUNT_RPC=1` puts it between the gateway and the chain
 * node). `GET /counts` answers the counts so far as JSON.
 */
export async function startRpcCounter(
  target: string,
  port: number,
): Promise<{ url: string; counts: Map<string, number>; stop: () => Promise<void> }> {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method === "GET" && req.url === "/counts") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(Object.fromEntries(counts)));
        return;
      }
      try {
        type Call = { method?: string; params?: [{ data?: string; input?: string }?, unknown?] };
        const parsed = JSON.parse(body.toString("utf8")) as Call | Call[];
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          // eth_call by function selector: which reads the chain node serves.
          const input = call.method === "eth_call" ? (call.params?.[0]?.data ?? call.params?.[0]?.input) : undefined;
          const whole =
            (call.method === "eth_getBlockByNumber" || call.method === "eth_getBlockByHash") &&
            call.params?.[1] === true;
          const method = `${call.method ?? "?"}${input ? `:${input.slice(0, 10)}` : ""}${whole ? ":whole" : ""}`;
          counts.set(method, (counts.get(method) ?? 0) + 1);
        }
        if (Array.isArray(parsed)) counts.set("(batches)", (counts.get("(batches)") ?? 0) + 1);
      } catch {
        counts.set("(unparsed)", (counts.get("(unparsed)") ?? 0) + 1);
      }
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: upstream.pathname,
          method: req.method,
          headers: { "content-type": "application/json", "content-length": body.length },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on("error", () => {
        res.statusCode = 502;
        res.end();
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
