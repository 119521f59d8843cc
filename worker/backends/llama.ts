import { getLlama, LlamaChat, LlamaLogLevel } from "node-llama-cpp";
import type { ChatHistoryItem, ChatWrapper, Llama, LlamaModel } from "node-llama-cpp";
import type { LlamaModelConfig } from "../config.js";
import { llamaSamplingOf } from "./llamaSampling.js";
import { LlamaSlotPool } from "./llamaSlotPool.js";
import { splitTokenPieces } from "./llamaTokenPieces.js";
import { BackendError } from "./types.js";
import type { Backend, ChatMessage, FinishReason, Generation, GenerationRequest } from "./types.js";

/** Context size when the config names none: the model's training context, capped to keep RAM use modest. */
export const DEFAULT_LLAMA_CONTEXT_SIZE = 4096;

/** Thrown when a configured model cannot be loaded at start-up (the worker then exits with the message). */
export class LlamaLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LlamaLoadError";
  }
}

export type LlamaBackend = Backend & {
  readonly contextSize: number;
  /** Tokens of `text` as this model's tokenizer splits it (no BOS): what completions are counted in. */
  countTextTokens(text: string): number;
  dispose(): Promise<void>;
};

// One llama.cpp runtime per process and GPU choice; every model shares it.
const runtimes = new Map<boolean, Promise<Llama>>();

function runtimeFor(gpu: boolean): Promise<Llama> {
  let runtime = runtimes.get(gpu);
  if (runtime === undefined) {
    // build "never": use the prebuilt binaries shipped with node-llama-cpp, never compile on a worker machine.
    runtime = getLlama({ gpu: gpu ? "auto" : false, build: "never", logLevel: LlamaLogLevel.error });
    runtimes.set(gpu, runtime);
  }
  return runtime;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The job's messages as node-llama-cpp chat history, ending with the (empty or partial) reply to generate. */
function chatHistoryOf(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((message) => {
    switch (message.role) {
      case "system":
        return { type: "system", text: message.content };
      case "user":
        return { type: "user", text: message.content };
      case "assistant":
        return { type: "model", response: [message.content] };
    }
  });
  // A trailing assistant message is a prefix the model continues; otherwise the reply starts empty.
  if (history.at(-1)?.type !== "model") history.push({ type: "model", response: [] });
  return history;
}

function countPromptTokensWith(model: LlamaModel, chatWrapper: ChatWrapper, messages: readonly ChatMessage[]): number {
  const { contextText } = chatWrapper.generateContextState({ chatHistory: chatHistoryOf(messages) });
  return contextText.tokenize(model.tokenizer).length;
}

type Slot = { chat: LlamaChat };

type Settled = { ok: true; stopReason: string } | { ok: false; error: unknown };

/**
 * Serves one GGUF model in-process through node-llama-cpp. The model is loaded once, here, at start-up; it
 * gets `parallel` context sequences of `contextSize` tokens each, and each job holds one sequence for its
 * whole generation (further jobs wait in line for one — see `LlamaSlotPool`).
 */
export async function loadLlamaBackend(modelId: string, config: LlamaModelConfig): Promise<LlamaBackend> {
  let model: LlamaModel;
  try {
    const llama = await runtimeFor(config.gpu);
    model = await llama.loadModel({ modelPath: config.modelPath, ...(config.gpu ? {} : { gpuLayers: 0 }) });
  } catch (error) {
    throw new LlamaLoadError(`model ${modelId}: cannot load ${config.modelPath}: ${describe(error)}`);
  }
  const contextSize = config.contextSize ?? Math.min(model.trainContextSize, DEFAULT_LLAMA_CONTEXT_SIZE);
  let slots: Slot[];
  try {
    const context = await model.createContext({
      contextSize,
      sequences: config.parallel,
      ...(config.threads === undefined ? {} : { threads: config.threads }),
    });
    slots = Array.from({ length: config.parallel }, () => ({
      chat: new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: "auto" }),
    }));
  } catch (error) {
    await model.dispose();
    throw new LlamaLoadError(
      `model ${modelId}: cannot create a ${contextSize}-token context for ${config.modelPath}: ${describe(error)}`,
    );
  }
  // The chat wrapper comes from the model's own chat template (tokenizer.chat_template) or its family.
  const chatWrapper = slots[0]!.chat.chatWrapper;
  const pool = new LlamaSlotPool(slots);

  const countPromptTokens = (messages: readonly ChatMessage[]) => countPromptTokensWith(model, chatWrapper, messages);

  async function* generate(request: GenerationRequest, signal: AbortSignal): Generation {
    const promptTokens = countPromptTokens(request.messages);
    const room = contextSize - promptTokens;
    if (room < 1) {
      throw new BackendError(
        "backend_error",
        `the prompt is ${promptTokens} tokens and ${modelId}'s context holds ${contextSize}: no room to generate`,
      );
    }
    // Like the gateway, clamp max_tokens to the room left rather than refuse; hitting it is finish "length".
    const maxTokens = Math.min(request.maxTokens, room);

    // Aborted by the job's signal, or when the consumer stops reading early (finally below).
    const stopper = new AbortController();
    const runSignal = AbortSignal.any([signal, stopper.signal]);
    const slot = await pool.acquire(runSignal);

    const pieces: string[] = [];
    let completionTokens = 0;
    let settled: Settled | undefined;
    let wake: (() => void) | undefined;
    const notify = () => {
      const resume = wake;
      wake = undefined;
      resume?.();
    };

    const run = slot.chat
      .generateResponse(chatHistoryOf(request.messages), {
        signal: runSignal,
        maxTokens,
        ...llamaSamplingOf(request, maxTokens),
        ...(request.stop.length > 0 ? { customStopTriggers: request.stop } : {}),
        onResponseChunk(chunk) {
          // Only the main reply is streamed (and billed); segments such as thoughts are not part of it.
          if (chunk.type !== undefined || chunk.tokens.length === 0) return;
          const split = splitTokenPieces(model, chunk.tokens, chunk.text);
          completionTokens += split.length;
          pieces.push(...split);
          notify();
        },
      })
      .then(
        (response): Settled => ({ ok: true, stopReason: response.metadata.stopReason }),
        (error: unknown): Settled => ({ ok: false, error }),
      )
      .then((result) => {
        settled = result;
        notify();
      });

    try {
      for (;;) {
        while (pieces.length > 0) yield pieces.shift()!;
        if (settled !== undefined) break;
        await new Promise<void>((resolve) => (wake = resolve));
      }
      if (!settled.ok) {
        if (signal.aborted) throw signal.reason;
        throw new BackendError("backend_error", `llama.cpp generation failed: ${describe(settled.error)}`);
      }
      const finishReason: FinishReason = settled.stopReason === "maxTokens" ? "length" : "stop";
      return { finishReason, usage: { promptTokens, completionTokens } };
    } finally {
      stopper.abort(new Error("generation closed"));
      await run;
      pool.release(slot);
    }
  }

  return {
    kind: "llama",
    contextSize,
    // The native tokenizer runs in one call; its count is wrapped for the shared asynchronous contract.
    countPromptTokens: async (messages) => countPromptTokens(messages),
    countTextTokens: (text) => model.tokenize(text, false).length,
    generate,
    async dispose() {
      await model.dispose();
    },
  };
}
