import type { ServerResponse } from "node:http";
import type { WorkerEventLine } from "../shared/workerProtocol/index.js";

export type NdjsonWriter = {
  /**
   * Writes one protocol event as a line now; waits for the socket to drain when its buffer is full. False once the
   * peer is gone.
   */
  write(event: WorkerEventLine): Promise<boolean>;
  /**
   * Writes the last event and ends the response in the same write: the line and the chunked encoding's terminator
   * leave in one segment (one system call of a job's ~19 instead of two). False when the peer was already gone.
   */
  end(event: WorkerEventLine): boolean;
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
    end(event) {
      if (res.destroyed || res.writableEnded) return false;
      res.end(`${JSON.stringify(event)}\n`);
      return true;
    },
  };
}
