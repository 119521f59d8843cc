import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/** Fault modes a worker can be told to exhibit, for tests and demos of the gateway's failure handling. */
export const FAULT_MODES = [
  "none",
  "never_answer",
  "fail_before_first_token",
  "fail_after_first_token",
  "wrong_hash",
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export type SimulatedModelConfig = {
  backend: "simulated";
  ttftMs: number;
  tokensPerSecond: number;
  minOutputTokens: number;
  maxOutputTokens: number;
};

export type OpenAiModelConfig = {
  backend: "openai";
  baseUrl: string;
  apiKey?: string;
  upstreamModel?: string;
  timeoutMs: number;
};

export type LlamaModelConfig = {
  backend: "llama";
  /** Absolute path of the GGUF file (a relative path in the config file is resolved against the file's folder). */
  modelPath: string;
  /** Tokens per context sequence; default: the model's training context, at most `DEFAULT_LLAMA_CONTEXT_SIZE`. */
  contextSize?: number;
  /** CPU threads for generation; default: node-llama-cpp's choice (all cores). */
  threads?: number;
  /** Offload to a GPU when node-llama-cpp finds one (`true`), or stay on the CPU (`false`, the default). */
  gpu: boolean;
  /** Context sequences, i.e. jobs generated at once; further jobs queue for a free sequence. */
  parallel: number;
};

export type ModelConfig = SimulatedModelConfig | OpenAiModelConfig | LlamaModelConfig;

export type WorkerConfig = {
  privateKey: `0x${string}`;
  host: string;
  port: number;
  gatewayToken: string;
  models: Record<string, ModelConfig>;
  fault: FaultMode;
  maxInflight: number;
  logLevel: string;
};

/** Thrown when the environment or the config file is invalid; `issues` lists every bad field. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid worker configuration:\n${issues.map((issue) => `  - ${issue}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

const DEFAULT_OPENAI_TIMEOUT_MS = 30_000;

const integerFromEnv = (min: number, max: number) =>
  z
    .string({ error: "is required" })
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const numberFromEnv = (min: number) =>
  z
    .string({ error: "is required" })
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a number")
    .transform(Number)
    .pipe(z.number().min(min));

const envSchema = z.object({
  WORKER_PRIVATE_KEY: z
    .string({ error: "is required" })
    .trim()
    .regex(/^0x[0-9a-fA-F]{64}$/, "must be 0x followed by 64 hex digits"),
  WORKER_PORT: integerFromEnv(0, 65_535),
  WORKER_HOST: z.string().trim().min(1).default("127.0.0.1"),
  WORKER_GATEWAY_TOKEN: z.string({ error: "is required" }).min(16, "must be at least 16 characters"),
  WORKER_MODELS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? "")
        .split(",")
        .map((id) => id.trim())
        .filter((id) => id.length > 0),
    ),
  WORKER_CONFIG: z.string().trim().min(1).optional(),
  SIM_TTFT_MS: integerFromEnv(0, 600_000).default(150),
  SIM_TOKENS_PER_SECOND: numberFromEnv(0.001).default(50),
  SIM_MIN_OUTPUT_TOKENS: integerFromEnv(1, 100_000).default(20),
  SIM_MAX_OUTPUT_TOKENS: integerFromEnv(1, 100_000).default(60),
  SIM_FAULT: z.enum(FAULT_MODES).default("none"),
  WORKER_MAX_INFLIGHT: integerFromEnv(1, 100_000).default(64),
  WORKER_LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

const modelIdSchema = z.string().min(1).max(200);

const simulatedEntrySchema = z.strictObject({
  backend: z.literal("simulated"),
  ttftMs: z.number().int().min(0).optional(),
  tokensPerSecond: z.number().positive().optional(),
  minOutputTokens: z.number().int().min(1).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
});

const openAiEntrySchema = z.strictObject({
  backend: z.literal("openai"),
  baseUrl: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().min(1).optional(),
  upstreamModel: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
});

const llamaEntrySchema = z.strictObject({
  backend: z.literal("llama"),
  modelPath: z.string().min(1),
  contextSize: z.number().int().min(16).optional(),
  threads: z.number().int().min(1).optional(),
  gpu: z.boolean().optional(),
  parallel: z.number().int().min(1).max(64).optional(),
});

const configFileSchema = z.strictObject({
  models: z.record(
    modelIdSchema,
    z.discriminatedUnion("backend", [simulatedEntrySchema, openAiEntrySchema, llamaEntrySchema]),
  ),
});

type Env = z.output<typeof envSchema>;
type ConfigFile = z.output<typeof configFileSchema>;

function describeIssues(prefix: string, error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return `${prefix}${path}: ${issue.message}`;
  });
}

function readConfigFile(path: string, issues: string[]): ConfigFile | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    issues.push(`WORKER_CONFIG: cannot read JSON from ${path} (${(error as Error).message})`);
    return undefined;
  }
  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) {
    issues.push(...describeIssues(`WORKER_CONFIG ${path}: `, parsed.error));
    return undefined;
  }
  return parsed.data;
}

/** Why `file` cannot be a GGUF model, or undefined when it looks like one (the loader checks the rest). */
function ggufProblem(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return `${file} is not a file`;
    const magic = Buffer.alloc(4);
    const fd = openSync(file, "r");
    try {
      readSync(fd, magic, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
    return magic.toString("latin1") === "GGUF" ? undefined : `${file} is not a GGUF file (no GGUF magic)`;
  } catch (error) {
    return `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

function resolveModels(
  env: Env,
  file: ConfigFile | undefined,
  configDir: string,
  issues: string[],
): Record<string, ModelConfig> {
  const simulatedDefaults = (): SimulatedModelConfig => ({
    backend: "simulated",
    ttftMs: env.SIM_TTFT_MS,
    tokensPerSecond: env.SIM_TOKENS_PER_SECOND,
    minOutputTokens: env.SIM_MIN_OUTPUT_TOKENS,
    maxOutputTokens: env.SIM_MAX_OUTPUT_TOKENS,
  });
  const models: Record<string, ModelConfig> = {};
  for (const id of env.WORKER_MODELS) models[id] = simulatedDefaults();
  // The file is the more specific source, so it wins over the plain list for a model named in both.
  for (const [id, entry] of Object.entries(file?.models ?? {})) {
    if (entry.backend === "simulated") {
      const defaults = simulatedDefaults();
      models[id] = {
        backend: "simulated",
        ttftMs: entry.ttftMs ?? defaults.ttftMs,
        tokensPerSecond: entry.tokensPerSecond ?? defaults.tokensPerSecond,
        minOutputTokens: entry.minOutputTokens ?? defaults.minOutputTokens,
        maxOutputTokens: entry.maxOutputTokens ?? defaults.maxOutputTokens,
      };
    } else if (entry.backend === "llama") {
      models[id] = {
        backend: "llama",
        modelPath: path.resolve(configDir, entry.modelPath),
        ...(entry.contextSize === undefined ? {} : { contextSize: entry.contextSize }),
        ...(entry.threads === undefined ? {} : { threads: entry.threads }),
        gpu: entry.gpu ?? false,
        parallel: entry.parallel ?? 1,
      };
    } else {
      models[id] = {
        backend: "openai",
        baseUrl: entry.baseUrl.replace(/\/+$/, ""),
        ...(entry.apiKey === undefined ? {} : { apiKey: entry.apiKey }),
        ...(entry.upstreamModel === undefined ? {} : { upstreamModel: entry.upstreamModel }),
        timeoutMs: entry.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS,
      };
    }
  }
  for (const [id, model] of Object.entries(models)) {
    if (model.backend === "simulated" && model.minOutputTokens > model.maxOutputTokens) {
      issues.push(
        `model ${id}: minOutputTokens (${model.minOutputTokens}) exceeds maxOutputTokens (${model.maxOutputTokens})`,
      );
    }
    if (model.backend === "llama") {
      const problem = ggufProblem(model.modelPath);
      if (problem !== undefined) issues.push(`model ${id}: modelPath: ${problem}`);
    }
  }
  if (Object.keys(models).length === 0) {
    issues.push("WORKER_MODELS / WORKER_CONFIG: at least one model must be served");
  }
  return models;
}

/** Reads and validates the worker's configuration once, at start-up. Throws `ConfigError` listing every problem. */
export function loadConfig(source: NodeJS.ProcessEnv): WorkerConfig {
  const issues: string[] = [];
  const parsedEnv = envSchema.safeParse(source);
  if (!parsedEnv.success) issues.push(...describeIssues("", parsedEnv.error));
  const configPath = source.WORKER_CONFIG?.trim();
  const file = configPath ? readConfigFile(configPath, issues) : undefined;
  if (!parsedEnv.success) throw new ConfigError(issues);

  const env = parsedEnv.data;
  const models = resolveModels(env, file, configPath ? path.dirname(path.resolve(configPath)) : process.cwd(), issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    privateKey: env.WORKER_PRIVATE_KEY as `0x${string}`,
    host: env.WORKER_HOST,
    port: env.WORKER_PORT,
    gatewayToken: env.WORKER_GATEWAY_TOKEN,
    models,
    fault: env.SIM_FAULT,
    maxInflight: env.WORKER_MAX_INFLIGHT,
    logLevel: env.WORKER_LOG_LEVEL,
  };
}
