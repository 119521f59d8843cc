import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";
import {
  runWorkerUntilExit,
  TEST_GATEWAY_TOKEN,
  TEST_WORKER_PRIVATE_KEY,
  WORKER_START_TEST_TIMEOUT_MS,
} from "./testing/startWorkerProcess.js";

const validEnv = {
  WORKER_PRIVATE_KEY: TEST_WORKER_PRIVATE_KEY,
  WORKER_PORT: "8700",
  WORKER_GATEWAY_TOKEN: TEST_GATEWAY_TOKEN,
  WORKER_MODELS: "qwen3-1.7b",
};

function configFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "worker-config-")), "worker.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function issuesOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("serves WORKER_MODELS with the simulated backend and the SIM_* settings", () => {
    const config = loadConfig({ ...validEnv, SIM_TTFT_MS: "80", SIM_TOKENS_PER_SECOND: "12.5" });
    expect(config.models).toEqual({
      "qwen3-1.7b": {
        backend: "simulated",
        ttftMs: 80,
        tokensPerSecond: 12.5,
        minOutputTokens: 20,
        maxOutputTokens: 60,
      },
    });
  });

  it("defaults the host to 127.0.0.1 and the fault to none", () => {
    const config = loadConfig(validEnv);
    expect(config.host).toBe("127.0.0.1");
    expect(config.port).toBe(8700);
    expect(config.fault).toBe("none");
  });

  it("reads each model's backend from WORKER_CONFIG, which wins over WORKER_MODELS", () => {
    const path = configFile({
      models: {
        "qwen3-1.7b": { backend: "openai", baseUrl: "http://gpu-box:8000/", upstreamModel: "Qwen/Qwen3-1.7B" },
        "gemma-3-27b-it": { backend: "simulated", tokensPerSecond: 30 },
      },
    });
    const config = loadConfig({ ...validEnv, WORKER_CONFIG: path });
    expect(config.models["qwen3-1.7b"]).toEqual({
      backend: "openai",
      baseUrl: "http://gpu-box:8000",
      upstreamModel: "Qwen/Qwen3-1.7B",
      timeoutMs: 30_000,
    });
    expect(config.models["gemma-3-27b-it"]).toMatchObject({ backend: "simulated", tokensPerSecond: 30, ttftMs: 150 });
  });

  it("error: lists every invalid variable at once", () => {
    const issues = issuesOf({
      WORKER_PRIVATE_KEY: "0x1234",
      WORKER_GATEWAY_TOKEN: "short",
      WORKER_MODELS: "qwen3-1.7b",
      SIM_FAULT: "explode",
      SIM_TTFT_MS: "soon",
    });
    const fields = issues.map((issue) => issue.split(":")[0]);
    expect(fields.sort()).toEqual([
      "SIM_FAULT",
      "SIM_TTFT_MS",
      "WORKER_GATEWAY_TOKEN",
      "WORKER_PORT",
      "WORKER_PRIVATE_KEY",
    ]);
  });

  it("error: names the offending entry inside WORKER_CONFIG", () => {
    const path = configFile({ models: { "qwen3-1.7b": { backend: "openai", baseUrl: "not a url" } } });
    const issues = issuesOf({ ...validEnv, WORKER_CONFIG: path });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain("models.qwen3-1.7b.baseUrl");
  });

  it("error: reports a WORKER_CONFIG file that is not JSON", () => {
    const issues = issuesOf({ ...validEnv, WORKER_CONFIG: configFile("{oops") });
    expect(issues[0]).toMatch(/^WORKER_CONFIG: cannot read JSON/);
  });

  it("error: requires at least one served model", () => {
    const issues = issuesOf({ ...validEnv, WORKER_MODELS: " , " });
    expect(issues).toEqual(["WORKER_MODELS / WORKER_CONFIG: at least one model must be served"]);
  });
});

describe("worker start-up", () => {
  it(
    "error: exits with status 1 and prints each bad field when the configuration is invalid",
    async () => {
      const exit = await runWorkerUntilExit({ WORKER_PORT: "99999", WORKER_MODELS: "qwen3-1.7b" });
      expect(exit.code).toBe(1);
      expect(exit.stderr).toContain("Invalid worker configuration");
      expect(exit.stderr).toContain("WORKER_PRIVATE_KEY");
      expect(exit.stderr).toContain("WORKER_PORT");
      expect(exit.stderr).toContain("WORKER_GATEWAY_TOKEN");
    },
    WORKER_START_TEST_TIMEOUT_MS,
  );
});
