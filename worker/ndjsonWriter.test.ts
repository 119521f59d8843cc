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

  it("end writes the last line and ends the response in one write to the socket", async () => {
    let writes = 0;
    let answered: boolean | undefined;
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      res.flushHeaders();
      const writer = createNdjsonWriter(res);
      void writer.write({ type: "token", text: "a" }).then(() => {
        setTimeout(() => {
          // Count the socket's writes to the kernel from here on (`_write` or, when several chunks were
          // corked together, one `_writev`): the last line and the stream's end.
          const socket = res.socket as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
          for (const method of ["_write", "_writev"] as const) {
            const original = socket[method].bind(socket);
            socket[method] = (...args: unknown[]) => {
              writes += 1;
              return original(...args);
            };
          }
          answered = writer.end({ type: "error", code: "cancelled", message: "m" });
        }, 20);
      });
    });
    server.listen(PORT, "127.0.0.1");
    await once(server, "listening");
    try {
      const response = await fetch(`http://127.0.0.1:${PORT}/`);
      const lines = (await response.text()).trim().split("\n");
      expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(["token", "error"]);
      expect(answered).toBe(true);
      expect(writes).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
