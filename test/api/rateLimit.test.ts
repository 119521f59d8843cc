import { beforeAll, describe, expect, it } from "vitest";
import { expectErrorBody, rawRequest } from "../support/api.js";
import { startExtraGateway } from "../support/gateways.js";
import { stackInfo } from "../support/stackInfo.js";

const BURST = 5;

describe("per-IP burst limit (429)", () => {
  let apiUrl: string;

  beforeAll(async () => {
    // A gateway of its own with a low limit, so the rest of the suite keeps the default one.
    const gateway = await startExtraGateway(
      { RATE_LIMIT_MAX: String(BURST), RATE_LIMIT_WINDOW_MS: "60000" },
      "api_burst_test",
    );
    apiUrl = gateway.apiUrl;
  });

  it("error: requests beyond the burst get 429 with the error body and a Retry-After header", async () => {
    const responses = [];
    for (let i = 0; i < BURST + 3; i++) {
      responses.push(await rawRequest("GET", "/v1/models", { apiKey: stackInfo().demo.apiKey, baseUrl: apiUrl }));
    }
    // The readiness probe that started this gateway counts against the same window, so fewer than BURST
    // requests may pass; once limited, every later request of the window is limited.
    const statuses = responses.map((response) => response.status);
    const passed = statuses.indexOf(429);
    expect(passed).toBeGreaterThanOrEqual(1);
    expect(passed).toBeLessThanOrEqual(BURST);
    expect(statuses.slice(0, passed)).toEqual(Array(passed).fill(200));
    const limited = responses.slice(passed);
    for (const response of limited) {
      const error = expectErrorBody(response, 429, response.json<{ error: { code: string } }>().error.code);
      expect(error.code).toBe("rate_limited");
      expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
    }
  });

  it("the limit is per gateway address and window: the main gateway still answers", async () => {
    const response = await rawRequest("GET", "/v1/models", { apiKey: stackInfo().demo.apiKey });
    expect(response.status).toBe(200);
  });
});
