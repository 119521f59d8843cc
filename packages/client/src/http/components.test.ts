import { describe, expect, it, vi } from "vitest";

describe("the contract's component registry", () => {
  it("survives the module being evaluated again in the same process (one evaluation per test file)", async () => {
    const first = await import("../../../../api/openapi/openapiDocument.js");
    vi.resetModules();
    const second = await import("../../../../api/openapi/openapiDocument.js");
    expect(second).not.toBe(first);
    expect(second.openapiDocument()).toEqual(first.openapiDocument());
  });
});
