import https from "node:https";
import type { SelfSignedCert } from "./selfSignedCert.js";

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  receivedAt: number;
  /** Path and query the request was sent to. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  /** Status this receiver answered (null: it never answered). */
  answered: number | null;
  /** Whether the request came on a connection that had already carried one (HTTP keep-alive). */
  reusedConnection: boolean;
  /** Dropped unanswered because its kept-alive connection counted as closed (`closeIdleAfterMs`). */
  dropped: boolean;
}

export interface HttpsReceiverOptions {
  path?: string;
  /**
   * Behave like a receiver (or the load balancer in front of it) that closes idle keep-alive connections after
   * this many ms WITHOUT announcing it in a `Keep-Alive: timeout` header: a request arriving on a connection idle
   * for longer is the one that crossed the close on the wire, so the connection is destroyed without an answer
   * (the sender sees ECONNRESET "socket hang up"). Deterministic, unlike waiting for the real race.
   */
  closeIdleAfterMs?: number;
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
export async function startHttpsReceiver(
  cert: SelfSignedCert,
  port: number,
  options: HttpsReceiverOptions = {},
): Promise<HttpsReceiver> {
  const path = options.path ?? "/hooks";
  const requests: ReceivedRequest[] = [];
  let behaviour: ReceiverBehaviour = () => ({ status: 200, body: "ok" });
  // When each connection last finished an answer (absent: it has not carried a request yet).
  const idleSince = new WeakMap<object, number>();
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const lastAnswer = idleSince.get(req.socket);
      const record: ReceivedRequest = {
        receivedAt: Date.now(),
        url: req.url ?? "",
        headers: req.headers,
        rawBody,
        answered: null,
        reusedConnection: lastAnswer !== undefined,
        dropped: false,
      };
      requests.push(record);
      if (
        options.closeIdleAfterMs !== undefined &&
        lastAnswer !== undefined &&
        Date.now() - lastAnswer > options.closeIdleAfterMs
      ) {
        record.dropped = true;
        req.socket.destroy();
        return;
      }
      res.on("finish", () => idleSince.set(req.socket, Date.now()));
      const index = requests.filter((r) => !r.dropped).length - 1;
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
