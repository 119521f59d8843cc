import type { Socket } from "node:net";
import { STATUS_CODES } from "node:http";
import { ApiError, errorBody } from "../errors/ApiError.js";

/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over the size limit, malformed HTTP, a
 * request that did not arrive in time) are answered in the spec's error format instead of Node's empty-bodied
 * default. Install with `server.on("clientError", answerClientError(docsUrl))`.
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
    const body = JSON.stringify(errorBody(apiError, docsUrl));
    socket.end(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ""}\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body,
    );
  };
}
