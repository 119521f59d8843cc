import type { Request, Response } from "express";
import type { WorkerHealth } from "../../shared/workerProtocol/index.js";
import type { WorkerContext } from "../workerContext.js";

/** One label for the whole worker: its backend, or "mixed" when models use different ones. */
function backendLabel(context: WorkerContext): string {
  const kinds = new Set([...context.backends.values()].map((backend) => backend.kind));
  return kinds.size === 1 ? ([...kinds][0] ?? "mixed") : "mixed";
}

/** `GET /healthz`: liveness plus what the gateway routes on. */
export function getHealth(context: WorkerContext) {
  return (_req: Request, res: Response): void => {
    res.json({
      status: "ok",
      address: context.signer.address,
      models: [...context.backends.keys()],
      backend: backendLabel(context),
      model_backends: Object.fromEntries([...context.backends].map(([id, backend]) => [id, backend.kind])),
      inflight: context.registry.inflight(),
      max_inflight: context.config.maxInflight,
      fault: context.config.fault,
    } satisfies WorkerHealth);
  };
}

/** `GET /readyz`: 200 while the worker takes jobs; 503 when draining or at its concurrency limit. */
export function getReadiness(context: WorkerContext) {
  return (_req: Request, res: Response): void => {
    const inflight = context.registry.inflight();
    if (context.draining) {
      res.status(503).json({ ready: false, reason: "draining", inflight });
    } else if (inflight >= context.config.maxInflight) {
      res.status(503).json({ ready: false, reason: "busy", inflight });
    } else {
      res.json({ ready: true, inflight });
    }
  };
}
