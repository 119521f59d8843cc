import { describe, expect, it } from "vitest";
import { BaseError } from "viem";
import { serializeError } from "./serializeError.js";

describe("serializeError", () => {
  it("keeps a viem error to its short message and details", () => {
    const error = new BaseError("The contract function reverted.", { details: "reverted with custom error 'X()'" });
    expect(serializeError(error)).toEqual({
      type: "BaseError",
      message: "The contract function reverted.",
      details: "reverted with custom error 'X()'",
      revert: undefined,
    });
  });

  it("serializes other errors with pino's standard serializer", () => {
    expect(serializeError(new Error("boom"))).toMatchObject({ type: "Error", message: "boom" });
  });
});
