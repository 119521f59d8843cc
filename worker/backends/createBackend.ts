import type { ModelConfig } from "../config.js";
import { createOpenAiBackend } from "./openai.js";
import { createSimulatedBackend } from "./simulated.js";
import type { Backend } from "./types.js";

export function createBackend(config: ModelConfig): Backend {
  switch (config.backend) {
    case "simulated":
      return createSimulatedBackend(config);
    case "openai":
      return createOpenAiBackend(config);
  }
}
