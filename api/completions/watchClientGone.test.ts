import http from "node:http";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
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

  it("a hang-up the connection has read is seen before the next turn of the event loop, whatever else arrived with it", async () => {
    // The worker's last line and the client's FIN can reach the gateway in the same poll of the event loop (a loaded
    // machine delays the gateway long enough for both). The gateway yields one turn (`setImmediate`) before it
    // charges a whole answer; by then the FIN must have aborted the signal, or a client that left before its answer
    // existed is charged for it.
    const workerSide = createServer();
    await new Promise<void>((resolve) => workerSide.listen(0, "127.0.0.1", resolve));
    const accepted = new Promise<Socket>((resolve) => workerSide.once("connection", resolve));
    const fromWorker = connect((workerSide.address() as AddressInfo).port, "127.0.0.1");
    await new Promise((resolve) => fromWorker.once("connect", resolve));
    const toGateway = await accepted;
    let client: Socket | undefined;
    const signal = await watchAfter(0, (port) => {
      client = connect(port, "127.0.0.1", () => client!.write(request("{}")));
      client.on("error", () => undefined);
    });
    expect(signal.aborted).toBe(false);
    const seenAfterYield = new Promise<boolean>((resolve) =>
      fromWorker.once("data", () => setImmediate(() => resolve(signal.aborted))),
    );
    client!.destroy();
    toGateway.write("done\n");
    // Both are in the kernel before the event loop looks again.
    const until = performance.now() + 50;
    while (performance.now() < until);
    expect(await seenAfterYield).toBe(true);
    fromWorker.destroy();
    toGateway.destroy();
    await new Promise((resolve) => workerSide.close(resolve));
  });

  it("a keep-alive connection does not gather a listener per request", async () => {
    const listeners: number[] = [];
    server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        watchClientGone(req, res);
        listeners.push(req.socket.listenerCount("end"));
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const port = (server.address() as AddressInfo).port;
    for (let i = 0; i < 15; i++) {
      await new Promise<void>((resolve, reject) =>
        http
          .request({ port, host: "127.0.0.1", method: "POST", agent }, (res) => res.resume().on("end", resolve))
          .on("error", reject)
          .end("{}"),
      );
    }
    agent.destroy();
    expect(listeners).toHaveLength(15);
    expect(Math.max(...listeners)).toBe(listeners[0]);
  });
});
