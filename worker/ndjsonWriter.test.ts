import { createServer } from "node:http";
import { connect } from "node:net";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { createNdjsonWriter } from "./ndjsonWriter.js";

const PORT = 8669;
const LINES = 20_000;

describe("createNdjsonWriter", () => {
  it("waits for a slow reader instead of buffering the whole stream in memory", async () => {
    let written = 0;
    let finished = false;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      const writer = createNdjsonWriter(res);
      void (async () => {
        // 20,000 lines of ~1 KB: far more than the socket buffers hold.
        for (let i = 0; i < LINES; i += 1) {
          if (!(await writer.write({ type: "token", text: "x".repeat(1000) }))) return;
          written += 1;
        }
        finished = true;
        res.end();
      })();
    });
    server.listen(PORT, "127.0.0.1");
    await once(server, "listening");
    try {
      const socket = connect(PORT, "127.0.0.1");
      await once(socket, "connect");
      socket.pause();
      socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const writtenWhilePaused = written;
      expect(writtenWhilePaused).toBeLessThan(LINES);

      let received = 0;
      socket.on("data", (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      await once(socket, "end");
      expect(finished).toBe(true);
      expect(written).toBe(LINES);
      expect(received).toBeGreaterThan(LINES * 1000);
      socket.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
