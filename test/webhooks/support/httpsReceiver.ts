import https from "node:https";
import type { SelfSignedCert } from "./selfSignedCert.js";

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  receivedAt: number;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  /** Status this receiver answered (null: it never answered). */
  answered: number | null;
}

/** What to answer to the n-th request (0-based) with this body. */
export type ReceiverBehaviour = (request: { index: number; rawBody: string }) => {
  status: number;
  delayMs?: number;
  body?: string;
};

export interface HttpsReceiver {
  url: string;
  requests: ReceivedRequest[];
  setBehaviour(behaviour: ReceiverBehaviour): void;
  close(): Promise<void>;
}

/**
 * TEST DOUBLE for a client's webhook endpoint: a real HTTPS server with a self-signed certificate that records
 * every request and answers per a scripted behaviour (default 200).
 */
export async function startHttpsReceiver(cert: SelfSignedCert, port: number, path = "/hooks"): Promise<HttpsReceiver> {
  const requests: ReceivedRequest[] = [];
  let behaviour: ReceiverBehaviour = () => ({ status: 200, body: "ok" });
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const record: ReceivedRequest = { receivedAt: Date.now(), headers: req.headers, rawBody, answered: null };
      const index = requests.length;
      requests.push(record);
      const answer = behaviour({ index, rawBody });
      const reply = () => {
        if (res.destroyed) return;
        record.answered = answer.status;
        res.writeHead(answer.status, { "content-type": "text/plain" }).end(answer.body ?? "");
      };
      if (answer.delayMs) setTimeout(reply, answer.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `https://localhost:${port}${path}`,
    requests,
    setBehaviour(next) {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
