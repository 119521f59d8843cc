import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { lazyJobLogger } from "./jobLogger.js";

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

describe("lazyJobLogger", () => {
  it("makes no child logger while the job logs nothing", () => {
    const { logger } = capturingLogger();
    const child = vi.spyOn(logger, "child");

    lazyJobLogger(logger, "job_01");

    expect(child).not.toHaveBeenCalled();
  });

  it("binds the job id to every line and makes the child once", async () => {
    const { logger, lines } = capturingLogger();
    const child = vi.spyOn(logger, "child");
    const log = lazyJobLogger(logger, "job_01");

    log().warn({ reason: "a" }, "first");
    log().error("second");
    await new Promise((resolve) => setImmediate(resolve));

    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((line) => [line.job_id, line.msg])).toEqual([
      ["job_01", "first"],
      ["job_01", "second"],
    ]);
  });
});
