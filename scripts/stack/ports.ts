import net from "node:net";

/** Whether nothing listens on `port` at 127.0.0.1 (a listener of our own is opened and closed to find out). */
export function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Throws when a fixed port is taken, naming who asked for it, so a clash fails fast instead of hanging. */
export async function assertPortFree(port: number, purpose: string): Promise<void> {
  if (!(await isPortFree(port))) throw new Error(`port ${port} (${purpose}) is already in use`);
}

/** The first free port in `[from, to]`. */
export async function findFreePort(from: number, to: number): Promise<number> {
  for (let port = from; port <= to; port++) {
    if (await isPortFree(port)) return port;
  }
  throw new Error(`no free port in ${from}-${to}`);
}
