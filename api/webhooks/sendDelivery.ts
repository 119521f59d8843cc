import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { signPayload, signStandardWebhook, standardWebhookKey } from "./signPayload.js";
import { checkTargetAddress, type TargetPolicy } from "./targetPolicy.js";
import { CONTROL_OR_SPACE } from "./validateWebhookUrl.js";

export const RESPONSE_SNIPPET_BYTES = 1024;
/** How long the body of an answer is read once its status arrived (within the attempt's overall timeout). */
export const BODY_READ_MS = 1_000;

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  /** The first bytes of the answer, for the failed-deliveries view. */
  responseSnippet: string | null;
  error: string | null;
  durationMs: number;
}

export interface Sender {
  send(target: {
    url: string;
    secret: string;
    body: string;
    eventId: string;
    attempt: number;
  }): Promise<AttemptOutcome>;
  close(): void;
}

export interface SenderOptions {
  policy: TargetPolicy;
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM), added to Node's roots; tests trust their receiver's this way. */
  extraCa?: string;
  userAgent?: string;
  /** Every address of a host name (default: the system resolver, `dns.lookup` with `all`). Tests replace DNS. */
  resolveHost?: ResolveHost;
}

export type ResolveHost = (hostname: string, family: number, hints: number) => Promise<dns.LookupAddress[]>;

const systemResolver: ResolveHost = (hostname, family, hints) =>
  dns.promises.lookup(hostname, { all: true, family, hints });

/**
 * DNS lookup that refuses a name when ANY of its addresses is not allowed (so a name that mixes a public and a
 * private address cannot be used to reach the private one), and hands the socket exactly the checked addresses:
 * there is no second resolution between the check and the connect (DNS rebinding).
 */
