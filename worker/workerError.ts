/** The worker's one error type: a closed list of codes, each with its HTTP status. */
export const WORKER_ERROR_STATUS = {
  unauthorized: 401,
  invalid_request: 400,
  payload_too_large: 413,
  model_not_served: 404,
  job_not_found: 404,
  not_found: 404,
  job_already_running: 409,
  delivered_tokens_exceed_emitted: 422,
  worker_busy: 503,
  worker_draining: 503,
  internal_error: 500,
} as const;

export type WorkerErrorCode = keyof typeof WORKER_ERROR_STATUS;

export class WorkerError extends Error {
  readonly status: number;
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "WorkerError";
    this.status = WORKER_ERROR_STATUS[code];
  }

  toBody() {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}
