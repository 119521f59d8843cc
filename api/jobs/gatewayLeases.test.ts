import type pg from "pg";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { GatewayLeases, orphanAction } from "./gatewayLeases.js";

// The take-over rule for a dead gateway's job (docs/DESIGN.md, "Several gateways"). The claim itself runs against a
// real PostgreSQL in test/multigw/leaseClaims.test.ts, the whole take-over in test/multigw/gatewayKill.test.ts.

const deadline = 1_000n;
const withReceipt = { receipt: { jobId: "0x01" }, signature: "0xabcd" };
const withoutReceipt = { receipt: null, signature: null };

describe("orphanAction", () => {
  it("settles a stored verified receipt of a job still open on chain", () => {
    expect(orphanAction(withReceipt, { status: "open", deadline }, deadline - 10n)).toBe("settle");
  });

  it("settles a stored receipt even after the deadline (the chain decides whether it is still in time)", () => {
    expect(orphanAction(withReceipt, { status: "open", deadline }, deadline + 10n)).toBe("settle");
  });

  it("fails a job without a receipt before its deadline, returning the escrow at once", () => {
    expect(orphanAction(withoutReceipt, { status: "open", deadline }, deadline)).toBe("fail");
  });

  it("refunds a job without a receipt once its deadline has passed", () => {
    expect(orphanAction(withoutReceipt, { status: "open", deadline }, deadline + 1n)).toBe("refund");
  });

  it("leaves a job that is not open on chain to the regular sweep", () => {
    for (const status of ["none", "settled", "failed", "refunded", "disputed"])
      expect(orphanAction(withReceipt, { status, deadline }, 0n)).toBe("leave");
  });

  it("does not settle with a receipt but no signature", () => {
    expect(orphanAction({ receipt: { jobId: "0x01" }, signature: null }, { status: "open", deadline }, 0n)).toBe(
      "fail",
    );
  });
});

describe("GatewayLeases", () => {
  it("refuses a heartbeat that is not shorter than the lease", () => {
    const options = { gatewayId: "gw-a", signer: "0x01", logger: pino({ level: "silent" }) };
    const pool = {} as pg.Pool;
    expect(() => new GatewayLeases(pool, { ...options, ttlMs: 3_000, heartbeatMs: 3_000 })).toThrow(
      /GATEWAY_HEARTBEAT_MS/,
    );
    expect(() => new GatewayLeases(pool, { ...options, ttlMs: 3_000, heartbeatMs: 500 })).not.toThrow();
  });
});
