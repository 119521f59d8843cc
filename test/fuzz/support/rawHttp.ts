import net from "node:net";

/**
 * One HTTP/1.1 request written byte for byte on its own socket: `fetch` and `node:http` normalise or refuse the
 * hostile parts (bad percent-encoding, duplicated or oversized headers, control characters, invalid UTF-8, corrupt
 * framing), so the fuzzer writes the request itself and parses the answer itself.
 */
export type RawRequest = {
  method: string;
  /** The request-target exactly as sent (path and query), latin1. */
  target: string;
  /** In order, duplicates allowed; `host`, `connection` and `content-length` are added unless present. */
  headers: [string, string][];
  body?: Buffer;
  /** Replaces the whole head (request line and headers) for protocol-level mutations. */
  rawHead?: Buffer;
};

export type RawAnswer = {
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
  text: string;
  /** Milliseconds from connect to the complete answer. */
  elapsedMs: number;
  /** Whether the server closed the connection after the answer (every request asks `Connection: close`). */
  closedAfter: boolean;
};

export class RawTimeout extends Error {
  override name = "RawTimeout";
}

/** The server closed or reset the connection before any byte of an answer. */
export class RawReset extends Error {
  override name = "RawReset";
}

/** Upload slice: the body is written a slice at a time and no more once the server has answered. */
const SLICE_BYTES = 64 * 1024;

/** Whether the request is sent asking `Connection: close`: headOf adds it unless the request brings its own head or
 *  Connection header. */
export function asksForClose(request: RawRequest): boolean {
  return !request.rawHead && !request.headers.some(([name]) => name.toLowerCase() === "connection");
}

/** Renders the head the request is sent with. */
export function headOf(request: RawRequest, host: string): Buffer {
  if (request.rawHead) return request.rawHead;
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  if (!names.has("host")) lines.push(`Host: ${host}`);
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (!names.has("connection")) lines.push("Connection: close");
  if (request.body !== undefined && !names.has("content-length") && !names.has("transfer-encoding"))
    lines.push(`Content-Length: ${request.body.length}`);
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
}

/**
 * How long a server that was asked `Connection: close` may take to close after a complete answer. Generous because
 * the wait also measures this process: when its event loop is held up past the timer, Node runs the timer before the
 * socket's `end` that had already arrived, and the server is blamed (a fresh-clone CI run failed a 417 answered in
 * 19 ms this way at 250 ms, three suites sharing two cores; the same seed passes on a quiet host). A prompt close
 * ends the wait at once, so only a server that does keep the connection open pays it.
 */
const CLOSE_GRACE_MS = 2_000;
/** The wait after an answer to a request that did not ask for the close (the oracle does not judge those). */
const KEEP_OPEN_GRACE_MS = 250;

/**
 * Sends the request and reads the answer until it is complete by its framing (length, chunked terminator) or the
 * server closes the connection, then notes whether the server closed it as the request asked (or `timeoutMs`).
 */
export function sendRaw(baseUrl: string, request: RawRequest, timeoutMs: number): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const started = performance.now();
  const isHead = request.method.toUpperCase() === "HEAD";
  const asksClose = asksForClose(request);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    let settled = false;
    let completeAt: number | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      if (completeAt === undefined) finish(new RawTimeout(`no complete answer within ${timeoutMs} ms`));
      socket.destroy();
    }, timeoutMs);
    const finish = (error?: Error, closed = true) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      socket.destroy();
      if (error) {
        reject(error);
        return;
      }
      try {
        const answer = parseAnswer(Buffer.concat(chunks), isHead);
        resolve({ ...answer, elapsedMs: (completeAt ?? performance.now()) - started, closedAfter: closed });
      } catch (parseError) {
        reject(parseError as Error);
      }
    };
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (completeAt === undefined && isComplete(Buffer.concat(chunks), isHead)) {
        completeAt = performance.now();
        graceTimer = setTimeout(() => finish(undefined, false), asksClose ? CLOSE_GRACE_MS : KEEP_OPEN_GRACE_MS);
      }
    });
    socket.on("end", () => (chunks.length > 0 ? finish() : finish(new RawReset("closed without an answer"))));
    socket.on("close", () => (chunks.length > 0 ? finish() : finish(new RawReset("closed without an answer"))));
    // The server may answer and close before it read the whole body (413, 431): the answer counts, not the reset.
    socket.on("error", (error) => (chunks.length > 0 ? finish() : finish(new RawReset(error.message))));
    socket.on("connect", () => {
      socket.write(headOf(request, url.host));
      const body = request.body ?? Buffer.alloc(0);
      let offset = 0;
      const writeMore = () => {
        while (offset < body.length && chunks.length === 0 && !socket.destroyed) {
          const slice = body.subarray(offset, offset + SLICE_BYTES);
          offset += slice.length;
          if (!socket.write(slice)) {
            socket.once("drain", writeMore);
            return;
          }
        }
      };
      writeMore();
    });
  });
}

/** Whether `raw` holds a whole answer by its framing (without a length or chunking, only the close ends it). */
function isComplete(raw: Buffer, isHead: boolean): boolean {
  const start = skipInterim(raw);
  const headEnd = raw.indexOf("\r\n\r\n", start);
  if (headEnd < 0) return false;
  const head = raw.subarray(start, headEnd).toString("latin1").toLowerCase();
  const status = Number(head.slice(9, 12));
  if (isHead || status === 204 || status === 304) return true;
  const body = raw.subarray(headEnd + 4);
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) return unchunk(body).complete;
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
  return length ? body.length >= Number(length[1]) : false;
}

/** Offset of the final answer's head, after interim answers (100 Continue). */
function skipInterim(raw: Buffer): number {
  let offset = 0;
  while (/^HTTP\/1\.[01] 1\d\d/.test(raw.subarray(offset, offset + 12).toString("latin1"))) {
    const end = raw.indexOf("\r\n\r\n", offset);
    if (end < 0) break;
    offset = end + 4;
  }
  return offset;
}

/** Parses one HTTP/1.1 answer: status line, headers, a body framed by chunked encoding, length or close. */
export function parseAnswer(input: Buffer, isHead = false): Omit<RawAnswer, "elapsedMs" | "closedAfter"> {
  const raw = input.subarray(skipInterim(input));
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) throw new Error(`no HTTP answer (${raw.length} bytes: ${JSON.stringify(raw.toString("latin1"))})`);
  const [statusLine = "", ...headerLines] = raw.subarray(0, headEnd).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string[]> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  let body = isHead ? Buffer.alloc(0) : raw.subarray(headEnd + 4);
  if (headers["transfer-encoding"]?.some((value) => value.toLowerCase().includes("chunked"))) body = unchunk(body).body;
  else if (headers["content-length"]?.[0] !== undefined) body = body.subarray(0, Number(headers["content-length"][0]));
  return { status: Number(match[1]), headers, body, text: body.toString("utf8") };
}

function unchunk(data: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset < data.length) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1").split(";")[0]!, 16);
    if (!Number.isFinite(size)) break;
    if (size === 0) {
      // The last chunk, then trailers, then an empty line.
      const rest = data.subarray(lineEnd + 2).toString("latin1");
      return { body: Buffer.concat(parts), complete: rest.startsWith("\r\n") || rest.includes("\r\n\r\n") };
    }
    if (lineEnd + 2 + size > data.length) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
  return { body: Buffer.concat(parts), complete: false };
}
