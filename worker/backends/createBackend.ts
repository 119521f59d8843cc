import type { ModelConfig } from "../config.js";
import { loadLlamaBackend } from "./llama.js";
import { createOpenAiBackend } from "./openai.js";
import { createSimulatedBackend } from "./simulated.js";
import type { Backend } from "./types.js";

/** Builds a model's backend; the `llama` backend loads its model file here, so this is the slow part of start-up. */
export async function createBackend(modelId: string, config: ModelConfig): Promise<Backend> {
  switch (config.backend) {
    case "simulated":
      return createSimulatedBackend(config);
    case "openai":
      return createOpenAiBackend(config);
    case "llama":
      return loadLlamaBackend(modelId, config);
  }
}

/** Every configured model's backend, by model id (models load one after the other to bound peak memory). */
export async function createBackends(models: Readonly<Record<string, ModelConfig>>): Promise<Map<string, Backend>> {
  const backends = new Map<string, Backend>();
  for (const [id, model] of Object.entries(models)) backends.set(id, await createBackend(id, model));
  return backends;
}
