import http from "node:http";
import type { AddressInfo } from "node:net";

/** In this suite's port range (8800–8839), after the stack's ports. */
const RECEIVER_PORT = Number(process.env.TEST_WEB_RECEIVER_PORT ?? 8830);

/**
 * TEST DOUBLE of a customer's webhook endpoint: answers 500 until `heal()`, then 200. Records every request.
 */
export async function startFailingReceiver(): Promise<{
  url: string;
  received: { status: number; event: string }[];
  heal: () => void;
  close: () => Promise<void>;
}> {
  let healthy = false;
  const received: { status: number; event: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let event = "";
      try {
        event = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { event?: string }).event ?? "";
      } catch {
        event = "";
      }
      const status = healthy ? 200 : 500;
      received.push({ status, event });
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(healthy ? "ok" : "receiver test double: down for maintenance");
    });
  });
  await new Promise<void>((resolve) => server.listen(RECEIVER_PORT, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    heal: () => {
      healthy = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
