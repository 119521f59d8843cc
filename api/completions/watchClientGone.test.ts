import http from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { watchClientGone } from "./watchClientGone.js";

// Real sockets: the signal is about what the connection did, which a mock cannot say.

let server: http.Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server whose handler reads the body, waits `waitMs`, then watches; resolves with the signal. */
async function watchAfter(waitMs: number, client: (port: number) => void): Promise<AbortSignal> {
  return new Promise((resolve) => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        setTimeout(() => {
          const signal = watchClientGone(req, res);
          resolve(signal);
          setTimeout(() => res.end("ok"), 200);
        }, waitMs),
      );
    });
    server.listen(0, "127.0.0.1", () => client((server!.address() as AddressInfo).port));
  });
}

const request = (body: string) =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;

describe("watchClientGone", () => {
  it("a client still connected after its body was read is not gone", async () => {
    const signal = await watchAfter(0, (port) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(request("{}")));
      socket.on("error", () => undefined);
      socket.resume();
    });
    expect(signal.aborted).toBe(false);
  });

  it("a client that hung up before the watch began is gone at once", async () => {
    const signal = await watchAfter(100, (port) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(request("{}"));
        setTimeout(() => socket.destroy(), 20);
      });
      socket.on("error", () => undefined);
    });
    expect(signal.aborted).toBe(true);
  });

  it("a client that hangs up after the watch began aborts the signal", async () => {
    let hangUp: () => void = () => undefined;
    const signal = await watchAfter(0, (port) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(request("{}")));
      socket.on("error", () => undefined);
      hangUp = () => socket.destroy();
    });
    expect(signal.aborted).toBe(false);
    hangUp();
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    expect(signal.aborted).toBe(true);
  });
});
