import net from "node:net";

export type TcpProxy = {
  url: string;
  /** Connections accepted so far (the indexer really went through the proxy). */
  connections: () => number;
  /** Stops answering: open connections and new ones are held, nothing is forwarded (a hung node or network). */
  blackhole: () => void;
  /** Goes away: every connection is reset and the port refuses new ones (a dead endpoint). */
  kill: () => Promise<void>;
};

/**
 * A TCP proxy in front of a JSON-RPC endpoint, standing for one of several RPC providers: something outside the
 * product that the tests make fail (the chain node behind it keeps running).
 */
export async function startTcpProxy(port: number, target: { host: string; port: number }): Promise<TcpProxy> {
  let forwarding = true;
  let accepted = 0;
  const pairs = new Set<{ client: net.Socket; upstream?: net.Socket }>();
  const server = net.createServer((client) => {
    accepted++;
    const pair: { client: net.Socket; upstream?: net.Socket } = { client };
    pairs.add(pair);
    client.on("close", () => pairs.delete(pair));
    client.on("error", () => client.destroy());
    if (!forwarding) return; // held: accepted, never answered
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on("error", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    blackhole() {
      forwarding = false;
      for (const pair of pairs) {
        // Cut the forwarding but keep the client's socket open: its requests wait for an answer that never comes.
        pair.client.unpipe();
        pair.upstream?.unpipe();
        pair.upstream?.destroy();
      }
    },
    async kill() {
      forwarding = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream?.destroy();
      }
      await closed;
    },
  };
}
