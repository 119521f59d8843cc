import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Aborts when the client's connection closes before its answer was fully written (api/README.md "When the
 * connection breaks"). Created when the completion's handler starts, before anything is prepared or locked: a
 * client that hangs up while its body was read, while the request is prepared, while the escrow opens or while
 * the job is routed is seen gone from the first check on, never charged (issue 23, item 1). A listener attached
 * only after those awaits missed a close that had already happened.
 */
export function watchClientGone(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  const socket = req.socket;
  const onClose = () => {
    socket.off("end", onClose);
    if (!res.writableFinished) gone.abort();
  };
  res.once("close", onClose);
  // The client's FIN, as soon as the socket reads it: the response's "close" comes only once the server has ended
  // its side too, a turn of the event loop or more later, and a whole answer that completed in between would be
  // charged to a client that had left (issue 23, item 1). Node's server does not serve a half-closed client
  // (`httpAllowHalfOpen` is off), so a FIN means the answer cannot be delivered. Removed with the response, so that
  // a keep-alive socket does not gather one listener per request.
  socket.once("end", onClose);
  // The connection may have closed already (while the body was read): no "close" event will come for it. The
  // socket says so; `req.destroyed` does not (a request whose body was read to its end is destroyed too).
  if (req.socket.destroyed || res.destroyed) onClose();
  return gone.signal;
}
