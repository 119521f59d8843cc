import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { writeTinyLlamaGguf } from "./tinyLlamaModel.js";

export type TinyLlamaWorkerConfig = { directory: string; modelPath: string; configPath: string };

/**
 * Generates the tiny GGUF model into a fresh temp folder next to a `WORKER_CONFIG` file serving it as
 * `modelId` with the `llama` backend. One CPU thread: the model is too small to gain from more, and spinning
 * threads on a busy test machine slow generation down by orders of magnitude.
 */
export async function writeTinyLlamaWorkerConfig(
  modelId: string,
  settings: { contextSize?: number; parallel?: number } = {},
): Promise<TinyLlamaWorkerConfig> {
  const directory = await mkdtemp(path.join(tmpdir(), "tiny-llama-"));
  const modelPath = await writeTinyLlamaGguf(directory);
  const configPath = path.join(directory, "worker.json");
  const entry = { backend: "llama", modelPath: path.basename(modelPath), threads: 1, gpu: false, ...settings };
  await writeFile(configPath, JSON.stringify({ models: { [modelId]: entry } }, null, 2));
  return { directory, modelPath, configPath };
}
