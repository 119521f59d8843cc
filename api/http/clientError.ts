import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { ApiError, errorBody } from "../errors/ApiError.js";

/** Methods some route of the gateway serves: the `Allow` of an answer to a method no path serves (CONNECT). */
const SERVED_METHODS = "GET, HEAD, POST, DELETE";

/** Writes a whole spec-format error answer on a raw connection and closes it (no Express response exists here). */
function endWithError(socket: Duplex, apiError: ApiError, docsUrl: string): void {
  const body = JSON.stringify(errorBody(apiError, docsUrl));
  const extra = Object.entries(apiError.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ""}\r\n` +
      "Content-Type: application/json; charset=utf-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extra +
      "Connection: close\r\n\r\n" +
      body,
  );
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over the size limit, malformed HTTP, a
 * request that did not arrive in time) are answered in the spec's error format instead of Node's empty-bodied
 * default. Install with `server.on("clientError", answerClientError(docsUrl))` (or `answerOutsideRoutes`).
 */
export function answerClientError(docsUrl: string): (error: NodeJS.ErrnoException, socket: Socket) => void {
  return (error, socket) => {
    // Nothing can be written to a connection that is gone or that already carries a response.
    const written = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === "ECONNRESET" || !socket.writable || written) {
      socket.destroy();
      return;
    }
    const apiError =
      error.code === "HPE_HEADER_OVERFLOW"
        ? new ApiError("headers_too_large")
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? new ApiError("request_timeout")
          : new ApiError("invalid_request", { message: "The request is not valid HTTP/1.1.", param: null });
    endWithError(socket, apiError, docsUrl);
  };
}

/**
 * Every answer the HTTP server gives outside Express, in the spec's error format: parser errors (`clientError`),
 * an `Expect` other than `100-continue` (417 `expectation_failed`, Node's default has no body), and `CONNECT`
 * (405 `method_not_allowed`: the gateway is no proxy; without a listener Node drops the connection unanswered).
 */
export function answerOutsideRoutes(server: Server, docsUrl: string): void {
  server.on("clientError", answerClientError(docsUrl));
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const apiError = new ApiError("expectation_failed");
    const body = JSON.stringify(errorBody(apiError, docsUrl));
    res.writeHead(apiError.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    res.end(body);
  });
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    socket.on("error", () => socket.destroy());
    endWithError(
      socket,
      new ApiError("method_not_allowed", {
        message: "CONNECT is not served: the gateway is not a proxy.",
        headers: { Allow: SERVED_METHODS },
      }),
      docsUrl,
    );
  });
}
