import type { Hex } from "viem";
import { ApiError } from "../errors/ApiError.js";
import { DeadlineExceededError } from "../runtime/withDeadline.js";
import type { EscrowChain } from "../chain/escrowChain.js";
import type { GatewayConfig } from "../config.js";
import type { CreditLedger } from "../ledger/creditLedger.js";
import type { IndexFreshness } from "../ledger/indexFreshness.js";
import type { ModelDirectory, ModelInfo } from "../readModel/modelDirectory.js";
import type { WorkerPool } from "../workerPool/workerPool.js";
import { countChatTokens, ReservedTokenTextError } from "../../shared/tokens/countChatTokens.js";
import { sizeEscrow } from "./pricing.js";
import type { ChatCompletionRequest } from "./requestSchema.js";

/** Seconds a client should wait before retrying when no worker hosts the model. */
export const NO_WORKERS_RETRY_AFTER_SECONDS = 5;

/** The wallet's credits as a refusal must see them: the ledger, once the index caught up (bounded wait). */
export interface FreshCreditsDeps {
  ledger: Pick<CreditLedger, "available" | "releaseIndexed">;
  freshness: Pick<IndexFreshness, "caughtUpSince">;
}

/** What the checks before any credit moves read: the catalog, the workers, the credits, whether the node answers. */
export interface PrepareDeps extends FreshCreditsDeps {
  ledger: Pick<CreditLedger, "available" | "availableFor" | "releaseIndexed">;
  models: Pick<ModelDirectory, "get">;
  workers: Pick<WorkerPool, "candidatesFresh">;
  chain: Pick<EscrowChain, "nodeSilent">;
  config: Pick<GatewayConfig, "DEFAULT_MAX_TOKENS">;
}

export interface PreparedCompletion {
  request: ChatCompletionRequest;
  model: ModelInfo;
  wallet: Hex;
  keyHash: Hex;
  promptTokens: number;
  maxTokens: number;
  creditsToLock: number;
  /** Available credits as the reservation ledger said them before this request's reservation. */
  creditsAvailable: number;
}

export function noWorkersError(model: string): ApiError {
  return new ApiError("no_workers_available", {
    message: `No worker currently hosts '${model}'. Retry in ${NO_WORKERS_RETRY_AFTER_SECONDS} seconds.`,
    details: { model, retry_after: NO_WORKERS_RETRY_AFTER_SECONDS },
    headers: { "retry-after": String(NO_WORKERS_RETRY_AFTER_SECONDS) },
  });
}

/**
 * Prompt tokens as the workers count them (the shared counter, bounded: api/README.md "Context-length check"),
 * stopping at the context window. Reserved special-token text is `invalid_request`: the job could never run.
 */
async function countPromptTokens(request: ChatCompletionRequest, contextWindow: number) {
  try {
    return await countChatTokens(request.messages, contextWindow);
  } catch (error) {
    if (!(error instanceof ReservedTokenTextError)) throw error;
    throw new ApiError("invalid_request", { param: `messages.${error.messageIndex}.content`, message: error.message });
  }
}

export function insufficientCredits(
  model: ModelInfo,
  needed: { creditsRequired: number; maxTokens: number },
  creditsAvailable: number,
): ApiError {
  return new ApiError("insufficient_credits", {
    message: `This request needs ${needed.creditsRequired} credits in escrow (model '${model.id}', up to ${needed.maxTokens} output tokens); ${creditsAvailable} are available.`,
    details: { credits_remaining: creditsAvailable, credits_required: needed.creditsRequired, tier: model.tier },
    headers: { "x-service-credits-remaining": String(creditsAvailable) },
  });
}

/**
 * The wallet's available credits once the index has caught up with the chain as of `since` (bounded wait) and
 * reservations of locks it now shows are released: what a refusal must be based on.
 */
export async function freshAvailable(deps: FreshCreditsDeps, wallet: Hex, since: number): Promise<bigint> {
  await deps.freshness.caughtUpSince(since);
  await deps.ledger.releaseIndexed(wallet);
  return deps.ledger.available(wallet);
}

/**
 * Everything checked before any credit moves (ARCHITECTURE "Validate"): the model, a healthy worker, the
 * context window, and a balance that covers the escrow estimate.
 */
export async function prepareCompletion(
  deps: PrepareDeps,
  auth: { wallet: Hex; keyHash: Hex },
  request: ChatCompletionRequest,
): Promise<PreparedCompletion> {
  const model = await deps.models.get(request.model);
  if (!model)
    throw new ApiError("model_not_found", { param: "model", message: `The model '${request.model}' does not exist.` });

  const candidates = await deps.workers.candidatesFresh(model.id);
  if (candidates.length === 0) throw noWorkersError(model.id);

  const count = await countPromptTokens(request, model.contextWindow);
  // At least one token of room must remain for the reply.
  if (count.exceeded) {
    throw new ApiError("context_length_exceeded", {
      param: "messages",
      message: `The messages have at least ${count.tokens} tokens; the context window of '${model.id}' is ${model.contextWindow}.`,
    });
  }
  const promptTokens = count.tokens;
  const size = (available: number) =>
    sizeEscrow({
      prices: model,
      requested: request.maxTokens,
      defaultMaxTokens: deps.config.DEFAULT_MAX_TOKENS,
      contextWindow: model.contextWindow,
      promptTokens,
      available,
    });
  // A node known silent (background sample) would hold the lock until the RPC deadlines: refuse at once, 503.
  if (deps.chain.nodeSilent()) throw new DeadlineExceededError("the chain node is not answering (lock not sent)");
  // The ledger, not the chain: indexed credits minus what is reserved for locks not yet indexed.
  const since = Date.now();
  // The full escrow (nothing capped); when this gateway's credit slice already holds it, no statement is run.
  const full = size(Number.MAX_SAFE_INTEGER);
  const fullCredits = full.ok ? full.creditsToLock : Number.MAX_SAFE_INTEGER;
  let creditsAvailable = Number(await deps.ledger.availableFor(auth.wallet, BigInt(fullCredits)));
  let sizing = size(creditsAvailable);
  if (!sizing.ok) {
    // Before refusing: a deposit may be a block ahead of the index, or a lock just indexed still reserved.
    creditsAvailable = Number(await freshAvailable(deps, auth.wallet, since));
    sizing = size(creditsAvailable);
  }
  if (!sizing.ok) throw insufficientCredits(model, sizing, creditsAvailable);
  const { maxTokens, creditsToLock } = sizing;
  return {
    request,
    model,
    wallet: auth.wallet,
    keyHash: auth.keyHash,
    promptTokens,
    maxTokens,
    creditsToLock,
    creditsAvailable,
  };
}
