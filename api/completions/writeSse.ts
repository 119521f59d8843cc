import type { Response } from "express";
import { SSE_DONE, sseEvent } from "./sseFraming.js";

/** Opens an SSE response: no buffering anywhere between a token and the socket. */
export function startSse(res: Response, headers: Record<string, string>): void {
  res.status(200);
  res.setHeader("content-type", "text/event-stream; charset=utf-8");
  res.setHeader("cache-control", "no-cache, no-transform");
  // No `connection: keep-alive`: Node decides, so a request that said `Connection: close` gets the connection
  // closed after its stream (RFC 9112 §9.6).
  // Proxies (nginx) must not buffer the stream either.
  res.setHeader("x-accel-buffering", "no");
  // The settlement transaction is known only after the last token: it travels as an HTTP trailer.
  res.setHeader("trailer", "x-service-settlement-tx");
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  const socket = res.socket;
  socket?.setNoDelay(true);
  // The head and whatever follows in this tick (the first token: onServing comes right before it) leave in one
  // write instead of two; uncorked before the event loop goes on, so nothing waits (issue 26).
  if (socket && !socket.writableCorked) {
    socket.cork();
    process.nextTick(() => socket.uncork());
  }
  res.flushHeaders();
}

export function writeSse(res: Response, payload: unknown): void {
  if (!res.writableEnded && !res.destroyed) res.write(sseEvent(payload));
}

/** Writes an event already framed (`sseEvent`, or a template of one: `contentChunkEvent`). */
export function writeSseEvent(res: Response, event: string): void {
  if (!res.writableEnded && !res.destroyed) res.write(event);
}

/** Writes `data: [DONE]` once: the answer is complete, whatever follows (only the trailer) is optional. */
export function writeDone(res: Response): void {
  if (res.writableEnded || res.destroyed || doneWritten.has(res)) return;
  doneWritten.add(res);
  res.write(SSE_DONE);
}

const doneWritten = new WeakSet<Response>();

/** Whether `[DONE]` went out: after it, nothing but the trailer may follow. */
export function doneWasWritten(res: Response): boolean {
  return doneWritten.has(res);
}

/** Ends the stream with `[DONE]` (unless it went out already), then the settlement trailer when there is one. */
export function endSse(res: Response, settlementTx: string | undefined): void {
  if (res.writableEnded || res.destroyed) return;
  writeDone(res);
  if (settlementTx) res.addTrailers({ "x-service-settlement-tx": settlementTx });
  res.end();
}
