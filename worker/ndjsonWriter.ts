import type { ServerResponse } from "node:http";
import type { WorkerEventLine } from "../shared/workerProtocol/index.js";

export type NdjsonWriter = {
  /**
   * Writes one protocol event as a line now; waits for the socket to drain when its buffer is full. False once the
   * peer is gone.
   */
  write(event: WorkerEventLine): Promise<boolean>;
  /**
   * Writes the last events (in order; the final one ends the answer) and ends the response in the same write: the
   * lines and the chunked encoding's terminator leave in one segment (one system call instead of two or more). False
   * when the peer was already gone.
   */
  end(...events: [...WorkerEventLine[], WorkerEventLine]): boolean;
};

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export function createNdjsonWriter(res: ServerResponse): NdjsonWriter {
  return {
    async write(event) {
      if (res.destroyed || res.writableEnded) return false;
      if (!res.write(`${JSON.stringify(event)}\n`)) await drainOrClose(res);
      return !res.destroyed;
    },
    end(...events) {
      if (res.destroyed || res.writableEnded) return false;
      let lines = "";
      for (const event of events) lines += `${JSON.stringify(event)}\n`;
      res.end(lines);
      return true;
    },
  };
}