function guardedLookup(policy: TargetPolicy, resolveHost: ResolveHost): net.LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === "number" ? options.family : 0;
    resolveHost(hostname, family, options.hints ?? 0).then(
      (list) => {
        const refused = list
          .map((a) => ({ a, verdict: checkTargetAddress(a.address, policy) }))
          .find((x) => !x.verdict.allowed);
        if (refused && !refused.verdict.allowed) {
          const error = Object.assign(new Error(`refused target ${hostname}: ${refused.verdict.reason}`), {
            code: "ETARGETREFUSED",
          });
          return callback(error, "", 0);
        }
        const first = list[0];
        if (!first)
          return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
        if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/**
 * A request that failed this way on a kept-alive socket never reached a live connection: the receiver had closed
 * the idle connection (its keep-alive timeout, or a load balancer's idle timeout, often not announced) while the
 * request was on its way. Node's own advice for this race is to retry on a fresh connection.
 */
function isStaleConnectionError(error: NodeJS.ErrnoException): boolean {
  return error.code === "ECONNRESET" || error.code === "EPIPE";
}

/**
 * Posts signed webhook bodies: SSRF-guarded connect, one deadline for the whole exchange, no redirects. Each POST
 * carries the spec's `Service-Signature` and the Standard Webhooks headers (`webhook-id` = the event id,
 * `webhook-timestamp`, `webhook-signature`), both over the same timestamp.
 */
export function createSender(options: SenderOptions): Sender {
  const lookup = guardedLookup(options.policy, options.resolveHost ?? systemResolver);
  const ca = options.extraCa ? [...tls.rootCertificates, options.extraCa] : undefined;
  const tlsOptions = ca ? { ca } : {};
  // Kept-alive sockets serve the next delivery to the same receiver; Node closes an idle one before the receiver's
  // announced `Keep-Alive: timeout` runs out, and an unannounced close is retried once on a fresh connection.
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, lookup, ...tlsOptions });
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, lookup });
  const freshHttpsAgent = new https.Agent({ keepAlive: false, lookup, ...tlsOptions });
  const freshHttpAgent = new http.Agent({ keepAlive: false, lookup });
  const userAgent = options.userAgent ?? "credit-metered-inference-webhooks/1";

  const send: Sender["send"] = (target) => {
    const started = performance.now();
    const done = (partial: Omit<AttemptOutcome, "durationMs">): AttemptOutcome => ({
      ...partial,
      durationMs: Math.round(performance.now() - started),
    });
    let url: URL;
    try {
      // A URL stored before registration refused control characters is not delivered to a mangled path.
      if (CONTROL_OR_SPACE.test(target.url)) throw new Error("control characters");
      url = new URL(target.url);
    } catch {
      return Promise.resolve(done({ ok: false, statusCode: null, responseSnippet: null, error: "invalid URL" }));
    }
    // Literal IPs never reach `lookup`, so they are checked here.
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (net.isIP(host) !== 0) {
      const verdict = checkTargetAddress(host, options.policy);
      if (!verdict.allowed) {
        return Promise.resolve(
          done({ ok: false, statusCode: null, responseSnippet: null, error: `refused target: ${verdict.reason}` }),
        );
      }
    }
    const isHttps = url.protocol === "https:";
    const unixSeconds = Math.floor(Date.now() / 1000);
    const headers = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(target.body),
      "user-agent": userAgent,
      "service-signature": signPayload(target.secret, target.body, unixSeconds),
      "service-event-id": target.eventId,
      "service-delivery-attempt": String(target.attempt),
      "webhook-id": target.eventId,
      "webhook-timestamp": String(unixSeconds),
      "webhook-signature": signStandardWebhook(
        standardWebhookKey(target.secret),
        target.eventId,
        unixSeconds,
        target.body,
      ),
    };
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      let current: http.ClientRequest | null = null;
      const finish = (outcome: Omit<AttemptOutcome, "durationMs">) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(done(outcome));
      };
      // The spec's "does not answer within 10 seconds": one deadline for connect, headers and body, a retry on a
      // fresh connection included.
      const timer = setTimeout(() => {
        finish({ ok: false, statusCode: null, responseSnippet: null, error: `timeout after ${options.timeoutMs} ms` });
        current?.destroy(new Error("timeout"));
      }, options.timeoutMs);

      const post = (fresh: boolean) => {
        const agent = isHttps ? (fresh ? freshHttpsAgent : httpsAgent) : fresh ? freshHttpAgent : httpAgent;
        const request = (isHttps ? https : http).request(url, { method: "POST", agent, headers });
        current = request;
        let answered = false;
        request.on("error", (error: NodeJS.ErrnoException) => {
          if (!settled && !fresh && !answered && request.reusedSocket && isStaleConnectionError(error)) {
            post(true);
            return;
          }
          finish({
            ok: false,
            statusCode: null,
            responseSnippet: null,
            error: error.code ? `${error.code}: ${error.message}` : error.message,
          });
        });
        request.on("response", (response) => {
          answered = true;
          const statusCode = response.statusCode ?? 0;
          const ok = statusCode >= 200 && statusCode < 300;
          const chunks: Buffer[] = [];
          let size = 0;
          // The status decides the attempt; the body is only read for the snippet, bounded in bytes and time, so a
          // receiver streaming an endless or trickling body holds its slot for at most BODY_READ_MS.
          const conclude = () => {
            clearTimeout(bodyTimer);
            // Postgres text cannot hold NUL; a receiver answering binary must not make the attempt unrecordable.
            const snippet = Buffer.concat(chunks)
              .subarray(0, RESPONSE_SNIPPET_BYTES)
              .toString("utf8")
              .replaceAll("\u0000", "");
            finish({ ok, statusCode, responseSnippet: snippet, error: ok ? null : `HTTP ${statusCode}` });
          };
          const bodyTimer = setTimeout(() => {
            conclude();
            response.destroy();
          }, BODY_READ_MS);
          response.on("data", (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_SNIPPET_BYTES) {
              conclude();
              response.destroy();
            }
          });
          response.on("end", conclude);
          response.on("error", (error) => {
            clearTimeout(bodyTimer);
            if (settled) return;
            finish({ ok: false, statusCode: response.statusCode ?? null, responseSnippet: null, error: error.message });
          });
        });
        request.end(target.body);
      };
      post(false);
    });
  };

  return {
    send,
    close() {
      httpsAgent.destroy();
      httpAgent.destroy();
      freshHttpsAgent.destroy();
      freshHttpAgent.destroy();
    },
  };
}
