import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";
import { TEST_GATEWAY_TOKEN, TEST_WORKER_PRIVATE_KEY } from "./testing/startWorkerProcess.js";
import { writeTinyLlamaWorkerConfig } from "./testing/gguf/tinyLlamaWorkerConfig.js";

const baseEnv = {
  WORKER_PRIVATE_KEY: TEST_WORKER_PRIVATE_KEY,
  WORKER_PORT: "8791",
  WORKER_GATEWAY_TOKEN: TEST_GATEWAY_TOKEN,
};

async function configWith(entry: Record<string, unknown>): Promise<string> {
  const directory = await mkdtemp(path.join(tmpdir(), "llama-config-"));
  const file = path.join(directory, "worker.json");
  await writeFile(file, JSON.stringify({ models: { "tiny-llama": { backend: "llama", ...entry } } }));
  return file;
}

function issuesOf(configPath: string): string[] {
  try {
    loadConfig({ ...baseEnv, WORKER_CONFIG: configPath });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("llama entries in WORKER_CONFIG", () => {
  it("resolves modelPath against the config file's folder and fills the defaults", async () => {
    const { configPath, modelPath } = await writeTinyLlamaWorkerConfig("tiny-llama");
    const config = loadConfig({ ...baseEnv, WORKER_CONFIG: configPath });
    expect(config.models["tiny-llama"]).toEqual({
      backend: "llama",
      modelPath,
      threads: 1,
      gpu: false,
      parallel: 1,
    });
  });

  it("error: names the model when modelPath does not exist", async () => {
    const issues = issuesOf(await configWith({ modelPath: "/nowhere/model.gguf" }));
    expect(issues).toEqual(["model tiny-llama: modelPath: cannot read /nowhere/model.gguf (ENOENT)"]);
  });

  it("error: refuses a file that is not GGUF", async () => {
    const config = await configWith({ modelPath: "weights.bin" });
    await writeFile(path.join(path.dirname(config), "weights.bin"), "not a model");
    const issues = issuesOf(config);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/^model tiny-llama: modelPath: .*weights\.bin is not a GGUF file/);
  });

  it("error: lists unknown and out-of-range settings", async () => {
    const issues = issuesOf(await configWith({ modelPath: "m.gguf", contextSize: 0, parallel: 0, temperature: 1 }));
    expect(issues.join("\n")).toMatch(/contextSize/);
    expect(issues.join("\n")).toMatch(/parallel/);
    expect(issues.join("\n")).toMatch(/temperature/);
  });
});
